"""The one place the watcher and sync bring the search index up to date.

`Index.sync(store)` is incremental by git blob id: after a commit or a merge only the
pages whose blob changed are re-chunked and re-embedded, so "index what changed" is
one call.
"""

from __future__ import annotations

from typing import Any


class Reindexer:
    """Keeps a project's index open between calls (the watcher re-indexes after every
    settled edit; loading the embedding model once is what makes that cheap). Given an
    open `index` (the CLI's), it uses that one and leaves closing it to its owner."""

    def __init__(self, project: Any, index: Any = None):
        self.project = project
        self._index: Any = index
        self._owned = index is None

    def __call__(self, store: Any, progress: Any = None) -> Any:
        """Re-index the pages that changed in `store` since the index last saw it; the
        index's SyncStats (None without a project). `progress(stage, done, total)` hears
        how indexing and embedding go (a sync that brings a thousand pages)."""
        if self._index is None:
            if self.project is None:
                return None
            from wiki_memory.index import Index

            self._index = Index.open(self.project)
        return self._index.sync(store, progress=progress)

    def close(self) -> None:
        if self._index is not None and self._owned:
            self._index.close()
        self._index = None


def update_index(project: Any, store: Any, index: Any = None, progress: Any = None) -> Any:
    """Re-index what changed, once (after a sync, `watch --once`)."""
    reindexer = Reindexer(project, index)
    try:
        return reindexer(store, progress)
    finally:
        reindexer.close()
