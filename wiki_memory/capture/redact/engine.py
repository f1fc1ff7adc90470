"""The engine: the rule set in order, the label shown where findings overlap, the user's
own patterns from config.toml, and `find`, which runs every rule a text's hints call for.
"""

from __future__ import annotations

import os
import re

from wiki_memory.capture.redact.assignments import _KV_HINTS, _kv_spans
from wiki_memory.capture.redact.authorization import _basic_spans, _bearer_spans, _okta_spans
from wiki_memory.capture.redact.code_pairs import _PAIR_HINTS, _pair_spans
from wiki_memory.capture.redact.command_lines import _FLAG_HINTS, _cli_spans, _echo_spans, _flag_spans
from wiki_memory.capture.redact.compiled import _regex
from wiki_memory.capture.redact.cookies import _cookie_map_spans
from wiki_memory.capture.redact.directives import (
    _LINE_HINTS,
    _MISC_HINTS,
    _directive_line_spans,
    _directive_spans,
    _misc_spans,
)
from wiki_memory.capture.redact.family import Family, Finding, _merge
from wiki_memory.capture.redact.markup import _table_spans, _xml_spans
from wiki_memory.capture.redact.private_keys import _pem_spans
from wiki_memory.capture.redact.prose import _PROSE_HINTS, _prose_spans
from wiki_memory.capture.redact.token_shapes import _aws_pair_spans, _discord_spans, _special_spans
from wiki_memory.capture.redact.urls import _url_spans
from wiki_memory.capture.redact.vendors import _VENDORS, _vendor_spans
from wiki_memory.capture.redact.vocabulary import _MARK_PREFIX
from wiki_memory.config import home, load_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from wiki_memory.capture.redact.family import Span


FAMILIES: tuple[Family, ...] = (
    Family("private-key", "", 0, ("PRIVATE KEY", "Private-Lines:"), False, _pem_spans),
    Family("vendor", "", 0, (), False, _vendor_spans),
    Family("special", "", 0, (":AA", "-us", "Q~", ".atlasv1."), False, _special_spans),
    Family("jwt", r"(?<![\w-])eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*", 0, ("eyJ",)),
    Family("url-password", "", 0, ("://",), False, _url_spans),
    Family("cli-password", "", 0, (), False, _cli_spans),
    Family("cli-password", "", 0, _FLAG_HINTS, True, _flag_spans),
    Family("cli-password", "", 0, ("stdin", "sudo -s", "chpasswd", "secret create"), True, _echo_spans),
    Family("assignment", "", 0, _KV_HINTS + ("name", "key"), True, _kv_spans, True),
    Family(
        "assignment", "", 0, ("header", "setenv", "env ", "_param", "define", "set -", "setx"), True, _directive_spans
    ),
    Family("assignment", "", 0, _PAIR_HINTS, True, _pair_spans),
    Family("assignment", "", 0, ("|",), False, _table_spans),
    Family("assignment", "", 0, _MISC_HINTS, True, _misc_spans),
    Family("assignment", "", 0, ("</",), False, _xml_spans),
    Family("assignment", "", 0, _LINE_HINTS, True, _directive_line_spans),
    Family("authorization", "", 0, ("basic ", "basic\t"), True, _basic_spans),
    Family("authorization", "", 0, ("bearer ", "bearer\t"), True, _bearer_spans),
    Family("prose-secret", "", 0, _PROSE_HINTS, True, _prose_spans),
    Family("aws-secret-key", "", 0, ("AKIA", "ASIA", "ABIA", "ACCA"), False, _aws_pair_spans),
    Family("discord-bot-token", "", 0, (".",), False, _discord_spans),
    Family("okta-token", "", 0, ("SSWS",), False, _okta_spans),
    Family("cookie", "", 0, ("cookie",), True, _cookie_map_spans),
)
# The label shown where findings overlap: the first family in this order that found it.
_RANK = {
    name: rank
    for rank, name in enumerate(
        [
            "private-key",
            *dict.fromkeys(family for family, *_ in _VENDORS),
            "telegram-bot-token",
            "discord-bot-token",
            "okta-token",
            "mailchimp-key",
            "azure-ad-secret",
            "terraform-token",
            "jwt",
            "aws-secret-key",
            "url-password",
            "authorization",
            "api-key-header",
            "cookie",
            "connection-string",
            "cli-password",
            "assignment",
            "prose-secret",
        ]
    )
}

# base64 payloads (images, fonts) are long runs no secret pattern should look inside.
_DATA_URI = r"data:[\w.+-]{1,64}/[\w.+-]{1,64};base64,[A-Za-z0-9+/=]*"


_user_families: tuple[Family, ...] | None = None


def user_families(patterns: Iterable[str]) -> tuple[Family, ...]:
    """Families from user patterns; a pattern that does not compile is skipped."""
    families = []
    for source in patterns:
        try:
            compiled = re.compile(str(source))
        except re.error:
            continue
        if compiled.groups and "secret" not in compiled.groupindex:
            # Trigger: a user pattern with plain groups. Why: the first group is the secret,
            # the rest of the match is context worth keeping (as for our own families).
            compiled = re.compile(_name_first_group(str(source)))
        families.append(Family("custom", compiled.pattern, compiled.flags))
    return tuple(families)


def _name_first_group(source: str) -> str:
    depth_escape = False
    for i, ch in enumerate(source):
        if depth_escape:
            depth_escape = False
            continue
        if ch == "\\":
            depth_escape = True
        elif ch == "(" and not source.startswith("(?", i):
            return source[: i + 1] + "?P<secret>" + source[i + 1 :]
    return source


def configure(settings: Mapping[str, object] | None) -> None:
    """Load user patterns from the `[redact]` section of the settings (once per process)."""
    global _user_families
    patterns = (settings or {}).get("patterns") or ()
    _user_families = user_families(patterns if isinstance(patterns, (list, tuple)) else ())


def find(text: str, extra: Iterable[Family] | None = None) -> list[Finding]:
    """Every secret in `text`, in order; overlapping findings merged into one."""
    if not text:
        return []
    families = FAMILIES + tuple(extra if extra is not None else (_user_families or ()))
    lower = text.lower()
    spans: list[Span] = []
    for family in families:
        if family.applies(text, lower):
            spans.extend(family.spans(text))
    if not spans:
        return []
    skip = _skipped(text)
    if skip:
        spans = _outside(spans, skip)
    return _merge(spans, _RANK)


def _outside(spans: list[Span], skip: list[tuple[int, int]]) -> list[Span]:
    """The spans that do not lie inside one of `skip` (both walked in order once)."""
    spans.sort()
    skip.sort()
    kept = []
    i = 0
    for span in spans:
        while i < len(skip) and skip[i][1] <= span[0]:
            i += 1
        if not (i < len(skip) and skip[i][0] <= span[0] and span[1] <= skip[i][1]):
            kept.append(span)
    return kept


def _skipped(text: str) -> list[tuple[int, int]]:
    """Spans no finding may lie inside: `[REDACTED:...]` marks and `data:` URIs."""
    skip = []
    start = text.find(_MARK_PREFIX)
    while start >= 0:
        end = text.find("]", start, start + 64)
        if end < 0:
            break
        skip.append((start, end + 1))
        start = text.find(_MARK_PREFIX, end)
    if ";base64," in text:
        skip.extend(m.span() for m in _regex(_DATA_URI).finditer(text))
    return skip


_config_seen: tuple[str, float] | None = None


def reload_user_patterns() -> None:
    """Load the user's `[redact] patterns` from config.toml again when the file changed.

    Why: a hook process reads the settings once and exits; consolidation, an import and the
    MCP server live longer, and must redact with the patterns the user has now.
    """
    global _config_seen
    path = home() / "config.toml"
    try:
        key = (str(path), os.stat(path).st_mtime)
    except OSError:
        key = (str(path), 0.0)
    if key == _config_seen:
        return
    _config_seen = key
    try:
        configure(load_settings().section("redact"))
    except Exception:  # noqa: BLE001 - a broken config.toml: the built-in patterns still apply
        configure(None)
