"""The rewritten history, built in memory: every commit reachable from any ref, parents
first, with the forgotten strings replaced and the forgotten pages dropped; new objects
and old id -> new id maps. Nothing here writes to the repository."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.repo import Repo

from wiki_memory.store.records import TREE_MODE
from wiki_memory.store.rewrite.walk import GITLINK_MODE

if TYPE_CHECKING:
    from dulwich.refs import Ref

FORGOTTEN = b"[forgotten]"
FORGOTTEN_NAME = b"forgotten"  # in file names: brackets are no wiki path's
EMPTY_TREE = Tree().id

# A page's id in its front matter, block style (`id: X`) or flow style (`{title: T, id: X}`).
_FRONT_MATTER = re.compile(rb"\A---[ \t]*\r?\n(.{0,4096}?)\r?\n---", re.S)
_PAGE_ID = re.compile(rb"(?:^|[\s{,])id:[ \t]*['\"]?([^\s,'\"}]+)")


class Rewrite:
    """The rewritten history, built in memory: new objects, and old id -> new id maps."""

    def __init__(self, repo: Repo, needles: Sequence[bytes], purge: Iterable[str]):
        self.repo = repo
        self.needles = tuple(needles)
        self.purge = set(purge)
        self.objects: dict[ObjectID, ShaFile] = {}
        self.blobs: dict[ObjectID, ObjectID] = {}
        self.trees: dict[tuple[ObjectID, str], ObjectID] = {}
        self.commits: dict[ObjectID, ObjectID] = {}  # old -> new (a dropped commit -> what replaced it)
        self.dropped: set[ObjectID] = set()
        self.files: set[str] = set()
        self.tips: dict[Ref, ObjectID] = {}  # ref -> what it names once rewritten
        self.old_trees: dict[ObjectID, ObjectID] = {}  # old commit -> its tree (no second read)
        self.events = 0  # blobs scrubbed, names scrubbed, paths purged: for the first time
        self.touching: set[ObjectID] = set()  # commits whose own change caused events

    def scrub(self, data: bytes, replacement: bytes = FORGOTTEN) -> bytes:
        for needle in self.needles:
            data = data.replace(needle, replacement)
        return data

    def holds(self, data: bytes) -> bool:
        return any(needle in data for needle in self.needles)

    def purged(self, path: str) -> bool:
        return path in self.purge or any(path.startswith(p + "/") for p in self.purge)

    def blob(self, sha: ObjectID) -> ObjectID:
        new = self.blobs.get(sha)
        if new is None:
            data = self.repo[sha].as_raw_string()
            if self.needles and self.holds(data):
                blob = Blob.from_string(self.scrub(data))
                self.objects[blob.id] = blob
                new = blob.id
                self.events += 1
            else:
                new = sha
            self.blobs[sha] = new
        return new

    def tree(self, sha: ObjectID, prefix: str = "") -> ObjectID:
        key = (sha, prefix if self.purge else "")
        new_id = self.trees.get(key)
        if new_id is not None:
            return new_id
        old: Tree = self.repo[sha]  # type: ignore[assignment]
        changes: list[tuple[bytes, bytes | None, int, ObjectID]] = []  # (name, new name or None: gone, ...)
        needles, blobs = self.needles, self.blobs
        for name, mode, sub in old.iteritems():
            path = prefix + name.decode("utf-8", "surrogateescape") if self.purge or mode == TREE_MODE else ""
            if self.purge and self.purged(path):
                self.files.add(path)
                self.events += 1
                changes.append((name, None, mode, sub))
                continue
            new_name = name
            if needles and any(n in name for n in needles):
                new_name = self.scrub(name, FORGOTTEN_NAME)
                self.files.add(prefix + name.decode("utf-8", "surrogateescape"))
                self.events += 1
            if mode == TREE_MODE:
                new_sub = self.tree(sub, path + "/")
            elif mode == GITLINK_MODE:
                new_sub = sub
            else:
                new_sub = blobs.get(sub) or self.blob(sub)
                if new_sub != sub:
                    self.files.add(prefix + name.decode("utf-8", "surrogateescape"))
            if mode == TREE_MODE and new_sub == EMPTY_TREE:
                changes.append((name, None, mode, sub))
            elif new_name != name or new_sub != sub:
                changes.append((name, new_name, mode, new_sub))
        if not changes:
            self.trees[key] = sha
            return sha
        new = Tree.from_raw_string(Tree.type_num, old.as_raw_string())  # a copy: only the changes are applied
        assert isinstance(new, Tree)
        for name, _, _, _ in changes:
            del new[name]
        for _, renamed, mode, new_sub in changes:
            if renamed is not None:
                while renamed in new:  # two names scrubbed alike: keep both
                    renamed = b"_" + renamed
                new[renamed] = (mode, new_sub)
        self.objects[new.id] = new
        self.trees[key] = new.id
        return new.id

    def tree_of(self, commit_id: ObjectID) -> ObjectID:
        if commit_id in self.old_trees and self.commits.get(commit_id) == commit_id:
            return self.old_trees[commit_id]
        obj = self.objects.get(commit_id) or self.repo[commit_id]
        assert isinstance(obj, Commit)
        return obj.tree

    def commit(self, old: Commit) -> None:
        self.old_trees[old.id] = old.tree
        parents = list(dict.fromkeys(self.commits.get(p, p) for p in old.parents))
        events = self.events
        tree = self.tree(old.tree)
        if self.events > events:
            self.touching.add(old.id)  # its tree held something met for the first time: its own change
        message = self.scrub(old.message) if self.needles else old.message
        own_change = not old.parents or old.tree != self.old_trees[old.parents[0]]
        if old.parents and own_change and len(parents) == 1 and tree == self.tree_of(parents[0]):
            self.commits[old.id] = parents[0]  # nothing of its change is left
            self.dropped.add(old.id)
            return
        if tree == old.tree and message == old.message and parents == old.parents:
            self.commits[old.id] = old.id
            return
        new = Commit.from_string(old.as_raw_string())  # every header kept: dates, zones, encoding
        new.tree = tree
        new.parents = parents
        new.message = message
        if new.gpgsig is not None:
            new.gpgsig = None  # a signature of other content would not verify
        self.objects[new.id] = new
        self.commits[old.id] = new.id


def page_paths(repo: Repo, commits: Sequence[Commit], paths: Iterable[str]) -> set[str]:
    """The given paths and every other path their pages had (same front-matter id):
    "a page with its whole history" follows its renames."""
    wanted = set(paths)
    versions: dict[str, set[ObjectID]] = {}
    for commit in commits:
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        for (_, raw), (_, mode), (_, sha) in repo.object_store.tree_changes(parent_tree, commit.tree):
            if sha is not None and raw is not None and mode not in (TREE_MODE, GITLINK_MODE):
                versions.setdefault(raw.decode("utf-8", "surrogateescape"), set()).add(sha)

    def page_id(sha: ObjectID) -> bytes | None:
        front = _FRONT_MATTER.match(repo[sha].as_raw_string())
        found = _PAGE_ID.search(front.group(1)) if front else None
        return found.group(1) if found else None

    ids = {page_id(sha) for path in wanted for sha in versions.get(path, ())} - {None}
    if ids:
        wanted |= {p for p, shas in versions.items() if p.endswith(".md") and any(page_id(s) in ids for s in shas)}
    return wanted
