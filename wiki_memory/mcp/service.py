"""The MCP tools' work: functions that call one memory operation on a project's workspace
(`serving.workspaces`: its `Memory` on a thread of its own) and turn what it returns into
the tools' result models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from wiki_memory.memory import Actor, EditRequest, PageView, Written
from wiki_memory.pages import CORE_KEYS
from wiki_memory.serving.workspaces import Workspace

FALLBACK_AGENT = "mcp-client"  # a client that does not say its name


# The result models ---------------------------------------------------------------------


def _ref(ws: Workspace) -> ProjectRef:
    project = ws.project
    return ProjectRef(id=project.id, name=project.name, root=str(project.root) if project.root else None)


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
        project=_ref(ws),
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
        project=_ref(ws),
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
    return SearchOutput(project=_ref(ws), query=report.query, results=hits, note=report.note)


def read(ws: Workspace, page: str, rev: str | None = None) -> PageOutput:
    return _page_output(ws, ws.memory.read(page, rev))


def links(ws: Workspace, page: str) -> LinksOutput:
    view = ws.memory.links(page)
    out = [LinkOut(target=link.target, path=link.path) for link in view.links]
    return LinksOutput(project=_ref(ws), path=view.path, links=out, backlinks=view.backlinks)


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


def edit(ws: Workspace, request: EditRequest) -> WriteOutput:
    return _write_output(ws, ws.memory.apply_edit(request))


def delete(ws: Workspace, actor: Actor, page: str) -> DeleteOutput:
    deleted = ws.memory.delete(page, actor=actor)
    return DeleteOutput(project=_ref(ws), path=deleted.path, commit=deleted.commit)


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
    return RecentOutput(project=_ref(ws), pages=pages)


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
    return HistoryOutput(project=_ref(ws), page=found.path, commits=commits)


def handoff(ws: Workspace) -> HandoffOutput:
    """Exactly what a session starting now would be handed (the SessionStart text)."""
    view = ws.memory.handoff()
    if view is None:
        return HandoffOutput(project=_ref(ws), text=None, handoffs=[])
    return HandoffOutput(project=_ref(ws), text=view.text, handoffs=[str(p) for p in view.handoffs])


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
        project=_ref(ws),
        path=marked.path,
        verdict=marked.verdict,
        status=marked.status,
        commit=marked.commit,
        reason=marked.reason,
    )


def supersede(ws: Workspace, actor: Actor, old: str, new: str, reason: str | None = None) -> SupersedeOutput:
    done = ws.memory.supersede(old, new, reason=reason, actor=actor)
    return SupersedeOutput(project=_ref(ws), old=done.old, new=done.new, commit=done.commit, reason=done.reason)


def page_text(ws: Workspace, path: str) -> str:
    """The file text of a page (the `wiki://page/{path}` resource)."""
    return ws.memory.page_text(path)
