"""Hand edits: what a person changed in the working tree and did not commit, and
committing it as theirs (all at once before a write, or one page at a time for the
watcher)."""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Iterable, Iterator, Mapping

from wiki_memory.errors import PageError, PathError
from wiki_memory.pages import parse_page
from wiki_memory.store import gitindex
from wiki_memory.store.commits import Committer
from wiki_memory.store.paths import is_ignored, is_ignored_name, is_page_path, normalize_path
from wiki_memory.store.records import Author, Edit, blob_id


class HandEdits(Committer):
    """The part of `Store` that deals with a person's uncommitted edits."""

    def _prepare(self, paths: Iterable[str]) -> None:
        """Before a write: finish a crashed transaction, then commit a person's uncommitted
        edits of the files about to be written, so that no word of theirs is overwritten."""
        self.commit_pending(paths=list(paths))

    def pending(self, paths: Iterable[str] | None = None, *, refresh: bool = False) -> dict[str, bytes | None]:
        """Files a person changed in the working tree and did not commit (path -> bytes or
        None if deleted): all of them, or only those among `paths`. Symbolic links are never
        followed nor committed.

        With `refresh` (writer lock held), files whose stat data changed but whose content
        did not (a copy, a `touch`) get fresh index entries, as `git status` does, so the
        next scan need not read them again.
        """
        head = self.head()
        version, entries = self._index(head)
        refreshed: gitindex.Entries = {}
        changes: dict[str, bytes | None] = {}
        if paths is None:
            files: Iterable[tuple[str, str, os.stat_result]] = self._walk()
            missing = set(entries)
        else:
            files, missing = self._stat(paths)
        for rel, full, st in files:
            name = rel.encode("utf-8", "surrogateescape")
            missing.discard(name)
            entry = entries.get(name)
            if entry is not None and gitindex.stat_matches(entry, st):
                continue
            if stat_mod.S_ISDIR(st.st_mode) or stat_mod.S_ISLNK(st.st_mode):
                # Trigger: a symbolic link anywhere in the wiki (a stray `ln -s`, a synced folder).
                # Why: it is never memory; committed, it would point a checkout outside the wiki,
                # and refused at commit it failed every write and watch retried it forever.
                continue
            with open(full, "rb") as f:
                data = f.read()
            if entry is not None and gitindex.entry_sha(entry) == blob_id(data):
                refreshed[name] = gitindex.make_entry(name, st, gitindex.entry_sha(entry), gitindex.entry_mode(entry))
                continue
            changes[rel] = data
        for name in missing:
            rel = name.decode("utf-8", "surrogateescape")
            if name in entries and not is_ignored(rel):
                changes[rel] = None
        if refresh and refreshed and head is not None:
            entries.update(refreshed)
            self._save_index(self._take_index_lock(), version, entries, head)
        return changes

    def _stat(self, paths: Iterable[str]) -> tuple[list[tuple[str, str, os.stat_result]], set[bytes]]:
        """(path, full path, lstat) of those of `paths` on disk, and the names of the others."""
        found: list[tuple[str, str, os.stat_result]] = []
        missing: set[bytes] = set()
        for rel in paths:
            full = self.root / rel
            try:
                found.append((rel, str(full), os.lstat(full)))
            except FileNotFoundError:
                missing.add(rel.encode("utf-8", "surrogateescape"))
        return found, missing

    def _walk(self) -> Iterator[tuple[str, str, os.stat_result]]:
        stack = [("", str(self.root))]
        while stack:
            prefix, directory = stack.pop()
            try:
                scanner = os.scandir(directory)
            except OSError:
                continue
            with scanner:
                for entry in scanner:
                    if is_ignored_name(entry.name):
                        continue  # ignored folders are never entered, so the name decides
                    rel = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((rel + "/", entry.path))
                    else:
                        yield rel, entry.path, entry.stat(follow_symlinks=False)

    def commit_pending(self, author: Author | None = None, paths: Iterable[str] | None = None) -> str | None:
        """Commit what a person edited by hand (all files, or those among `paths`) as their
        edit (`edit: <path>`). None if there was nothing."""
        with self.lock:
            self._recover()
            changes, _ = self._committable(self.pending(paths, refresh=True))
            if not changes:
                return None
            names = sorted(changes)
            subject = f"edit: {names[0]}" if len(names) == 1 else f"edit: {len(names)} files"
            body = "" if len(names) == 1 else "\n".join(f"- {p}" for p in names)
            return self.commit(
                changes,
                subject,
                author or Author.person(self.root),
                body=body,
                commit_hand_edits=False,
                from_files=True,
            )

    def _committable(self, changes: dict[str, bytes | None]) -> tuple[dict[str, bytes | None], dict[str, str]]:
        """(changes that can be committed, {path: why not} for files whose names git or we
        refuse: a backslash, a control character, a name that differs only in case from a
        committed one). Those stay on disk, untouched, and never block the other edits or an
        agent's write."""
        refused: dict[str, str] = {}
        head = self.head()
        tree = self._commit(head).tree if head else None
        for path in list(changes):
            try:
                if normalize_path(path, page=False) != path:
                    refused[path] = f"{path!r} is not a clean wiki path"
                elif changes[path] is not None and tree is not None and self.tree_entry(tree, path) is None:
                    clash = self.case_clash(tree, path)
                    if clash is None or changes.get(clash, b"") is None:
                        continue
                    refused[path] = f"{path!r} differs only in case from {clash!r} (one file on macOS and Windows)"
                else:
                    continue
            except PathError as e:
                refused[path] = str(e)
            del changes[path]
        return changes, refused

    def commit_edits(
        self,
        paths: Iterable[str] | None = None,
        author: Author | None = None,
        *,
        group_above: int = 20,
        refused: dict[str, str] | None = None,
    ) -> list[Edit]:
        """Commit a person's hand edits one change at a time, as the watcher does: each file
        as `edit: <path>`, a file renamed (same content, or the same page id) as
        `edit: <old> -> <new>`. More than `group_above` changes at once (a search and
        replace across the wiki, a folder copied in) become one `edit: N files` commit.
        Files that cannot be committed under their name are left alone and, given a
        `refused` dict, listed there with the reason."""
        with self.lock:
            self._recover()
            changes, skipped = self._committable(self.pending(paths, refresh=True))
            if refused is not None:
                refused.update(skipped)
            if not changes:
                return []
            author = author or Author.person(self.root)
            groups = self._edit_groups(changes)
            if len(groups) > group_above:
                names = sorted(changes)
                groups = [(f"edit: {len(names)} files", names)]
            edits: list[Edit] = []
            for subject, names in groups:
                body = "\n".join(f"- {p}" for p in names) if len(names) > 2 else ""
                commit = self.commit(
                    {p: changes[p] for p in names}, subject, author, body=body, commit_hand_edits=False, from_files=True
                )
                if commit is not None:
                    edits.append(Edit(commit, subject, tuple(names), tuple(p for p in names if changes[p] is None)))
            return edits

    def _edit_groups(self, changes: Mapping[str, bytes | None]) -> list[tuple[str, list[str]]]:
        """(subject, paths) per commit: renames paired, every other path on its own."""
        deleted = {p: self.blob_at(p) for p, data in changes.items() if data is None}
        added = {p: data for p, data in changes.items() if data is not None and self.blob_at(p) is None}
        renames: dict[str, str] = {}  # new -> old
        by_blob: dict[bytes, list[str]] = {}
        for old, blob in sorted(deleted.items()):
            if blob is not None:
                by_blob.setdefault(blob, []).append(old)
        for new, data in sorted(added.items()):
            olds = by_blob.get(blob_id(data or b""))
            if olds:
                renames[new] = olds.pop(0)
        # Renamed and edited in one go (an editor that retitles the file): the page id says so.
        left_old = {p for p in deleted if p not in renames.values() and is_page_path(p)}
        left_new = [p for p in added if p not in renames and is_page_path(p)]
        if left_old and left_new:
            ids: dict[str, str] = {}
            for old in sorted(left_old):
                page_id = self._page_id(self.read_bytes(old))
                if page_id:
                    ids.setdefault(page_id, old)
            for new in sorted(left_new):
                page_id = self._page_id(added[new] or b"")
                if page_id and page_id in ids:
                    renames[new] = ids.pop(page_id)
        paired = set(renames) | set(renames.values())
        groups = [(f"edit: {old} -> {new}", [old, new]) for new, old in renames.items()]
        groups += [(f"edit: {p}", [p]) for p in changes if p not in paired]
        return sorted(groups, key=lambda g: g[1][-1])

    @staticmethod
    def _page_id(data: bytes) -> str | None:
        try:
            return parse_page(data.decode("utf-8", errors="replace"), "x.md").id
        except PageError:
            return None
