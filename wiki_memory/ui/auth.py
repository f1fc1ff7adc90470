"""Who may use the viewer, as an ASGI middleware in front of every route and asset.

- **The secret path.** The viewer serves under a path drawn per launch, `/<prefix>/`
  (`Viewer.base`); a request outside it gets a bare 404 that does not name it. Browsers keep
  cookies per host, not per port: a cookie of 127.0.0.1 goes to every server on 127.0.0.1.
  Its `Path` is what limits it, so the cookie is scoped to `Path=/<prefix>/`: another
  server on this host (any port) is sent it only for a request under the secret prefix,
  which it never sees unless it knows the secret (the Referrer-Policy keeps the viewer's
  addresses from other origins).
- **The token.** `wiki-memory ui` makes a fresh token per launch (or takes `--token`) and
  opens the browser on `/<prefix>/?token=...`, as Jupyter does. That request gets an
  HttpOnly, SameSite=Strict cookie and a page that forwards to the same address without the
  token, so the token leaves the address bar and the history. `/?token=...` (any path
  outside the prefix) with the right token does the same and forwards under the prefix: an
  address kept with a fixed `--token` still opens a relaunched viewer. Every other request
  needs the cookie (or `Authorization: Bearer <token>`, for scripts, under the prefix);
  without it, 401.
- **The cookie is not the token.** Its value is bound to this launch and this port: an HMAC
  of the port under a secret drawn when the viewer starts. A viewer on another port (even
  one started with the same `--token`), or this viewer started again, refuses it; the token
  itself never travels in a cookie.
- **The Host header** must name the address the viewer serves (a loopback name, or the
  host given), else 403: a page on another site whose name was pointed at 127.0.0.1 (DNS
  rebinding) gets nothing.
- **A POST** from another origin (its `Origin` or `Sec-Fetch-Site` says so), or of more
  than 4 MB, is refused here; every action also checks its form's CSRF token (`actions.py`).
- **Every response** carries a strict Content-Security-Policy (scripts and styles from the
  viewer itself only, no inline script, no frames), `nosniff`, no referrer to other sites and
  no caching.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from wiki_memory.serving.http import respond

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
HTML = b"text/html; charset=utf-8"
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # Not no-referrer: with it, Chromium sends `Origin: null` on the viewer's own forms.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_BODY = 4 * 1024 * 1024  # a form: a page's text (2 MB at most, encoded) and a few fields


def cookie_name(port: int) -> str:
    """Cookies are kept per host, not per port: two viewers on two ports need two names."""
    return f"wiki_memory_ui_{port}"


class Gate:
    """The checks above, around `app`, for a viewer serving on `host`:`port`."""

    def __init__(self, app: ASGIApp, *, token: str, host: str, port: int, base: str):
        self.app = app
        self.base = base  # `/<prefix>`: the viewer's secret path, no slash after
        self.token = token.encode("utf-8")
        self.port = port
        self.cookie = cookie_name(port)
        # This launch's session: what the cookie holds, worth nothing on another port or launch.
        self.session = session_value(secrets.token_bytes(32), port)
        bare = host.strip("[]").lower()
        self.any_host = bare in ("0.0.0.0", "::", "")  # every address of the machine: names unknown
        # The address it is bound to (127.0.0.2 is loopback too, and a browser names it so).
        names = {*LOOPBACK_NAMES, f"[{bare}]" if ":" in bare else bare}
        self.hosts = {f"{name}:{port}" for name in names} | ({*names} if port == 80 else set())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        host = headers.get("host", "").strip().lower()
        if not self.any_host and host not in self.hosts:
            await _plain(send, 403, "refused: this viewer answers only to its own address, not to this Host")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        given = query.get("token")
        path = scope.get("path", "/")
        first, slash, _ = path[1:].partition("/")
        # Compared in constant time: the prefix is a secret like the token.
        if not (slash and hmac.compare_digest(first.encode("utf-8"), self.base[1:].encode("utf-8"))):
            # Outside the secret path: nothing here but the token's way in. Who has the token
            # may learn the prefix; anyone else gets the same 404 for every address.
            if given is not None and self._matches(given.encode("utf-8")):
                await self._set_cookie(self.base + ("/" if path == self.base else path), query, send)
                return
            # The prefix without its slash: on to the prefix with it (the cookie's Path has one).
            if hmac.compare_digest(path.encode("utf-8"), self.base.encode("utf-8")):
                await _redirect(send, self.base + "/", scope.get("query_string", b""))
                return
            await _plain(send, 404, "not found")
            return
        # Under the prefix: the routes see it as the root path (Starlette strips it).
        scope = {**scope, "root_path": self.base}
        if given is not None:
            if not self._matches(given.encode("utf-8")):
                await _plain(send, 401, "the token in the address is not this viewer's; open the address it printed")
                return
            await self._set_cookie(path, query, send)
            return
        if not (self._session(headers) or self._bearer(headers)):
            await _plain(
                send,
                401,
                "this viewer needs its token: open the address `wiki-memory ui` printed (it ends in ?token=...)",
            )
            return
        if scope.get("method", "GET") in UNSAFE:
            if not _same_origin(headers, host):
                await _plain(send, 403, "refused: a change must come from the viewer's own pages")
                return
            size = headers.get("content-length", "")
            if not size.isdigit() or int(size) > MAX_BODY:
                await _plain(send, 413, f"refused: a form is at most {MAX_BODY // (1024 * 1024)} MB, with its length")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _matches(self, given: bytes) -> bool:
        return bool(given) and hmac.compare_digest(given, self.token)

    def _session(self, headers: dict[str, str]) -> bool:
        """Does the request carry this launch's cookie? (Any of the cookies of its name: another
        server on this host may have set one of the same name on a wider path.)"""
        found = _cookies(headers.get("cookie", ""), self.cookie)
        return any(given and hmac.compare_digest(given, self.session) for given in found)

    def _bearer(self, headers: dict[str, str]) -> bool:
        scheme, _, value = headers.get("authorization", "").strip().partition(" ")
        return scheme.lower() == "bearer" and self._matches(value.strip().encode("utf-8"))

    async def _set_cookie(self, path: str, query: dict[str, str], send: Send) -> None:
        """The token becomes a cookie, scoped to the secret path; the browser goes on to
        `path` (under the prefix) without the token.

        Why a page that forwards rather than a redirect: the browser may arrive from a file or
        another site (the launcher's forwarding file), and a SameSite=Strict cookie is not sent
        along a redirect chain that started elsewhere; a page of ours forwarding is same-site.
        The refresh replaces the history entry, so the token leaves the address bar."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        location = html.escape(quote(path) + (f"?{rest}" if rest else ""), quote=True)
        body = (
            f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={location}">'
            # No icon: a browser would ask /favicon.ico, outside the secret path (a 404).
            f'<link rel="icon" href="data:,"><title>wiki-memory</title>'
            f'<p><a href="{location}">Continue to the viewer</a></p>\n'
        ).encode()
        cookie = f"{self.cookie}={self.session.decode()}; HttpOnly; SameSite=Strict; Path={self.base}/"
        await respond(send, 200, body, HTML, [(b"set-cookie", cookie.encode("utf-8")), *SECURITY_HEADERS])


def session_value(secret: bytes, port: int) -> bytes:
    """The cookie's value for a viewer on `port` whose launch drew `secret`."""
    return hmac.new(secret, f"wiki-memory-ui:{port}".encode(), hashlib.sha256).hexdigest().encode()


def _cookies(header: str, name: str) -> list[bytes]:
    """The values of every cookie called `name` in a Cookie header."""
    found = []
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            found.append(value.strip().encode("utf-8"))
    return found


def _same_origin(headers: dict[str, str], host: str) -> bool:
    """False when the browser says the request comes from another site or origin."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    return origin is None or origin.lower() in (f"http://{host}", f"https://{host}")


async def _plain(send: Send, status: int, text: str) -> None:
    await respond(send, status, (text + "\n").encode("utf-8"), b"text/plain; charset=utf-8", SECURITY_HEADERS)


async def _redirect(send: Send, location: str, query: bytes) -> None:
    target = location + ("?" + query.decode("latin-1") if query else "")
    await respond(send, 308, b"", b"text/plain", [(b"location", target.encode("latin-1")), *SECURITY_HEADERS])
