"""The engine: what a rule is (a `Family`, the `Finding`s it reports), the rule set in order,
the label shown where findings overlap, the user's own patterns from config.toml, and `find`,
which runs every rule a text's hints call for and merges what they found.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple
from importlib import import_module

from wiki_memory.capture.redact.command_lines import _cli_spans, _echo_spans, _flag_spans
from wiki_memory.capture.redact.http_credentials import (
    _basic_spans,
    _bearer_spans,
    _cookie_map_spans,
    _okta_spans,
    _url_spans,
)
from wiki_memory.capture.redact.vendors import _VENDORS, _vendor_spans
from wiki_memory.capture.redact.vocabulary import (
    _DIRECTIVE_HINTS,
    _FLAG_HINTS,
    _KV_HINTS,
    _LINE_HINTS,
    _MARK_PREFIX,
    _MISC_HINTS,
    _NAME_CHARS,
    _PAIR_HINTS,
    _PROSE_HINTS,
    MARK,
    _regex,
)
from wiki_memory.config import home, load_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from wiki_memory.config.settings import RedactSettings

    Span = tuple[int, int, str]
    Finder = Callable[[str], Iterable[Span]]


class Finding(namedtuple("Finding", "start end family")):
    """One secret in a text: `text[start:end]` is it, `family` names its kind."""

    __slots__ = ()


class Family(namedtuple("Family", "name source flags hints fold finder assign", defaults=(0, (), False, None, False))):
    """One rule. Either a regex (`source`; group `secret`, if named, is what goes) or a
    `finder` (text -> (start, end, family) spans, for rules that judge candidates in code).

    `hints` are literal strings at least one of which every match contains (looked for in
    the lower-cased text when `fold` is set); a text with none of them is not searched, and
    the rule's patterns are compiled only the first time a text has one. With `assign`, a
    hint counts only where an assignment follows it (the rest of its name, a quote, spaces,
    then `:` or `=`): "PASSED" in a test run is no password.
    """

    __slots__ = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        return _regex(self.source, self.flags)

    def applies(self, text: str, lower: str) -> bool:
        if not self.hints:
            return True
        haystack = lower if self.fold else text
        if self.assign:
            return any(_assigned(haystack, h) for h in self.hints)
        return any(h in haystack for h in self.hints)

    def spans(self, text: str) -> Iterable[Span]:
        if self.finder is not None:
            return self.finder(text)
        return self._regex_spans(text)

    def _regex_spans(self, text: str) -> Iterator[Span]:
        pattern = self.pattern
        grouped = "secret" in pattern.groupindex
        for m in pattern.finditer(text):
            start, end = m.span("secret") if grouped else m.span()
            if end > start:
                yield start, end, self.name

    def sub(self, text: str) -> str:
        """`text` with this family's matches redacted (the other families left alone)."""
        return _apply(text, _merge(list(self.spans(text)), {self.name: 0}))


def _assigned(text: str, hint: str) -> bool:
    """Whether some `hint` in `text` is followed, within a name's length, by the rest of
    the name, an optional quote or bracket, spaces, then `:` or `=`."""
    n = len(text)
    start = text.find(hint)
    while start >= 0:
        i = start + len(hint)
        stop = min(n, i + 64)  # bounded: a long run of name characters is no key
        while i < stop and text[i] in _NAME_CHARS:
            i += 1
        if i < n and text[i] == "\\":
            i += 1
        if i < n and text[i] in "\"'`]":
            i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in ":=":
            return True
        start = text.find(hint, max(i, start + 1))
    return False


def _merge(spans: list[Span], rank: Mapping[str, int]) -> list[Finding]:
    """The spans in order as findings, overlapping ones merged under the label `rank` puts first."""
    spans.sort()
    merged: list[Finding] = []
    for start, end, family in spans:
        if merged and start < merged[-1].end:
            last = merged[-1]
            label = family if rank.get(family, len(rank)) < rank.get(last.family, len(rank)) else last.family
            merged[-1] = Finding(last.start, max(last.end, end), label)
        else:
            merged.append(Finding(start, end, family))
    return merged


def _apply(text: str, findings: list[Finding]) -> str:
    """`text` with each finding replaced by its mark."""
    if not findings:
        return text
    pieces = []
    last = 0
    for f in findings:
        pieces.append(text[last : f.start])
        pieces.append(MARK.format(f.family))
        last = f.end
    pieces.append(text[last:])
    return "".join(pieces)


class _Lazy:
    """A rule's finder whose module is imported the first time a text calls for the rule (holds
    one of its hints): a hook process loads only the modules of the rules its texts need.
    Why: each module costs a fresh process about 0.1 ms to load, and the hook pays it."""

    __slots__ = ("__name__", "_finder", "module")

    def __init__(self, module: str, name: str) -> None:
        self.module = f"{__package__}.{module}"
        self.__name__ = name
        self._finder: Callable[[str], Iterable[Span]] | None = None

    def __call__(self, text: str) -> Iterable[Span]:
        if self._finder is None:
            module = import_module(self.module)  # deferred: a rule family loads when a text needs it
            self._finder = getattr(module, self.__name__)
        return self._finder(text)


FAMILIES: tuple[Family, ...] = (
    Family("private-key", "", 0, ("PRIVATE KEY", "Private-Lines:"), False, _Lazy("private_keys", "_pem_spans")),
    Family("vendor", "", 0, (), False, _vendor_spans),
    Family("special", "", 0, (":AA", "-us", "Q~", ".atlasv1."), False, _Lazy("token_shapes", "_special_spans")),
    Family("jwt", r"(?<![\w-])eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*", 0, ("eyJ",)),
    Family("url-password", "", 0, ("://",), False, _url_spans),
    Family("cli-password", "", 0, (), False, _cli_spans),
    Family("cli-password", "", 0, _FLAG_HINTS, True, _flag_spans),
    Family("cli-password", "", 0, ("stdin", "sudo -s", "chpasswd", "secret create"), True, _echo_spans),
    Family("assignment", "", 0, _KV_HINTS + ("name", "key"), True, _Lazy("assignments", "_kv_spans"), True),
    Family("assignment", "", 0, _DIRECTIVE_HINTS, True, _Lazy("directives", "_directive_spans")),
    Family("assignment", "", 0, _PAIR_HINTS, True, _Lazy("code_pairs", "_pair_spans")),
    Family("assignment", "", 0, ("|",), False, _Lazy("markup", "_table_spans")),
    Family("assignment", "", 0, _MISC_HINTS, True, _Lazy("directives", "_misc_spans")),
    Family("assignment", "", 0, ("</",), False, _Lazy("markup", "_xml_spans")),
    Family("assignment", "", 0, _LINE_HINTS, True, _Lazy("directives", "_directive_line_spans")),
    Family("authorization", "", 0, ("basic ", "basic\t"), True, _basic_spans),
    Family("authorization", "", 0, ("bearer ", "bearer\t"), True, _bearer_spans),
    Family("prose-secret", "", 0, _PROSE_HINTS, True, _Lazy("prose", "_prose_spans")),
    Family("aws-secret-key", "", 0, ("AKIA", "ASIA", "ABIA", "ACCA"), False, _Lazy("token_shapes", "_aws_pair_spans")),
    Family("discord-bot-token", "", 0, (".",), False, _Lazy("token_shapes", "_discord_spans")),
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


def configure(settings: RedactSettings | None) -> None:
    """Load user patterns from the `[redact]` section of the settings (once per process)."""
    global _user_families
    _user_families = user_families(settings.patterns if settings is not None else ())


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
        configure(load_settings().redact)
    except Exception:  # noqa: BLE001 - a broken config.toml: the built-in patterns still apply
        configure(None)
