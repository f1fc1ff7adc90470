"""Passwords in URLs: `scheme://user:password@host`."""

from __future__ import annotations

from wiki_memory.capture.redact.compiled import _regex
from wiki_memory.capture.redact.vocabulary import _keep_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.family import Span


def _url_spans(text: str) -> Iterator[Span]:
    """`scheme://user:password@host`: the password (up to the last `@` before the host)."""
    pattern = _regex(
        r"(?<![\w+.-])[A-Za-z][\w+.-]{0,30}://(?P<user>[^\s/:@'\"<>\[\]]{0,128}):"
        r"(?P<secret>[^\s/'\"<>\[\]@]{1,256}(?:@[^\s/'\"<>\[\]@]{1,256}){0,3})@(?=[\w\[%-])"
    )
    for m in pattern.finditer(text):
        secret = m.group("secret")
        if secret == m.group("user") or _keep_value(secret, quoted=True):
            continue
        yield m.start("secret"), m.end("secret"), "url-password"
