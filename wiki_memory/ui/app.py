"""The viewer as an ASGI application: its routes, its templates, the project each request is
about, and the gate in front of it all (`auth.py`).

    app = build_app(Viewer(project, token="...", host="127.0.0.1", port=8766))

The viewer lives under a secret path drawn per launch, `Viewer.base` (`/<prefix>`): every
address it makes carries it, and its cookie is scoped to it (`auth.py` says why).

Every view reads and every action writes through the project's `Memory` (on the project's
own thread, `serving/workspaces.py`); this module only routes and renders.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from wiki_memory import __version__
from wiki_memory.config import Project
from wiki_memory.errors import ConflictError, NotFoundError, WikiMemoryError
from wiki_memory.memory import known_projects
from wiki_memory.serving.workspaces import Workspace, Workspaces
from wiki_memory.ui import render
from wiki_memory.ui.auth import Gate, cookie_name

PROJECTS_TTL = 10.0  # seconds the list of the home's projects is kept


class Refused(Exception):
    """A request the viewer will not serve (403): an action without its CSRF token."""


@dataclass
class Viewer:
    """One running viewer: the project it was started for, its token, where it serves, and
    the secret path it serves under (`base`)."""

    project: Project
    token: str
    host: str = "127.0.0.1"
    port: int = 8766
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    prefix: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # drawn per launch
    workspaces: Workspaces = field(default_factory=lambda: Workspaces(name="wiki-memory-ui", warm=True, log="ui"))
    _projects: tuple[float, list[Project]] = field(default_factory=lambda: (0.0, []))  # (when read, what)

    @property
    def base(self) -> str:
        """The path every address of this viewer starts with (`/<prefix>`, no slash after)."""
        return "/" + self.prefix

    @property
    def project_cookie(self) -> str:
        return cookie_name(self.port) + "_project"

    def projects(self) -> list[Project]:
        """The home's projects with a wiki, and the one the viewer started for."""
        kept_at, found = self._projects
        if time.monotonic() - kept_at > PROJECTS_TTL:
            found = known_projects()
            self._projects = (time.monotonic(), found)
        if all(p.id != self.project.id for p in found):
            found = [self.project, *found]
        return found

    def project_for(self, request: Request) -> Project:
        """The project chosen in the switcher (a cookie), else the viewer's own."""
        chosen = request.cookies.get(self.project_cookie)
        if chosen and chosen != self.project.id:
            for project in self.projects():
                if project.id == chosen:
                    return project
        return self.project

    def workspace(self, request: Request) -> Workspace:
        return self.workspaces.get(self.project_for(request))

    @cached_property
    def templates(self) -> Any:

        env = Environment(
            loader=PackageLoader("wiki_memory.ui", "templates"),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.globals.update(
            base=self.base,  # every address a template writes starts with it
            page_url=partial(render.page_url, self.base),
            history_url=partial(render.history_url, self.base),
            edit_url=partial(render.edit_url, self.base),
            go_url=partial(render.go_url, self.base),
            when=render.when,
            ago=render.ago,
            diff_class=render.diff_class,
            highlight=render.highlight,
            version=__version__,
        )
        env.filters["urlpath"] = quote
        return env

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        """A template rendered with what every page shows (the project, the switcher, the
        CSRF token for its forms)."""
        project = self.project_for(request)
        html = self.templates.get_template(template).render(
            project=project,
            projects=self.projects(),
            csrf=self.csrf,
            here=request.url.path.removeprefix(self.base) or "/",  # as the routes name it
            **context,
        )
        return HTMLResponse(html, status_code=status)


def viewer_of(request: Request) -> Viewer:
    viewer: Viewer = request.app.state.viewer
    return viewer


def status_of(error: Exception) -> int:
    if isinstance(error, Refused):
        return 403
    if isinstance(error, NotFoundError):
        return 404
    if isinstance(error, ConflictError):
        return 409
    return 400


async def _error(request: Request, error: Exception) -> Response:
    """A user's mistake (a page that does not exist, an edit that cannot apply): one line."""
    status = status_of(error)
    return viewer_of(request).page(request, "error.html", status=status, status_code=status, message=str(error))


def build_app(viewer: Viewer) -> Gate:
    """The viewer's ASGI app, behind its gate."""
    from wiki_memory.ui import actions, views  # deferred: the routes' modules import this one (Viewer, viewer_of)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        viewer.workspaces.get(viewer.project)  # (opened now: it warms up before the first request)
        try:
            yield
        finally:
            viewer.workspaces.close()

    routes = [
        Route("/", views.home),
        Route("/search", views.search),
        Route("/page/{path:path}", views.page),
        Route("/raw/{path:path}", views.raw),
        Route("/edit/{path:path}", views.edit_form, methods=["GET"]),
        Route("/edit/{path:path}", actions.save, methods=["POST"]),
        Route("/history/{path:path}", views.history),
        Route("/commit/{rev}", views.commit),
        Route("/revert/{rev}", actions.revert, methods=["POST"]),
        Route("/status/{path:path}", actions.set_status, methods=["POST"]),
        Route("/handoff", views.handoff),
        Route("/review", views.review),
        Route("/graph", views.graph),
        Route("/go", views.go),
        Route("/project", views.switch_project),
        Route("/favicon.ico", lambda request: RedirectResponse(viewer.base + "/static/icon.svg", status_code=301)),
        Mount("/static", StaticFiles(packages=[("wiki_memory.ui", "static")]), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={WikiMemoryError: _error, Refused: _error},
        lifespan=lifespan,
    )
    app.state.viewer = viewer
    return Gate(app, token=viewer.token, host=viewer.host, port=viewer.port, base=viewer.base)
