"""History: what changed between trees, the log of the wiki or of one page (following
renames), and diffs."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from datetime import datetime, timezone
from io import BytesIO

from dulwich.diff_tree import CHANGE_RENAME, RenameDetector
from dulwich.objects import Blob, Commit

from wiki_memory.store.context import Context
from wiki_memory.store.paths import normalize_path
from wiki_memory.store.reading import Reader, oid
from wiki_memory.store.records import FILE_MODE, CommitInfo, parse_trailers
from wiki_memory.store.worktree import WorkTree


class History:
    """The part of a `Store` that reads history: changes between trees, logs, diffs."""

    def __init__(self, context: Context, reader: Reader, worktree: WorkTree):
        self.repo = context.repo
        self.reader = reader
        self.worktree = worktree

    def changed_files(
        self, old_tree: bytes | None, new_tree: bytes | None
    ) -> list[tuple[str, bytes | None, bytes | None]]:
        """(path, old blob, new blob) for every file that differs between two trees."""
        out: list[tuple[str, bytes | None, bytes | None]] = []
        old_id, new_id = (oid(old_tree) if old_tree else None), (oid(new_tree) if new_tree else None)
        for change in self.repo.object_store.tree_changes(old_id, new_id):
            old_path, new_path = change[0]
            old_sha, new_sha = change[2]
            if old_path and new_path and old_path != new_path:
                out.append((old_path.decode("utf-8", "replace"), old_sha, None))
                out.append((new_path.decode("utf-8", "replace"), None, new_sha))
            else:
                path = (new_path or old_path or b"").decode("utf-8", "replace")
                out.append((path, old_sha, new_sha))
        return out

    def commit_info(self, commit: Commit, with_paths: bool = True) -> CommitInfo:
        author = commit.author.decode("utf-8", "replace")
        name, _, email = author.partition(" <")
        message = commit.message.decode("utf-8", "replace")
        paths: tuple[str, ...] = ()
        if with_paths:
            parent_tree = self.reader.commit_object(commit.parents[0]).tree if commit.parents else None
            paths = tuple(p for p, _, _ in self.changed_files(parent_tree, commit.tree))
        when = datetime.fromtimestamp(commit.author_time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return CommitInfo(
            commit.id.decode(), name, email.rstrip(">"), when, message.rstrip("\n"), parse_trailers(message), paths
        )

    def log(self, path: str | None = None, n: int | None = 20, *, rev: str | None = None) -> list[CommitInfo]:
        """Commits, newest first: of the whole wiki, or of one page following its renames."""
        start = self.reader.commit_at(rev)
        if start is None:
            return []
        if path is None:
            walker = self.repo.get_walker(include=[start.id], max_entries=n)
            return [self.commit_info(entry.commit) for entry in walker]
        return [self.commit_info(commit) for commit, _, _ in self._page_history(start, normalize_path(path), n)]

    def page_log(
        self, path: str, n: int | None = 20, *, rev: str | None = None
    ) -> list[tuple[CommitInfo, str, str | None]]:
        """The commits that changed one page, newest first, following its renames: each with
        the page's path in that commit and in its parent (None where the commit created the
        page; the old path where it moved). The commits' `paths` are left empty: a commit
        that wrote 10,000 pages would cost a walk of all of them."""
        start = self.reader.commit_at(rev)
        if start is None:
            return []
        return [
            (self.commit_info(commit, with_paths=False), current, before)
            for commit, current, before in self._page_history(start, normalize_path(path), n)
        ]

    def _page_history(self, start: Commit, path: str, n: int | None) -> Iterator[tuple[Commit, str, str | None]]:
        """The commits that changed `path`, newest first, following renames back in time:
        (commit, the page's path in it, its path in the first parent or None).

        Why not dulwich's `follow=True` walker: it diffs every commit's whole tree, seconds
        for a long history. This compares one path's blob id with the parents' and runs
        rename detection only on the commit where the page first appears.
        """
        # (negated commit time, tie-breaker, commit id, the page's path in that commit)
        queue: list[tuple[int, int, bytes, str]] = [(-start.commit_time, 0, start.id, path)]
        seen: set[tuple[bytes, str]] = set()
        emitted = 0
        counter = 1
        while queue and (n is None or emitted < n):
            _, _, commit_id, current = heapq.heappop(queue)
            if (commit_id, current) in seen:
                continue
            seen.add((commit_id, current))
            commit = self.reader.commit_object(commit_id)
            mine = self.reader.tree_entry(commit.tree, current)
            parents = [self.reader.commit_object(p) for p in commit.parents]
            follow: list[tuple[Commit, str]] = []
            same = [p for p in parents if self.reader.tree_entry(p.tree, current) == mine]
            if same:
                follow = [(same[0], current)]  # TREESAME to a parent: the change came from there
            else:
                for parent in parents:
                    if self.reader.tree_entry(parent.tree, current) is not None:
                        follow.append((parent, current))
                    elif mine is not None:
                        source = self._rename_source(parent.tree, commit.tree, current)
                        if source:
                            follow.append((parent, source))
                if mine is not None or parents:  # a change, or the commit that deleted it
                    before = next((p for parent, p in follow if parent.id == parents[0].id), None) if parents else None
                    yield commit, current, before
                    emitted += 1
            for parent, parent_path in follow:
                heapq.heappush(queue, (-parent.commit_time, counter, parent.id, parent_path))
                counter += 1

    def _rename_source(self, old_tree: bytes, new_tree: bytes, path: str) -> str | None:
        """The path `path` was renamed from between two trees, if git's rename detection says so."""
        detector = RenameDetector(self.repo.object_store)
        for change in detector.changes_with_renames(oid(old_tree), oid(new_tree)):
            if change.type != CHANGE_RENAME or change.old is None or change.new is None:
                continue
            if change.new.path is not None and change.new.path.decode("utf-8", "replace") == path:
                return change.old.path.decode("utf-8", "replace") if change.old.path is not None else None
        return None

    def diff(self, rev_a: str | None = None, rev_b: str | None = None, path: str | None = None) -> str:
        """A unified diff: no revision = uncommitted hand edits; one = since it; two = between."""
        from dulwich.patch import (  # deferred: loads the email package; only diffs need it
            write_blob_diff,
            write_tree_diff,
        )

        out = BytesIO()
        wanted = normalize_path(path, page=False) if path else None
        if rev_a is None:
            head = self.reader.head()
            for rel, data in sorted(self.worktree.pending().items()):
                if wanted and rel != wanted:
                    continue
                old = self._blob(self.reader.blob_at(rel) if head else None)
                new = Blob.from_string(data) if data is not None else None
                write_blob_diff(
                    out,
                    (rel.encode(), FILE_MODE if old else None, old),
                    (rel.encode(), FILE_MODE if new else None, new),
                )
            return out.getvalue().decode("utf-8", "replace")
        a = self.reader.commit_at(rev_a)
        b = self.reader.commit_at(rev_b)
        if a is None or b is None:
            return ""
        if wanted is None:
            write_tree_diff(out, self.repo.object_store, a.tree, b.tree)
        else:
            old, new = self._blob(self.reader.blob_at(wanted, a.id)), self._blob(self.reader.blob_at(wanted, b.id))
            write_blob_diff(
                out,
                (wanted.encode(), FILE_MODE if old else None, old),
                (wanted.encode(), FILE_MODE if new else None, new),
            )
        return out.getvalue().decode("utf-8", "replace")

    def _blob(self, sha: bytes | None) -> Blob | None:
        obj = self.repo[sha] if sha else None
        return obj if isinstance(obj, Blob) else None
