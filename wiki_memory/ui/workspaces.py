"""The projects the viewer has open: each one's `Memory`, opened once and kept, used from a
thread of its own (dulwich repositories and SQLite connections are not shared between
threads; one thread per project also serialises the requests that reach it)."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Concatenate, ParamSpec, TypeVar

from wiki_memory import logs
from wiki_memory.config import Project
from wiki_memory.memory import Memory

log = logs.Log("ui")

T = TypeVar("T")
P = ParamSpec("P")

HISTORY_SLICE_S = 0.2  # the longest a request waits behind the history being worked out


class Workspace:
    def __init__(self, project: Project):
        self.project = project
        self.memory = Memory(project)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"wiki-memory-ui-{project.id}")
        self._closed = False

    async def run(self, fn: Callable[Concatenate[Memory, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(memory, *args, **kwargs)` on the project's thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, self.memory, *args, **kwargs))

    def call(self, fn: Callable[Concatenate[Memory, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The same, waiting for the result (for callers that are not async)."""
        return self._executor.submit(fn, self.memory, *args, **kwargs).result()

    def warm(self) -> None:
        """Before the first request: open the store and index, load the embedding model;
        then work out what each commit changed, a slice at a time between requests, so that
        activity and history are ready when asked for."""
        self._executor.submit(_warm, self.memory)
        self._executor.submit(self._history_slice)

    def _history_slice(self) -> None:
        if self._closed:
            return
        try:
            more = self.memory.warm_history(HISTORY_SLICE_S)
        except Exception:
            log.debug("working out the history of %s failed", self.project.id, exc_info=True)
            return
        if more:
            try:
                self._executor.submit(self._history_slice)  # behind the requests already waiting
            except RuntimeError:  # shut down
                pass

    def close(self) -> None:
        self._closed = True
        try:
            self.call(lambda memory: memory.close())
        finally:
            self._executor.shutdown(wait=False)


def _warm(memory: Memory) -> None:
    try:
        memory.warm()
        index = memory.index if memory.exists else None
        if index is not None:
            index.embedder.available()
    except Exception:
        log.debug("warming %s failed", memory.project.id, exc_info=True)


class Workspaces:
    """Every project this viewer has touched, each opened once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Workspace] = {}

    def get(self, project: Project) -> Workspace:
        """The project's workspace; one opened now starts warming up (see Workspace.warm)."""
        with self._lock:
            ws = self._open.get(project.id)
            if ws is None:
                ws = self._open[project.id] = Workspace(project)
                ws.warm()
            return ws

    def close(self) -> None:
        with self._lock:
            open_now, self._open = list(self._open.values()), {}
        for ws in open_now:
            try:
                ws.close()
            except Exception:
                log.debug("closing %s failed", ws.project.id, exc_info=True)
