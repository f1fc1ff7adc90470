"""How much of a very large page is indexed and shown.

Pages that arrive by sync or by hand have no size limit (a write through wiki-memory is
capped, `store.MAX_PAGE_BYTES`; a file is whatever someone put there). Indexing one costs
seconds per megabyte (Markdown parsing, chunking, FTS) and the viewer rendered it whole: a
20 MB page took 86 s to show. So the index and the viewer take its first `[pages] large_kb`
kilobytes (256 by default), cut at a line's end, and say so; the file itself is never
changed, and the whole of it is in `wiki-memory show`, the raw view and git.
"""

from __future__ import annotations

from typing import Any

DEFAULT_KB = 256


def limit_bytes(settings: Any = None) -> int:
    """The setting `[pages] large_kb` in bytes (the default when absent or not a positive number)."""
    try:
        value = settings.pages.large_kb if settings is not None else DEFAULT_KB
    except AttributeError:  # not a Settings (a plain mapping in a caller's hands)
        value = DEFAULT_KB
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        value = DEFAULT_KB
    return int(value * 1024)


def head(text: str, limit: int) -> tuple[str, bool]:
    """(the first `limit` bytes of `text` cut at the end of a line, True) when it is larger,
    else (`text`, False)."""
    if len(text) <= limit // 4 or len(text.encode("utf-8", "surrogatepass")) <= limit:
        return text, False
    cut = text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")
    line_end = cut.rfind("\n")
    if line_end > len(cut) // 2:
        cut = cut[: line_end + 1]
    return cut, True
