"""Serving memory over HTTP on this machine: which addresses need a token, the socket, and
the Host and Origin gate of a loopback bind.

The MCP server (`serve --http`) and the web viewer (`ui`) follow the same rules: loopback
by default, and any other address only behind a token.

A server on 127.0.0.1 without a token trusts that only this machine reaches it. A web
page can break that with DNS rebinding: its own name, resolved again to 127.0.0.1, makes
the browser send the page's requests to the local server, with `Host: evil.example`. The
MCP SDK refuses such a Host only on the exact names it knows (`127.0.0.1`, `localhost`),
so `--host '[::1]'` or `--host 127.0.0.2` served another project's page to a foreign site.
`HostGate` refuses, on every loopback bind, any Host but the bound address and the
loopback names at the bound port (421), any foreign Origin and `Origin: null` (403). It is
pure ASGI and the standard library: any ASGI front end can wrap its app in it.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from wiki_memory.errors import WikiMemoryError

DEFAULT_HOST = "127.0.0.1"
MIN_TOKEN_LENGTH = 16


def is_loopback(host: str) -> bool:
    """Is `host` (a name or an address, IPv6 with or without brackets) this machine only?"""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_bind(host: str, token: str | None, *, people: bool = False) -> None:
    """Refuse to serve memory beyond this machine without a token (the shared `token`, or,
    with `people`, the per-person tokens of `wiki-memory token create`)."""
    if token is not None and not token.strip():
        raise WikiMemoryError("the token is empty; give a long random one (or none, on 127.0.0.1)")
    if not token and not people and not is_loopback(host):
        raise WikiMemoryError(
            f"refusing to serve on {host} without a token: anyone who can reach it could read and change "
            "the memory. Make a token per person (`wiki-memory token create NAME --project P --read`), "
            "or give one shared --token (or WIKI_MEMORY_TOKEN), e.g. "
            "`--token \"$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')\"`, "
            "or serve on 127.0.0.1"
        )


def warn_short_token(token: str | None) -> None:
    if token and len(token) < MIN_TOKEN_LENGTH:
        print(
            f"wiki-memory: warning: the token is {len(token)} characters; use {MIN_TOKEN_LENGTH} or more random ones",
            file=sys.stderr,
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise WikiMemoryError(f"cannot serve on {host}: {e.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise WikiMemoryError(f"cannot serve on {host}:{port}: {e.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def shown_host(host: str) -> str:
    """The host as a URL writes it (`[::1]` for IPv6)."""
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


# The Host and Origin gate of a loopback bind ------------------------------------------------

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


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
    await respond(send, status, json.dumps({"error": "refused", "message": reason}).encode())


async def respond(
    send: Callable[[Any], Awaitable[None]],
    status: int,
    body: bytes,
    content_type: bytes = b"application/json",
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Answer an HTTP request from ASGI middleware, without the app behind it: a status, a
    body and its headers."""
    start = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body})
