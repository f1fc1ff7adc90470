"""What a killed writer leaves in a repository, and removing it safely.

A process killed mid-write (kill -9, a closed laptop, an out-of-memory kill) leaves git's
lock files (`index.lock`, `refs/heads/main.lock`, `objects/ab/<sha>.lock`), temporary
packs and half-written page files. Git and dulwich refuse to touch a file whose lock
exists, so one such file made every later write fail until someone deleted it by hand.

Two rules break such locks, each only where that is safe:

- `clean_after_dead_owner`: the writer lock's owner died holding it (`lock.WriterLock`
  finds its record), so whatever lock and temporary file appeared since it took the lock
  is its own: removed.
- `add_object`: a loose object's lock older than `STALE_OBJECT_LOCK_S`. Objects are named
  by their content, so whoever writes that object next writes the same bytes: the lock
  guards nothing a second writer could spoil.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wiki_memory.errors import ConflictError

STALE_OBJECT_LOCK_S = 2.0

#: Lock files git and dulwich take at the top of a git directory.
_TOP_LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock", "shallow.lock")


def _candidates(git_dir: Path, work_tree: Path | None) -> Iterator[Path]:
    for name in _TOP_LOCKS:
        yield git_dir / name
    yield from _walk(git_dir / "refs", lambda name: name.endswith(".lock"))
    objects = git_dir / "objects"
    try:
        fanout = [e for e in os.scandir(objects) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except OSError:
        fanout = []
    for folder in fanout:
        yield from _walk(Path(folder.path), lambda name: name.endswith(".lock"), recurse=False)
    # dulwich's temporary packs: thin packs received (fetch, push) and packs being written.
    yield from _walk(objects, lambda name: name.startswith("tmp_pack_"), recurse=False)
    pack_dir = objects / "pack"
    yield from _walk(pack_dir, lambda name: name.startswith("tmp") or name.endswith(".lock"), recurse=False)
    # A pack renamed into place whose index was never written: unreadable, and unreferenced.
    for pack in _walk(pack_dir, lambda name: name.startswith("pack-") and name.endswith(".pack"), recurse=False):
        if not pack.with_suffix(".idx").exists():
            yield pack
    yield from _walk(git_dir / "wiki-memory", lambda name: name.endswith(".tmp"), recurse=False)
    if work_tree is not None:
        yield from _walk(work_tree, lambda name: ".wm-tmp-" in name, skip={".git"})


def _walk(
    top: Path, wanted: Any, *, recurse: bool = True, skip: frozenset[str] | set[str] = frozenset()
) -> Iterator[Path]:
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if recurse and entry.name not in skip:
                    stack.append(Path(entry.path))
            elif wanted(entry.name):
                yield Path(entry.path)


def clean_after_dead_owner(git_dir: Path, work_tree: Path | None, since: float) -> list[Path]:
    """Remove the locks and temporary files made at or after `since` (the time a writer
    that died holding the writer lock took it) in a repository (`work_tree`: its working
    tree, for half-written page files). Returns what was removed."""
    return _remove_since(_candidates(git_dir, work_tree), since)


def clean_after_dead_sync(git_dir: Path, since: float) -> list[Path]:
    """Remove what a sync killed since `since` left: temporary packs (mid-fetch) and the
    locks of remote-tracking refs (`refs/remotes/origin/main.lock`: every later sync failed
    on it). Call it under the writer lock, which a writer packing its objects holds."""
    objects = git_dir / "objects"
    found = list(_walk(objects, lambda name: name.startswith("tmp_pack_"), recurse=False))
    found += _walk(objects / "pack", lambda name: name.startswith("tmp"), recurse=False)
    found += _walk(git_dir / "refs" / "remotes", lambda name: name.endswith(".lock"))
    return _remove_since(found, since)


def _remove_since(paths: Iterable[Path], since: float) -> list[Path]:
    # A second's slack: some file systems keep coarse times.
    removed: list[Path] = []
    for path in paths:
        try:
            if os.lstat(path).st_mtime >= since - 1.0:
                os.unlink(path)
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed


def add_object(object_store: Any, obj: Any) -> None:
    """Write `obj` as a loose object of `object_store` (a dulwich DiskObjectStore), as git
    does: its compressed bytes into `<sha>.lock`, renamed to `<sha>`.

    Why not dulwich's `add_object`: on a full disk its lock file's close fails again inside
    its own clean-up, so the `.lock` stayed (and the failure was printed twice more as the
    file object was collected). Here the lock is removed whatever fails. A stale lock on
    the same object is broken (see the module docstring); a fresh one is waited for.
    """
    sha = obj.id.decode("ascii")
    folder = os.path.join(object_store.path, sha[:2])
    path = os.path.join(folder, sha[2:])
    lock = Path(path + ".lock")
    try:
        os.utime(path, None)  # there already: freshen it, as dulwich and git do
        return
    except FileNotFoundError:
        pass
    data = obj.as_legacy_object(compression_level=getattr(object_store, "loose_compression_level", -1))
    os.makedirs(folder, exist_ok=True)
    for _attempt in range(3):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        except FileExistsError:
            try:
                age = time.time() - lock.stat().st_mtime
            except FileNotFoundError:
                continue  # its writer just finished
            if age < STALE_OBJECT_LOCK_S:
                time.sleep(STALE_OBJECT_LOCK_S - age)  # a writer of the same bytes, or a dead one
            else:
                lock.unlink(missing_ok=True)
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)
            fd = -1
            os.replace(lock, path)
            return
        except BaseException:
            if fd >= 0:
                os.close(fd)
            lock.unlink(missing_ok=True)
            raise
    raise ConflictError(f"{lock} keeps coming back: another process is writing the wiki's objects; try again")
