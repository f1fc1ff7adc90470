"""Which projects a server reaches (`Reach`): the MCP server's `project` argument, and any
other front end that serves several projects, reach only what the server was started for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from wiki_memory.config import Project, resolve_project
from wiki_memory.errors import NotFoundError


class OutOfReach(NotFoundError):
    """A call names a project its server was not started for."""


def _same(a: Project, b: Project) -> bool:
    return a.id == b.id or a.wiki.resolve() == b.wiki.resolve()


class Reach:
    """Which projects a server may reach, so that a caller cannot read or write (or create)
    the memory of every project in the home by naming it:

    - its own project (where it was started, `--project`, `WIKI_MEMORY_STORE`);
    - over stdio, the projects of its client's roots (the client's own workspace);
    - others only when configured: `serve --projects DIR|ID|NAME|all`, or `[mcp] projects`
      in `config.toml`. An HTTP server ignores roots (`roots=False`): a token holder reaches
      what the server was started for, no more.
    """

    def __init__(self, configured: Sequence[str] = (), *, roots: bool = True):
        entries = [str(c).strip() for c in configured if str(c).strip()]
        self.everything = "all" in entries
        self.configured = [c for c in entries if c != "all"]
        self.roots = roots

    def allows(self, project: Project, own: Project | None = None, roots: Sequence[Project] = ()) -> bool:
        if self.everything or (own is not None and _same(project, own)):
            return True
        if self.roots and any(_same(project, r) for r in roots):
            return True
        for entry in self.configured:
            if entry in (project.id, project.name):
                return True
            path = Path(entry).expanduser()
            if path.is_absolute() and path.is_dir() and _same(resolve_project(path), project):
                return True
        return False

    def check(self, project: Project, own: Project | None = None, roots: Sequence[Project] = ()) -> Project:
        """`project`, or OutOfReach saying how to reach it."""
        if self.allows(project, own, roots):
            return project
        where = (
            f"this server serves {own.name} ({own.root or own.wiki})"
            if own is not None
            else "this server has no project of its own"
        )
        if self.roots:
            where += " and its client's roots"
        raise OutOfReach(
            f"project {project.name} ({project.root or project.wiki}) is out of this server's reach: {where}. "
            "To reach others, start it with `wiki-memory serve --projects DIR` (or an id, or `all`), or list them "
            "under [mcp] projects in config.toml"
        )
