"""The writer lock: one writer at a time per wiki, across processes and threads.

`flock` on `.git/wiki-memory.lock`. The kernel drops it when the holder dies, so a
killed writer never leaves the wiki locked.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from wiki_memory.errors import ConflictError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt


class WriterLock:
    """Re-entrant within a thread; exclusive across threads and processes."""

    def __init__(self, path: Path, timeout: float = 120.0):
        self.path = path
        self.timeout = timeout
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
                return fd
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise ConflictError(
                        f"another writer has held {self.path} for {self.timeout:.0f} s; try again"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
