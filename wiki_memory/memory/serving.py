"""What every front end that serves memory must enforce (the MCP server, the web viewer): a
Host and Origin gate on loopback binds, and which projects a server reaches (`Reach`).

A server on 127.0.0.1 without a token trusts that only this machine reaches it. A web
page can break that with DNS rebinding: its own name, resolved again to 127.0.0.1, makes
the browser send the page's requests to the local server, with `Host: evil.example`. The
MCP SDK refuses such a Host only on the exact names it knows (`127.0.0.1`, `localhost`),
so `--host '[::1]'` or `--host 127.0.0.2` served another project's page to a foreign site.
`HostGate` refuses, on every loopback bind, any Host but the bound address and the
loopback names at the bound port (421), any foreign Origin and `Origin: null` (403).

Pure ASGI and the standard library: any ASGI front end can wrap its app in it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from wiki_memory.config import Project, resolve_project
from wiki_memory.errors import NotFoundError

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Is `host` (a name or an address, IPv6 with or without brackets) this machine only?"""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _as_host(address: str) -> str:
    """An address as it appears in a Host header: IPv6 in brackets, names in lower case."""
    address = address.strip().strip("[]").lower()
    return f"[{address}]" if ":" in address else address


class HostGate:
    """ASGI middleware for a server bound to a loopback address (see the module docstring).

    `bound` is the address the server listens on; the port is read from each request's
    ASGI `server` (so a server on port 0 needs nothing more)."""

    def __init__(self, app: App, bound: str):
        self.app = app
        self.names = {_as_host(bound), *LOOPBACK_NAMES}

    def allowed_hosts(self, port: int | None) -> set[str]:
        return {f"{name}:{port}" for name in self.names} if port else set(self.names)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) for a request to refuse, or None."""
        headers = {k.lower(): v for k, v in scope.get("headers", ())}
        server = scope.get("server") or (None, None)
        allowed = self.allowed_hosts(server[1] if len(server) > 1 else None)
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        if host not in allowed:
            return 421, f"this wiki-memory server answers only to {', '.join(sorted(allowed))}, not {host or '(none)'}"
        origin = headers.get(b"origin")
        if origin is not None:
            value = origin.decode("latin-1").strip().lower()
            scheme, sep, rest = value.partition("://")
            if not sep or scheme not in ("http", "https") or rest.rstrip("/") not in allowed:
                return 403, f"requests from {value or 'an opaque origin'} are refused"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refused = self.refusal(scope)
            if refused is not None:
                await _refuse(scope, send, *refused)
                return
        await self.app(scope, receive, send)


async def _refuse(scope: Scope, send: Send, status: int, reason: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"error": "refused", "message": reason}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


# Which projects a server reaches ------------------------------------------------------------


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
