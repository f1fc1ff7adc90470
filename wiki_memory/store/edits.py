"""Hand edits: committing what a person changed in the working tree (`WorkTree.pending`)
as theirs, all at once before a write, or one change at a time for the watcher."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from wiki_memory.errors import PageError, PathError
from wiki_memory.pages import parse_page
from wiki_memory.store.commits import Committer
from wiki_memory.store.context import Context
from wiki_memory.store.paths import is_page_path, normalize_path
from wiki_memory.store.reading import Reader
from wiki_memory.store.records import Author, Edit, blob_id
from wiki_memory.store.worktree import WorkTree


class HandEdits:
    """The part of a `Store` that commits a person's uncommitted edits as theirs."""

    def __init__(self, context: Context, reader: Reader, worktree: WorkTree, committer: Committer):
        self.context = context
        self.reader = reader
        self.worktree = worktree
        self.committer = committer

    def before_write(self, paths: Iterable[str]) -> None:
        """Before a write: finish a crashed transaction, then commit a person's uncommitted
        edits of the files about to be written, so that no word of theirs is overwritten."""
        self.commit_pending(paths=list(paths))

    def _commit(self, changes: Mapping[str, bytes | None], subject: str, author: Author, body: str) -> str | None:
        """One commit of hand edits, as they are on disk (the files are the person's: not rewritten)."""
        message = self.committer.message(subject, None, None, body, ())
        return self.committer.commit(changes, message, author, from_files=True)

    def commit_pending(self, author: Author | None = None, paths: Iterable[str] | None = None) -> str | None:
        """Commit what a person edited by hand (all files, or those among `paths`) as their
        edit (`edit: <path>`). None if there was nothing."""
        with self.context.lock:
            self.committer.recover()
            changes, _ = self._committable(self.worktree.pending(paths, refresh=True))
            if not changes:
                return None
            names = sorted(changes)
            subject = f"edit: {names[0]}" if len(names) == 1 else f"edit: {len(names)} files"
            body = "" if len(names) == 1 else "\n".join(f"- {p}" for p in names)
            return self._commit(changes, subject, author or Author.person(self.context.root), body)

    def _committable(self, changes: dict[str, bytes | None]) -> tuple[dict[str, bytes | None], dict[str, str]]:
        """(changes that can be committed, {path: why not} for files whose names git or we
        refuse: a backslash, a control character, a name that differs only in case from a
        committed one). Those stay on disk, untouched, and never block the other edits or an
        agent's write."""
        refused: dict[str, str] = {}
        head = self.reader.head()
        tree = self.reader.commit_object(head).tree if head else None
        for path in list(changes):
            try:
                if normalize_path(path, page=False) != path:
                    refused[path] = f"{path!r} is not a clean wiki path"
                elif changes[path] is not None and tree is not None and self.reader.tree_entry(tree, path) is None:
                    clash = self.reader.case_clash(tree, path)
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
        self, paths: Iterable[str] | None, author: Author | None, group_above: int = 20
    ) -> tuple[list[Edit], dict[str, str]]:
        """Commit a person's hand edits one change at a time, as the watcher does: each file
        as `edit: <path>`, a file renamed (same content, or the same page id) as
        `edit: <old> -> <new>`. More than `group_above` changes at once (a search and
        replace across the wiki, a folder copied in) become one `edit: N files` commit.
        Files that cannot be committed under their name are left alone: (the edits
        committed, {path: why not} of those)."""
        with self.context.lock:
            self.committer.recover()
            changes, refused = self._committable(self.worktree.pending(paths, refresh=True))
            if not changes:
                return [], refused
            author = author or Author.person(self.context.root)
            groups = self._edit_groups(changes)
            if len(groups) > group_above:
                names = sorted(changes)
                groups = [(f"edit: {len(names)} files", names)]
            edits: list[Edit] = []
            for subject, names in groups:
                body = "\n".join(f"- {p}" for p in names) if len(names) > 2 else ""
                commit = self._commit({p: changes[p] for p in names}, subject, author, body)
                if commit is not None:
                    edits.append(Edit(commit, subject, tuple(names), tuple(p for p in names if changes[p] is None)))
            return edits, refused

    def _edit_groups(self, changes: Mapping[str, bytes | None]) -> list[tuple[str, list[str]]]:
        """(subject, paths) per commit: renames paired, every other path on its own."""
        deleted = {p: self.reader.blob_at(p) for p, data in changes.items() if data is None}
        added = {p: data for p, data in changes.items() if data is not None and self.reader.blob_at(p) is None}
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
                page_id = self._page_id(self.reader.read_bytes(old))
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
