"""Credentials of HTTP wherever they are written: passwords in URLs
(`scheme://user:password@host`), `Basic` and `Bearer` credentials, Okta's `SSWS`, the
credential inside an Authorization value (`_credential`), and session cookies (in a
`Cookie:` value, or handed to an HTTP client in code).
"""

from __future__ import annotations

from wiki_memory.capture.redact.vocabulary import (
    _SCHEME_TOKEN_ONLY,
    _b64decode,
    _is_placeholder,
    _keep_value,
    _looks_random,
    _regex,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


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


def _basic_spans(text: str) -> Iterator[Span]:
    """`Basic <base64>` wherever it is, when it decodes to `user:password`."""
    for m in _regex(r"(?<![\w-])(?i:basic)[ \t]{1,4}(?P<secret>[A-Za-z0-9+/]{8,1024}={0,2})(?![\w+/=])").finditer(text):
        decoded = _b64decode(m.group("secret"))
        if decoded is None:
            continue
        try:
            user_pass = decoded.decode("utf-8")
        except ValueError:
            continue
        if ":" in user_pass and user_pass.isprintable():
            yield m.start("secret"), m.end("secret"), "authorization"


def _bearer_spans(text: str) -> Iterator[Span]:
    """`Bearer <token>` wherever it is, when the token looks generated."""
    for m in _regex(r"(?<![\w-])(?i:bearer)[ \t]{1,4}(?P<secret>[A-Za-z0-9._~+/=-]{8,4096})").finditer(text):
        token = m.group("secret").rstrip(".")
        if not _is_placeholder(token) and (_looks_random(token, 16) or token.count(".") == 2):
            yield m.start("secret"), m.start("secret") + len(token), "authorization"


def _credential(text: str, start: int, end: int, quoted: bool, family: str) -> Iterator[Span]:
    """The credential in an Authorization value: the token after its scheme (`Bearer x`),
    or everything after a scheme with parameters (`Digest ...`, `AWS4-HMAC-SHA256 ...`)."""
    scheme = _regex(r"[ \t]*([A-Za-z][\w-]{0,30})[ \t]+(?=\S)").match(text, start, end if quoted else start + 64)
    if scheme and not _looks_random(scheme.group(1)):
        rest_start = scheme.end()
        if scheme.group(1).lower() in _SCHEME_TOKEN_ONLY:
            token = _regex(r"\{[^}\n]{0,200}\}?|[^\s,;'\"\]}]{1,4096}").match(
                text, rest_start, end if quoted else len(text)
            )
            rest_end = token.end() if token else rest_start
        else:  # parameters to the end of the value (or of the line)
            stop = end if quoted else _regex(r"[^\n]{0,4096}").match(text, rest_start).end()  # type: ignore[union-attr]
            rest_end = rest_start + len(text[rest_start:stop].rstrip().rstrip("\"';"))
        secret = text[rest_start:rest_end]
        if len(secret) >= 4 and not _keep_value(secret, True):
            yield rest_start, rest_end, family
        return
    token = _regex(r"[ \t]*(?P<t>[^\s,;'\"\]}]{1,4096})").match(text, start, end if quoted else len(text))
    if token and token.group("t").lower() in _SCHEME_TOKEN_ONLY | {"digest", "hmac", "oauth"}:
        # "Bearer " + token: the scheme alone in quotes, the credential concatenated after it
        joined = _regex(r"[ \t]*[\"'`][ \t]*\+[ \t]*(?P<q>[\"'`])(?P<v>[^\"'`\n]{6,4096})(?P=q)").match(text, end)
        if joined and not _keep_value(joined.group("v"), True):
            yield joined.start("v"), joined.end("v"), family
    elif token and len(token.group("t")) >= 6 and not _keep_value(token.group("t"), True):
        yield token.start("t"), token.end("t"), family


def _okta_spans(text: str) -> Iterator[Span]:
    """Okta API tokens after their `SSWS` scheme, wherever it is written (prose, a log)."""
    for m in _regex(r"(?<![\w-])SSWS[ \t]{1,4}(?P<t>[A-Za-z0-9_-]{30,80})(?![\w-])").finditer(text):
        if not _is_placeholder(m.group("t")):
            yield m.start("t"), m.end("t"), "okta-token"


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
