"""Keeping the search index caught up with the wiki: brought up to date on demand (every
core: someone waits), rebuilt from scratch after a history rewrite, opened early by a
long-lived server and embedded a slice at a time between its calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wiki_memory.memory.context import MemoryContext
from wiki_memory.recall import moment_table

if TYPE_CHECKING:
    from wiki_memory.index import SyncStats

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class IndexUpkeep:
    """The search index's upkeep (see the module docstring)."""

    def __init__(self, context: MemoryContext) -> None:
        self.context = context
        self.project = context.project

    def reindex(self, *, full: bool = False, embed: bool = True, progress: Progress | None = None) -> SyncStats:
        """Bring the search index up to date with the wiki (only changed pages are redone;
        `full`: rebuild it), embedding on every core: someone waits for it."""
        index = self.context.require_index()
        index.embedder.for_bulk()
        stats = index.sync(self.context.store(), progress=progress, embed=embed, full=full)
        moment_table.table(self.project)  # the shell hooks' table, so that no command pays for it
        return stats

    def rebuild(self, *, embed: bool = True, progress: Progress | None = None) -> SyncStats | None:
        """The search index rebuilt from scratch, in a new file: the old one holds the
        forgotten text. Vectors of chunks whose text did not change are carried over."""
        index = self.context.index
        if index is None:
            from wiki_memory.index.schema import remove_files  # deferred: the index, opened on first use

            remove_files(self.project.index_path)  # unreadable here, but it may hold the text
            return None
        index.embedder.for_bulk()
        return index.sync(self.context.store(), full=True, keep_vectors=True, embed=embed, progress=progress)

    def warm(self) -> None:
        """Open what the first call will need (the MCP server, while its client connects):
        the store, the index, and the index brought up to the wiki's HEAD (words only)."""
        if not self.context.exists:
            return
        store = self.context.store()
        index = self.context.index
        if index is not None and not index.in_step():
            index.sync(store, embed=False)

    def may_lack_vectors(self) -> bool:
        """Some chunks may still lack their vector, and the model is loaded in this process."""
        if not self.context.index_is_open:
            return False
        index = self.context.index
        return index is not None and index.embedder.loaded and index.may_lack_vectors()

    def embed_some(self, seconds: float) -> bool:
        """Embed chunks still without a vector for about `seconds` (the MCP server, between
        calls); True while some are left."""
        index = self.context.index if self.context.index_is_open else None
        return index is not None and index.embed_some(seconds)
