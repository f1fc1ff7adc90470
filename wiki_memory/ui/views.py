"""The viewer's pages (GET): activity, search, a page, its history, a commit, the handoff,
the review list and the link graph. Each reads through the project's `Memory` on its
thread, then renders a template; none changes anything."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from wiki_memory.errors import NotFoundError, PageError, WikiMemoryError
from wiki_memory.pages import HIDDEN, PAGE_TYPES, STATUSES
from wiki_memory.serving.workspaces import Workspace
from wiki_memory.ui import render
from wiki_memory.ui.actions import VERDICTS
from wiki_memory.ui.app import viewer_of

ACTIVITY = 60  # commits on the home page
SEARCH_K = 12
HISTORY = 30  # a page's commits shown with their diffs
GRAPH_LIMIT = 300  # pages drawn at once


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    return value or None


async def home(request: Request) -> Response:
    viewer = viewer_of(request)
    who = _param(request, "who")

    def work(ws: Workspace) -> tuple[Any, list[Any]]:
        memory = ws.memory
        if not memory.exists:
            return None, []
        # The handoff as it stands: rebuilding a stale one is the handoff page's job (~1 s).
        return memory.handoff(refresh=False), memory.activity(ACTIVITY, who=who)

    handoff, items = await viewer.workspace(request).run(work)
    people = sorted({(item.who, item.kind in ("agent", "session", "handoff")) for item in items})
    return viewer.page(request, "home.html", handoff=handoff, items=items, who=who, people=people)


async def search(request: Request) -> Response:
    viewer = viewer_of(request)
    query = request.query_params.get("q", "")
    filters = {name: _param(request, name) for name in ("type", "tag", "status")}
    report = None
    if query.strip():
        report = await viewer.workspace(request).run(
            lambda ws: ws.memory.search(query, k=SEARCH_K, **filters)  # type: ignore[arg-type]
        )
    return viewer.page(
        request, "search.html", q=query, report=report, filters=filters, types=PAGE_TYPES, statuses=(*STATUSES, "any")
    )


async def page(request: Request) -> Response:
    viewer = viewer_of(request)
    ref = request.path_params["path"]
    rev = _param(request, "rev")

    def work(ws: Workspace) -> tuple[Any, Any, Any]:
        memory = ws.memory
        try:
            view = memory.read(ref, rev)
        except PageError as e:
            # Its front matter does not parse: show the file as it is, and how to fix it.
            return None, (memory.page_source(ref) if rev is None else None, str(e)), None
        return view, memory.anchor_states(view.page), memory.shown_body(view.page)

    view, anchors, shown = await viewer.workspace(request).run(work)
    if view is None:
        source, error = anchors
        if source is None:
            raise PageError(error)
        return viewer.page(request, "broken.html", status=200, source=source, error=error)
    if view.path != ref:  # a title or an id: show it under its path
        return RedirectResponse(render.page_url(viewer.base, view.path, rev=rev), status_code=303)
    links = {link.target: link.path for link in view.links} if view.rev is None else None
    extra = {k: v for k, v in view.page.meta.items() if k not in _SHOWN_KEYS}
    return viewer.page(
        request,
        "page.html",
        view=view,
        pg=view.page,
        body=render.markdown(shown[0], viewer.base, links),
        whole_bytes=shown[1],
        anchors=anchors,
        extra=extra,
        hidden=view.page.status in HIDDEN,
        verdicts=VERDICTS,
        committed=_param(request, "committed"),
    )


_SHOWN_KEYS = frozenset(
    {"id", "title", "type", "tags", "status", "created", "updated", "sources", "anchors", "superseded_by"}
)


async def raw(request: Request) -> Response:
    """A page's file as committed, byte for byte, as plain text (a very large page's whole)."""
    viewer = viewer_of(request)
    ref = request.path_params["path"]
    rev = _param(request, "rev")
    _path, data = await viewer.workspace(request).run(lambda ws: ws.memory.raw_bytes(ref, rev))
    return Response(data, media_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"})


async def edit_form(request: Request) -> Response:
    viewer = viewer_of(request)
    source = await viewer.workspace(request).run(lambda ws: ws.memory.page_source(request.path_params["path"]))
    if source.path != request.path_params["path"]:
        return RedirectResponse(render.edit_url(viewer.base, source.path), status_code=303)
    return viewer.page(request, "edit.html", path=source.path, text=source.text, blob=source.blob, error=None)


async def history(request: Request) -> Response:
    viewer = viewer_of(request)
    ref = request.path_params["path"]
    found = await viewer.workspace(request).run(lambda ws: ws.memory.page_history(ref, HISTORY))
    return viewer.page(request, "history.html", history=found)


async def commit(request: Request) -> Response:
    viewer = viewer_of(request)
    view = await viewer.workspace(request).run(lambda ws: ws.memory.commit(request.path_params["rev"]))
    return viewer.page(request, "commit.html", view=view, reverted=_param(request, "reverted"))


async def handoff(request: Request) -> Response:
    viewer = viewer_of(request)
    found = await viewer.workspace(request).run(lambda ws: ws.memory.handoff() if ws.memory.exists else None)
    return viewer.page(request, "handoff.html", handoff=found)


async def review(request: Request) -> Response:
    """Pages that do not parse and sync's conflict copies (`review_items`), the lifecycle's
    review (`Memory.review()`: drift, expiry, duplicates, contradictions, wrong links,
    fields, flags; each with the command that resolves it), pages marked wrong or stale,
    and, with a team tier, personal pages worth sharing (`share_candidates`)."""
    viewer = viewer_of(request)

    def work(ws: Workspace) -> tuple[list[Any], Any, str | None, list[Any]]:
        memory = ws.memory
        items = memory.review_items()
        if not memory.exists:
            return items, None, None, []
        worth = memory.share_candidates()
        try:
            return items, memory.review(), None, worth
        except WikiMemoryError as e:  # no index: the lifecycle's review needs it
            return items, None, str(e), worth

    items, lifecycle, problem, worth = await viewer.workspace(request).run(work)
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(item.kind, []).append(item)
    copies = {i.path for i in groups.get("conflict", ())}
    actions: dict[str, list[Any]] = {}
    for action in lifecycle.items if lifecycle is not None else ():
        if action.kind == "duplicate" and copies.intersection(action.paths):
            continue  # a conflict copy is like its page by nature: listed with the copies
        actions.setdefault(action.kind, []).append(action)
    total = len(items) + sum(len(a) for a in actions.values()) + len(worth)
    note = problem or (lifecycle.note if lifecycle is not None else None)
    return viewer.page(
        request, "review.html", groups=groups, actions=actions, total=total, note=note, verdicts=VERDICTS, worth=worth
    )


async def graph(request: Request) -> Response:
    viewer = viewer_of(request)
    around = _param(request, "around")
    found = await viewer.workspace(request).run(lambda ws: ws.memory.graph(around, GRAPH_LIMIT))
    index = {node.path: i for i, node in enumerate(found.nodes)}
    nodes = [
        {"path": n.path, "title": n.title, "type": n.type, "status": n.status, "degree": n.degree} for n in found.nodes
    ]
    for node in nodes:
        node["url"] = render.page_url(viewer.base, str(node["path"]))
    data = {"nodes": nodes, "edges": [[index[s], index[t]] for s, t in found.edges], "around": found.around}
    return viewer.page(request, "graph.html", graph=found, data=data, types=PAGE_TYPES)


async def go(request: Request) -> Response:
    """A `[[link]]` by title, path or id: to its page, or a 404 saying no page has that name."""
    viewer = viewer_of(request)
    ref = _param(request, "ref")
    if ref is None:
        raise NotFoundError("give `ref`: a page's title, path or id")
    path = await viewer.workspace(request).run(lambda ws: ws.memory.find(ref))
    return RedirectResponse(render.page_url(viewer.base, path), status_code=303)


async def switch_project(request: Request) -> Response:
    """Show another project of the home (the switcher): kept in a cookie of this viewer's."""
    viewer = viewer_of(request)
    wanted = _param(request, "id") or ""
    if not any(p.id == wanted for p in viewer.projects()):
        raise NotFoundError(f"no project {wanted!r} in this wiki-memory home")
    response = RedirectResponse(viewer.base + "/", status_code=303)
    response.set_cookie(viewer.project_cookie, quote(wanted), httponly=True, samesite="strict", path=viewer.base + "/")
    return response
