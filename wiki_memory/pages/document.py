"""Reading and writing a page file: YAML front matter (python-frontmatter) and the body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import frontmatter
import yaml

from wiki_memory.errors import PageError
from wiki_memory.pages.model import Page

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _without_timestamps(resolvers: dict[str, list[tuple[str, Any]]]) -> dict[str, list[tuple[str, Any]]]:
    return {first: [(tag, rx) for tag, rx in entries if tag != _TIMESTAMP] for first, entries in resolvers.items()}


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml when present: 10x faster
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """SafeLoader that keeps dates as the strings they were written as."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes those strings back unquoted, so a round-trip changes nothing."""


# Trigger: PyYAML turns `created: 2026-11-30T08:12:44Z` into a datetime.
# Why: dumped back it would read `2026-11-30 08:12:44+00:00`; a page must round-trip unchanged.
_Loader.yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)
_Dumper.yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)

_HANDLER = frontmatter.YAMLHandler()


def parse_page(text: str, path: str) -> Page:
    """A page from a file's text. Broken front matter raises PageError naming file and line."""
    text = text.lstrip("\ufeff")
    if not _HANDLER.detect(text):
        return Page(path, {}, text, has_front_matter=False)
    try:
        fm, body = _HANDLER.split(text)
    except ValueError:
        raise PageError(f"{path}: line 1: front matter is not closed (no second '---' line)") from None
    try:
        meta = yaml.load(fm, Loader=_Loader)
    except yaml.YAMLError as e:
        # The front matter text starts right after "---" on line 1, so its 0-based line
        # numbers are the file's 1-based ones.
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        context = getattr(e, "context_mark", None)
        if context is not None and mark is not None and context.line != mark.line:
            problem += f" ({getattr(e, 'context', '') or 'opened'} at line {context.line + 1})"
        raise PageError(f"{path}: {where}invalid YAML front matter: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise PageError(f"{path}: line 2: front matter must be a mapping of keys to values, not {type(meta).__name__}")
    meta = {str(k): v for k, v in meta.items()}
    if "id" in meta and meta["id"] is not None:
        meta["id"] = str(meta["id"])
    return Page(path, meta, body.lstrip("\r\n"), has_front_matter=True)


def render_meta(meta: dict[str, Any]) -> str:
    return yaml.dump(meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=None, width=10**6)


def render_page(page: Page) -> str:
    """The file text of a page: `---`, the front matter in its order, `---`, the body."""
    body = page.body if page.body.endswith("\n") or not page.body else page.body + "\n"
    if not page.has_front_matter and not page.meta:
        return body
    return f"---\n{render_meta(dict(page.meta))}---\n{body}"
