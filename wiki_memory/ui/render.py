"""Turning what memory returns into HTML: a page's Markdown (with `[[links]]` made links and
raw HTML shown as text), search snippets with the query's words marked, times and URLs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from wiki_memory.memory import STOPWORDS
from wiki_memory.pages.markdown import WIKI_LINK

_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def page_url(base: str, path: str, **params: str | None) -> str:
    """`<base>/page/notes/x.md`, its query given by `params` (None values left out). `base`
    is the viewer's secret path prefix (`Viewer.base`): every address it makes carries it."""
    return _with_query(f"{base}/page/" + quote(path), params)


def history_url(base: str, path: str) -> str:
    return f"{base}/history/" + quote(path)


def edit_url(base: str, path: str) -> str:
    return f"{base}/edit/" + quote(path)


def go_url(base: str, ref: str) -> str:
    """Where a `[[link]]` to a page not known here goes: `/go` finds it by title, path or id."""
    return _with_query(f"{base}/go", {"ref": ref})


def _with_query(url: str, params: Mapping[str, str | None]) -> str:
    given = {k: v for k, v in params.items() if v}
    return url + ("?" + urlencode(given) if given else "")


@lru_cache(maxsize=1)
def _markdown() -> Any:

    # html: False means raw HTML in a page is text: a page is data, never markup to obey.
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("wikilink", _render_wikilink)
    return md


def _wikilink_rule(state: Any, silent: bool) -> bool:

    src, pos = state.src, state.pos
    if not (src.startswith("[[", pos) or src.startswith("![[", pos)):
        return False
    match = WIKI_LINK.match(src, pos)
    if match is None or not match.group(1).strip():
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {
            "target": match.group(1).strip(),
            "heading": (match.group(2) or "").strip() or None,
            "alias": (match.group(3) or "").strip() or None,
        }
        token.content = match.group(0)
    state.pos = match.end()
    return True


def _render_wikilink(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Mapping[str, Any]) -> str:
    meta = tokens[idx].meta
    target, heading, alias = meta["target"], meta["heading"], meta["alias"]
    label = alias or (f"{target} \u203a {heading}" if heading else target)
    base = env["base"]
    resolved = (env.get("links") or {}).get(target)
    if resolved:
        return f'<a class="wikilink" href="{escape(page_url(base, resolved))}">{escape(label)}</a>'
    if env.get("links") is not None:  # the page's links are known, and this one names no page
        title = "no page with this name yet"
        return f'<a class="wikilink missing" href="{escape(go_url(base, target))}" title="{title}">{escape(label)}</a>'
    return f'<a class="wikilink" href="{escape(go_url(base, target))}">{escape(label)}</a>'


def markdown(body: str, base: str, links: Mapping[str, str | None] | None = None) -> Markup:
    """A page body as HTML, its `[[links]]` under `base` (the viewer's path prefix). `links`
    maps each `[[target]]` as written to the page it resolves to (None: no such page);
    without it (a page at an old revision) links go through `/go`."""
    env = {"links": links, "base": base}
    return Markup(_markdown().render(body, env))


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def query_stems(query: str) -> set[str]:
    """The content words of a query, reduced to rough stems (`retries` -> `retri`)."""

    words = [w.lower() for w in _WORD.findall(query)]
    content = [w for w in words if w not in STOPWORDS] or words
    return {_stem(w) for w in content if len(w) > 1}


def highlight(text: str, query: str) -> Markup:
    """`text`, escaped, with the words that match the query's (by rough stem) in `<mark>`."""
    stems = query_stems(query)
    out: list[str] = []
    last = 0
    for match in _WORD.finditer(text):
        word = match.group(0)
        stem = _stem(word.lower())
        if stem in stems or any(len(s) >= 4 and stem.startswith(s) for s in stems):
            out.append(str(escape(text[last : match.start()])))
            out.append(f"<mark>{escape(word)}</mark>")
            last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def _parse(iso: str | None) -> datetime | None:
    try:
        return datetime.strptime(iso or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def ago(iso: str | None, now: datetime | None = None) -> str:
    """How long ago an ISO 8601 UTC time was (`3 h ago`; the date when it is months old)."""
    moment = _parse(iso)
    if moment is None:
        return iso or ""
    seconds = ((now or datetime.now(timezone.utc)) - moment).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    if seconds < 86400 * 60:
        return f"{int(seconds // 86400)} d ago"
    return moment.strftime("%Y-%m-%d")


def when(iso: str | None, now: datetime | None = None) -> str:
    """`2026-11-30 08:12 UTC (3 h ago)`, from an ISO 8601 UTC time."""
    moment = _parse(iso)
    if moment is None:
        return iso or ""
    return f"{moment.strftime('%Y-%m-%d %H:%M')} UTC ({ago(iso, now)})"


def diff_class(line: str) -> str:
    """The CSS class of a unified diff line."""
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"
