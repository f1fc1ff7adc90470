"""Session cookies: in a `Cookie:` / `Set-Cookie:` value, and handed to an HTTP client in code."""

from __future__ import annotations

from wiki_memory.capture.redact.compiled import _regex
from wiki_memory.capture.redact.vocabulary import _keep_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.family import Span


_COOKIE_NAMES = ("sess", "sid", "token", "auth", "jwt", "remember", "login", "secret", "_key", "credential")


def _cookie_spans(text: str, pos: int) -> Iterator[Span]:
    """Session cookies in a `Cookie:` / `Set-Cookie:` value (`curl -b` too)."""
    end = _regex(r"[^\n\"'`]{0,4096}").match(text, pos).end()  # type: ignore[union-attr]
    for m in _regex(r"(?P<n>[\w.-]{1,64})=(?P<v>[^;\s,]{1,4096})").finditer(text, pos, end):
        low = m.group("n").lower()
        if any(w in low for w in _COOKIE_NAMES) and "csrf" not in low and "xsrf" not in low:
            v = m.group("v")
            if not _keep_value(v, True) and len(v) >= 8:
                yield m.start("v"), m.end("v"), "cookie"


def _cookie_map_spans(text: str) -> Iterator[Span]:
    """Session cookies handed to an HTTP client in code: `cookies={"sessionid": "..."}`,
    `cookies: {session: '...'}`, `cookies=dict(sessionid="...")`."""
    opening = _regex(r"(?i)(?<![\w-])cookies?[\"'`]?\]?[ \t]{0,8}[:=][ \t]{0,8}(?:dict\(|\{)")
    pair = _regex(
        r"[\"'`]?(?P<n>[\w.-]{1,64})[\"'`]?[ \t]{0,8}[:=][ \t]{0,8}(?P<q>[\"'`])(?P<v>[^\"'`\n]{1,4096})(?P=q)"
    )
    for m in opening.finditer(text):
        close = text.find(")" if m.group().endswith("(") else "}", m.end(), m.end() + 4096)
        for p in pair.finditer(text, m.end(), close if close >= 0 else min(len(text), m.end() + 4096)):
            low, value = p.group("n").lower(), p.group("v")
            named = any(w in low for w in _COOKIE_NAMES) and "csrf" not in low and "xsrf" not in low
            if named and len(value) >= 8 and not _keep_value(value, True):
                yield p.start("v"), p.end("v"), "cookie"
