"""Secrets in prose: "the password is hunter2!", "use password X", "`X` is the new password"."""

from __future__ import annotations

import re

from wiki_memory.capture.redact.vocabulary import (
    _NOT_SECRET_QUALIFIERS,
    _NOT_SECRET_SUFFIXES,
    _generated,
    _keep_value,
    _looks_random,
    _passwordish,
    _regex,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


_PROSE = (
    r"(?i)(?<![\w-])(?P<kw>pass(?:word|phrase|code)s?|pwd|pw|pin|token|secret|api[ _-]?key|access[ _-]?key|"
    r"secret[ _-]?key|private[ _-]?key|key|credentials?|creds|login)(?P<gap>(?:[ \t]{1,4}[^\s]{1,40}){0,6}?)[ \t]{0,4}"
    r"(?:[ \t](?:is|was|are|were|will be|should be|would be|has been|had been|became|becomes|remains|to|=)|:|=)"
    r"(?:[ \t]{1,4}(?:now|still|currently|just|set to|changed to|reset to|updated to))?[ \t]{0,4}:?[ \t]{0,4}"
    r"(?P<v>[\"'`\u201c\u2018][^\"'`\u201d\u2019\n]{1,200}[\"'`\u201d\u2019]|[^\s]{1,200})"
)


def _prose_spans(text: str) -> Iterator[Span]:
    """ "the password is hunter2!", "my API key for staging: ...", "PIN is 4821"."""
    for m in _regex(_PROSE).finditer(text):
        kw = m.group("kw").lower()
        gap = [w.strip(",.:").lower() for w in m.group("gap").split()]
        value, start, quoted = _value(m, "\"'`\u201c\u2018")
        generated = _generated(value)
        if any(w in _NOT_SECRET_SUFFIXES or w in _NOT_SECRET_QUALIFIERS for w in gap) and not generated:
            continue  # "the token limit is 4096", but "the key for the staging bucket is Xk9..."
        if kw == "key":
            # A key of any kind ("the key is to restart") only when its value has the look of
            # a generated credential ("Unseal Key 1: ...", rclone's `key = K0...`), and not
            # one a word before it says is no secret ("primary key", "partition key").
            before = _regex(r"([A-Za-z]{1,20})[ \t_-]\Z").search(text, max(0, m.start() - 21), m.start())
            if before and before.group(1).lower() in _NOT_SECRET_QUALIFIERS:
                continue
            if generated and not _keep_value(value, quoted):
                yield start, start + len(value), "prose-secret"
            continue
        if kw.startswith(("cred", "login")):
            # "creds are deploy / Xy9..." or "credentials: deploy:Xy9..."
            other = _regex(r"[ \t]{0,4}/[ \t]{0,4}(?P<p>[^\s]{3,200})").match(text, m.end("v"))
            if other:
                value, start, quoted = other.group("p").rstrip(".,;!?)"), other.start("p"), False
            elif ":" in value and not quoted:
                head = value.partition(":")[0]
                value, start = value[len(head) + 1 :], start + len(head) + 1
            else:
                continue
        if kw.startswith("pin"):
            ok = value.isdigit() and 4 <= len(value) <= 8  # a PIN is all digits, however short
        elif not value or _keep_value(value, quoted):
            continue
        elif kw.startswith(("pass", "pw", "cred", "login")):
            ok = quoted or _passwordish(value)
        else:
            ok = (quoted and len(value) >= 8) or _looks_random(value, 12)
        if ok:
            yield start, start + len(value), "prose-secret"
    # "use password X", "with password 'X'", SQL's IDENTIFIED BY 'X' and PASSWORD 'X'.
    bare = _regex(
        r"(?i)(?<![\w-])(?:pass(?:word|phrase)|pwd|identified(?:[ \t]{1,4}with[ \t]{1,4}\w{1,40})?[ \t]{1,4}by)"
        r"[ \t]{1,4}"
        r"(?P<v>'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|[^\s'\"]{6,200})"
    )
    yield from _bare_spans(text, bare)
    # "`Xy9...` is the new password", "use Xy9... as the password".
    reverse = _regex(
        r"(?i)(?<![^\s(\"'`])(?P<v>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]{4,200})[ \t]{1,4}"
        r"(?:is|as|was|for)[ \t]{1,4}(?:(?:the|my|our|your|a|new|current|old|temporary|temp|admin|root|wifi|db|"
        r"database)[ \t]{1,4}){0,3}(?:password|passphrase|passcode|pin)(?![\w-])"
    )
    for m in reverse.finditer(text):
        value, start = m.group("v"), m.start("v")
        quoted = value[:1] in "\"'`"
        if quoted:
            value, start = value[1:-1], start + 1
        if value and not _keep_value(value, quoted) and (quoted or _passwordish(value)):
            yield start, start + len(value), "prose-secret"


def _bare_spans(text: str, bare: re.Pattern[str]) -> Iterator[Span]:
    for m in bare.finditer(text):
        value, start, quoted = _value(m, "\"'")
        if value and not _keep_value(value, quoted) and (quoted or (_passwordish(value) and not value.isalpha())):
            yield start, start + len(value), "prose-secret"


def _value(m: re.Match[str], quotes: str) -> tuple[str, int, bool]:
    """(value, where it starts, quoted) of a match's group `v`: its quotes taken off when it
    opens with one of `quotes`, else the punctuation that ends a sentence."""
    value, start = m.group("v"), m.start("v")
    if value[:1] in quotes:
        return value[1:-1], start + 1, True
    return value.rstrip(".,;:!?)"), start, False
