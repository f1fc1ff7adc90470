"""The candidate pages for a prompt, read-only from the search index, and their evidence.

One FTS5 query finds the chunks that hold the prompt's rarer content words (bm25 order,
`highlight()` marking what matched); the marked words are stemmed with the index's own
tokenizer, so each candidate page knows exactly which of the prompt's words it holds. Its
evidence (`Candidate.score`) is the share of the prompt's words it holds, each word
weighted by how rare it is in this wiki: a word that is in every page weighs nothing, and
a word the memory has never seen counts against every page, which is what keeps a prompt
about something else quiet even when it shares a word or two with a page.

The index is opened read-only with a short busy timeout: a hook never waits on a writer
and never writes (the stemming tables live in the connection's own `temp` schema).
"""

from __future__ import annotations

# Why `_sqlite3`, the C module under `sqlite3`: the hook needs only a connection, and the
# `sqlite3` package imports `datetime` for adapters it never uses.
import _sqlite3
import json
import math
import os
import re
import time
from collections import namedtuple

from wiki_memory.index import readonly
from wiki_memory.pages.status import handed_out
from wiki_memory.recall import terms

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Iterable
    from typing import Any

#: Pages of these types are never recalled: SessionStart hands the newest ones already.
LOG_TYPES = frozenset({"session", "handoff"})
CHUNKS = 20  # chunks marked and gathered by page: the heaviest by the prompt's words they hold
# A word in more than this share of the chunks (and more than FETCH_LEAST of them) is not read
# to find candidates (see `candidates`); it still counts in the pages found by the others.
FETCH_SHARE = 0.1
FETCH_LEAST = 200
UNKNOWN = 0.6  # weight of a word the wiki never uses, as a share of the rarest word's
BUSY_MS = 100  # how long a hook waits on a writer's lock before giving up
STEMS_KEPT = 50_000  # words whose stems a process keeps (the helper's lifetime, a prompt's marked words)

_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"
_MARKED = re.compile("\x02([^\x03]*)\x03")
_TOKEN = re.compile(r"[^\W_]+")
# A word's stem depends on the tokenizer alone: computed once per process.
_STEMS: dict[str, str] = {}


class Candidate(
    namedtuple(
        "Candidate",
        "path title type status anchors score matched missing title_words exact chunk strength",
        defaults=((), (), 0, False, "", 0.0),
    )
):
    """One page and its evidence for a prompt.

    `score`: its words score, the weighted share of the prompt's words it holds (0-1);
    `matched` / `missing` the prompt's words (stems) it holds / lacks; `title_words` how
    many of them are in its title; `exact` an identifier of the prompt is written in it as
    is; `chunk` the text of its best chunk; `strength` that chunk's weight (ties).
    """

    __slots__ = ()


class Query(namedtuple("Query", "words stems df weights total identifiers chunks")):
    """A prompt as the index sees it: its content words, their stems and weights."""

    __slots__ = ()

    @property
    def reachable(self) -> float:
        """The best words score any page could have: the share of the weight the wiki knows."""
        return sum(w for s, w in self.weights.items() if self.df.get(s, 0) > 0) / self.total


def connect(index_path: os.PathLike[str] | str) -> sqlite3.Connection | None:
    """A read-only connection to an index, or None when there is none (never creates one)
    or it cannot be read; raises `IndexSchemaMismatch` for an index of another schema version
    (the hook logs it and hands nothing)."""
    try:
        conn = readonly.connect(index_path, BUSY_MS)
        if conn is not None:
            conn.execute("SELECT 1 FROM chunks_fts LIMIT 0")
    except _sqlite3.Error:
        return None
    return conn


def stems(conn: sqlite3.Connection, words: Iterable[str]) -> dict[str, str]:
    """word -> its stem under the index's tokenizer (porter unicode61), in one batch for the
    words not stemmed before in this process."""
    todo = list(dict.fromkeys(words))
    if len(_STEMS) > STEMS_KEPT:
        _STEMS.clear()
    new = [w for w in todo if w not in _STEMS]
    if new:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_stem USING fts5(x, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_stem_v USING fts5vocab(temp, wm_stem, 'instance')")
        conn.execute("DELETE FROM temp.wm_stem")
        conn.executemany("INSERT INTO temp.wm_stem(rowid, x) VALUES (?, ?)", list(enumerate(new)))
        found = {new[doc]: term for doc, term in conn.execute("SELECT doc, term FROM temp.wm_stem_v")}
        _STEMS.update((w, found.get(w, w)) for w in new)
    return {w: _STEMS[w] for w in todo}


def prepare(conn: sqlite3.Connection, prompt: str) -> Query | None:
    """The prompt's content words with their stems and rarity weights; None when it has none."""
    words = terms.content_words(prompt)
    if not words:
        return None
    stem_of = stems(conn, words)
    unique = list(dict.fromkeys(stem_of[w] for w in words))
    chunks = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
    if not chunks:
        return None
    # Each word's chunk count, one FTS5 count each: fts5vocab's `term IN (...)` read the whole
    # vocabulary (7-60 ms at 10,000 pages), a count reads one doclist (0.1-1 ms).
    word_of = {stem_of[w]: w for w in reversed(words)}
    df = {
        s: conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_quote(word_of[s]),)).fetchone()[0]
        for s in unique
    }
    rarest = math.log(1 + chunks)
    weights = {}
    for s in unique:
        n = df.get(s, 0)
        weights[s] = UNKNOWN * rarest if n == 0 else math.log(1 + chunks / n)
    total = sum(weights.values()) or 1.0
    return Query(tuple(words), stem_of, df, weights, total, tuple(terms.identifiers(prompt)), chunks)


def candidates(conn: sqlite3.Connection, query: Query, *, deadline: float | None = None) -> list[Candidate]:
    """The pages holding the most of the query's words (by weight), each with its evidence,
    best first.

    Why not one bm25-ranked FTS query: bm25 costs FTS5 several microseconds a matching row,
    and a prompt of everyday words matches half of a big wiki (150-250 ms at 10,000 pages).
    Instead each word's chunks are read (a doclist, cheap), the chunks are scored by the
    weights of the words they hold, and only the best CHUNKS are tokenized again to mark
    what they hold (in a small table of the connection's own). Words in more than
    FETCH_SHARE of the chunks are not read: they weigh little, and they are still marked.
    """
    best = _best_chunks(conn, query, deadline)
    return _pages(conn, query, _marked(conn, query, best)) if best else []


def _best_chunks(conn: sqlite3.Connection, query: Query, deadline: float | None) -> list[tuple[int, float]]:
    """(chunk id, weight of the query's words it holds), the CHUNKS heaviest (ties: the
    lower id first).

    Ranked in SQL, so that no word's doclist is read into Python: each word read is a bit
    (a prompt has at most terms.MAX_TERMS words: the bits fit an integer), a chunk's bits say
    which it holds, and its weight is those words' weights summed in the order of the words
    read (as floats add, so that equal sets of words weigh exactly the same). A statement
    still running at `deadline` is interrupted.
    """
    df = {w: query.df.get(query.stems[w], 0) for w in query.words}
    known = sorted((w for w in query.words if df[w] > 0), key=lambda w: df[w])
    cap = max(FETCH_SHARE * query.chunks, FETCH_LEAST)
    read = [w for w in known if df[w] <= cap] or known[:2]
    if not read:
        return []
    weights = [query.weights[query.stems[w]] for w in read]
    hits = " UNION ALL ".join(
        f"SELECT rowid AS id, {1 << i} AS bit FROM chunks_fts WHERE chunks_fts MATCH ?" for i in range(len(read))
    )
    # x + 0.0 is x: the words a chunk lacks add nothing, and the sum is the one Python makes.
    weight = " + ".join(["0.0", *(f"(CASE WHEN held & {1 << i} THEN ? ELSE 0.0 END)" for i in range(len(read)))])
    sql = (
        f"SELECT id, held FROM (SELECT id, sum(bit) AS held FROM ({hits}) GROUP BY id) "
        f"ORDER BY {weight} DESC, id LIMIT {CHUNKS}"
    )
    if deadline is not None:
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
    try:
        found = conn.execute(sql, [*(_quote(w) for w in read), *weights]).fetchall()
    except _sqlite3.OperationalError:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("recall ran out of time reading the index") from None
        raise
    finally:
        if deadline is not None:
            conn.set_progress_handler(None, 0)
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError("recall ran out of time reading the index")
    out = []
    for rowid, held in found:
        total = 0.0
        for i, w in enumerate(weights):
            if held >> i & 1:
                total += w
        out.append((rowid, total))
    return out


def _marked(conn: sqlite3.Connection, query: Query, best: list[tuple[int, float]]) -> list[tuple]:
    """The best chunks with the query's words marked in their title, heading and text, as the
    index's tokenizer finds them: (id, title, heading, text, weight, page, page title, type,
    status, anchors)."""
    found = conn.execute(
        "SELECT c.id, p.title, c.heading, c.text, c.page, p.type, p.status, p.anchors FROM chunks c "
        "JOIN pages p ON p.path = c.page WHERE c.id IN (SELECT value FROM json_each(?))",
        (json.dumps([rowid for rowid, _ in best]),),
    ).fetchall()
    info = {row[0]: row for row in found}
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_hit USING fts5(t, h, x, tokenize='porter unicode61')")
    conn.execute("DELETE FROM temp.wm_hit")
    conn.executemany("INSERT INTO temp.wm_hit(rowid, t, h, x) VALUES (?, ?, ?, ?)", [r[:4] for r in found])
    known = [w for w in query.words if query.df.get(query.stems[w], 0) > 0]
    strength = dict(best)
    rows = []
    for rowid, t, h, x in conn.execute(
        "SELECT rowid, highlight(wm_hit, 0, ?, ?), highlight(wm_hit, 1, ?, ?), highlight(wm_hit, 2, ?, ?) "
        "FROM temp.wm_hit WHERE wm_hit MATCH ?",
        (*(_MARK_OPEN, _MARK_CLOSE) * 3, " OR ".join(_quote(w) for w in known)),
    ).fetchall():
        _, title, _, _, page, type_, status, anchors = info[rowid]
        rows.append((rowid, t, h, x, strength.get(rowid, 0.0), page, title, type_, status, anchors))
    return rows


def _pages(conn: sqlite3.Connection, query: Query, rows: list[tuple]) -> list[Candidate]:
    """The marked chunks gathered by page: what each page holds of the query, and its score."""
    marked = {m.lower() for row in rows for col in row[1:4] for m in _TOKEN.findall(" ".join(_MARKED.findall(col)))}
    stem_of = stems(conn, marked)
    wanted = set(query.weights)
    pages: dict[str, dict[str, Any]] = {}
    for _rowid, t, h, x, strength, page, title, type_, status, anchors in rows:
        in_title = _held(t, stem_of, wanted)
        held = in_title | _held(h, stem_of, wanted) | _held(x, stem_of, wanted)
        e = pages.setdefault(page, {"meta": (title, type_, status, anchors), "held": set(), "title": set(), "text": []})
        e["held"] |= held
        e["title"] |= in_title
        plain = _plain(x)
        e["text"].append(plain.lower())
        weight = sum(query.weights[s] for s in held)
        if weight > e.get("weight", -1.0):
            e["chunk"], e["weight"] = plain, weight
        e["strength"] = max(e.get("strength", 0.0), strength)
    out = []
    for path, e in pages.items():
        title, type_, status, anchors = e["meta"]
        held = e["held"]
        text = " ".join(e["text"]) + " " + title.lower()
        out.append(
            Candidate(
                path,
                title,
                type_,
                status,
                anchors,
                sum(query.weights[s] for s in held) / query.total,
                tuple(s for s in query.weights if s in held),
                tuple(s for s in query.weights if s not in held and query.weights[s] > 0),
                len(e["title"]),
                any(i in text for i in query.identifiers),
                e["chunk"],
                e["strength"],
            )
        )
    out.sort(key=lambda c: (-c.score, -c.strength))
    return out


def pages_of_chunks(conn: sqlite3.Connection, query: Query, chunk_of: dict[str, int]) -> list[Candidate]:
    """Candidates for pages meaning alone brought (page -> its closest chunk): their evidence
    read from that chunk, a page whose chunk holds none of the prompt's words with score 0."""
    known = [w for w in query.words if query.df.get(query.stems[w], 0) > 0]
    marked = _marked(conn, query, [(chunk, 0.0) for chunk in chunk_of.values()]) if known else []
    found = {c.path: c for c in _pages(conn, query, marked)}
    rest = [chunk for page, chunk in chunk_of.items() if page not in found]
    missing = tuple(s for s in query.weights if query.weights[s] > 0)
    if rest:
        for page, title, type_, status, anchors, text in conn.execute(
            "SELECT c.page, p.title, p.type, p.status, p.anchors, c.text FROM chunks c "
            "JOIN pages p ON p.path = c.page WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(rest),),
        ).fetchall():
            found[page] = Candidate(page, title, type_, status, anchors, 0.0, (), missing, 0, False, text, 0.0)
    return [found[p] for p in chunk_of if p in found]


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _held(column: str, stem_of: dict[str, str], wanted: Collection[str]) -> set[str]:
    found = set()
    for region in _MARKED.findall(column):
        for token in _TOKEN.findall(region.lower()):
            s = stem_of.get(token, token)
            if s in wanted:
                found.add(s)
    return found


def _plain(column: str) -> str:
    return column.replace(_MARK_OPEN, "").replace(_MARK_CLOSE, "")


def eligible(c: Candidate, exclude: Collection[str] = ()) -> str | None:
    """Why a page may not be recalled at all, or None when it may."""
    if c.type in LOG_TYPES:
        return f"a {c.type} page (SessionStart hands those)"
    if not handed_out(c.status):
        return f"status {c.status}"
    if c.path in exclude:
        return "already handed to this session"
    return None


def passage(c: Candidate, focus: str | None = None, limit: int = 240) -> str:
    """One or two lines of the page's best chunk: the sentences holding most of the prompt's
    words (or, with `focus`, the first one naming it)."""
    text = " ".join(c.chunk.split())
    if not text:
        return ""
    sentences = [
        s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`*(\"'])|\s+(?=\d+\.\s)|\s+(?=- )", text) if s.strip()
    ]
    wanted = set(c.matched)

    def hits(sentence: str) -> int:
        if focus:
            return int(focus.lower() in sentence.lower())
        return sum(1 for w in _TOKEN.findall(sentence.lower()) if any(w.startswith(s) for s in wanted))

    best = max(range(len(sentences)), key=lambda i: (hits(sentences[i]), -i)) if sentences else 0
    chosen = sentences[best] if sentences else text
    if len(chosen) < limit // 2 and best + 1 < len(sentences):
        chosen = f"{chosen} {sentences[best + 1]}"
    return chosen if len(chosen) <= limit else chosen[: limit - 1].rsplit(" ", 1)[0] + "…"
