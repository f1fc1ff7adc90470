"""Serving memory over HTTP on this machine: which addresses need a token, and the socket.

The MCP server (`serve --http`) and the web viewer (`ui`) follow the same rule: loopback
by default, and any other address only behind a token.
"""

from __future__ import annotations

import ipaddress
import socket
import sys

from wiki_memory.errors import WikiMemoryError

DEFAULT_HOST = "127.0.0.1"
MIN_TOKEN_LENGTH = 16


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve memory beyond this machine without a token."""
    if token is not None and not token.strip():
        raise WikiMemoryError("the token is empty; give a long random one (or none, on 127.0.0.1)")
    if not token and not is_loopback(host):
        raise WikiMemoryError(
            f"refusing to serve on {host} without a token: anyone who can reach it could read and change "
            "the memory. Give --token (or WIKI_MEMORY_TOKEN), e.g. "
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
