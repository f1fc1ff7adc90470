"""The README stays a user's README that tells the truth: short, naming every command, its
test command the one CI runs, and every link (to docs/ and between them) leading somewhere."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import REPO

from wiki_memory.cli import main

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def test_the_readme_is_well_under_400_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 400


def test_the_readme_names_every_command_and_only_real_ones():
    """The first column of the README's table of commands: `wiki-memory write ...` / `rm PAGE`."""
    text = README.read_text(encoding="utf-8").split("## The commands", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in text.splitlines():
        if row.startswith("| `"):
            cell = row.split(" | ", 1)[0]
            named |= {span.split()[0] for span in re.findall(r"`(?:wiki-memory )?([^`]+)`", cell)}
    assert named - set(main.commands) == set(), "the README names commands that do not exist"
    assert set(main.commands) - named == set(), "commands the README does not name"


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for command in ("pip install -e '.[test]' && python -m pytest", "pip install . && wiki-memory demo"):
        assert command in readme
    assert "pip install -e '.[test]' && python -m pytest\n" in ci


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_every_link_leads_somewhere(doc):
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        missing_anchor = bool(anchor) and path.suffix == ".md" and path.exists() and anchor not in anchors(path)
        if not path.exists() or missing_anchor:
            broken.append(target)
    assert broken == []


# docs/configuration.md against the code --------------------------------------------------------

CONFIGURATION = REPO / "docs" / "configuration.md"
PACKAGE = REPO / "wiki_memory"


def _documented() -> tuple[dict[str, str], set[str], str]:
    """(`section.key` -> its default cell, the environment variables, the text) of the doc."""
    text = CONFIGURATION.read_text(encoding="utf-8")
    keys: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        heading = re.match(r"^## `\[(\w+)\]`$", line)
        if line.startswith("## "):
            section = heading.group(1) if heading else None
        row = re.match(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|", line)
        if section and row:
            keys[f"{section}.{row.group(1)}"] = row.group(2).strip()
    variables = set(re.findall(r"^\| `(WIKI_MEMORY_[A-Z0-9_]+)` \|", text, re.MULTILINE))
    return keys, variables, text


def _code_keys() -> dict[str, object]:
    """`section.key` -> its default, from the typed records (and recall's own)."""
    from wiki_memory.config.settings import SECTIONS
    from wiki_memory.recall.settings import FIELDS

    keys: dict[str, object] = {f"{cls.name}.{key}": getattr(cls, key) for cls in SECTIONS for key in cls.fields()}
    keys.update({f"recall.{key}": default for key, (default, _, _) in FIELDS.items()})
    return keys


def test_the_configuration_doc_lists_every_key_the_code_reads_and_no_other():
    documented, _, _ = _documented()
    code = _code_keys()
    assert sorted(set(code) - set(documented)) == [], "keys the code reads that docs/configuration.md does not list"
    assert sorted(set(documented) - set(code)) == [], "keys docs/configuration.md lists that the code does not read"


def test_the_configuration_doc_gives_each_default_as_the_code_has_it():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    wrong = []
    for name, cell in _documented()[0].items():
        literal = re.fullmatch(r"`([^`]+)`", cell)
        if literal:  # a literal default (not "none", "the provider's", ...) is the code's
            value = tomllib.loads(f"v = {literal.group(1)}")["v"]
            if value != _code_keys()[name]:
                wrong.append(f"{name}: doc {value!r}, code {_code_keys()[name]!r}")
    assert wrong == []


def test_no_module_reads_a_table_around_its_typed_record():
    """`Settings.section(name)` is for a table whose record lives elsewhere (`[recall]`)."""
    from wiki_memory.config.settings import ELSEWHERE

    read = set()
    for path in PACKAGE.rglob("*.py"):
        read |= set(re.findall(r"\.section\(\"(\w+)\"\)", path.read_text(encoding="utf-8")))
    assert read <= set(ELSEWHERE)


def test_the_configuration_doc_lists_every_environment_variable_the_code_reads_and_no_other():
    read = set()
    for path in PACKAGE.rglob("*.py"):
        read |= set(re.findall(r"WIKI_MEMORY_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    _, documented, _ = _documented()
    assert sorted(read - documented) == [], "variables the code reads that docs/configuration.md does not list"
    assert sorted(documented - read) == [], "variables docs/configuration.md lists that the code does not read"


def test_the_configuration_doc_names_every_log():
    from wiki_memory import logs

    text = _documented()[2].split("## Logs", 1)[1]
    assert [name for name in logs.NAMES if f"`{name}.log`" not in text] == []
