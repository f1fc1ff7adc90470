"""Sharing a wiki through git remotes: `remote add/list/remove`, `sync` (commit pending
hand edits, fetch, merge page by page, push, re-index) and the automatic sync that
consolidation triggers. Nothing of either side is ever lost: see `merge` for the rules.

dulwich's network clients and merge3 are imported only when a sync runs.
"""

from wiki_memory.store.records import machine_name
from wiki_memory.sync.auto import maybe_auto_sync
from wiki_memory.sync.remotes import Remote, add_remote, default_remote, list_remotes, remove_remote
from wiki_memory.sync.report import SyncReport
from wiki_memory.sync.rewritten import Adoption
from wiki_memory.sync.run import sync, sync_state
from wiki_memory.sync.transport import SyncError, UnreachableError

__all__ = [
    "Adoption",
    "Remote",
    "SyncError",
    "SyncReport",
    "UnreachableError",
    "add_remote",
    "default_remote",
    "list_remotes",
    "machine_name",
    "maybe_auto_sync",
    "remove_remote",
    "sync",
    "sync_state",
]
