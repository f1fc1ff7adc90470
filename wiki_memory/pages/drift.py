"""Drift: has a page's anchored code file changed since the page was written?

A page's anchors (`pages.anchors`) name code files with the git blob id they were written
against. A file has drifted when its content now has another blob id, when it is gone, or
when it moved (gone from its path, the same content at another path of the git index).

Cheap enough for the hook path (SessionStart, per-prompt recall): the code repository's
`.git/index` is read once per process (it holds every tracked file's blob id and the stat
data it was recorded with), each anchored file is stat'ed, and a file is hashed only when its
stat no longer matches its index entry (an uncommitted edit, an untracked file) or when the
entry is "racy" (written in the same instant as the index, so the stat cannot vouch for it).

Standard library only, no `dataclasses`, no `typing` at run time.

    from wiki_memory.pages.drift import drifted, drift_note
    drifts = drifted("/src/app", anchors)          # [Drift(path='src/x.py', reason='changed', moved_to=None)]
    drift_note(drifts)                             # 'may be stale (src/x.py changed since)'
"""

from __future__ import annotations

import os
import struct
from collections import namedtuple

from wiki_memory.pages import gitindex
from wiki_memory.pages.anchors import Anchor, anchors_from_json, clean_path, parse_anchors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, NamedTuple

    class _Drift(NamedTuple):
        path: str
        reason: str  # changed | deleted | moved
        moved_to: str | None = None

    class _Entry(NamedTuple):
        mtime_s: int
        mtime_ns: int
        ino: int
        size: int
        sha: str

else:
    _Drift = namedtuple("Drift", "path reason moved_to", defaults=(None,))
    _Entry = namedtuple("Entry", "mtime_s mtime_ns ino size sha")


class Drift(_Drift):
    """One anchored file that is no longer what the page was written against:
    `reason` is `changed` (other content), `deleted`, or `moved` (to `moved_to`)."""

    __slots__ = ()

    def describe(self) -> str:
        if self.reason == "moved" and self.moved_to:
            return f"{self.path} moved to {self.moved_to}"
        return f"{self.path} {self.reason}"


def git_dir(repo_root: str | os.PathLike[str]) -> str | None:
    """The git directory of a work tree (`.git`, or where a `.git` file points), or None."""
    dot_git = os.path.join(os.fspath(repo_root), ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as f:
            text = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = text[7:].strip()
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(os.fspath(repo_root), target))


def _object_format(gitdir: str) -> str:
    """sha1, or sha256 for a repository made with `--object-format=sha256`."""
    for config in (os.path.join(gitdir, "config"), os.path.join(gitdir, "commondir")):
        try:
            with open(config, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if config.endswith("commondir"):
            common = text.strip()
            path = common if os.path.isabs(common) else os.path.join(gitdir, common)
            return _object_format(os.path.normpath(path)) if os.path.normpath(path) != gitdir else "sha1"
        if "objectformat" in text.lower().replace(" ", "") and "sha256" in text.lower():
            return "sha256"
    return "sha1"


def blob_of_bytes(data: bytes, algorithm: str = "sha1") -> str:
    """What `git hash-object` prints for a file of these bytes."""
    import hashlib  # deferred: most checks hash nothing, and hashlib (OpenSSL) costs the hook path's start-up

    digest = hashlib.sha256() if algorithm == "sha256" else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def blob_of_file(path: str | os.PathLike[str], algorithm: str = "sha1") -> str | None:
    """`git hash-object PATH` (the file as it is on disk, no filters), or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return blob_of_bytes(data, algorithm)


class GitIndex:
    """The entries of a code repository's `.git/index` (path -> stat data and blob id),
    read once; `None` entries when there is no index (not a git repository)."""

    def __init__(self, repo_root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(repo_root)
        self.gitdir = git_dir(self.root)
        self.algorithm = _object_format(self.gitdir) if self.gitdir else "sha1"
        self.entries: dict[str, Any] = {}
        self.mtime_ns = 0  # the index file's: an entry stat'ed in the same instant is racy
        self.key: tuple[int, int] | None = None
        self._by_sha: dict[str, str] | None = None
        if self.gitdir:
            self._read(os.path.join(self.gitdir, "index"))

    def _read(self, path: str) -> None:
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read()
        except OSError:
            return
        self.mtime_ns = st.st_mtime_ns
        self.key = (st.st_mtime_ns, st.st_size)
        width = 32 if self.algorithm == "sha256" else 20
        entries = self.entries
        try:
            version, count = gitindex.header(data)
            for name, at, _next, flags in gitindex.entries(data, version, count, width):
                if not (flags >> 12) & 0x3:  # stage 0 only: a conflicted file has no one blob
                    mtime_s, mtime_ns, ino, size = gitindex.STAT.unpack_from(data, at)
                    sha = data[at + 40 : at + 40 + width].hex()
                    entries[name.decode("utf-8", "surrogateescape")] = _Entry(mtime_s, mtime_ns, ino, size, sha)
        except (IndexError, ValueError, struct.error):
            self.entries = {}  # no index, a torn or unknown one: every anchored file is hashed instead

    def current_blob(self, path: str) -> str | None:
        """The blob id of the file at `path` as it is now (None: no such file), from its
        index entry when its stat vouches for it, else by hashing it."""
        full = os.path.join(self.root, path)
        try:
            st = os.stat(full)
        except OSError:
            return None
        if not os.path.isfile(full):
            return None
        entry = self.entries.get(path)
        if entry is not None and gitindex.stat_matches(entry, st) and st.st_mtime_ns < self.mtime_ns:
            return str(entry.sha)
        return blob_of_file(full, self.algorithm)

    def path_of_blob(self, blob: str) -> str | None:
        """A tracked path whose index entry holds this blob (for a file that moved)."""
        if self._by_sha is None:
            self._by_sha = {}
            for path, entry in self.entries.items():
                self._by_sha.setdefault(entry.sha, path)
        return self._by_sha.get(blob)


_CACHE: dict[str, GitIndex] = {}


def git_index(repo_root: str | os.PathLike[str]) -> GitIndex:
    """The repository's index, read again only when the index file changed (a stat)."""
    root = os.path.abspath(os.fspath(repo_root))
    cached = _CACHE.get(root)
    if cached is not None and cached.gitdir:
        try:
            st = os.stat(os.path.join(cached.gitdir, "index"))
            if (st.st_mtime_ns, st.st_size) == cached.key:
                return cached
        except OSError:
            pass
    fresh = _CACHE[root] = GitIndex(root)
    return fresh


def _as_anchors(anchors: Any) -> tuple[Anchor, ...]:
    if anchors is None:
        return ()
    if isinstance(anchors, str):
        return anchors_from_json(anchors)
    if not isinstance(anchors, (list, tuple)):
        return parse_anchors(anchors)  # a hand-written single value (`anchors: 7`): parsed leniently
    return parse_anchors([a._asdict() if isinstance(a, Anchor) else a for a in anchors])


def drifted(repo_root: str | os.PathLike[str] | None, anchors: Any) -> list[Drift]:
    """The anchored files that changed, went or moved since the page was written.

    `anchors`: Anchor objects, front-matter values (`{path, blob}` or bare paths), or the
    index's JSON text. A bare path (no blob recorded) drifts only when its file is gone.
    No repository root (a project outside git): nothing can be said, nothing is returned.
    """
    found = _as_anchors(anchors)
    if repo_root is None or not found:
        return []
    index = git_index(repo_root)
    out: list[Drift] = []
    for anchor in found:
        current = index.current_blob(anchor.path)
        if current is None:
            moved = index.path_of_blob(anchor.blob) if anchor.blob else None
            if moved and moved != anchor.path:
                out.append(Drift(anchor.path, "moved", moved))
            else:
                out.append(Drift(anchor.path, "deleted"))
        elif anchor.blob and current != anchor.blob:
            out.append(Drift(anchor.path, "changed"))
    return out


def drift_note(drifts: Sequence[Drift], limit: int = 3) -> str | None:
    """`may be stale (src/x.py changed since)`, naming at most `limit` files; None for none."""
    if not drifts:
        return None
    shown = [d.describe() for d in drifts[:limit]]
    more = len(drifts) - len(shown)
    listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    return f"may be stale ({listed} since)"


def record(repo_root: str | os.PathLike[str], paths: Iterable[str]) -> list[Anchor]:
    """Anchors for files as they are now (each with its current blob id), for a page being
    written; files that do not exist or escape the repository are left out."""
    index = git_index(repo_root)
    out: dict[str, Anchor] = {}
    for raw in paths:
        path = clean_path(raw)
        if path is None or path in out:
            continue
        blob = index.current_blob(path)
        if blob is not None:
            out[path] = Anchor(path, blob)
    return list(out.values())
