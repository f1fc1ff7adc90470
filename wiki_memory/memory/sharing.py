"""Sharing memory through git remotes: the remotes, and syncing with one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.rules import utf8
from wiki_memory.memory.secrets import Secrets

if TYPE_CHECKING:
    from wiki_memory.sync import Remote, SyncReport


class Sharing(Secrets):
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

    def sync(
        self,
        remote: str | None = None,
        *,
        progress: Callable[[str, int, int], None] | None = None,
        replace_remote_history: bool = False,
        keep_remote_history: bool = False,
    ) -> SyncReport:
        """Commit pending hand edits, fetch, merge page by page, push, and index what arrived
        (embedding it on every core: someone waits for it). What came in is checked for
        secrets with the redaction rules and reported, never altered.

        After `forget` here, a sync refuses while the remote has the old history:
        `replace_remote_history` replaces it (a force-push with a lease), and
        `keep_remote_history` takes it back instead. After a `forget` on another machine,
        the sync adopts the new history (see `sync.rewritten`) and the journals, logs and
        context here are scrubbed of what was forgotten."""
        from wiki_memory.capture.redact import find, reload_user_patterns
        from wiki_memory.sync import SyncError, sync

        note = self.finish_interrupted_forget()
        index = self.index
        if index is not None:
            index.embedder.for_bulk()
        reload_user_patterns()
        try:
            report = sync(
                self.store(),
                remote,
                index=index,
                progress=progress,
                find=find,
                replace_history=replace_remote_history,
                keep_history=keep_remote_history,
            )
        except SyncError as e:
            if note:
                raise SyncError(f"{note}; {e}") from None
            raise
        report.recovered = note
        self._after_sync(report)
        return report

    def _after_sync(self, report: SyncReport | None) -> None:
        """A sync that adopted another machine's rewrite: the texts forgotten there out of
        this machine's journals, logs and context (the sync rebuilt the index)."""
        if report is not None and report.adopted is not None:
            texts = [t.decode("utf-8", "surrogateescape") for t in report.adopted.forgotten]
            self._after_rewrite(texts)
