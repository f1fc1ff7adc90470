"""What a project's README and its test runner's configuration state (see
`manifest_parsers`, which reads them among the manifests): a README's title and first
paragraph (what the project is), and pytest's settings (`pytest.ini`, `tox.ini`,
`[tool:pytest]` in setup.cfg, `[tool.pytest.ini_options]` in pyproject.toml).
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Mapping
from typing import Any

Topics = dict[str, list[str]]

# A README line that is no prose: a badge, an image, HTML, a table, a rule, a quote, a list.
_NOT_PROSE = re.compile(r"^(\[!\[|!\[|<|\||---|===|>|[-*+] |\d+\. |```)")
MAX_ABOUT = 400


def readme(text: str) -> Topics:
    """The project's README: its title and the first paragraph of prose after it, in its own
    words (a README with no `# Title` or `<h1>` states nothing: what precedes one may be noise)."""
    title, in_fence = "", False
    paragraph: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        in_fence = in_fence != line.startswith("```")
        heading = re.match(r"^(?:#\s+(.+?)\s*#*|<h1[^>]*>(.+?)</h1>)$", line)
        if in_fence or line.startswith("```"):
            continue
        if heading and not title:
            title = re.sub(r"[*_`]|<[^>]+>", "", heading.group(1) or heading.group(2)).strip()
        elif not line or line.startswith("#") or _NOT_PROSE.match(line):
            if paragraph:
                break
        elif title:
            paragraph.append(line)
    # A link's words, not its target; no bold.
    about = re.sub(r"\[([^\]]+)\]\([^)]*\)|\*\*|__", lambda m: m.group(1) or "", " ".join(paragraph)).strip()
    if len(about) > MAX_ABOUT:
        cut = about[:MAX_ABOUT].rsplit(". ", 1)[0]
        about = cut + ("." if not cut.endswith(".") else "") + " …"
    if len(about) < 20 or not re.search(r"[^\W\d_]{3,}", about):
        return {}
    return {"about": [f"{title}: {about}" if title.lower() not in about.lower()[:80] else about]}


# pytest's settings worth knowing before running the tests, in the order a reader wants them.
_PYTEST_KEYS = ("testpaths", "pythonpath", "addopts", "python_files", "asyncio_mode", "timeout", "minversion")


def pytest_options(options: Mapping[str, Any]) -> list[str]:
    """pytest's settings as the configuration states them: one line each, and the markers it
    declares (by name)."""
    out: list[str] = []
    for key in _PYTEST_KEYS:
        value = options.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if value not in (None, ""):
            out.append(f"pytest {key}: `{' '.join(str(value).split())}`")
    markers = options.get("markers")
    names = [
        str(m).split(":", 1)[0].strip() for m in (markers.splitlines() if isinstance(markers, str) else markers or [])
    ]
    names = [n for n in names if n]
    if names:
        out.append(
            f"pytest markers: {', '.join(names[:12])}" + (f" and {len(names) - 12} more" if len(names) > 12 else "")
        )
    return out


def _ini_section(text: str, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def pytest_ini(text: str) -> Topics:
    options = _ini_section(text, "pytest")
    return {"tests": pytest_options(options)} if options else {}


def tox_ini(text: str) -> Topics:
    """tox.ini: its environments, and pytest's settings when it holds them."""
    tests = pytest_options(_ini_section(text, "pytest") or {})
    envs = (_ini_section(text, "tox") or {}).get("envlist")
    if envs:
        tests.insert(0, f"tox environments: {' '.join(envs.split())}")
    return {"tests": tests} if tests else {}
