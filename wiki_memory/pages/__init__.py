"""The page model: front matter, Markdown body, links, slugs and chunks.

Names are loaded on first use (PEP 562), so that a command that only needs `Page` does
not pay for markdown-it or PyYAML. Nothing is imported at the top either: the hook path
imports the light modules (`anchors`, `drift`, `status`, `fence`) without `typing`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import: the hook path reads `pages.status`
    from typing import Any

_EXPORTS = {
    "Chunk": "chunk",
    "chunk_text": "chunk",
    "MAX_WORDS": "chunk",
    "parse_page": "document",
    "render_page": "document",
    "Heading": "markdown",
    "WikiLink": "markdown",
    "first_heading": "markdown",
    "headings": "markdown",
    "wiki_links": "markdown",
    "CORE_KEYS": "model",
    "DATED_TYPES": "model",
    "FOLDERS": "model",
    "PAGE_TYPES": "model",
    "Anchor": "anchors",
    "parse_anchors": "anchors",
    "Drift": "drift",
    "drifted": "drift",
    "drift_note": "drift",
    "STATUSES": "status",
    "HIDDEN": "status",
    "handed_out": "status",
    "Page": "model",
    "folder_for": "model",
    "new_id": "model",
    "now_iso": "model",
    "path_for": "model",
    "type_from_path": "model",
    "slugify": "slug",
    "fence_safe": "fence",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module  # deferred: importlib only on a name's first use

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
