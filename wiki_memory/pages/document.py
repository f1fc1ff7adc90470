"""Reading and writing a page file: YAML front matter (python-frontmatter) and the body."""

from __future__ import annotations

import re
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

    def represent(self, data: Any) -> None:
        # Trigger: front matter whose values are all scalars (a hand-written page, no tags).
        # Why: `default_flow_style=None` would write the whole of it as one `{...}` line,
        # which is no longer one key per line: rewriting a key of it (a mark) then failed.
        node = self.represent_data(data)
        if isinstance(node, yaml.MappingNode):
            node.flow_style = False
        self.serialize(node)
        self.represented_objects = {}
        self.object_keeper = []
        self.alias_key = None


# Trigger: PyYAML turns `created: 2026-11-30T08:12:44Z` into a datetime.
# Why: dumped back it would read `2026-11-30 08:12:44+00:00`; a page must round-trip unchanged.
_Loader.yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)
_Dumper.yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)

_HANDLER = frontmatter.YAMLHandler()


#: Front matter longer than this is refused: a page's keys fit in a few kilobytes.
MAX_FRONT_MATTER = 256 * 1024
#: Values (scalars, lists, mappings) front matter may hold, each alias counted as what it
#: stands for. Why: nine levels of nine aliases fit in 1 KB and stand for 387 million values.
MAX_VALUES = 20_000


def load_front_matter(text: str, path: str) -> Any:
    """The YAML of a page's front matter, read safely: at most MAX_FRONT_MATTER characters
    and MAX_VALUES values (aliases counted as expanded, before anything is built), dates
    kept as strings. Whatever cannot be read is PageError naming the file (and the line,
    where YAML knows it), never another exception: one page must not stop a command."""
    if len(text) > MAX_FRONT_MATTER:
        raise PageError(f"{path}: front matter of {len(text):,} characters is over the {MAX_FRONT_MATTER:,} limit")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node, path)
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        raise PageError(f"{path}: {_yaml_problem(e)}") from None
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as e:
        # A 5,000-digit integer (Python refuses to build it), a key YAML cannot hash, nesting
        # deeper than Python recurses.
        problem = str(e).split(";")[0].strip() or type(e).__name__
        raise PageError(f"{path}: invalid YAML front matter: a value cannot be read ({problem})") from None
    finally:
        loader.dispose()


def _check_size(root: yaml.Node, path: str) -> None:
    """PageError when the document holds more than MAX_VALUES values once its aliases are
    expanded (a node reached through N aliases counts N times). The walk stops as soon as
    the count passes the limit, so a bomb costs at most MAX_VALUES steps."""
    count = 0
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise PageError(
                f"{path}: invalid YAML front matter: more than {MAX_VALUES:,} values (aliases counted as what they "
                "stand for); a page's front matter should be a few keys"
            )
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)


def _yaml_problem(e: yaml.YAMLError) -> str:
    # The front matter text starts right after "---" on line 1, so its 0-based line
    # numbers are the file's 1-based ones.
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    where = f"line {mark.line + 1}: " if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    context = getattr(e, "context_mark", None)
    if context is not None and mark is not None and context.line != mark.line:
        problem += f" ({getattr(e, 'context', '') or 'opened'} at line {context.line + 1})"
    return f"{where}invalid YAML front matter: {problem}"


def parse_page(text: str, path: str) -> Page:
    """A page from a file's text. Broken front matter raises PageError naming file and line."""
    text = text.lstrip("\ufeff")
    if not _HANDLER.detect(text):
        return Page(path, {}, text, has_front_matter=False)
    try:
        fm, body = _HANDLER.split(text)
    except ValueError:
        raise PageError(f"{path}: line 1: front matter is not closed (no second '---' line)") from None
    meta = load_front_matter(fm, path)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise PageError(f"{path}: line 2: front matter must be a mapping of keys to values, not {type(meta).__name__}")
    return Page(path, _as_meta(meta), body.lstrip("\r\n"), has_front_matter=True, front_text=fm)


def _as_meta(meta: dict[Any, Any]) -> dict[str, Any]:
    meta = {str(k): v for k, v in meta.items()}
    if "id" in meta and meta["id"] is not None:
        meta["id"] = str(meta["id"])
    return meta


def render_meta(meta: dict[str, Any]) -> str:
    return yaml.dump(meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=None, width=10**6)


def render_page(page: Page) -> str:
    """The file text of a page: `---`, the front matter in its order, `---`, the body. A
    page read from a file keeps its front matter as written but for the keys that changed."""
    body = page.body if page.body.endswith("\n") or not page.body else page.body + "\n"
    if not page.has_front_matter and not page.meta:
        return body
    return f"---\n{_front_matter(page)}---\n{body}"


# A top-level key at the start of a line: `key:`, `'key':`, `"key":` (then a space or the end).
_KEY_LINE = re.compile(r"""^(?P<key>[^\s#:'"\[{\-?][^:#\n]*?|'[^'\n]*'|"[^"\n]*")[ \t]*:(?:[ \t]|\r?$)""")


def _front_matter(page: Page) -> str:
    """The front matter's text: a person's own (block lists, comments, quoting, key order)
    with only the changed keys rewritten, removed ones dropped and new ones added at the
    end; rendered whole for a new page, or when the text is not one key per line."""
    meta = dict(page.meta)
    original = page.front_text
    if original is None:
        return render_meta(meta)
    original = original[2:] if original.startswith("\r\n") else original.removeprefix("\n")  # (the `---` line's end)
    try:
        loaded = load_front_matter(original, page.path)
    except PageError:
        return render_meta(meta)
    old = _as_meta(loaded) if isinstance(loaded, dict) else None
    entries = _entries(original)
    keys = [key for key, _ in entries if key is not None]
    if old is None or len(set(keys)) != len(keys) or set(keys) != set(old):
        return render_meta(meta)
    rendered = dict(_entries(render_meta(meta)))  # each key as a new page would have it
    out = []
    for key, text in entries:
        text = text if text.endswith("\n") else text + "\n"
        if key is None or (key in meta and meta[key] == old[key]):
            out.append(text)
        elif key in meta:
            block = "\n" in text.rstrip("\r\n")  # written over several lines: kept so
            out.append(_block_key(key, meta[key]) if block else rendered[key])
    out += [rendered[key] for key in meta if key not in old]
    result = "".join(out)
    try:
        again = load_front_matter(result, page.path)
    except PageError:
        return render_meta(meta)
    return result if isinstance(again, dict) and _as_meta(again) == meta else render_meta(meta)


def _entries(text: str) -> list[tuple[str | None, str]]:
    """Front matter's top-level entries in order: (key, its lines); comments before the
    first key under None."""
    entries: list[tuple[str | None, str]] = []
    for line in text.splitlines(keepends=True):
        found = _KEY_LINE.match(line)
        if found:
            raw = found.group("key").strip()
            entries.append((raw[1:-1] if raw[:1] in "'\"" else raw, line))
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + line)
        else:
            entries.append((None, line))
    return entries


def _block_key(key: str, value: Any) -> str:
    return yaml.dump({key: value}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)
