"""Values under a key that names a secret, whatever the syntax: env files, YAML (block
scalars too), TOML, INI, JSON, code, connection strings, HTTP headers, and the
`name: X` / `value: Y` pairs of Kubernetes, Postman and XML config.
"""

from __future__ import annotations

import re

from wiki_memory.capture.redact.http_credentials import _cookie_spans, _credential
from wiki_memory.capture.redact.vocabulary import (
    _FUNCTION_WORDS,
    _KEY_SECRET,
    _KV,
    _KV_HINTS,
    _PROSE_STOPWORDS,
    _is_reference,
    _keep_value,
    _key_kind,
    _looks_random,
    _regex,
    _words,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


_QUOTED = {
    '"': r'"(?P<v>(?:[^"\\\n]|\\.){0,1024})"',
    "'": r"'(?P<v>[^'\n]{0,1024})'",
    "`": r"`(?P<v>[^`\n]{0,1024})`",
    '\\"': r'\\"(?P<v>(?:[^"\\\n]|\\[^"\n]){0,1024})\\"',
    "\\'": r"\\'(?P<v>[^'\\\n]{0,1024})\\'",
    "\u201c": r"\u201c(?P<v>[^\u201d\n]{0,1024})\u201d",
}
_UNQUOTED = r"[^\s,;&|<>\"'`)\]}\\]{1,512}"


def _read_value(text: str, pos: int) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value that starts at `pos` (after spaces, a `[` of a Go
    map, a string prefix like f"..."), or None."""
    m = _regex(r"[ \t]{0,8}(?:\[[ \t]{0,4})?(?:[fbrutFBRU]{1,2}(?=[\"'`]))?").match(text, pos)
    pos = m.end() if m else pos
    for opening in ('\\"', "\\'", '"', "'", "`", "\u201c"):
        if text.startswith(opening, pos):
            q = _regex(_QUOTED[opening]).match(text, pos)
            if q is None:
                return None
            return q.start("v"), q.end("v"), True
    u = _regex(_UNQUOTED).match(text, pos)
    if u is None:
        return None
    return u.start(), u.end(), False


def _line_start(text: str, pos: int) -> bool:
    """Whether only indentation, `- `, `export ` or `set ` stands before `pos` on its line."""
    line = text.rfind("\n", max(0, pos - 200), pos) + 1
    before = text[line:pos].strip()
    return before in ("", "-", "export", "set", "setx", "ENV", "env", "$env:", "- name:") or before.startswith("#")


def _kv_spans(text: str) -> Iterator[Span]:
    """Values under a key that names a secret, whatever the syntax."""
    reach = [0]  # where the last value read ends: keys inside it were judged with it
    for m in _regex(_KV).finditer(text):
        name = m.group("name")
        low = name.lower()
        start = m.start()
        if start < reach[0] or (not any(h in low for h in _KV_HINTS) and low not in ("name", "key")):
            continue
        if text[max(0, start - 2) : start] == "${":
            continue  # ${DB_PASSWORD:-default}: a reference with its default
        yield from _kv_value(text, m, name, start, reach)


def _context_words(text: str, start: int, name: str) -> list[str]:
    """The key's words, with the dotted path before it (`fs.s3a.secret.key`) or the word
    before it in prose (`API key:`)."""
    words = _words(name)
    if start and text[start - 1] == ".":
        m = _regex(r"[\w.-]{1,64}\Z").search(text, max(0, start - 64), start)
        if m:
            words = _words(m.group().replace(".", " ")) + words
    elif start >= 2 and text[start - 1] == " " and words and words[-1] in ("key", "token", "secret"):
        m = _regex(r"[A-Za-z]{2,12} \Z").search(text, max(0, start - 14), start)
        if m and m.group().strip().lower() in _KEY_SECRET | {"bearer", "refresh", "auth", "client"}:
            words = [m.group().strip().lower()] + words
    return words


def _kv_value(text: str, m: re.Match[str], name: str, start: int, reach: list[int]) -> Iterator[Span]:
    sep = m.group("sep")
    query = start > 0 and text[start - 1] in "?&"
    words = _context_words(text, start, name)
    low = name.lower()
    if low in ("name", "key"):
        yield from _named_value(text, m.end())
        return
    if words and words[-1] == "cookie":
        reach[0] = _regex(r"[^\n\"'`]{0,4096}").match(text, m.end()).end()  # type: ignore[union-attr]
        yield from _cookie_spans(text, m.end())
        return
    kind = _key_kind(words, query)
    if kind is None:
        return
    if ":" in sep and _regex(r"[ \t]{0,8}[|>][-+]?[ \t]*\n").match(text, m.end()):
        block = _yaml_block(text, start, m.end())  # password: |
        if block and not _keep_value(text[block[0] : block[1]], True, words):
            reach[0] = block[1]
            yield block[0], block[1], "assignment"
        return
    value = _read_value(text, m.end())
    if value is None:
        return
    v_start, v_end, quoted = value
    reach[0] = v_end
    if "==" in sep and not quoted:
        return
    family = _kv_family(text, start, name, words, sep, kind)
    if kind == "header":
        yield from _credential(text, v_start, v_end, quoted, family)
        return
    if not quoted and "=" in sep and family == "connection-string":
        stop = text.find(";", v_start, v_start + 256)
        newline = text.find("\n", v_start, v_start + 256)
        if stop > 0 and (newline < 0 or stop < newline) and "=" not in text[v_end:stop]:
            v_end = stop  # Password=two words;
    elif not quoted and (":" in sep or sep.endswith((" ", "\t"))) and _line_start(text, start) and _config_name(name):
        v_end = _line_end_value(text, v_start)  # YAML `db_password: two words`, INI `pass = a b`
    secret = text[v_start:v_end]
    if not quoted:
        secret = secret.rstrip(".,:!?")
        v_end = v_start + len(secret)
        if _code_context(text, start, m.end(), v_end, secret, sep):
            return
        follows = _regex(r"[ \t]+[A-Za-z]").match(text, v_end)
        if follows and secret.isalpha() and not _line_start(text, start):
            return  # prose: "token: expired again"
        if secret.isalpha() and secret.lower() in _PROSE_STOPWORDS:
            return
        if " " in secret and any(w in _FUNCTION_WORDS for w in secret.lower().split()):
            return  # password: see the vault
    if _keep_value(secret, quoted, words):
        return
    if kind == "weak" and not (_looks_random(secret, 8) or _user_pass(secret)):
        return
    yield v_start, v_end, family


def _kv_family(text: str, start: int, name: str, words: list[str], sep: str, kind: str) -> str:
    if kind == "header":
        return "authorization"
    if "aws" in words and "secret" in words:
        return "aws-secret-key"
    if "-" in name and words[0] in ("x", "api", "private", "auth", "access", "ocp", "dd", "circle", "job"):
        return "api-key-header"
    before = text[max(0, start - 2) : start].strip()
    if sep.strip() == "=" and (before.endswith(";") or "".join(words) in ("accountkey", "sharedaccesskey", "pwd")):
        return "connection-string"
    if (
        sep.strip() == "="
        and _regex(r"[^\n;=]{0,200};").match(text, start + len(name))
        and "user" in text[max(0, start - 200) : start].lower().replace(" ", "")
    ):
        return "connection-string"
    return "assignment"


def _yaml_block(text: str, key_start: int, pos: int) -> tuple[int, int] | None:
    """The lines of a YAML block scalar (`password: |`) that follow, indented deeper than its key."""
    line = text.rfind("\n", max(0, key_start - 200), key_start) + 1
    indent = key_start - line if text[line:key_start].strip() in ("", "-") else 0
    newline = text.find("\n", pos, pos + 16)
    if newline < 0:
        return None
    first = _regex(r"(?:[ \t]*\n){0,8}(?P<ind>[ \t]+)(?=\S)").match(text, newline + 1)
    if first is None or len(first.group("ind")) <= indent:
        return None
    start = end = first.end()
    for row in _regex(r"(?P<ind>[ \t]*)(?P<body>[^\n]*)(?:\n|$)").finditer(
        text, first.start("ind"), first.start("ind") + 8192
    ):
        if row.group("body") and len(row.group("ind")) <= indent:
            break
        if row.group("body"):
            end = row.start("body") + len(row.group("body").rstrip())
        if not row.group():
            break
    return (start, end) if end > start else None


def _config_name(name: str) -> bool:
    """A key spelled as in a config file (`db_password`, `smtp.pass`, `apiKey`), not a word of prose."""
    return any(c in name for c in "_.-") or name.islower() or (name[:1].islower() and not name.isalpha())


def _line_end_value(text: str, start: int) -> int:
    """The end of an unquoted config value that runs to the end of its line (a trailing
    ` #` or ` ;` comment left out)."""
    newline = text.find("\n", start, start + 1024)
    end = newline if newline >= 0 else min(len(text), start + 1024)
    line = text[start:end]
    for comment in (" #", " ;", " //"):
        cut = line.find(comment)
        if cut >= 0:
            line = line[:cut]
    return start + len(line.rstrip())


def _code_context(text: str, key_start: int, sep_end: int, v_end: int, value: str, sep: str) -> bool:
    """An unquoted identifier handed on in code (`login(user, password=pw)`, `pw = password;`)."""
    if not _regex(r"[A-Za-z_]\w*").fullmatch(value):
        return False
    after = text[v_end : v_end + 1]
    if after in (")", ","):
        return True
    return after == ";" and (sep.startswith((" ", "\t")) or sep.endswith((" ", "\t")))


def _user_pass(value: str) -> bool:
    user, sep, password = value.partition(":")
    return bool(sep and user and len(password) >= 3 and not _is_reference(password))


def _named_value(text: str, pos: int) -> Iterator[Span]:
    """`name: DB_PASSWORD` / `key="Authorization"` followed by `value: ...`: Kubernetes env
    entries, Postman and Envoy headers, `<add key="ApiKey" value="..."/>`, `<entry key="password">...`."""
    value = _read_value(text, pos)
    if value is None:
        return
    n_start, n_end, _ = value
    words = _words(text[n_start:n_end])
    kind = _key_kind(words)
    if kind is None or n_end - n_start > 64:
        return
    family = "authorization" if kind == "header" else "assignment"
    after = n_end + 1 if text[n_end : n_end + 1] in "\"'`" else n_end
    element = _regex(r"[^<>\n]{0,100}?>(?P<v>[^<\n]{1,512})<").match(text, after)
    if element:
        v_start, v_end = element.span("v")
        if kind == "header":
            yield from _credential(text, v_start, v_end, True, family)
        elif not _keep_value(element.group("v"), True, words):
            yield v_start, v_end, family
        return
    following = _regex(r"(?<![\w-])value\\?[\"']?[ \t]{0,8}[:=](?![=:])").search(text, after, after + 160)
    if following is None or text.count("\n", after, following.start()) > 2:
        return
    value = _read_value(text, following.end())
    if value is None:
        return
    v_start, v_end, quoted = value
    if kind == "header":
        yield from _credential(text, v_start, v_end, quoted, family)
    elif not _keep_value(text[v_start:v_end], quoted, words) and (
        kind != "weak" or _looks_random(text[v_start:v_end], 8)
    ):
        yield v_start, v_end, family
