"""The one way to commit: changes -> blobs, trees and a commit object -> the branch moved
-> the working tree and index brought along, as one transaction a killed writer's
successor finishes (`recover`).

A commit goes in this order, under the writer lock:

1. finish or discard a transaction a killed writer left behind (`recover`), and commit
   what a person edited by hand and did not commit yet, as their edit (`HandEdits`, which
   `Store.commit` calls first unless the caller did both already);
2. write the new blobs, trees and commit object (loose objects: a crash leaves at most
   unreferenced objects, which `git fsck` tolerates);
3. record the transaction, take git's `index.lock`, move the branch (an atomic
   compare-and-swap on the ref file: the commit has landed or it has not);
4. update the working tree files (write a temporary file, rename over) and the index
   entries of just those paths; drop the transaction record.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence

from dulwich.objects import Blob, Commit, Tree

from wiki_memory.errors import ConflictError, PathError, full_disk_is_one_line
from wiki_memory.store import gitindex, litter
from wiki_memory.store.context import Context
from wiki_memory.store.paths import check_inside, normalize_path
from wiki_memory.store.reading import BRANCH, HEAD, Reader, oid
from wiki_memory.store.records import TREE_MODE, Author, commit_message
from wiki_memory.store.worktree import WorkTree

Changes = Mapping[str, "bytes | None"]  # path -> new content, None to delete
Entry = tuple[int, bytes]  # (mode, blob id)
# path -> (its new tree entry or None if deleted, its content or None)
Landing = Mapping[str, tuple["Entry | None", "bytes | None"]]


class Committer:
    """The part of a `Store` that makes commits and lands them."""

    def __init__(self, context: Context, reader: Reader, worktree: WorkTree):
        self.context = context
        self.repo = context.repo
        self.reader = reader
        self.worktree = worktree
        self._txn_file = context.state_dir / "transaction.json"

    def message(
        self, subject: str, session_id: str | None, agent: str | None, body: str, trailers: Sequence[tuple[str, str]]
    ) -> bytes:
        """A commit message: `subject`, `body`, then the trailers, with this machine's `Host:`."""
        return commit_message(subject, session_id, agent, body, self.context.host, trailers)

    def commit(
        self,
        changes: Changes,
        message: bytes,
        author: Author,
        *,
        parents_extra: tuple[bytes, ...] = (),
        modes: Mapping[str, int] | None = None,
        from_files: bool = False,
    ) -> str | None:
        """Apply `changes` (path -> bytes, or None to delete) as one commit; None if nothing
        changed. The caller has committed a person's edits of these files first (see
        `Store.commit`, which says what `modes` and `from_files` do). A full disk is
        DiskFullError."""
        root = self.context.root
        with self.context.lock, full_disk_is_one_line(root):
            for path in changes:
                if normalize_path(path, page=False) != path:
                    raise PathError(f"{path!r} is not a clean wiki path")
                check_inside(root, path)
            head = self.reader.head()
            base_tree = self.reader.commit_object(head).tree if head else None
            if not parents_extra:  # a merge takes what the other side has, as it is
                self._refuse_case_clashes(base_tree, changes)
            objects: list[Blob | Tree | Commit] = []
            entries = self._blob_entries(changes, modes or {}, objects)
            tree_id = self._apply(base_tree, entries, objects)
            if tree_id == base_tree and not parents_extra:
                return None
            parents = ([head] if head else []) + list(parents_extra)
            commit = _new_commit(tree_id, parents, author, message)
            objects.append(commit)
            self._add_objects(objects)
            self.land(head, commit.id, {p: (entries[p], changes[p]) for p in changes}, from_files=from_files)
            self._maybe_pack()
        self.notify(commit.id, tuple(changes))
        return commit.id.decode()

    def _refuse_case_clashes(self, base_tree: bytes | None, changes: Changes) -> None:
        """PathError for a new path that differs only in case from one in the tree or in
        the same change (see `case_clash`)."""
        seen: dict[str, str] = {}
        deleted = {path for path, data in changes.items() if data is None}
        for path, data in changes.items():
            if data is None:
                continue
            clash = seen.get(path.casefold())
            if clash is None and base_tree is not None and self.reader.tree_entry(base_tree, path) is None:
                clash = self.reader.case_clash(base_tree, path)
            if clash is not None and clash != path and clash not in deleted:
                raise PathError(
                    f"{path!r} differs only in case from {clash!r}, and on macOS and Windows the two are one file; "
                    f"write to {clash!r} or choose another name"
                )
            seen[path.casefold()] = path

    def write_tree(self, base_tree: bytes | None, changes: Changes, modes: Mapping[str, int] | None = None) -> bytes:
        """The id of `base_tree` with `changes` (path -> bytes, or None to delete) applied,
        its new blobs and trees written to the object store; nothing is committed (a
        history built beside the branch: a sync replaying commits onto another history)."""
        objects: list[Blob | Tree | Commit] = []
        entries = self._blob_entries(changes, modes or {}, objects)
        tree_id = self._apply(base_tree, entries, objects)
        self._add_objects(objects)
        return tree_id

    def _add_objects(self, objects: list[Blob | Tree | Commit]) -> None:
        """Write loose objects; a stale lock on one (a killed writer's) is broken, see `litter`."""
        for obj in objects:
            litter.add_object(self.repo.object_store, obj)

    def _blob_entries(
        self, changes: Changes, modes: Mapping[str, int], objects: list[Blob | Tree | Commit]
    ) -> dict[str, Entry | None]:
        """The tree entry of each changed path (None: deleted); new blobs go to `objects`."""
        entries: dict[str, Entry | None] = {}
        for path, data in changes.items():
            if data is None:
                entries[path] = None
                continue
            blob = Blob.from_string(data)
            if blob.id not in self.repo.object_store:  # a merge's incoming blobs are there
                objects.append(blob)
            entries[path] = (modes[path] if path in modes else self.worktree.mode_for(path), blob.id)
        return entries

    def _apply(
        self,
        tree_id: bytes | None,
        changes: Mapping[str, Entry | None],
        objects: list[Blob | Tree | Commit],
    ) -> bytes:
        """The id of `tree_id` with `changes` applied; new trees are appended to `objects`."""
        tree = Tree.from_string(self.reader.tree(tree_id).as_raw_string()) if tree_id else Tree()  # a copy
        by_dir: dict[str, dict[str, Entry | None]] = {}
        for path, entry in changes.items():
            head, sep, rest = path.partition("/")
            if sep:
                by_dir.setdefault(head, {})[rest] = entry
            elif entry is None:
                if path.encode() in tree:
                    del tree[path.encode()]
            else:
                tree[path.encode()] = (entry[0], oid(entry[1]))
        for name, sub_changes in by_dir.items():
            key = name.encode()
            existing = tree[key][1] if key in tree and tree[key][0] == TREE_MODE else None
            sub_id = self._apply(existing, sub_changes, objects)
            if sub_id == Tree().id:
                if key in tree:
                    del tree[key]
            else:
                tree[key] = (TREE_MODE, oid(sub_id))
        objects.append(tree)
        return tree.id

    def land(
        self,
        parent: bytes | None,
        commit_id: bytes,
        changes: Landing,
        reflog: bytes | None = None,
        from_files: bool = False,
    ) -> None:
        """Move the branch to `commit_id`, then bring the working tree and index along
        (with `from_files`, only the index: the files already hold the commit)."""
        txn = {
            "parent": parent.decode() if parent else None,
            "commit": commit_id.decode(),
            "paths": sorted(changes),
            "time": time.time(),
            "from_files": from_files,
        }
        self._txn_file.write_text(json.dumps(txn))
        index_lock = self.worktree.take_index_lock()
        saved = False
        try:
            commit = self.reader.commit_object(commit_id)
            if not self.repo.refs.set_if_equals(
                HEAD,
                oid(parent) if parent else None,
                oid(commit_id),
                committer=commit.committer,
                timestamp=commit.commit_time,
                timezone=commit.commit_timezone,
                message=reflog or b"commit: " + commit.message.split(b"\n", 1)[0],
            ):
                raise ConflictError("the wiki's branch moved during the commit; try again")
            version, entries = self.worktree.index(parent)
            for path, (entry, data) in changes.items():
                key = path.encode("utf-8")
                target = self.context.root / path
                if entry is None:
                    if not from_files:
                        self.worktree.remove_file(target)
                    entries.pop(key, None)
                    continue
                mode, sha = entry
                if from_files:
                    entries[key] = self.worktree.entry_if_unchanged(key, target, sha, mode)
                    continue
                st = self.worktree.write_file(target, data or b"", mode)
                entries[key] = gitindex.make_entry(key, st, sha, mode)
            self.worktree.save_index(index_lock, version, entries, commit_id)
            saved = True
        finally:
            if not saved:
                try:
                    os.unlink(index_lock)
                except FileNotFoundError:
                    pass
        self._txn_file.unlink(missing_ok=True)

    def notify(self, commit_id: bytes, paths: tuple[str, ...]) -> None:
        """Tell the observers (the search index) about a landed commit."""
        for observer in list(self.context.on_commit):
            observer(commit_id.decode(), paths)

    def recover(self) -> None:
        """Finish the working tree of a commit whose writer was killed after it landed."""
        if not self._txn_file.exists():
            return
        try:
            txn = json.loads(self._txn_file.read_text())
        except (OSError, ValueError):
            txn = {}
        # Lock files taken after the transaction record was written are the dead writer's.
        for lock in (self.context.git_dir / "index.lock", self.context.git_dir / (BRANCH.decode() + ".lock")):
            try:
                if lock.stat().st_mtime >= float(txn.get("time", 0)) - 1:
                    lock.unlink()
            except FileNotFoundError:
                pass
        for path in txn.get("paths", []):
            target = self.context.root / path
            for tmp in target.parent.glob(f".{target.name}.wm-tmp-*"):
                tmp.unlink(missing_ok=True)  # the dead writer's half-written file
        head = self.reader.head()
        if head is not None and txn.get("commit") == head.decode():
            # The commit landed; its files and index entries may not have. `index-head` still
            # names the parent, so the entries are rebuilt from HEAD's tree.
            version, entries = self.worktree.index(head)
            from_files = bool(txn.get("from_files"))
            tree = self.reader.commit_object(head).tree
            for path in txn.get("paths", []):
                key = path.encode("utf-8")
                entry = self.reader.tree_entry(tree, path)
                if entry is None:
                    if not from_files:
                        self.worktree.remove_file(self.context.root / path)
                    entries.pop(key, None)
                elif from_files:  # hand edits: the files are the person's; only the index follows
                    entries[key] = self.worktree.entry_if_unchanged(key, self.context.root / path, entry[1], entry[0])
                else:
                    mode, sha = entry
                    st = self.worktree.write_file(self.context.root / path, self.reader.data(sha), mode)
                    entries[key] = gitindex.make_entry(key, st, sha, mode)
            self.worktree.save_index(self.worktree.take_index_lock(), version, entries, head)
        self._txn_file.unlink(missing_ok=True)

    def _maybe_pack(self, limit: int = 6700) -> None:
        """Pack loose objects once there are many, as `git gc --auto` does (same estimate:
        the objects in one fan-out folder times 256). Reading packed history is ~4x faster."""
        try:
            sample = len(os.listdir(self.context.git_dir / "objects" / "17"))
        except FileNotFoundError:
            return
        if sample * 256 > limit:
            self.pack()

    def pack(self) -> None:
        """Move every loose object into a pack (under the writer lock)."""
        with self.context.lock:
            self.repo.object_store.pack_loose_objects()


def _new_commit(tree_id: bytes, parents: list[bytes], author: Author, message: bytes) -> Commit:
    """A commit object of `tree_id`, authored and committed now by `author`."""
    commit = Commit()
    commit.tree = oid(tree_id)
    commit.parents = [oid(p) for p in parents]
    commit.author = commit.committer = author.ident()
    now = int(time.time())
    offset = time.localtime(now).tm_gmtoff
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = offset
    commit.encoding = None
    commit.message = message
    return commit
