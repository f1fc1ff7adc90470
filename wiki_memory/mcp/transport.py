"""Running the server: over stdio (what agents spawn), or over streamable HTTP at `/mcp` with
`GET /health`, loopback-only unless a bearer token guards it."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from wiki_memory import __version__
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Admission, Tokens
from wiki_memory.serving.http import (
    DEFAULT_HOST,
    HostGate,
    bind,
    check_bind,
    is_loopback,
    respond,
    shown_host,
    warn_short_token,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "check_bind", "http_app", "serve_http", "serve_stdio"]

DEFAULT_PORT = 8765
# Where the token gate leaves the grant of a request made with a person's token, for the
# server's tools (`server.request_grant`); absent: the shared token, an open server, stdio.
GRANT_KEY = "wiki_memory.grant"
# Where `ProjectPaths` leaves the project a request's path names (`/mcp/<project>`).
PROJECT_KEY = "wiki_memory.project"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def serve_stdio(server: Any) -> None:
    """Serve one client on stdin/stdout until it closes the pipe."""

    server.warm_up()
    try:
        anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


class TokenGate:
    """ASGI middleware: who may send HTTP requests (`GET /health` excepted), decided by
    `Tokens.admit`: a person's token (its grant is left in the request's scope for the
    server's tools, see `GRANT_KEY`), the shared token, or an open loopback server
    with no tokens at all. Anyone else gets 401, and the refusal is logged."""

    def __init__(self, app: Callable[..., Awaitable[None]], tokens: Tokens, *, shared: str | None, loopback: bool):
        self.app = app
        self.tokens = tokens
        self.shared = shared
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") == "/health":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"), b"")
        try:
            admission = self.tokens.admit(header.decode("utf-8", "replace"), shared=self.shared, loopback=self.loopback)
        except WikiMemoryError as e:  # an unreadable token file: nobody gets in, and the server says why
            admission = Admission(False, reason=str(e))
        if admission.allowed:
            if admission.grant is not None:
                scope[GRANT_KEY] = admission.grant
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        self.tokens.refuse(
            f"a caller from {client[0]}", f"{scope.get('method', '?')} {scope.get('path', '?')}", admission.reason
        )
        body = {"error": "unauthorized", "message": "this wiki-memory server needs Authorization: Bearer <token>"}
        await respond(
            send, 401, json.dumps(body).encode(), headers=[(b"www-authenticate", b'Bearer realm="wiki-memory"')]
        )


class ProjectPaths:
    """ASGI middleware: `/mcp/<project>` is the MCP endpoint for one project (its id or
    name), so that a client configured with that address needs no `project` argument: the
    project is left in the request's scope and the path made `/mcp`."""

    def __init__(self, app: Callable[..., Awaitable[None]]):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith("/mcp/"):
            scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
            name = unquote(path[len("/mcp/") :]).strip("/").strip()
            if name:
                scope[PROJECT_KEY] = name
        await self.app(scope, receive, send)


def http_app(server: Any, *, host: str = DEFAULT_HOST, token: str | None = None) -> Any:
    """The ASGI app: the MCP endpoint at `/mcp` (and `/mcp/<project>` for one project),
    `GET /health`, the token gate around them (the shared `token` and the people's tokens
    of `server.tokens`), and on a loopback address the Host gate around that."""

    @server.custom_route("/health", methods=["GET"], include_in_schema=False)
    async def health(request: Request) -> JSONResponse:
        # Unauthenticated by design (load balancers, `curl`), so it says nothing about the memory.
        return JSONResponse({"status": "ok", "server": "wiki-memory", "version": __version__})

    if server.tokens is None:
        server.tokens = Tokens(server.env)
    app = TokenGate(
        ProjectPaths(server.streamable_http_app(host=host, streamable_http_path="/mcp")),
        server.tokens,
        shared=token,
        loopback=is_loopback(host),
    )
    # A loopback server answers to its own names only (DNS rebinding: see `serving`).
    return HostGate(app, host) if is_loopback(host) else app


def serve_http(
    server: Any,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve streamable HTTP until interrupted. Refuses a non-loopback host without a token."""
    import uvicorn  # deferred: the HTTP server, only for --http

    people = server.tokens is not None and server.tokens.any()
    check_bind(host, token, people=people)
    warn_short_token(token)
    app = http_app(server, host=host, token=token)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = shown_host(host)
    (announce or (lambda line: print(line, file=sys.stderr, flush=True)))(
        f"wiki-memory: serving MCP at http://{shown}:{bound}/mcp (one project: /mcp/<id>; health: /health)"
        + (", a person's token required" if people else ", bearer token required" if token else "")
    )
    server.warm_up()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        server.close()
