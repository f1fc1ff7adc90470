"""A secret's name and its value as two quoted arguments in code, and login calls."""

from __future__ import annotations

from wiki_memory.capture.redact.http_credentials import _credential
from wiki_memory.capture.redact.vocabulary import _keep_value, _key_kind, _looks_random, _passwordish, _regex, _words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


def _pair_spans(text: str) -> Iterator[Span]:
    """A secret's name and its value as two quoted arguments: `os.Setenv("API_KEY", "x")`,
    `setRequestHeader("Authorization", "Bearer x")`, `auth=("user", "x")`, `.login(user, "x")`."""
    pair = _regex(
        r"(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{0,63})(?P=q)[ \t]{0,4}(?:,|=>)[ \t]{0,4}[fb]?"
        r"(?P<q2>[\"'`])(?P<v>[^\"'`\n]{1,1024})(?P=q2)"
    )
    for m in pair.finditer(text):
        words = _words(m.group("name"))
        kind = _key_kind(words)
        if kind is None:
            continue
        start, end = m.span("v")
        value = m.group("v")
        if kind == "header":
            yield from _credential(text, start, end, True, "authorization")
        elif not _keep_value(value, True, words) and (
            _looks_random(value, 8) or (kind == "strong" and _passwordish(value))
        ):
            yield start, end, "assignment"
    login = _regex(
        r"(?i)(?:(?<![\w-])auth[ \t]{0,4}=[ \t]{0,4}\(|basicauth\(|\.login\(|set_?(?:password|auth|credentials)\()"
        r"[ \t]{0,4}"
        r"(?:[\"'][^\"'\n]{0,128}[\"']|[\w.]{1,64})[ \t]{0,4},[ \t]{0,4}(?P<q>[\"'])(?P<v>[^\"'\n]{1,512})(?P=q)"
    )
    for m in login.finditer(text):
        value = m.group("v")
        if not _keep_value(value, True) and (_passwordish(value) or _looks_random(value, 8)):
            yield m.start("v"), m.end("v"), "assignment"
