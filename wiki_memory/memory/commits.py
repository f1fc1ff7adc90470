"""What each commit of the wiki changed, worked out once per commit and kept in memory.

A commit never changes, so its author, message and the files it changed (with their blob
ids before and after, against each parent) are computed the first time they are asked for
and kept. A page's history is then a walk over kept records rather than a tree lookup per
commit: at 10,000 pages, reading a folder's tree costs ~8 ms, and the history of a page
written long ago touches every commit since.

`CommitLog.warm` works through the history a slice at a time, so a long-running front end
(the web viewer) has it ready before anyone asks.
"""

from __future__ import annotations

import heapq
import re
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dulwich.objects import Commit, ObjectID

from wiki_memory.errors import NotFoundError
from wiki_memory.store import CommitInfo
from wiki_memory.store.records import parse_trailers

if TYPE_CHECKING:
    from wiki_memory.store import CommitInfo

TREE_MODE = 0o040000
# Folder listings kept while walking (a 1,700-page folder's is ~0.3 MB): enough for a commit
# and its parent, which the walk meets next; dropped once the history is worked out.
MAX_TREES = 64
MAX_RENAME_CANDIDATES = 50  # deleted pages compared with a new one to find where it came from

Change = tuple["bytes | None", "bytes | None"]  # (blob before, blob after); None: absent
Changes = dict[str, Change]

_ID = re.compile(rb"^id:\s*['\"]?([^'\"\s]+)", re.MULTILINE)


@dataclass(frozen=True)
class CommitHeader:
    """A commit without its changes: cheap to read, enough to order and filter a log."""

    id: str
    parents: tuple[str, ...]
    commit_time: int
    author_time: int
    author: str
    email: str
    message: str

    @property
    def time(self) -> str:
        return datetime.fromtimestamp(self.author_time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def info(self) -> CommitInfo:
        return CommitInfo(self.id, self.author, self.email, self.time, self.message, parse_trailers(self.message))


class CommitLog:
    """The kept records of one repository's commits (see the module docstring)."""

    def __init__(self, repo: Any):
        self.repo = repo
        self._headers: dict[str, CommitHeader] = {}
        self._tree_of: dict[str, bytes] = {}  # commit -> its tree
        self._changes: dict[str, tuple[Changes, ...]] = {}
        self._trees: OrderedDict[bytes, dict[bytes, tuple[int, bytes]]] = OrderedDict()  # least recent first

    def header(self, commit_id: str) -> CommitHeader:
        found = self._headers.get(commit_id)
        if found is None:
            commit = self.repo[ObjectID(commit_id.encode())]
            if not isinstance(commit, Commit):
                raise NotFoundError(f"{commit_id} is not a commit")
            name, _, email = commit.author.decode("utf-8", "replace").partition(" <")
            found = self._headers[commit_id] = CommitHeader(
                commit_id,
                tuple(p.decode() for p in commit.parents),
                commit.commit_time,
                commit.author_time,
                name,
                email.rstrip(">"),
                commit.message.decode("utf-8", "replace").rstrip("\n"),
            )
            self._tree_of[commit_id] = commit.tree
        return found

    def changes(self, commit_id: str) -> tuple[Changes, ...]:
        """What the commit changed against each parent (against nothing for the first)."""
        found = self._changes.get(commit_id)
        if found is None:
            header = self.header(commit_id)
            tree = self._tree(commit_id)
            parents: list[bytes | None] = [self._tree(p) for p in header.parents] or [None]
            found = self._changes[commit_id] = tuple(dict(self._diff(old, tree)) for old in parents)
        return found

    def walk(self, head: str) -> Iterator[CommitHeader]:
        """Every commit reachable from `head`, newest first (by commit time, as `git log`)."""
        first = self.header(head)
        queue = [(-first.commit_time, head)]
        seen = {head}
        while queue:
            _, commit_id = heapq.heappop(queue)
            header = self.header(commit_id)
            yield header
            for parent in header.parents:
                if parent not in seen:
                    seen.add(parent)
                    heapq.heappush(queue, (-self.header(parent).commit_time, parent))

    def warm(self, head: str, seconds: float) -> bool:
        """Work out the changes of commits from `head` back for about `seconds`; True while
        some are left."""
        deadline = time.monotonic() + seconds
        for header in self.walk(head):
            if header.id in self._changes:
                continue
            if time.monotonic() > deadline:
                return True
            self.changes(header.id)
        self._trees.clear()  # every commit worked out: a new one needs its own folders only
        return False

    def page_changes(
        self, head: str, path: str, n: int
    ) -> list[tuple[CommitHeader, str, str | None, bytes | None, bytes | None]]:
        """The commits that changed the page at `path`, newest first, following its renames:
        (commit, its path there, its path in the first parent or None, blob before, blob
        after). A commit counts when the page differs from every parent (as `git log`)."""
        out: list[tuple[CommitHeader, str, str | None, bytes | None, bytes | None]] = []
        queue: list[tuple[int, int, str, str]] = [(-self.header(head).commit_time, 0, head, path)]
        seen: set[tuple[str, str]] = set()
        counter = 1
        while queue and len(out) < n:
            _, _, commit_id, current = heapq.heappop(queue)
            if (commit_id, current) in seen:
                continue
            seen.add((commit_id, current))
            header = self.header(commit_id)
            changes = self.changes(commit_id)
            follow: list[tuple[str, str]] = []
            # (A first commit has no parent and one set of changes: against nothing.)
            same = [p for p, ch in zip(header.parents, changes, strict=False) if current not in ch]
            if same:
                follow = [(same[0], current)]  # unchanged against that parent: its history is this one's
            elif current in changes[0]:
                mine = changes[0][current][1]
                first: tuple[str | None, bytes | None] = (None, None)
                for i, (parent, ch) in enumerate(zip(header.parents, changes, strict=False)):
                    before = ch[current][0]
                    source = current if before is not None else self._renamed_from(ch, mine) if mine else None
                    if source is not None:
                        follow.append((parent, source))
                    if i == 0 and source is not None:
                        first = (source, ch[source][0])
                out.append((header, current, first[0], first[1], mine))
            for parent, parent_path in follow:
                heapq.heappush(queue, (-self.header(parent).commit_time, counter, parent, parent_path))
                counter += 1
        return out

    # Trees -------------------------------------------------------------------------------

    def _tree(self, commit_id: str) -> bytes:
        if commit_id not in self._tree_of:
            self.header(commit_id)
        return self._tree_of[commit_id]

    def _entries(self, tree_id: bytes) -> dict[bytes, tuple[int, bytes]]:
        found = self._trees.get(tree_id)
        if found is not None:
            self._trees.move_to_end(tree_id)
            return found

        tree = self.repo[ObjectID(tree_id)]
        found = self._trees[tree_id] = {name: tree[name] for name in tree}
        if len(self._trees) > MAX_TREES:
            self._trees.popitem(last=False)
        return found

    def _diff(self, old: bytes | None, new: bytes | None, prefix: str = "") -> Iterator[tuple[str, Change]]:
        """(path, (blob before, blob after)) for every file that differs between two trees,
        descending only into folders that differ."""
        if old == new:
            return
        before = self._entries(old) if old else {}
        after = self._entries(new) if new else {}
        # The entries that differ, as a set operation (in C): a 1,700-page folder's listing
        # changes by one entry a commit.
        for name in sorted({name for name, _ in before.items() ^ after.items()}):
            was, now = before.get(name), after.get(name)
            path = prefix + name.decode("utf-8", "surrogateescape")
            old_tree = was[1] if was and was[0] == TREE_MODE else None
            new_tree = now[1] if now and now[0] == TREE_MODE else None
            if old_tree or new_tree:
                yield from self._diff(old_tree, new_tree, path + "/")
            old_blob = was[1] if was and was[0] != TREE_MODE else None
            new_blob = now[1] if now and now[0] != TREE_MODE else None
            if old_blob != new_blob:
                yield path, (old_blob, new_blob)

    def _renamed_from(self, changes: Changes, blob: bytes) -> str | None:
        """The page a new one was moved from in the same commit: a deleted page with the same
        content, or the same id, or the only page deleted."""
        deleted = [p for p, (old, new) in changes.items() if new is None and old is not None and p.endswith(".md")]
        if not deleted:
            return None
        for path in deleted:
            if changes[path][0] == blob:
                return path
        wanted = self._page_id(blob)
        if wanted is not None:
            for path in deleted[:MAX_RENAME_CANDIDATES]:
                old = changes[path][0]
                if old is not None and self._page_id(old) == wanted:
                    return path
            return None
        return deleted[0] if len(deleted) == 1 else None

    def _page_id(self, blob: bytes) -> bytes | None:
        head = self.repo[ObjectID(blob)].as_raw_string()[:4096]
        if not head.startswith(b"---"):
            return None
        match = _ID.search(head.split(b"\n---", 1)[0])
        return match.group(1) if match else None
