"""Turning what a person or agent typed into an FTS5 query that cannot be a syntax error.

Every word becomes a quoted FTS5 string, so `"`, `*`, `NEAR`, `AND`, `-` and `:` are
text, never operators. Words are OR-ed (bm25 rewards pages that have more of them);
common words are dropped when anything else is left. An identifier (`ERR_CONN_RESET`,
`src/auth/jwt.py`, `user.id`) is also matched as a phrase of its parts, so the exact
identifier ranks above pages that merely share one of its parts.

The filters of a search (type, tag, status, since) become an SQL condition on the pages
(`p`), the same for every ranking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from wiki_memory.errors import WikiMemoryError

_TOKEN = re.compile(r"\w+", re.UNICODE)
# A run of word characters joined by identifier punctuation: snake_case, dotted.names, paths.
_IDENTIFIER = re.compile(r"\w+(?:[_./:\\-]+\w+)+", re.UNICODE)

# Words of a question about what happened ("what did we try yesterday on the export"): the
# sessions and handoffs that logged it are then the answer, not logs to rank below durable pages.
_HISTORY = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|happened|tried|attempted|went|yesterday|earlier|ago|recap|"
    r"sessions?|handoffs?|last (?:time|week|month|night|session|sprint|run)|left (?:off|open)|"
    r"still (?:open|pending|left)|pending|so far|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)

STOPWORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t ll d m re ve
ever also get got go going did does doing like much many may might must shall us let
""".split()
)


@dataclass(frozen=True)
class Query:
    text: str
    words: tuple[str, ...]  # content words, lowercased, in order, without duplicates
    phrases: tuple[tuple[str, ...], ...]  # identifiers, as their parts
    # Frequent words that score the matches but do not make matches on their own (big wikis).
    scoring: tuple[str, ...] = ()
    # Every word is frequent (big wikis): first rank the rows holding all of these and the
    # identifiers (see ranking.Ranker.fts).
    every_first: tuple[str, ...] = ()
    history: bool = False  # it asks what happened (see _HISTORY)

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases


def parse_query(text: str) -> Query:
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    content = [t for t in tokens if t not in STOPWORDS]
    # A query of only common words ("what is it") still searches for them.
    chosen = content or tokens
    words = tuple(dict.fromkeys(chosen))
    phrases = []
    for m in _IDENTIFIER.finditer(text):
        parts = tuple(t.lower() for t in _TOKEN.findall(m.group(0)))
        if len(parts) > 1:
            phrases.append(parts)
    return Query(text, words, tuple(dict.fromkeys(phrases)), history=_HISTORY.search(text) is not None)


def fts_quote(term: str) -> str:
    """A term as an FTS5 string: text, never syntax."""
    return '"' + term.replace('"', '""') + '"'


def fts_expression(query: Query, first: bool = False) -> str | None:
    """The MATCH expression for a query, or None when it has no searchable word. `first`:
    the rows holding its identifiers and every word of `query.every_first`, scored by all
    its words."""
    phrases = [fts_quote(" ".join(p)) for p in query.phrases]
    if first and query.every_first:
        required = phrases + [fts_quote(w) for w in query.every_first]
        return _scored_by(" AND ".join(required), [w for w in query.words if w not in query.every_first])
    parts = phrases + [fts_quote(w) for w in query.words]
    if not parts:
        return None
    return _scored_by(" OR ".join(parts), query.scoring)


def _scored_by(matching: str, scoring: Sequence[str]) -> str:
    """Rows matching `matching`; the `scoring` words add to their bm25 where present (FTS5
    scores every phrase of the expression), but do not widen the match list."""
    if not scoring:
        return matching
    return f"{matching} OR (({matching}) AND ({' OR '.join(fts_quote(w) for w in scoring)}))"


Filter = str | Sequence[str] | None  # one value, comma-separated values, or a list of them


def filters(
    type_: Filter, tag: Filter, status: Filter, since: str | None, not_status: Filter = None
) -> tuple[str, list[str]]:
    """(SQL condition on the pages `p`, its parameters) for a search's filters: any of the
    types, any of the tags, any of the statuses and none of `not_status`, updated (or
    created) since `since`; "1" when there is none."""
    conds: list[str] = []
    params: list[str] = []
    for condition, values in (
        ("p.type IN ({})", _as_list(type_)),
        ("p.path IN (SELECT page FROM page_tags WHERE tag IN ({}))", _as_list(tag)),
        ("p.status IN ({})", _as_list(status)),
        ("p.status NOT IN ({})", _as_list(not_status)),
    ):
        if values:
            conds.append(condition.format(", ".join("?" * len(values))))
            params += values
    cutoff = parse_since(since)
    if cutoff:
        conds.append("COALESCE(p.updated, p.created, '') >= ?")
        params.append(cutoff)
    return (" AND ".join(conds) or "1"), params


_RELATIVE = re.compile(r"^(\d+)\s*([dwmyh])$")


def parse_since(since: str | None) -> str | None:
    """`7d`, `2w`, `3m`, `1y`, `12h` or an ISO date/time -> an ISO prefix to compare with."""
    if since is None or not str(since).strip():
        return None
    value = str(since).strip()
    m = _RELATIVE.match(value.lower())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        delta = {
            "h": timedelta(hours=n),
            "d": timedelta(days=n),
            "w": timedelta(weeks=n),
            "m": timedelta(days=30 * n),
            "y": timedelta(days=365 * n),
        }[unit]
        return (datetime.now(timezone.utc) - delta).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise WikiMemoryError(f"--since {value!r}: give a date (2026-11-30), a time, or an age (7d, 2w)") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(timezone.utc)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ") if "T" in value or " " in value else parsed.strftime("%Y-%m-%d")


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value if str(v).strip()]
