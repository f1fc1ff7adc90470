"""One sync with a remote: commit pending hand edits, fetch, merge, push, re-index.

Network work (fetch, push) runs without the writer lock, so agents keep writing while a
slow remote answers; the merge itself runs under it (`integrate`). If someone pushed
between our fetch and our push, the push is refused (a compare-and-swap on the remote's
`main`) and the round starts again: nothing on the remote is ever overwritten, except on request after
`forget` (`replace_history`: a force-push with a lease; see `rewritten`).

What comes in is never altered: secrets the caller's `find` sees in the commits received
are reported (`SyncReport.secrets`), for `scan` and `forget` to deal with.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dulwich.file import FileLocked
from dulwich.objects import ObjectID
from dulwich.refs import Ref

from wiki_memory.config import Settings, load_settings, replace_file
from wiki_memory.store import Author, Store
from wiki_memory.store.litter import clean_after_dead_sync
from wiki_memory.store.lock import WriterLock
from wiki_memory.store.rewrite import Rules, interrupted, scan
from wiki_memory.sync import rewritten, transport
from wiki_memory.sync.integrate import check_incoming, integrate
from wiki_memory.sync.remotes import Remote, default_remote
from wiki_memory.sync.report import SyncReport
from wiki_memory.sync.transport import RemoteMoved, SyncError

if TYPE_CHECKING:
    from wiki_memory.index import Index

ATTEMPTS = 5


def _settings() -> Settings:

    return load_settings()


def _count(store: Store, include: bytes, exclude: bytes | None) -> int:
    walker = store.repo.get_walker(include=[ObjectID(include)], exclude=[ObjectID(exclude)] if exclude else None)
    return sum(1 for _ in walker)


def _record(store: Store, remote: Remote, error: str | None) -> None:
    """Remember the last sync per remote (shown by `remote list`)."""
    path = store.git_dir / "wiki-memory" / "sync-state.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        state = {}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = state.setdefault(remote.name, {})
    entry["last_attempt"] = now
    entry["last_error"] = error
    if error is None:
        entry["last_success"] = now
    replace_file(path, json.dumps(state, indent=2))


def sync_state(store: Store) -> dict[str, dict[str, Any]]:
    try:
        return json.loads((store.git_dir / "wiki-memory" / "sync-state.json").read_text())
    except (OSError, ValueError):
        return {}


def sync(
    store: Store,
    remote: str | None = None,
    *,
    index: Index | None = None,
    author: Author | None = None,
    host: str | None = None,
    attempts: int = ATTEMPTS,
    progress: Any = None,
    find: Rules | None = None,
    replace_history: bool = False,
    keep_history: bool = False,
) -> SyncReport:
    """Sync the wiki with a remote: commit pending hand edits, fetch, merge, push, and
    re-index what changed in `index` (the project's search index; `progress` as `Index.sync`
    takes it). Raises SyncError (local work intact) when the remote cannot be reached or
    keeps moving.

    `find` (text -> secrets' spans, the redaction rules) checks what comes in. After this
    wiki's history was rewritten (`forget`), a sync refuses while the remote has the old
    history: `replace_history` force-pushes ours in its place (with a lease), and
    `keep_history` drops the record of the rewrite (the old history comes back)."""
    settings = _settings()
    chosen = default_remote(store, remote or settings.sync.remote or None)
    host = host or store.host
    author = author or Author.person(store.root)
    report = SyncReport(chosen.name, chosen.shown)
    # Two syncs of one wiki (a person's and an automatic one) take turns.
    with WriterLock(store.git_dir / "wiki-memory" / "sync.lock", timeout=600, recover=_after_dead_sync(store)):
        if interrupted(store):
            # Its refs may have moved and the remotes' leases not be recorded yet: a fetch
            # would bring the forgotten history back, and the push send it on.
            raise SyncError(
                "an interrupted `wiki-memory forget` is not finished: nothing was fetched or pushed; run "
                "`wiki-memory sync` (or `forget`) again, which finishes it first"
            )
        try:
            report.edits.extend(store.commit_edits(author=author))
            if keep_history and rewritten.recorded(store, chosen.name) is not None:
                rewritten.clear(store, chosen.name)
                report.kept_remote_history = True
            if replace_history:
                _replace(store, chosen, report)
            else:
                _refuse_old_history(store, chosen)
                _rounds(store, chosen, report, author, host, attempts, find)
        except FileLocked as e:
            # A lock of git's that is not a dead sync's of ours (another git command's).
            lock = os.fsdecode(e.lockfilename)
            _record(store, chosen, f"{lock} exists")
            raise SyncError(
                f"{lock} exists: a git command is writing the wiki (remove the file if none is running); "
                "your local memory is intact"
            ) from None
        except Exception as e:
            _record(store, chosen, str(e).splitlines()[0] if str(e) else type(e).__name__)
            raise
        _record(store, chosen, None)
        head = store.head()
        report.head = head.decode() if head else None
    if index is not None:
        try:
            if report.adopted is not None:  # from scratch: the old index holds the forgotten text
                report.index = index.sync(store, progress=progress, full=True, keep_vectors=True)
            else:
                report.index = index.sync(store, progress=progress)
        except Exception as e:  # noqa: BLE001 - the index is derived data: the sync itself succeeded
            report.index_warning = f"the search index was not updated ({e}); `wiki-memory reindex` catches up"
    return report


def _after_dead_sync(store: Store) -> Callable[[float], None]:
    """What a sync killed midway left (temporary packs, a remote-tracking ref's lock) goes
    when the next one starts; under the writer lock, which a writer packing its objects
    holds."""

    def recover(since: float) -> None:
        with store.lock:
            clean_after_dead_sync(store.git_dir, since)

    return recover


def _rounds(
    store: Store, chosen: Remote, report: SyncReport, author: Author, host: str, attempts: int, find: Rules | None
) -> None:
    """Fetch, merge and push until the push lands (someone may push in between)."""
    start = store.head()
    theirs: bytes | None = None
    for _ in range(attempts):
        tracked = store.repo.refs.as_dict().get(Ref(transport.tracking_ref(chosen)))
        theirs = transport.fetch(store, chosen)
        check_incoming(store, chosen, theirs, tracked)
        with store.lock:
            report.edits.extend(store.commit_edits(author=author))
            integrate(store, chosen, theirs, report, author, host, tracked)
        ours = store.head()
        if ours is None or ours == theirs:
            break
        sending = _count(store, ours, theirs)
        try:
            transport.push(store, chosen, ours, theirs)
        except RemoteMoved:
            time.sleep(0.05)
            continue
        report.sent_commits += sending
        break
    else:
        raise SyncError(
            f"remote {chosen.name!r} changed during each of {attempts} attempts to sync; "
            "your local memory is intact and merged with what arrived; try again"
        )
    if find is not None and theirs is not None and report.received_commits:
        # The old history is gone after an adoption: what came in is what follows our old sync's copy.
        since = report.adopted.since if report.adopted is not None else (start.decode() if start else None)
        report.secrets = scan(store, find, include=[theirs], exclude=[since.encode()] if since else [])


def _moved(remote: Remote, current: bytes, old: str) -> SyncError:
    return SyncError(
        f"remote {remote.name!r} moved since this wiki's history was rewritten here (its main is "
        f"{current.decode()[:8]}, the rewrite expected {old[:8]}): someone pushed onto the old history, and "
        "replacing it would drop their commits. Nothing was pushed. To keep their commits, run `wiki-memory sync "
        "--keep-remote-history` (the old history, and what was forgotten, come back), then forget again"
    )


def _refuse_old_history(store: Store, remote: Remote) -> None:
    """After a rewrite here, refuse to fetch while the remote has the old history (it would
    bring the forgotten text back); once the remote has ours, the record goes."""
    old = rewritten.recorded(store, remote.name)
    if old is None:
        return
    current = transport.peek(store, remote)
    if current is not None and current.decode() == old:
        raise SyncError(
            f"this wiki's history was rewritten here (`wiki-memory forget`) and remote {remote.name!r} still has "
            "the old one, which a sync would bring back: run `wiki-memory sync --replace-remote-history` to "
            "replace it (a force-push that checks nobody pushed meanwhile)"
        )
    if current is not None and ObjectID(current) not in store.repo.object_store:
        raise _moved(remote, current, old)
    rewritten.clear(store, remote.name)  # the remote is empty, or already has this history


def _replace(store: Store, remote: Remote, report: SyncReport) -> None:
    """Force-push our rewritten history in place of the remote's old one, with the remote's
    `main` as it was at the rewrite for the lease: if someone pushed since, refuse."""
    old = rewritten.recorded(store, remote.name)
    if old is None:
        raise SyncError(
            f"nothing to replace: this wiki's history was not rewritten since it last synced with remote "
            f"{remote.name!r}; run `wiki-memory sync`"
        )
    head = store.head()
    current = transport.peek(store, remote)
    if head is None or current == head:
        rewritten.clear(store, remote.name)
        return
    if current is not None and current.decode() != old:
        raise _moved(remote, current, old)
    try:
        transport.push(store, remote, head, current, replacing=True)
    except RemoteMoved:
        raise _moved(remote, transport.peek(store, remote) or b"(none)", old) from None
    rewritten.clear(store, remote.name)
    report.replaced = old
    report.sent_commits = _count(store, head, None)
