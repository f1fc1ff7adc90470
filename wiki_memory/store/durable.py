"""Writing a record that must survive a crash, and the points where tests and the soak make
a multi-step change stop dead.

`write_durably` is for records that say what a later step must finish (an interrupted
`forget`'s journal, the leases of a remote's replacement): written to a temporary file,
flushed to the disk, renamed over the old one, and the directory flushed, so that after a
kill or a power cut the record is there whole or not at all, never after what it guards.

`crash_point(name)` exits the process at once (as SIGKILL would: no cleanup, no `finally`)
when `WIKI_MEMORY_CRASH_AT` names that point. A test kills a process at every step this
way, with no timing race; without the variable it is one dictionary lookup.
"""

from __future__ import annotations

import os
from pathlib import Path

CRASH_ENV = "WIKI_MEMORY_CRASH_AT"
CRASH_EXIT = 137  # what a shell reports for a process killed by SIGKILL


def crash_point(name: str) -> None:
    """Exit here, at once, when `WIKI_MEMORY_CRASH_AT` is `name`."""
    if os.environ.get(CRASH_ENV) == name:
        os._exit(CRASH_EXIT)


def fsync_dir(path: Path) -> None:
    """Flush a directory's entries (a file created or renamed in it) to the disk."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # a platform where directories cannot be opened (Windows): renames are durable there
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """Replace `path` by `data` so that it is on the disk, whole, when this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def remove_durably(path: Path) -> None:
    """Delete `path` (if there) and make the deletion last."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_dir(path.parent)
