"""Syncing after each consolidation when `[sync] auto = true`: quietly, and never failing
the caller. A failure is logged to `WIKI_MEMORY_HOME/logs/sync.log`; the next
consolidation tries again, and the commits that were not pushed go with it."""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from wiki_memory import logs
from wiki_memory.config import load_settings
from wiki_memory.errors import WikiMemoryError
from wiki_memory.sync.remotes import list_remotes
from wiki_memory.sync.run import sync

if TYPE_CHECKING:
    from wiki_memory.config import Project, Settings
    from wiki_memory.index import Index
    from wiki_memory.store import Store
    from wiki_memory.store.rewrite import Rules
    from wiki_memory.sync.report import SyncReport


def _log(project: Project, message: str) -> None:
    logs.write("sync", f"{getattr(project, 'id', None) or '?'} {message}")


def auto_sync_enabled(settings: Settings) -> bool:
    return settings.sync.auto


def maybe_auto_sync(
    project: Project, store: Store, index: Index | None = None, find: Rules | None = None
) -> SyncReport | None:
    """Sync `store` with its remote when `[sync] auto = true` in config.toml and a remote is
    configured (`find`: as `sync` takes it); the report, or None when it did not sync.
    Never raises: consolidation calls it after each commit."""
    try:
        settings = load_settings()
        if not auto_sync_enabled(settings) or not list_remotes(store):
            return None
        report = sync(store, index=index, find=find)
        summary = (
            f"synced with {report.remote}: received {report.received_commits} commit(s), sent {report.sent_commits}"
        )
        if report.conflicts:
            summary += "; conflicts kept: " + ", ".join(f"{p} (copy {c})" for p, c in report.conflicts)
        if report.adopted is not None:
            summary += f"; adopted its rewritten history ({len(report.adopted.replayed)} own commit(s) replayed)"
        if report.secrets:
            summary += "; secrets in what came in: " + ", ".join(
                sorted({f"{f.path or 'a commit message'} ({f.family})" for f in report.secrets})
            )
        _log(project, summary)
        return report
    except Exception as e:  # noqa: BLE001
        detail = str(e) if isinstance(e, WikiMemoryError) else traceback.format_exc()
        _log(project, f"auto-sync failed (will retry after the next consolidation): {detail}")
        return None
