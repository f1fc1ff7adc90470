"""The MCP tools' work: one `Workspace` per project (its `Memory`, opened once and kept, on a
thread of its own), and functions that call one memory operation and turn what it returns
into the tools' result models.

A workspace does all its work on one thread: dulwich repositories and SQLite connections
are not to be shared between threads, and one thread per project also serialises the calls
that reach it. Writers in other processes are kept out by the store's cross-process lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from wiki_memory.config import Project
from wiki_memory.mcp.models import (
    CommitOut,
    DeleteOutput,
    FeedbackOutput,
    HandoffOutput,
    HistoryOutput,
    LinkOut,
    LinksOutput,
    PageOutput,
    ProjectRef,
    RecentOutput,
    RecentPage,
    SearchHit,
    SearchOutput,
    SupersedeOutput,
    WriteOutput,
)
from wiki_memory.memory import Actor, Memory, PageView, Written
from wiki_memory.pages import CORE_KEYS

log = logging.getLogger("wiki_memory.mcp")

T = TypeVar("T")
P = ParamSpec("P")

FALLBACK_AGENT = "mcp-client"  # a client that does not say its name
VECTOR_SLICE_S = 1.0  # embedding between calls: the longest a call waits behind it


class Workspace:
    """One project open in the server: its memory, opened on first use, kept."""

    def __init__(self, project: Project):
        self.project = project
        self.ref = ProjectRef(id=project.id, name=project.name, root=str(project.root) if project.root else None)
        self.memory = Memory(project)
        if project.warning:
            log.warning("wiki-memory: %s", project.warning)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"wiki-memory-{project.id}")
        self._closed = False
        self._vectors_queued = False  # touched on the workspace thread only

    def submit(self, fn: Callable[Concatenate[Workspace, P], T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run `fn(self, *args, **kwargs)` on the workspace's thread."""
        return self._executor.submit(self._run, lambda: fn(self, *args, **kwargs))

    def _run(self, call: Callable[[], T]) -> T:
        try:
            return call()
        finally:
            self._queue_vectors()

    def call(self, fn: Callable[Concatenate[Workspace, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """The same, waiting for the result (for callers that are not async)."""
        return self.submit(fn, *args, **kwargs).result()

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
            log.debug("embedding between calls failed", exc_info=True)
            return
        if more:
            self._queue_vectors()

    def warm(self) -> None:
        """Open what the first call will need while the client is still connecting."""
        self.memory.warm()

    def close(self) -> None:
        def _close(ws: Workspace) -> None:
            ws._closed = True
            try:
                ws.memory.close()
            except Exception:
                log.debug("closing %s failed", ws.project.id, exc_info=True)

        try:
            self.call(_close)
        finally:
            self._executor.shutdown(wait=False)


class Workspaces:
    """Every project this server process has touched, each opened once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Workspace] = {}

    def get(self, project: Project) -> Workspace:
        key = str(project.wiki)
        with self._lock:
            ws = self._open.get(key)
            if ws is None:
                ws = self._open[key] = Workspace(project)
            return ws

    def close(self) -> None:
        with self._lock:
            open_, self._open = self._open, {}
        for ws in open_.values():
            ws.close()


# The result models ---------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # dates a person typed unquoted, and anything else YAML can make


def _page_output(ws: Workspace, view: PageView) -> PageOutput:

    page = view.page
    return PageOutput(
        project=ws.ref,
        path=page.path,
        id=page.id,
        title=page.title,
        type=page.type,
        tags=list(page.tags),
        status=page.status,
        created=page.created,
        updated=page.updated,
        sources=list(page.sources),
        body=page.body,
        rev=view.rev,
        extra=_jsonable({k: v for k, v in page.meta.items() if k not in CORE_KEYS}),
        links=[LinkOut(target=link.target, path=link.path) for link in view.links],
        backlinks=list(view.backlinks),
        note=view.note,
        drift=view.drift,
    )


def _write_output(ws: Workspace, written: Written) -> WriteOutput:
    return WriteOutput(
        project=ws.ref,
        path=written.path,
        id=written.id,
        title=written.title,
        commit=written.commit,
        created=written.created,
        changed=written.changed,
        operation=written.operation,
        replaced=written.replaced,
        redacted=list(written.redacted),
    )


# The operations: one memory call each ----------------------------------------------------


def search(
    ws: Workspace,
    query: str,
    k: int = 8,
    type: str | None = None,
    tag: str | None = None,
    max_chars: int | None = None,
    status: str | None = None,
) -> SearchOutput:
    report = ws.memory.search(query, k=k, type=type, tag=tag, max_chars=max_chars, status=status)
    hits = [
        SearchHit(
            path=r.path,
            title=r.title,
            type=r.type,
            heading=r.heading or "",
            snippet=r.snippet,
            score=round(float(r.score), 6),
            retrievers=list(r.retrievers),
            tags=list(r.tags),
            status=r.status or "active",
            updated=r.updated,
            superseded_by=r.superseded_by,
            drift=report.drift.get(r.path),
            rerank=None if r.rerank is None else round(float(r.rerank), 6),
            tier=r.tier,
            author=r.author,
            reviewed=r.reviewed,
        )
        for r in report.results
    ]
    return SearchOutput(project=ws.ref, query=report.query, results=hits, note=report.note)


def read(ws: Workspace, page: str, rev: str | None = None) -> PageOutput:
    return _page_output(ws, ws.memory.read(page, rev))


def links(ws: Workspace, page: str) -> LinksOutput:
    view = ws.memory.links(page)
    out = [LinkOut(target=link.target, path=link.path) for link in view.links]
    return LinksOutput(project=ws.ref, path=view.path, links=out, backlinks=view.backlinks)


def write(
    ws: Workspace,
    actor: Actor,
    title: str,
    body: str,
    type: str,
    tags: Sequence[str] | None = None,
    path: str | None = None,
) -> WriteOutput:
    written = ws.memory.write(title, body, type, tags=tags, path=path, actor=actor)
    return _write_output(ws, written)


def edit(
    ws: Workspace,
    actor: Actor,
    page: str,
    operation: str,
    text: str | None = None,
    heading: str | None = None,
    find: str | None = None,
    replace: str | None = None,
    expected_count: int = 1,
    status: str | None = None,
    superseded_by: str | None = None,
) -> WriteOutput:
    written = ws.memory.edit(
        page,
        operation,
        text=text,
        heading=heading,
        find=find,
        replace=replace,
        expected_count=expected_count,
        status=status,
        superseded_by=superseded_by,
        actor=actor,
    )
    return _write_output(ws, written)


def delete(ws: Workspace, actor: Actor, page: str) -> DeleteOutput:
    deleted = ws.memory.delete(page, actor=actor)
    return DeleteOutput(project=ws.ref, path=deleted.path, commit=deleted.commit)


def recent(ws: Workspace, n: int = 10, type: str | None = None) -> RecentOutput:
    pages = [
        RecentPage(
            path=p.path,
            title=p.title,
            type=p.type,
            status=p.status,
            tags=list(p.tags),
            updated=p.updated,
            commit=p.commit,
            author=p.author,
            subject=p.subject,
        )
        for p in ws.memory.recent(n, type)
    ]
    return RecentOutput(project=ws.ref, pages=pages)


def history(ws: Workspace, page: str | None = None, n: int = 20) -> HistoryOutput:
    found = ws.memory.history(page, n)
    commits = [
        CommitOut(
            id=c.id,
            short=c.short,
            author=c.author,
            email=c.email,
            time=c.time,
            subject=c.subject,
            message=c.message,
            trailers=dict(c.trailers),
            paths=list(c.paths),
        )
        for c in found.commits
    ]
    return HistoryOutput(project=ws.ref, page=found.path, commits=commits)


def handoff(ws: Workspace) -> HandoffOutput:
    """Exactly what a session starting now would be handed (the SessionStart text)."""
    view = ws.memory.handoff()
    if view is None:
        return HandoffOutput(project=ws.ref, text=None, handoffs=[])
    return HandoffOutput(project=ws.ref, text=view.text, handoffs=[str(p) for p in view.handoffs])


def handoff_write(
    ws: Workspace,
    actor: Actor,
    summary: str,
    done: Sequence[str] = (),
    failed: Sequence[str] = (),
    next_steps: Sequence[str] = (),
    open_questions: Sequence[str] = (),
    files: Sequence[str] = (),
) -> WriteOutput:
    """An explicit handoff from the calling agent."""
    written = ws.memory.handoff_write(summary, done, failed, next_steps, open_questions, files, actor=actor)
    return _write_output(ws, written)


def feedback(ws: Workspace, actor: Actor, page: str, verdict: str, reason: str | None = None) -> FeedbackOutput:
    marked = ws.memory.mark(page, verdict, reason=reason, actor=actor)
    return FeedbackOutput(
        project=ws.ref,
        path=marked.path,
        verdict=marked.verdict,
        status=marked.status,
        commit=marked.commit,
        reason=marked.reason,
    )


def supersede(ws: Workspace, actor: Actor, old: str, new: str, reason: str | None = None) -> SupersedeOutput:
    done = ws.memory.supersede(old, new, reason=reason, actor=actor)
    return SupersedeOutput(project=ws.ref, old=done.old, new=done.new, commit=done.commit, reason=done.reason)


def page_text(ws: Workspace, path: str) -> str:
    """The file text of a page (the `wiki://page/{path}` resource)."""
    return ws.memory.page_text(path)
