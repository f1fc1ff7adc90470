"""Bringing a remote's `main` into ours, under the writer lock: nothing to do, a fast-forward,
the adoption of a history rewritten elsewhere (see `rewritten`), or a merge commit whose
message says what was taken, merged, kept and renamed; and refusing, before any of it, a
remote commit with a path git would not check out (outside the wiki, a symbolic link).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from dulwich.graph import find_merge_base
from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref

from wiki_memory.errors import PathError
from wiki_memory.store import Author, Store, normalize_path, received
from wiki_memory.store.records import EXEC_MODE, FILE_MODE, LINK_MODE
from wiki_memory.sync import rewritten, transport
from wiki_memory.sync.merge import MergeResult, merge_trees
from wiki_memory.sync.remotes import Remote
from wiki_memory.sync.report import SyncReport
from wiki_memory.sync.transport import SyncError


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


def check_incoming(store: Store, remote: Remote, theirs: bytes | None, before: bytes | None) -> None:
    """Refuse a remote `main` that would write outside the wiki's pages (`.git/hooks/...`,
    `../x`): git itself refuses such trees on checkout. The remote-tracking ref goes back
    to what it was, so nothing here refers to the refused commit."""

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


def integrate(
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
