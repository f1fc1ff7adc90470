"""The working tree and the git index as a mirror of HEAD: writing and removing the files
of a commit, keeping `.git/index` entries (with their stat data) in step with them, so
that `git status` in the wiki is clean after every commit, and finding what a person
edited by hand and did not commit (`pending`)."""

from __future__ import annotations

import os
import stat as stat_mod
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from wiki_memory.errors import ConflictError, PathError
from wiki_memory.store import gitindex
from wiki_memory.store.context import Context
from wiki_memory.store.paths import is_ignored, is_ignored_name
from wiki_memory.store.reading import Reader
from wiki_memory.store.records import EXEC_MODE, FILE_MODE, LINK_MODE, blob_id


class WorkTree:
    """The part of a `Store` that writes the working tree and the git index, and reads a
    person's uncommitted edits from them."""

    def __init__(self, context: Context, reader: Reader):
        self.root = context.root
        self.git_dir = context.git_dir
        self.reader = reader
        self._index_head_file = context.state_dir / "index-head"
        self._index_cache: tuple[object, bytes | None, int, gitindex.Entries] | None = None

    # The index ---------------------------------------------------------------------------

    def index(self, head: bytes | None) -> tuple[int, gitindex.Entries]:
        """(version, entries) of the git index, mirroring `head`'s tree exactly.

        If someone else moved HEAD (a `git commit` in the wiki, a merge), the entries are
        rebuilt from the tree, keeping the stat data of those that still match. The parse
        is cached while the index file is unchanged: a long-lived server pays it once.
        """
        path = self.git_dir / "index"
        try:
            st = os.stat(path)
            key: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            key = None
        cached = self._index_cache
        if cached is not None and cached[0] == key and cached[1] == head:
            return cached[2], dict(cached[3])
        try:
            version, entries = gitindex.read_index(path)
            damaged = False
        except gitindex.IndexDamaged:
            # Trigger: a damaged `.git/index` (a crash mid-write by another tool, a bad disk).
            # Why: every write failed on it; it is a mirror of HEAD, so it is rebuilt from
            # HEAD, with no stat data (each file is read once to see whether it changed).
            version, entries, damaged = 2, {}, True
        recorded = self._index_head_file.read_text().strip() if self._index_head_file.exists() else ""
        if damaged or head is None or recorded != head.decode():
            fresh: gitindex.Entries = {}
            if head is not None:
                for rel, mode, sha in self.reader.tree_files(self.reader.commit_object(head).tree):
                    name = rel.encode("utf-8", "surrogateescape")
                    old = entries.get(name)
                    fresh[name] = (
                        old
                        if old is not None and gitindex.entry_sha(old) == sha and gitindex.entry_mode(old) == mode
                        else gitindex.empty_entry(name, sha, mode)
                    )
            entries = fresh
        self._index_cache = (key, head, version, entries)
        return version, dict(entries)

    def save_index(self, lock_path: Path, version: int, entries: gitindex.Entries, head: bytes) -> None:
        """Write the entries (taken under `lock_path`, git's `index.lock`) as the index of `head`."""
        gitindex.write_index(lock_path, version, entries)
        os.replace(lock_path, self.git_dir / "index")
        self._index_head_file.write_text(head.decode())
        st = os.stat(self.git_dir / "index")
        self._index_cache = ((st.st_mtime_ns, st.st_size, st.st_ino), head, version, dict(entries))

    def take_index_lock(self, timeout: float = 10.0) -> Path:
        path = self.git_dir / "index.lock"
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
                return path
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise ConflictError(
                        f"{path} exists: a git command is running in the wiki, or one crashed "
                        "(remove the file if no git command is running)"
                    ) from None
                time.sleep(0.01)

    def entry_if_unchanged(self, key: bytes, target: Path, sha: bytes, mode: int) -> bytes:
        """The index entry of a file just committed as it was on disk: with its stat data if
        it still holds that content, else with none, so the next scan re-reads it (the
        person saved again meanwhile, and that save is theirs to commit next)."""
        try:
            before = os.lstat(target)
            if stat_mod.S_ISLNK(before.st_mode):
                data = os.readlink(target).encode("utf-8", "surrogateescape")
            else:
                with open(target, "rb") as f:
                    data = f.read()
            after = os.lstat(target)
        except OSError:
            return gitindex.empty_entry(key, sha, mode)
        same_file = (before.st_ino, before.st_mtime_ns, before.st_size) == (
            after.st_ino,
            after.st_mtime_ns,
            after.st_size,
        )
        if same_file and blob_id(data) == sha:
            return gitindex.make_entry(key, after, sha, mode)
        return gitindex.empty_entry(key, sha, mode)

    # Hand edits ----------------------------------------------------------------------------

    def pending(self, paths: Iterable[str] | None = None, *, refresh: bool = False) -> dict[str, bytes | None]:
        """Files a person changed in the working tree and did not commit (path -> bytes or
        None if deleted): all of them, or only those among `paths`. Symbolic links are never
        followed nor committed.

        With `refresh` (writer lock held), files whose stat data changed but whose content
        did not (a copy, a `touch`) get fresh index entries, as `git status` does, so the
        next scan need not read them again.
        """
        head = self.reader.head()
        version, entries = self.index(head)
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
            self.save_index(self.take_index_lock(), version, entries, head)
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

    # Files ---------------------------------------------------------------------------------

    def write_file(self, target: Path, data: bytes, mode: int) -> os.stat_result:
        """Write a file whole (a temporary file renamed over it); its lstat. A symbolic link
        is never made: a checked-out link would let an editor or a later write reach outside
        the wiki (a remote's commit that adds one is refused before it gets here)."""
        if mode == LINK_MODE:
            where = target.relative_to(self.root)
            raise PathError(f"{where} is a symbolic link in git; wiki-memory does not make links")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.wm-tmp-{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            if mode == EXEC_MODE:
                os.chmod(tmp, 0o755)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)  # a full disk: no half-written file left beside the page
            raise
        return os.lstat(target)

    def remove_file(self, target: Path) -> None:
        """Remove a file and the folders it leaves empty."""
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        parent = target.parent
        while parent != self.root:
            try:
                parent.rmdir()  # only when empty
            except OSError:
                break
            parent = parent.parent

    def mode_for(self, path: str) -> int:
        """The git mode of a file as it is on disk (a plain file when there is none)."""
        try:
            st = os.lstat(self.root / path)
        except OSError:
            return FILE_MODE
        if stat_mod.S_ISLNK(st.st_mode):
            return LINK_MODE
        return EXEC_MODE if st.st_mode & 0o111 else FILE_MODE
