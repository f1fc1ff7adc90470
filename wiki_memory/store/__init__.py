"""The git-backed page store."""

from wiki_memory.store.paths import is_ignored, is_page_path, normalize_path
from wiki_memory.store.reading import page_type_counts
from wiki_memory.store.records import Author, CommitInfo, Edit, WriteResult, blob_id
from wiki_memory.store.store import Store

__all__ = [
    "Author",
    "CommitInfo",
    "Edit",
    "Store",
    "WriteResult",
    "blob_id",
    "is_ignored",
    "is_page_path",
    "normalize_path",
    "page_type_counts",
]
