"""Starting the viewer: the socket, a fresh token, the browser opened on it, uvicorn.

The browser is opened on a private file that forwards to the address with the token (as
Jupyter does), so the token never appears on a command line other users can list.
"""

from __future__ import annotations

import html
import os
import secrets
import signal
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from wiki_memory.errors import WikiMemoryError
from wiki_memory.serving.http import bind, check_bind, is_loopback, shown_host, warn_short_token
from wiki_memory.ui.app import Viewer, build_app

if TYPE_CHECKING:
    import socket

    from wiki_memory.config import Project

DEFAULT_PORT = 8766  # (the MCP server's HTTP default is 8765)


def listen(host: str, port: int | None) -> socket.socket:
    """The socket: on `port`, or on DEFAULT_PORT, else any free port when that one is taken."""
    if port is not None:
        return bind(host, port)
    try:
        return bind(host, DEFAULT_PORT)
    except WikiMemoryError:
        return bind(host, 0)


def browse_url(host: str, port: int, base: str, token: str) -> str:
    """The address to open, under the viewer's secret path `base`: a wildcard bind is
    browsed on loopback."""
    name = "127.0.0.1" if host.strip("[]") in ("0.0.0.0", "::", "") else shown_host(host)
    return f"http://{name}:{port}{base}/?token={token}"


def open_in_browser(url: str, say: Callable[[str], None]) -> Path | None:
    """Open `url` in the person's browser through a file only they can read; the file's
    path (to delete when the viewer stops), or None when no browser could be opened."""
    fd, name = tempfile.mkstemp(prefix="wiki-memory-ui-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        target = html.escape(url, quote=True)
        out.write(
            f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={target}">'
            f'<title>wiki-memory</title><p><a href="{target}">Open the wiki-memory viewer</a></p>\n'
        )
    path = Path(name)
    try:
        opened = webbrowser.open(path.as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        say("wiki-memory: no browser could be opened here; open the address above yourself")
    return path


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def run(
    project: Project,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    token: str | None = None,
    open_browser: bool = True,
    say: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer until interrupted (refused on a non-loopback host without a token)."""

    say = say or (lambda line: print(line, flush=True))
    check_bind(host, token)
    warn_short_token(token)
    token = token or secrets.token_urlsafe(32)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    viewer = Viewer(project, token=token, host=host, port=bound)
    url = browse_url(host, bound, viewer.base, token)
    say(f"wiki-memory: the memory of {project.name} is at {url}")
    if not is_loopback(host):
        say(f"wiki-memory: serving on {host}: anyone who has the address with its token can read and change it")
    say("wiki-memory: Ctrl-C stops the viewer")
    opener: list[Path | None] = []
    if open_browser:
        # Once uvicorn is listening (the socket already is): a text browser may block.
        timer = threading.Timer(0.3, lambda: opener.append(open_in_browser(url, say)))
        timer.daemon = True
        timer.start()
    config = uvicorn.Config(build_app(viewer), log_level="warning", lifespan="on")
    # uvicorn stops gracefully on SIGTERM, then raises it again with the handler it found:
    # this one ends the process through the `finally` below, so the forwarding file goes too.
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        for path in opener:
            if path is not None:
                path.unlink(missing_ok=True)
        print("wiki-memory: the viewer stopped", file=sys.stderr)
