"""The writer lock: one writer at a time per wiki, across processes and threads.

`flock` on a lock file (`.git/wiki-memory.lock` for a wiki's writers). The kernel drops it
when the holder dies, so a killed writer never leaves the wiki locked. What such a writer
may leave is litter: git's own lock files (`index.lock`, `refs/heads/main.lock`, a loose
object's `.lock`), half-written files and temporary packs, on which every later write
would fail. So the holder writes an owner record (pid, host, time) into the lock file and
empties it when it lets go: the next holder that finds a record left there knows its owner
died holding the lock, and hands the time it took the lock to `recover`, which removes the
litter made since.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from wiki_memory.errors import ConflictError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt

#: Called, under the lock, with the time a dead owner took it.
Recover = Callable[[float], object]
#: The owner record's size: padded with spaces, and blanked (not removed) on release.
RECORD_SIZE = 256
BLANK = b" " * RECORD_SIZE


class WriterLock:
    """Re-entrant within a thread; exclusive across threads and processes.

    `recover(since)` runs when the lock is taken after an owner died holding it (see the
    module docstring); its own failure is not the new owner's: it is ignored.
    """

    def __init__(self, path: Path, timeout: float = 120.0, recover: Recover | None = None):
        self.path = path
        self.timeout = timeout
        self.recover = recover
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        self._thread_lock.acquire()
        if self._depth == 0:
            try:
                self._fd = self._acquire()
            except BaseException:
                self._thread_lock.release()
                raise
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                try:
                    os.pwrite(fd, BLANK, 0)  # let go cleanly: no owner record left behind
                except OSError:
                    pass
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                else:  # pragma: no cover
                    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
            finally:
                os.close(fd)
        self._thread_lock.release()

    @property
    def held(self) -> bool:
        return self._depth > 0

    def _acquire(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:  # pragma: no cover
                    msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise ConflictError(
                        f"another writer has held {self.path} for {self.timeout:.0f} s; try again"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            self._take_over(fd)
        except BaseException:
            os.close(fd)  # closing releases the lock
            raise
        return fd

    def _take_over(self, fd: int) -> None:
        """Recover after a dead owner, if there was one; then record this process as owner."""
        try:
            left = os.pread(fd, RECORD_SIZE, 0)
        except OSError:
            left = b""
        if left.strip() and self.recover is not None:
            since = dead_owner_time(left)
            try:
                self.recover(since)
            except Exception:  # noqa: BLE001 - litter left: the write may still work, or says why not
                pass
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "time": time.time()}).encode()
        try:
            # Written over the same bytes every time, never truncated: on a full disk the
            # record still fits in the space the file already has.
            os.pwrite(fd, record.ljust(RECORD_SIZE)[:RECORD_SIZE], 0)
        except OSError:
            pass  # no room even for that (a new lock file on a full disk): the lock holds without it


def dead_owner_time(record: bytes) -> float:
    """When the owner whose record this is took the lock (0: unknown, so everything counts)."""
    try:
        data = json.loads(record)
        return float(data["time"]) if isinstance(data, dict) else 0.0
    except (ValueError, KeyError, TypeError):
        return 0.0
