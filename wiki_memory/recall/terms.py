"""A prompt's words as recall weighs them: content words and identifiers.

Words are split as the index's FTS5 tokenizer splits them (`unicode61`: letters and digits;
`_`, `.`, `/` and `-` separate), lower-cased, without the function words and the chatter of
a request to an agent ("please", "can you", "look into", "fix"), which every page and every
prompt share. An identifier (`select_related`, `max.poll.interval.ms`, `src/auth/jwt.py`,
`ERR_CONN_RESET`) is kept whole as well, to be found as written.
"""

from __future__ import annotations

import re

MAX_TERMS = 24  # a pasted log is cut: its first words say what it is about
MAX_CHARS = 4000

_TOKEN = re.compile(r"[^\W_]+")
_IDENTIFIER = re.compile(r"[^\W_]+(?:[_./:\\-]+[^\W_]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Za-z0-9]*")

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before being below
    between both but by can cannot could couldn did didn do does doesn doing don down during each else even
    ever few for from further get gets getting got had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just let lets like ll m may me might more
    most much must my myself need needs no nor not now of off on once one only or other ought our ours
    ourselves out over own re s same shall she should shouldn so some such t than that the their theirs them
    themselves then there these they this those through to too under until up us ve very was wasn we were
    weren what when where which while who whom why will with won would wouldn y you your yours yourself
    yourselves d
    okay ok hey hi hello please pls thanks thank anything something someone somebody everything way thing
    things stuff still yet really actually maybe also again already though anyway basically probably
    want wanted wants help look looking check checking find figure see seems seem know tell give show try
    trying tried make making made let go going gone take put use using used work working works worked
    happen happens happened happening thing new old good bad right wrong sure fine quick quickly
    can could would should might able possible way ways bit lot lots kind sort
    fix fixed fixing add added adding change changed changing update updated updating write writing
    create creating remove removing set setting run running
    today yesterday tomorrow now currently again soon later say says said saying ask asked asks
    tell told mention mentioned mentions
    guys team folks everyone somebody anybody
    """.split()
)


def words(text: str) -> list[str]:
    """Every word of `text` as the index splits it, lower-cased, in order."""
    return [w.lower() for w in _TOKEN.findall(text[:MAX_CHARS])]


def content_words(text: str) -> list[str]:
    """The distinct content words of `text`, in order, at most MAX_TERMS."""
    out: dict[str, None] = {}
    for w in words(text):
        if w in STOPWORDS or (len(w) < 2 and not w.isdigit()) or len(w) > 60:
            continue
        out.setdefault(w, None)
        if len(out) >= MAX_TERMS:
            break
    return list(out)


def identifiers(text: str) -> list[str]:
    """Identifiers written in `text` (snake_case, dotted, paths, camelCase, ERR_CODES), as
    written, lower-cased, without duplicates."""
    found: dict[str, None] = {}
    for m in _IDENTIFIER.finditer(text[:MAX_CHARS]):
        value = m.group(0).strip("./:-\\").lower()
        if len(value) >= 4:
            found.setdefault(value, None)
    return list(found)
