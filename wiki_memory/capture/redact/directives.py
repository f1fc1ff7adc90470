"""Config lines with no `key = value`: header and environment directives (nginx, Apache,
Caddy, HAProxy, Dockerfile `ENV`), `requirepass X`-style lines, GitHub Actions' add-mask,
`.pgpass` lines, SQL*Plus `CONNECT user/pass` and redis `AUTH`.
"""

from __future__ import annotations

from wiki_memory.capture.redact.assignments import _read_value
from wiki_memory.capture.redact.http_credentials import _credential
from wiki_memory.capture.redact.vocabulary import _keep_value, _key_kind, _looks_random, _regex, _words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


def _directive_spans(text: str) -> Iterator[Span]:
    """Header and environment directives with no `:` or `=`: nginx `proxy_set_header
    Authorization "Bearer x";`, Apache `RequestHeader set` / `SetEnv`, Caddy `header_up`,
    HAProxy `http-request set-header`, Dockerfile `ENV NAME value`, `fastcgi_param`."""
    pattern = _regex(
        r"(?i)(?<![\w-])(?:proxy_set_header|grpc_set_header|add_header|more_set_headers|more_set_input_headers"
        r"|requestheader|header_up|header_down|header|set-header|add-header|setenv|env|fastcgi_param|uwsgi_param"
        r"|scgi_param|define|setx|set[ \t]{1,4}-[A-Za-z]{1,4})[ \t]{1,8}"
        r"(?:(?:set|append|add|merge|setifempty|always|onsuccess)[ \t]{1,8}){0,2}"
        r"\\?[\"']?(?P<name>[\w.-]{1,64})\\?[\"']?[ \t]{1,8}(?=\S)"
    )
    reach = 0
    for m in pattern.finditer(text):
        if m.start() < reach:
            continue
        words = _words(m.group("name"))
        kind = _key_kind(words)
        if kind is None:
            continue
        value = _read_value(text, m.end())
        if value is None:
            continue
        start, end, quoted = value
        reach = end
        if kind == "header":
            if not quoted:
                end = reach = _regex(r"[^\n;]{0,2048}").match(text, start).end()  # type: ignore[union-attr]
            yield from _credential(text, start, end, True, "authorization")
        elif not _keep_value(text[start:end], quoted, words) and (kind != "weak" or _looks_random(text[start:end], 8)):
            yield start, end, "assignment"


def _directive_line_spans(text: str) -> Iterator[Span]:
    """Config lines with the value after a space: redis `requirepass X`, `masterauth X`,
    `.netrc` `login me password X`, wpa `psk X`, a line that is only `password X`."""
    pattern = _regex(
        r"(?im)^[ \t]*(?:machine[ \t]+\S{1,200}[ \t]+)?(?:login[ \t]+\S{1,200}[ \t]+)?"
        r"(?P<d>requirepass|masterauth|insecure-password|password|passwd|passphrase|secret|wpa_passphrase)"
        r"[ \t]{1,8}(?P<v>\S{1,512})[ \t]*(?:#.*)?$"
    )
    for m in pattern.finditer(text):
        value = m.group("v")
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
            start = m.start("v") + 1
        else:
            start = m.start("v")
        if value[:1] in ":=" or _keep_value(value, False):
            continue
        plain = m.group("d").lower() in ("secret", "password", "passwd", "passphrase") and value.isalpha()
        if plain and value.islower() and "login" not in m.group().lower():
            continue  # "password reset" as a heading
        yield start, start + len(value), "assignment"


def _misc_spans(text: str) -> Iterator[Span]:
    """GitHub Actions' `::add-mask::X`, `.pgpass` lines, SQL*Plus `CONNECT user/pass@db`."""
    pattern = _regex(
        r"::add-mask::(?P<mask>[^\s]{1,512})"
        r"|(?m:^[\w.*-]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,63}:[^:\s]{1,63}:(?P<pgpass>[^\s]{1,256})$)"
        r"|(?i:(?<![\w-])conn(?:ect)?[ \t]{1,8}[\w$#]{1,30}/(?P<conn>[^@\s/]{1,128})(?=@|\s|$))"
        r"|(?i:\d>[ \t]{0,4}auth[ \t]{1,4}(?:[^\s]{1,64}[ \t]{1,4})?(?P<redis>[^\s]{1,256}))"
        r"|(?i:config[ \t]{1,4}set[ \t]{1,4}(?:requirepass|masterauth)[ \t]{1,4}(?P<config>[^\s]{1,256}))"
    )
    for m in pattern.finditer(text):
        group = m.lastgroup or ""
        value = m.group(group)
        if not _keep_value(value, True):
            yield m.start(group), m.end(group), "cli-password" if group != "pgpass" else "assignment"
