"""The projects a server has open: each one's `Memory`, opened once and kept, used from a
thread of its own. dulwich repositories and SQLite connections are not to be shared between
threads, and one thread per project also serialises the calls that reach it; writers in
other processes are kept out by the store's cross-process lock.

Between calls, a workspace works off what the calls left behind, a slice at a time, so that
a call waits for one slice at most: the vectors a large write did not embed, and (asked for
by the viewer, which shows activity and history) what each commit changed.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Concatenate, ParamSpec, TypeVar

from wiki_memory import logs
from wiki_memory.config import Project
from wiki_memory.memory import Memory

T = TypeVar("T")
P = ParamSpec("P")

VECTOR_SLICE_S = 1.0  # embedding between calls: the longest a call waits behind it
HISTORY_SLICE_S = 0.2  # working out the history between calls: the same, for the viewer


class Workspace:
    """One project open in a server: its memory, opened on first use, kept; every call on
    the project's thread."""

    def __init__(self, project: Project, *, name: str = "wiki-memory", log: str = "mcp"):
        self.log = logs.Log(log)  # the failures between calls: `mcp.log` or `ui.log`
        self.project = project
        self.memory = Memory(project)
        if project.warning:
            self.log.warning("wiki-memory: %s", project.warning)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-{project.id}")
        self._closed = False
        self._vectors_queued = False  # touched on the workspace thread only

    def submit(self, fn: Callable[Concatenate[Workspace, P], T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run `fn(self, *args, **kwargs)` on the workspace's thread."""
        return self._executor.submit(self._run, functools.partial(fn, self, *args, **kwargs))

    def call(self, fn: Callable[Concatenate[Workspace, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The same, waiting for the result (for callers that are not async)."""
        return self.submit(fn, *args, **kwargs).result()

    async def run(self, fn: Callable[Concatenate[Workspace, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The same, awaited (for an event loop)."""
        return await asyncio.wrap_future(self.submit(fn, *args, **kwargs))

    def _run(self, call: Callable[[], T]) -> T:
        try:
            return call()
        finally:
            self._queue_vectors()

    def warm(self, *, model: bool = False, history: bool = False) -> None:
        """Before the first call: open the store and the index (and, with `model`, load the
        embedding model); with `history`, then work out what each commit changed, a slice at
        a time between calls, so that activity and history are ready when asked for."""
        self._executor.submit(self._warm, model)
        if history:
            self._executor.submit(self._history_slice)

    def _warm(self, model: bool) -> None:
        try:
            self.memory.warm()
            index = self.memory.index if model and self.memory.exists else None
            if index is not None:
                index.embedder.available()
        except Exception:
            self.log.debug("warming %s failed", self.project.id, exc_info=True)

    def _queue_vectors(self) -> None:
        """After a call, queue a slice of embedding behind whatever is queued.

        Why: a write embeds its chunks for a second at most and a search catches up a second's
        worth, so a huge page or an import would make every search wait a second for a long
        time; worked off in slices between calls, the backlog goes while the server is idle,
        and a call waits for one slice at most."""
        if self._closed or self._vectors_queued:
            return
        try:
            if not self.memory.may_lack_vectors():
                return
        except Exception:  # noqa: BLE001 - the call's own error, if any, is what the caller hears about
            return
        self._vectors_queued = True
        try:
            self._executor.submit(self._vectors_slice)
        except RuntimeError:  # shut down
            self._vectors_queued = False

    def _vectors_slice(self) -> None:
        self._vectors_queued = False
        if self._closed:
            return
        try:
            more = self.memory.embed_some(VECTOR_SLICE_S)
        except Exception:
            self.log.debug("embedding between calls failed", exc_info=True)
            return
        if more:
            self._queue_vectors()

    def _history_slice(self) -> None:
        if self._closed:
            return
        try:
            more = self.memory.warm_history(HISTORY_SLICE_S)
        except Exception:
            self.log.debug("working out the history of %s failed", self.project.id, exc_info=True)
            return
        if more:
            try:
                self._executor.submit(self._history_slice)  # behind the calls already waiting
            except RuntimeError:  # shut down
                pass

    def close(self) -> None:
        def _close(ws: Workspace) -> None:
            ws._closed = True
            ws.memory.close()

        try:
            self.call(_close)
        except Exception:
            self.log.debug("closing %s failed", self.project.id, exc_info=True)
        finally:
            self._executor.shutdown(wait=False)


class Workspaces:
    """Every project this server process has touched, each opened once (keyed by its wiki).
    With `warm`, a workspace opened now starts warming up for a viewer (see Workspace.warm)."""

    def __init__(self, *, name: str = "wiki-memory", warm: bool = False, log: str = "mcp") -> None:
        self._log = log
        self._name = name
        self._warm = warm
        self._lock = threading.Lock()
        self._open: dict[str, Workspace] = {}

    def get(self, project: Project) -> Workspace:
        key = str(project.wiki)
        with self._lock:
            ws = self._open.get(key)
            if ws is None:
                ws = self._open[key] = Workspace(project, name=self._name, log=self._log)
                if self._warm:
                    ws.warm(model=True, history=True)
            return ws

    def close(self) -> None:
        with self._lock:
            open_now, self._open = list(self._open.values()), {}
        for ws in open_now:
            ws.close()
