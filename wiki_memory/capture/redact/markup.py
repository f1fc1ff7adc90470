"""Secrets in markup: XML elements and name/value pairs, plists, Markdown table rows."""

from __future__ import annotations

from wiki_memory.capture.redact.vocabulary import _keep_value, _key_kind, _looks_random, _passwordish, _regex, _words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


def _xml_spans(text: str) -> Iterator[Span]:
    """`<password>...</password>` (its text or a CDATA section), `<name>db.password</name>
    <value>...</value>`, and plists' `<key>Password</key><string>...</string>`."""
    element = _regex(
        r"<(?P<tag>[A-Za-z_][\w:.-]{0,63})(?:[ \t][^<>\n]{0,256})?>"
        r"(?:<!\[CDATA\[(?P<cdata>[^\]\n]{1,1024})\]\]>|(?P<text>[^<\n]{1,1024}))</(?P=tag)[ \t]*>"
    )
    for m in element.finditer(text):
        group = "text" if m.group("text") is not None else "cdata"
        words = _words(m.group("tag").rpartition(":")[2])
        kind = _key_kind(words)
        value = m.group(group).strip()
        if kind and not _keep_value(value, True, words) and (kind != "weak" or _looks_random(value, 8)):
            start = m.start(group) + len(m.group(group)) - len(m.group(group).lstrip())
            yield start, start + len(value), "assignment"
    pair = _regex(
        r"<(?P<t1>name|key)>(?P<n>[^<\n]{1,128})</(?P=t1)>\s{0,64}<(?P<t2>value|string)>(?P<v>[^<\n]{1,1024})</(?P=t2)>"
    )
    for m in pair.finditer(text):
        words = _words(m.group("n"))
        kind = _key_kind(words)
        value = m.group("v").strip()
        if kind and not _keep_value(value, True, words) and (kind != "weak" or _looks_random(value, 8)):
            start = m.start("v") + len(m.group("v")) - len(m.group("v").lstrip())
            yield start, start + len(value), "assignment"


def _table_spans(text: str) -> Iterator[Span]:
    """A Markdown table row naming a secret, then its value: `| DB_PASSWORD | hunter2 |`."""
    row = _regex(
        r"\|[ \t]{0,8}`?(?P<name>[A-Za-z_][\w.-]{0,63})`?[ \t]{0,8}\|[ \t]{0,8}`?(?P<v>[^|`\s]{3,256})`?[ \t]{0,8}\|"
    )
    for m in row.finditer(text):
        words = _words(m.group("name"))
        kind = _key_kind(words)
        value = m.group("v")
        if kind and not _keep_value(value, True, words) and (_looks_random(value, 8) or _passwordish(value)):
            yield m.start("v"), m.end("v"), "assignment"
