"""The search index: SQLite FTS5 plus embedding vectors, derived from the git store.

from wiki_memory.index import Index, SearchResult
idx = Index.open(project)
idx.attach(store)          # keep it current with the store's commits in this process
idx.sync(store)            # catch up with anything else (incremental, by git blob id)
idx.search("tests hang on the build server", k=8)
"""

from __future__ import annotations

from wiki_memory import lazy

TYPE_CHECKING = False  # no runtime `typing`: the hook path imports `index.readonly`
if TYPE_CHECKING:
    from wiki_memory.config import read_head
    from wiki_memory.index.embed import DEFAULT_MODEL, Embedder, ModelUnavailableWarning
    from wiki_memory.index.index import MODES, Index
    from wiki_memory.index.links import Link
    from wiki_memory.index.query import parse_since
    from wiki_memory.index.results import PageMeta, SearchResult, SyncStats
    from wiki_memory.index.snippets import cut
    from wiki_memory.index.tuning import Tuning
    from wiki_memory.index.vectors import embed_text

# Each name is imported from its module on first use (PEP 562): a process that needs one
# part (a search answered by the warm helper needs `SearchResult` alone) does not load the rest.
_WHERE = {
    "read_head": "wiki_memory.config",
    "DEFAULT_MODEL": "wiki_memory.index.embed",
    "Embedder": "wiki_memory.index.embed",
    "ModelUnavailableWarning": "wiki_memory.index.embed",
    "MODES": "wiki_memory.index.index",
    "Index": "wiki_memory.index.index",
    "Link": "wiki_memory.index.links",
    "parse_since": "wiki_memory.index.query",
    "PageMeta": "wiki_memory.index.results",
    "SearchResult": "wiki_memory.index.results",
    "SyncStats": "wiki_memory.index.results",
    "cut": "wiki_memory.index.snippets",
    "Tuning": "wiki_memory.index.tuning",
    "embed_text": "wiki_memory.index.vectors",
}


__getattr__ = lazy.names(__name__, _WHERE, globals())


__all__ = [
    "DEFAULT_MODEL",
    "MODES",
    "Embedder",
    "Index",
    "Link",
    "ModelUnavailableWarning",
    "PageMeta",
    "SearchResult",
    "SyncStats",
    "Tuning",
    "cut",
    "embed_text",
    "parse_since",
    "read_head",
]
