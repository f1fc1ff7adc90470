"""The working tree and the git index as a mirror of HEAD: writing and removing the files
of a commit, and keeping `.git/index` entries (with their stat data) in step with them, so
that `git status` in the wiki is clean after every commit and a person's edits show."""

from __future__ import annotations

import os
import stat as stat_mod
import time
from pathlib import Path

from wiki_memory.errors import ConflictError, PathError
from wiki_memory.store import gitindex
from wiki_memory.store.reading import Reader
from wiki_memory.store.records import EXEC_MODE, FILE_MODE, LINK_MODE, blob_id


class WorkTree(Reader):
    """The part of `Store` that writes the working tree and the git index."""

    def __init__(self, root: Path | str):
        super().__init__(root)
        self._index_head_file = self._state_dir / "index-head"
        self._index_cache: tuple[object, bytes | None, int, gitindex.Entries] | None = None

    # The index ---------------------------------------------------------------------------

    def _index(self, head: bytes | None) -> tuple[int, gitindex.Entries]:
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
                for rel, mode, sha in self._tree_files(self._commit(head).tree):
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

    def _save_index(self, lock_path: Path, version: int, entries: gitindex.Entries, head: bytes) -> None:
        """Write the entries (taken under `lock_path`, git's `index.lock`) as the index of `head`."""
        gitindex.write_index(lock_path, version, entries)
        os.replace(lock_path, self.git_dir / "index")
        self._index_head_file.write_text(head.decode())
        st = os.stat(self.git_dir / "index")
        self._index_cache = ((st.st_mtime_ns, st.st_size, st.st_ino), head, version, dict(entries))

    def _take_index_lock(self, timeout: float = 10.0) -> Path:
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

    def _entry_if_unchanged(self, key: bytes, target: Path, sha: bytes, mode: int) -> bytes:
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

    # Files ---------------------------------------------------------------------------------

    def _write_file(self, target: Path, data: bytes, mode: int) -> os.stat_result:
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

    def _remove_file(self, target: Path) -> None:
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

    def _mode_for(self, path: str) -> int:
        """The git mode of a file as it is on disk (a plain file when there is none)."""
        try:
            st = os.lstat(self.root / path)
        except OSError:
            return FILE_MODE
        if stat_mod.S_ISLNK(st.st_mode):
            return LINK_MODE
        return EXEC_MODE if st.st_mode & 0o111 else FILE_MODE
