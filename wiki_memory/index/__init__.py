"""The search index: SQLite FTS5 plus embedding vectors, derived from the git store.

from wiki_memory.index import Index, SearchResult
idx = Index.open(project)
idx.attach(store)          # keep it current with the store's commits in this process
idx.sync(store)            # catch up with anything else (incremental, by git blob id)
idx.search("tests hang on the build server", k=8)
"""

from __future__ import annotations

from wiki_memory.config import read_head
from wiki_memory.index.embed import DEFAULT_MODEL, Embedder, ModelUnavailableWarning
from wiki_memory.index.index import MODES, Index
from wiki_memory.index.links import Link
from wiki_memory.index.query import parse_since
from wiki_memory.index.results import PageMeta, SearchResult, SyncStats
from wiki_memory.index.snippets import cut
from wiki_memory.index.tuning import Tuning
from wiki_memory.index.vectors import embed_text

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
