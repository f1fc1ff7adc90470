"""Sharing memory through git remotes: the remotes, and syncing with one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.base import MemoryBase
from wiki_memory.memory.rules import utf8

if TYPE_CHECKING:
    from wiki_memory.sync import Remote, SyncReport


class Sharing(MemoryBase):
    def remotes(self) -> list[tuple[Remote, dict[str, Any]]]:
        """Each remote with what its last sync did (last_success, last_attempt, last_error)."""
        from wiki_memory.sync import list_remotes, sync_state

        store = self.store()
        state = sync_state(store)
        return [(remote, state.get(remote.name, {})) for remote in list_remotes(store)]

    def add_remote(self, name: str, url: str) -> Remote:
        """Add a remote to sync with (the wiki is created if needed)."""
        from wiki_memory.sync import add_remote

        utf8("name", name)
        utf8("url", url)
        return add_remote(self.store(create=True), name, url)

    def remove_remote(self, name: str) -> Remote:
        from wiki_memory.sync import remove_remote

        return remove_remote(self.store(), name)

    def sync(self, remote: str | None = None, *, progress: Callable[[str, int, int], None] | None = None) -> SyncReport:
        """Commit pending hand edits, fetch, merge page by page, push, and index what arrived
        (embedding it on every core: someone waits for it)."""
        from wiki_memory.sync import sync

        index = self.index
        if index is not None:
            index.embedder.for_bulk()
        return sync(self.store(), remote, index=index, progress=progress)
