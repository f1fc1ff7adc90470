"""The one place the watcher and sync bring the search index up to date.

`Index.sync(store)` is incremental by git blob id: after a commit or a merge only the
pages whose blob changed are re-chunked and re-embedded, so "index what changed" is
one call.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


class Reindexer:
    """Keeps a project's index open between calls (the watcher re-indexes after every
    settled edit; loading the embedding model once is what makes that cheap)."""

    def __init__(self, project: Any):
        self.project = project
        self._index: Any = None

    def __call__(self, store: Any) -> Any:
        """Re-index the pages that changed in `store` since the index last saw it."""
        if self.project is None:
            return None
        try:
            from wiki_memory.index import Index
        except ImportError:
            # The search index (wiki_memory.index) is not part of this installation yet.
            return None
        if self._index is None:
            self._index = Index.open(self.project)
        return self._index.sync(store)

    def close(self) -> None:
        if self._index is not None:
            index, self._index = self._index, None
            index.close()


def update_index(project: Any, store: Any) -> Any:
    """Re-index what changed, once (a sync, `watch --once`)."""
    reindexer = Reindexer(project)
    try:
        return reindexer(store)
    finally:
        reindexer.close()
