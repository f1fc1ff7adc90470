"""What a rule is: a `Family` (a regex or a finder, with the hints that gate it), the
`Finding` it reports, and how overlapping spans merge and are replaced by a mark.
"""

from __future__ import annotations

import re
from collections import namedtuple

from wiki_memory.capture.redact.compiled import _regex
from wiki_memory.capture.redact.vocabulary import _NAME_CHARS, MARK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

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
