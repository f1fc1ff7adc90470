"""Running the server: over stdio (what agents spawn), or over streamable HTTP at `/mcp` with
`GET /health`, loopback-only unless a bearer token guards it."""

from __future__ import annotations

import hmac
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from wiki_memory.serving import DEFAULT_HOST, HostGate, bind, check_bind, is_loopback, shown_host, warn_short_token

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "check_bind", "http_app", "serve_http", "serve_stdio"]

DEFAULT_PORT = 8765

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def serve_stdio(server: Any) -> None:
    """Serve one client on stdin/stdout until it closes the pipe."""
    import anyio

    server.warm_up()
    try:
        anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


class BearerGate:
    """ASGI middleware: every HTTP request but `GET /health` needs `Authorization: Bearer <token>`
    (401 otherwise), compared in constant time."""

    def __init__(self, app: Callable[..., Awaitable[None]], token: str | None):
        self.app = app
        self.token = token.encode("utf-8") if token else None

    def allowed(self, scope: Scope) -> bool:
        if self.token is None or scope.get("path") == "/health":
            return True
        header = next((v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"), b"")
        scheme, _, given = header.strip().partition(b" ")
        # compare_digest on bytes of any length; a wrong scheme compares an empty value.
        ok = hmac.compare_digest(given.strip() if scheme.lower() == b"bearer" else b"", self.token)
        return ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(scope):
            body = json.dumps(
                {"error": "unauthorized", "message": "this wiki-memory server needs Authorization: Bearer <token>"}
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="wiki-memory"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def http_app(server: Any, *, host: str = DEFAULT_HOST, token: str | None = None) -> Any:
    """The ASGI app: the MCP endpoint at `/mcp`, `GET /health`, the bearer gate around both,
    and on a loopback address the Host gate around that."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from wiki_memory import __version__

    @server.custom_route("/health", methods=["GET"], include_in_schema=False)
    async def health(request: Request) -> JSONResponse:
        # Unauthenticated by design (load balancers, `curl`), so it says nothing about the memory.
        return JSONResponse({"status": "ok", "server": "wiki-memory", "version": __version__})

    app = BearerGate(server.streamable_http_app(host=host, streamable_http_path="/mcp"), token)
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
    import uvicorn

    check_bind(host, token)
    warn_short_token(token)
    app = http_app(server, host=host, token=token)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = shown_host(host)
    (announce or (lambda line: print(line, file=sys.stderr, flush=True)))(
        f"wiki-memory: serving MCP at http://{shown}:{bound}/mcp (health: /health)"
        + (", bearer token required" if token else "")
    )
    server.warm_up()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        server.close()
