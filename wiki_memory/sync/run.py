"""One sync with a remote: commit pending hand edits, fetch, merge, push, re-index.

Network work (fetch, push) runs without the writer lock, so agents keep writing while a
slow remote answers; the merge itself runs under it. If someone pushed between our fetch
and our push, the push is refused (a compare-and-swap on the remote's `main`) and the
round starts again: nothing on the remote is ever overwritten, except on request after
`forget` (`replace_history`: a force-push with a lease; see `rewritten`).

What comes in is never altered: secrets the caller's `find` sees in the commits received
are reported (`SyncReport.secrets`), for `scan` and `forget` to deal with.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dulwich.file import FileLocked
from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref

from wiki_memory.config import Settings, replace_file
from wiki_memory.store import Author, Edit, Store, received
from wiki_memory.store.litter import clean_after_dead_sync
from wiki_memory.store.lock import WriterLock
from wiki_memory.store.records import EXEC_MODE, FILE_MODE, LINK_MODE
from wiki_memory.store.rewrite import Finding, Rules, interrupted, scan
from wiki_memory.sync import rewritten, transport
from wiki_memory.sync.merge import MergeResult, merge_trees
from wiki_memory.sync.remotes import Remote, default_remote
from wiki_memory.sync.rewritten import Adoption
from wiki_memory.sync.transport import RemoteMoved, SyncError

if TYPE_CHECKING:
    from wiki_memory.index import Index, SyncStats

ATTEMPTS = 5


@dataclass
class SyncReport:
    """What a sync did, for people (`sync` prints it) and scripts (`--json`)."""

    remote: str
    url: str
    edits: list[Edit] = field(default_factory=list)  # hand edits committed first
    received_commits: int = 0
    sent_commits: int = 0
    received: list[str] = field(default_factory=list)  # files changed here by what came in
    merged: list[str] = field(default_factory=list)  # changed on both sides, merged line by line
    # (page, copy): a merge keeps this machine's version in the page and the remote's in the
    # copy; an adoption (replaying our commits onto a rewritten history) the other way round,
    # its copies listed in `ours_copied`.
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    ours_copied: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # deleted on one side, edited on the other
    renamed: list[tuple[str, str]] = field(default_factory=list)
    fast_forward: bool = False
    merge_commit: str | None = None
    head: str | None = None
    index: SyncStats | None = None  # the search index's after re-indexing what changed
    index_warning: str | None = None
    secrets: list[Finding] = field(default_factory=list)  # in what came in (left as it was written)
    adopted: Adoption | None = None  # the remote's history was rewritten elsewhere and adopted here
    replaced: str | None = None  # the remote's old `main`, replaced by this machine's rewritten history
    kept_remote_history: bool = False  # the record of a rewrite here was dropped on request
    recovered: str | None = None  # an interrupted `forget` finished or undone first

    @property
    def changed_here(self) -> list[str]:
        paths = list(self.received) + list(self.merged) + [p for pair in self.conflicts for p in pair]
        paths += list(self.kept) + [new for _, new in self.renamed]
        return sorted(set(paths))

    def as_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "url": self.url,
            "head": self.head,
            "edits": [{"commit": e.commit, "subject": e.subject, "paths": list(e.paths)} for e in self.edits],
            "received_commits": self.received_commits,
            "sent_commits": self.sent_commits,
            "fast_forward": self.fast_forward,
            "merge_commit": self.merge_commit,
            "received": self.received,
            "merged": self.merged,
            "conflicts": [
                {"page": p, "copy": c, "copy_holds": "this machine's" if c in self.ours_copied else "remote's"}
                for p, c in self.conflicts
            ],
            "kept": self.kept,
            "renamed": [{"from": a, "to": b} for a, b in self.renamed],
            "index": self.index.as_dict() if self.index is not None else None,
            "index_warning": self.index_warning,
            "secrets": [f.as_dict() for f in self.secrets],
            "adopted": self.adopted.as_dict() if self.adopted is not None else None,
            "replaced": self.replaced,
            "kept_remote_history": self.kept_remote_history,
            "recovered": self.recovered,
        }


def _settings() -> Settings:
    from wiki_memory.config import load_settings

    return load_settings()


def _count(store: Store, include: bytes, exclude: bytes | None) -> int:
    walker = store.repo.get_walker(include=[ObjectID(include)], exclude=[ObjectID(exclude)] if exclude else None)
    return sum(1 for _ in walker)


def _receive(store: Store, include: bytes, exclude: bytes | None) -> int:
    """Record the commits `include` brings that `exclude` does not have as received (what
    came by sync is told from what was written here: `store.received`); how many."""
    walker = store.repo.get_walker(include=[ObjectID(include)], exclude=[ObjectID(exclude)] if exclude else None)
    return received.record(store.repo, [entry.commit.id for entry in walker])


def _only_init(store: Store, ours: bytes, theirs: bytes) -> bool:
    """Our history is one root commit whose every file the remote has too (a wiki just
    created on a second machine): taking theirs loses nothing and keeps history linear."""
    commit = store.repo[ours]
    if commit.parents:  # type: ignore[attr-defined]
        return False
    theirs_files = dict(store.files(theirs))
    return all(theirs_files.get(path) == blob for path, blob in store.files(ours))


def _merge_message(remote: Remote, result: MergeResult) -> tuple[str, str]:
    counts = [f"{len(result.received)} received"] if result.received else []
    if result.merged:
        counts.append(f"{len(result.merged)} merged")
    if result.conflicts:
        counts.append(f"{len(result.conflicts)} conflict{'s' if len(result.conflicts) > 1 else ''} kept")
    subject = f"sync: merge {remote.name}" + (f" ({', '.join(counts)})" if counts else "")
    lines: list[str] = []

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.append(title)
            lines.extend(f"- {item}" for item in items)
            lines.append("")

    section(f"Taken from {remote.name} (changed there only):", result.received)
    section("Changed on both sides, merged line by line:", result.merged)
    section(
        "Changed on both sides at the same lines; both versions kept:",
        [f"{page} (this machine's version; {remote.name}'s is in {copy})" for page, copy in result.conflicts],
    )
    section("Deleted on one side, edited on the other; kept, edited:", result.kept)
    section(
        "Renamed on one side, edited on the other; the edit follows the page:",
        [f"{old} -> {new}" for old, new in result.renamed],
    )
    return subject, "\n".join(lines).strip()


def _check_incoming(store: Store, remote: Remote, theirs: bytes | None, before: bytes | None) -> None:
    """Refuse a remote `main` that would write outside the wiki's pages (`.git/hooks/...`,
    `../x`): git itself refuses such trees on checkout. The remote-tracking ref goes back
    to what it was, so nothing here refers to the refused commit."""
    from wiki_memory.errors import PathError
    from wiki_memory.store import normalize_path

    if theirs is None:
        return
    ours = store.head()
    ours_tree = _tree(store, ours) if ours else None
    their_tree = _tree(store, theirs)
    for path, _old, new in store.changed_files(ours_tree, their_tree):
        try:
            clean = normalize_path(path, page=False) == path
        except PathError:
            clean = False
        entry = store.tree_entry(their_tree, path) if clean and new is not None else None
        if entry is not None and entry[0] not in (FILE_MODE, EXEC_MODE):
            # A symbolic link (or a submodule): checked out, a link would let an editor, or our
            # next write, reach outside the wiki; and every later sync failed on it.
            what = "a symbolic link" if entry[0] == LINK_MODE else "a submodule"
            _forget_tracking(store, remote, before)
            raise SyncError(
                f"remote {remote.name!r} has a commit ({theirs.decode()[:8]}) that makes {path!r} {what}, which "
                "wiki-memory will not check out; nothing was changed here. Replace it with a file in the remote "
                "repository with git, then sync again."
            )
        if not clean:
            _forget_tracking(store, remote, before)
            raise SyncError(
                f"remote {remote.name!r} has a commit ({theirs.decode()[:8]}) with the path {path!r}, "
                "which wiki-memory will not write; nothing was changed here. Fix the remote "
                "repository with git, then sync again."
            )


def _forget_tracking(store: Store, remote: Remote, before: bytes | None) -> None:
    """The remote-tracking ref back to what it was, so nothing here refers to a refused commit."""
    ref = transport.tracking_ref(remote)
    if before is None:
        store.repo.refs.remove_if_equals(Ref(ref), None)
    else:
        store.repo.refs[Ref(ref)] = ObjectID(before)


def _integrate(
    store: Store,
    remote: Remote,
    theirs: bytes | None,
    report: SyncReport,
    author: Author,
    host: str,
    tracked: bytes | None = None,
) -> None:
    """Bring the remote's `main` into ours (under the writer lock): nothing to do, a
    fast-forward, the adoption of a history rewritten elsewhere (`tracked`: what we last
    synced with), or a merge commit."""
    ours = store.head()
    if theirs is None or theirs == ours:
        return
    bases = merge_bases(store.repo, ours, theirs) if ours is not None else []
    if ours is not None and bases == [theirs]:
        return  # we are ahead: only a push is needed
    if ours is None or bases == [ours] or _only_init(store, ours, theirs):
        report.received_commits += _receive(store, theirs, ours if bases == [ours] else None)
        changed = store.advance(theirs, reflog=f"sync: fast-forward from {remote.name}")
        report.received.extend(changed)
        report.fast_forward = True
        return
    found = rewritten.find_rewrite(store, ours, theirs, tracked)
    if found is not None:
        # Trigger: what we last synced is no longer in the remote's history, a rewritten copy is.
        # Why not merge: our old commits would bring back what was forgotten there.
        report.received_commits += _receive(store, theirs, found.tracked_copy)
        report.adopted = rewritten.adopt(store, found, theirs, host=host, remote=remote.name)
        report.received.extend(report.adopted.changed)
        report.conflicts.extend(report.adopted.conflicts)
        report.ours_copied.extend(copy for _page, copy in report.adopted.conflicts)
        return
    base = bases[0] if bases else None
    base_tree = _tree(store, base) if base else None
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    result = merge_trees(
        store,
        base_tree,
        _tree(store, ours),
        _tree(store, theirs),
        host=host,
        date=date,
        source=remote.name,
        their_host=lambda path: _host_of(store, theirs, ours, path) or remote.name,
    )
    subject, body = _merge_message(remote, result)
    report.received_commits += _receive(store, theirs, ours)
    report.merge_commit = store.commit(
        result.changes, subject, author, body=body, commit_hand_edits=False, parents_extra=(theirs,), modes=result.modes
    )
    report.received.extend(result.received)
    report.merged.extend(result.merged)
    report.conflicts.extend(result.conflicts)
    report.kept.extend(result.kept)
    report.renamed.extend(result.renamed)


def _tree(store: Store, commit_id: bytes) -> bytes:
    commit = store.repo[commit_id]
    if not isinstance(commit, Commit):
        raise SyncError(f"{commit_id.decode()[:8]} is not a commit")
    return commit.tree


def merge_bases(repo: Any, ours: bytes, theirs: bytes) -> list[bytes]:
    """The best common ancestors of two commits, as `git merge-base --all` gives them.

    dulwich's `find_merge_base` walks commits newest first by commit time. Commits made in
    the same second (two machines syncing right after a write) can come out parent before
    child, and then an ancestor of the true base is returned beside it: a fast-forward
    looked like a merge, and the two machines made merge commits that never converged (1
    sync test run in ~12). A base that another base reaches is not a best one: it goes.
    """
    from dulwich.graph import find_merge_base

    bases: list[bytes] = list(find_merge_base(repo, [ObjectID(ours), ObjectID(theirs)]))
    if len(bases) < 2:
        return bases
    return [b for b in bases if not any(other != b and _reaches(repo, other, b) for other in bases)]


def _reaches(repo: Any, start: bytes, target: bytes) -> bool:
    """Is `target` among the ancestors of `start` (itself included)?"""
    seen = {start}
    todo = [start]
    while todo:
        commit = todo.pop()
        if commit == target:
            return True
        for parent in repo[commit].parents:
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return False


def _host_of(store: Store, theirs: bytes, ours: bytes, path: str) -> str | None:
    """The machine (`Host:` trailer) of the newest commit on their side that changed `path`."""
    for entry in store.repo.get_walker(include=[ObjectID(theirs)], exclude=[ObjectID(ours)]):
        commit = entry.commit
        mine = store.blob_at(path, commit.id)
        if not commit.parents or any(store.blob_at(path, p) != mine for p in commit.parents):
            trailers = store.commit_info(commit, with_paths=False).trailers
            if trailers.get("Host"):
                return trailers["Host"]
    return None


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
        _check_incoming(store, chosen, theirs, tracked)
        with store.lock:
            report.edits.extend(store.commit_edits(author=author))
            _integrate(store, chosen, theirs, report, author, host, tracked)
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
