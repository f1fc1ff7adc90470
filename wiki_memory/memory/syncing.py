"""Syncing memory through git remotes: the remotes, syncing with one (by hand, or after a
consolidation when `[sync] auto = true`), and both tiers at once (`wiki-memory sync`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.rules import utf8
from wiki_memory.memory.secrets import Secrets
from wiki_memory.memory.team import Teams, TierSync
from wiki_memory.sync import SyncError, add_remote, list_remotes, maybe_auto_sync, remove_remote, sync, sync_state

if TYPE_CHECKING:
    from wiki_memory.sync import Remote, SyncReport


class Syncing:
    """Remotes and syncing (see the module docstring); a sync that adopted another
    machine's history rewrite has the forgotten texts scrubbed here too (`Secrets`)."""

    def __init__(self, context: MemoryContext, secrets: Secrets, teams: Teams) -> None:
        self.context = context
        self.project = context.project
        self.secrets = secrets
        self.teams = teams

    def remotes(self) -> list[tuple[Remote, dict[str, Any]]]:
        """Each remote with what its last sync did (last_success, last_attempt, last_error)."""
        store = self.context.store()
        state = sync_state(store)
        return [(remote, state.get(remote.name, {})) for remote in list_remotes(store)]

    def add_remote(self, name: str, url: str) -> Remote:
        """Add a remote to sync with (the wiki is created if needed)."""
        utf8("name", name)
        utf8("url", url)
        return add_remote(self.context.store(create=True), name, url)

    def remove_remote(self, name: str) -> Remote:
        return remove_remote(self.context.store(), name)

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
        from wiki_memory.capture.redact import (  # deferred: the redaction rules compile their patterns on import
            find,
            reload_user_patterns,
        )

        note = self.secrets.finish_interrupted_forget()
        index = self.context.index
        if index is not None:
            index.embedder.for_bulk()
        reload_user_patterns()
        try:
            report = sync(
                self.context.store(),
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
        self.after_sync(report)
        return report

    def after_sync(self, report: SyncReport | None) -> None:
        """After every sync (by hand or automatic): one that adopted another machine's
        rewrite has the texts forgotten there taken out of this machine's journals, logs
        and context (the sync rebuilt the index)."""
        if report is not None and report.adopted is not None:
            texts = [t.decode("utf-8", "surrogateescape") for t in report.adopted.forgotten]
            self.secrets.after_rewrite(texts)

    def auto_sync(self) -> None:
        """Sync with the remote after a consolidation when `[sync] auto = true`; never
        raises (failures go to logs/sync.log and are retried next time)."""
        from wiki_memory.capture.redact import find  # deferred: the redaction rules compile their patterns on import

        try:
            self.secrets.finish_interrupted_forget()
        except Exception:  # noqa: BLE001 - never fails the caller; the sync below refuses and logs it
            pass
        self.after_sync(maybe_auto_sync(self.project, self.context.store(), self.context.index, find=find))

    def sync_tiers(self, remote: str | None = None, *, team_only: bool = False, **options: Any) -> TierSync:
        """`wiki-memory sync`: the personal wiki with its remote (the one named, else its
        default) when it has one, and the team tier when the project joined one. Naming a
        remote syncs the personal wiki only; `team_only` the team tier only."""
        joined = self.teams.joined
        if team_only:
            return TierSync(None, self.teams.team_sync(**options))
        has_remote = remote is not None or (self.context.exists and bool(list_remotes(self.context.store())))
        personal = self.sync(remote, **options) if has_remote or not joined else None
        shared = self.teams.team_sync() if joined and remote is None else None
        return TierSync(personal, shared)
