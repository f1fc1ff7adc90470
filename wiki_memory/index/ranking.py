"""Ranking the chunks of a search, then its pages.

`Ranker.fts` ranks chunks by bm25 in FTS5, `Ranker.vector` by cosine similarity in the
vector matrix; `fuse` scores the pages and chunks they found by those scores: the cosine,
plus the bm25 relative to the search's best, weighed by how sure the words are (`coverage`
of the query by the best word match). What a page is (a log, a superseded decision) counts
after that, in priors.py.

In a big wiki a query's frequent words only score the matches its rarer words make
(`without_common_words`): see Tuning.prune_from and prune_share.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from wiki_memory.index.db import Database, Kept
from wiki_memory.index.query import Query, fts_expression, fts_quote
from wiki_memory.index.tuning import Tuning

if TYPE_CHECKING:
    from wiki_memory.index.matrix import VectorMatrix

Ranking = list[tuple[int, str, float]]  # (chunk id, page, score), best first
MAX_FILTERS_KEPT = 16  # filters whose chunks are kept between searches (see Ranker.allowed)


# A page found by a search: (fused score, path, the rankings that found it). A plain tuple:
# a search makes hundreds, and a NamedTuple made and read them about a third slower.
Candidate = tuple[float, str, tuple[str, ...]]


@dataclass(frozen=True)
class Fused:
    """The rankings of a search fused: its pages (in no order), the fused score of each chunk
    found, each page's chunks found (in the order found), the best cosine of each page the
    vector ranking reached (None: meaning was not searched) and the lowest it reached (what
    the others count, at most), and each page's best chunk by bm25 (the pages the word
    ranking found)."""

    pages: list[Candidate]
    chunk_score: dict[int, float]
    chunks_of: dict[str, list[int]]
    cosine: dict[str, float] | None = None
    floor: float = 0.0
    word_chunk: dict[str, int] = field(default_factory=dict)


class Ranker:
    """The rankings of one index, with what it keeps between searches (the chunk count,
    the counts of query words) until the index changes."""

    def __init__(self, db: Database, tuning: Tuning):
        self.db = db
        self.tuning = tuning
        self._total: Kept[int] = Kept(db, survives_embedding=True)
        # Chunk counts of query words: {word: (count, the cap it was counted to)}.
        self._counts: Kept[dict[str, tuple[int, int]]] = Kept(db, survives_embedding=True)
        # The chunks each recent filter lets through: {(condition, parameters): (ids, temp table)},
        # the tables on connection `_tables_of`.
        self._allowed: Kept[dict[tuple[str, tuple[Any, ...]], list[Any]]] = Kept(db, survives_embedding=True)
        self._tables_of: sqlite3.Connection | None = None
        self._tables = 0

    # Words -----------------------------------------------------------------------------

    def without_common_words(self, query: Query) -> Query:
        """The query less its words found in more than half of all chunks; in a big index,
        its frequent words only score the matches its rarer words make.

        Why: bm25 gives a word in most chunks no weight (FTS5 clamps its negative idf), yet
        OR-ed in it makes nearly every chunk a match to score: the cost grows with the wiki,
        the ranking does not change. A project's own name or a word in every template is one.
        """
        if len(query.words) < 2 and not (query.words and query.phrases):
            return query
        total = self.chunk_total()
        if total < 50:
            return query
        big = total >= self.tuning.prune_from
        half = total // 2 + 1
        # Counting stops at the threshold that matters (counting a frequent word costs time
        # in proportion to the chunks that hold it): in a big index, past prune_share.
        cap = int(total * self.tuning.prune_share) + 1 if big else half
        df = self.chunk_counts(query.words, cap)
        # Trigger: a big wiki (over prune_from chunks) and a query mixing rare and frequent words.
        # Why: rows holding only frequent words rarely reach the top, yet scoring them is
        # most of the cost; they still count toward the score of the rows kept.
        frequent = [w for w in query.words if df[w] >= cap] if big else []
        selective = [w for w in query.words if w not in frequent]
        all_frequent = big and not selective
        if not selective or (not query.phrases and sum(df[w] for w in selective) < 20):
            if frequent:
                # Every word will make matches: count the frequent ones on, to find those in
                # most chunks, which leave (below). Scoring only, they could stay.
                df.update(self.chunk_counts(frequent, half))
            selective, frequent = list(query.words), []
        useless = {w for w, n in df.items() if n * 2 > total}
        selective = [w for w in selective if w not in useless] or list(query.words)
        frequent = [w for w in frequent if w not in useless]
        # Every word frequent: the rows holding the identifiers and all the words that weigh in
        # bm25 (in a quarter of the chunks at most) are ranked first (see `fts`). A word in more
        # scores little, and a row lacking it can outrank one that has it by being shorter.
        every_first = tuple(w for w in selective if df[w] * 4 <= total) if all_frequent else ()
        every_first = every_first if len(every_first) + len(query.phrases) > 1 else ()
        if len(selective) == len(query.words) and not every_first:
            return query
        return replace(query, words=tuple(selective), scoring=tuple(frequent), every_first=every_first)

    def chunk_counts(self, words: Sequence[str], cap: int) -> dict[str, int]:
        """How many chunks hold each word (as FTS5 stems and matches it), counted up to `cap`.

        Kept until the index changes: an agent's queries keep coming back to its project's
        words, and counting a frequent word costs time in proportion to the chunks holding it."""
        known = self._counts.value if self._counts.valid() else self._counts.put({})
        sql = "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
        counts = {}
        for w in words:
            n, counted_to = known.get(w, (0, 0))
            if n >= counted_to and counted_to < cap:  # not counted, or stopped short of `cap`
                n = self.db.conn.execute(sql, (fts_quote(w), cap)).fetchone()[0]
                known[w] = (n, cap)
            counts[w] = min(n, cap)
        return counts

    def chunk_total(self) -> int:
        """How many chunks the index holds (kept until the index changes)."""
        if self._total.valid():
            return self._total.value
        return self._total.put(self.db.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    # Rankings ---------------------------------------------------------------------------

    def fts(self, query: Query, where: str, params: list[Any], depth: int) -> Ranking:
        """The `depth` chunks best by bm25, best first.

        A query whose every word is frequent ranks the rows holding all of them first (those
        of `every_first`), and the rows holding any of them only when those are fewer than
        `depth`. Why: bm25 costs FTS5 a little for every matching row, and such a query
        matches a fifth of a big wiki, while the rows with every word are a small share of
        them (scripts/bench_mcp.py's "redis cache times out under load"). The top 8 were the
        same (pages, order, snippets) for all 550 queries compared on the two benchmark wikis.
        """
        if query.every_first:
            rows = self.ranked(fts_expression(query, first=True), where, params, depth)
            if len(rows) >= depth:
                return rows
        return self.ranked(fts_expression(query), where, params, depth)

    def ranked(self, expression: str | None, where: str, params: list[Any], depth: int) -> Ranking:
        """The `depth` chunks matching an FTS5 `expression` (None: no chunk) that are best by
        bm25 (title, heading and text weighed as Tuning says), best first."""
        if expression is None:
            return []
        t = self.tuning
        if where == "1":
            # No filter: rank inside FTS5 first, join only the rows kept (30% faster).
            sql = (
                "SELECT f.id, c.page, f.s FROM (SELECT rowid AS id, -bm25(chunks_fts, ?, ?, ?) AS s "
                "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?) f "
                "JOIN chunks c ON c.id = f.id ORDER BY f.s DESC"
            )
            return self.db.conn.execute(
                sql, [t.title_weight, t.heading_weight, t.text_weight, expression, depth]
            ).fetchall()
        # A filter: the chunks it lets through are kept in a temporary table (until the index
        # changes), and FTS5's matches are joined to it, FTS5 first (CROSS JOIN keeps that
        # order: the other way round, FTS5 would run the query once per chunk). Why: joining
        # every match to its page and testing the filter took 55 ms for a type and a tag at
        # 10,000 pages (scripts/bench_ui.py, at load 6); this, 4 ms of CPU. Same rows, same order.
        table = self.allowed_table(where, params)
        sql = (
            f"SELECT f.rowid, c.page, -bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts f "
            f"CROSS JOIN temp.{table} a ON a.id = f.rowid JOIN chunks c ON c.id = f.rowid "
            f"WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?"
        )
        return self.db.conn.execute(
            sql, [t.title_weight, t.heading_weight, t.text_weight, expression, depth]
        ).fetchall()

    def allowed(self, where: str, params: list[Any]) -> tuple[Any, str]:
        """The chunks of the pages a filter lets through: their ids (a numpy array) and the
        temporary table that holds them, kept until the index changes (a filter is over
        pages: new vectors do not change it)."""
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        found = self._filter(where, params)
        if found[0] is None:
            rows = self.db.conn.execute(f"SELECT id FROM temp.{found[1]}")
            found[0] = np.array([row[0] for row in rows], dtype=np.int64)
        return found[0], str(found[1])

    def allowed_table(self, where: str, params: list[Any]) -> str:
        """The temporary table of the chunks a filter lets through (see `allowed`), made
        without numpy: a search by words needs the table alone."""
        return str(self._filter(where, params)[1])

    def _filter(self, where: str, params: list[Any]) -> list[Any]:
        """[the ids or None until asked for, the table] of a filter, made on first use."""
        conn = self.db.conn
        kept = self._allowed.get()
        if kept is None or self._tables_of is not conn or len(kept) >= MAX_FILTERS_KEPT:
            self._drop_filter_tables()
            kept = {}
            self._tables_of = conn
        key = (where, tuple(params))
        found = kept.get(key)
        if found is None:
            self._tables += 1
            table = f"wm_filter_{self._tables}"
            conn.execute(f"CREATE TEMP TABLE {table}(id INTEGER PRIMARY KEY)")
            # Pages first (CROSS JOIN keeps the order), then their chunks by the (page, ordinal)
            # index: 25 ms at 10,000 pages, against 35 ms looking up each chunk's page.
            conn.execute(
                f"INSERT INTO temp.{table} SELECT c.id FROM pages p CROSS JOIN chunks c ON c.page = p.path "
                f"WHERE {where}",
                params,
            )
            found = kept[key] = [None, table]  # the ids, read when a vector ranking needs them
            self._allowed.put(kept)
        return found

    def _drop_filter_tables(self) -> None:
        """The temporary tables of filters kept before the index changed."""
        conn = self._tables_of
        if conn is None:
            return
        try:
            query = "SELECT name FROM temp.sqlite_master WHERE name LIKE 'wm_filter_%'"
            for (table,) in conn.execute(query).fetchall():
                conn.execute(f"DROP TABLE temp.{table}")
        except sqlite3.Error:
            pass  # a closed connection took them along

    def vector(self, vectors: VectorMatrix | None, query: Any, where: str, params: list[Any], depth: int) -> Ranking:
        """The chunks of `vectors` nearest to `query` (the query's unit vector), best first."""
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        if vectors is None or vectors.dim != len(query):  # another model's size: never compared
            return []
        ids, matrix, pages, alive = vectors.view()
        scores = matrix @ query
        if alive is not None:  # rows of pages rewritten or deleted since the matrix was read
            scores[~alive] = -np.inf
        if where != "1":
            scores = np.where(np.isin(ids, self.allowed(where, params)[0]), scores, -np.inf)
        n = min(depth, len(scores))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((ids[top], -scores[top]))]  # ties: by chunk id, whatever the rows' order
        top = top[np.isfinite(scores[top])]
        return list(zip(ids[top].tolist(), [pages[i] for i in top.tolist()], scores[top].tolist(), strict=False))

    # Fusion -----------------------------------------------------------------------------

    def fuse(self, rankings: dict[str, Ranking], sure: float = 1.0) -> Fused:
        """The pages and chunks of the rankings, scored by the rankings' own scores.

        A chunk scores its cosine similarity to the query plus a weight times its bm25 over
        the best bm25 of the search; a page, its best cosine plus that weight times its best
        bm25 share. The weight is Tuning.fts_weight times `sure`, how sure the words are for
        this query (the share of it the best word match holds, weighed by rarity: see
        `coverage`). A chunk or page the vector ranking did not reach counts the lowest
        cosine it reached (at most what it would have had). One ranking alone: its cosine,
        or its bm25 share.

        Why scores, not ranks: reciprocal rank fusion gave the word ranking's first page as
        much as the vector ranking's first, however far ahead of the rest meaning put its
        page, so paraphrases lost the pages meaning found (search_eval tune, paraphrase
        recall@5: 0.694, vectors alone 0.847; by scores 0.931). A cosine means the same in
        every search, so a clear lead stays a lead; when every page is about as close (the
        sessions of one conversation in LoCoMo), the words decide. And a paraphrase's best
        word match holds few of its rarer words: then the words count little.
        """
        fts = rankings.get("fts", [])
        vector = rankings.get("vector")
        best = fts[0][2] if fts and fts[0][2] > 0 else 0.0
        weight = (self.tuning.fts_weight * sure if vector is not None else 1.0) / best if best else 0.0
        floor = vector[-1][2] if vector else 0.0
        chunk_score: dict[int, float] = {}
        chunks_of: dict[str, list[int]] = {}
        cosine: dict[str, float] = {}  # page -> its best chunk's cosine
        words: dict[str, float] = {}  # page -> its best chunk's weighted bm25 share
        word_chunk: dict[str, int] = {}
        for chunk_id, page, score in vector or ():
            chunk_score[chunk_id] = score
            chunks_of.setdefault(page, []).append(chunk_id)
            cosine.setdefault(page, score)
        for chunk_id, page, score in fts:
            add = weight * score
            if chunk_id in chunk_score:
                chunk_score[chunk_id] += add
            else:
                chunk_score[chunk_id] = floor + add
                chunks_of.setdefault(page, []).append(chunk_id)
            if page not in words:
                words[page] = add
                word_chunk[page] = chunk_id
        pages: list[Candidate] = []
        for page in chunks_of:
            found_by = (
                ("fts", "vector") if page in words and page in cosine else ("fts",) if page in words else ("vector",)
            )
            pages.append((cosine.get(page, floor) + words.get(page, 0.0), page, found_by))
        return Fused(pages, chunk_score, chunks_of, cosine if vector is not None else None, floor, word_chunk)

    def coverage(self, query: Query, chunk_ids: Sequence[int]) -> dict[int, float]:
        """For each chunk, the share of the query it holds, each word and identifier weighed
        by its inverse chunk frequency as bm25 weighs it (matched as FTS5 matches them:
        stemmed words, identifiers as phrases).

        A word no chunk holds weighs most: the word ranking cannot find it, and a paraphrase
        is made of such words. A word in most chunks weighs nothing."""
        # An identifier counts once, as the phrase of its parts, not again by each part.
        words = [w for w in query.words if not any(w in p or w == "_".join(p) for p in query.phrases)]
        terms = list(dict.fromkeys([*(" ".join(p) for p in query.phrases), *words]))
        held = dict.fromkeys(chunk_ids, 0.0)
        if not chunk_ids or not terms:
            return held
        weights = self.idf(terms)
        total = sum(weights)
        marks = ", ".join("?" * len(held))
        sql = f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})"
        for term, weight in zip(terms, weights, strict=True):
            for (chunk_id,) in self.db.conn.execute(sql, [fts_quote(term), *held]):
                held[chunk_id] += weight / total
        return held

    def idf(self, terms: Sequence[str]) -> list[float]:
        """Each term's inverse chunk frequency, as FTS5's bm25 computes it (at least 1e-6).

        Counted to the cap `without_common_words` counts to (kept between searches): a term
        at the cap (a frequent word of a big index) weighs a little more than it should."""

        n = self.chunk_total()
        cap = int(n * self.tuning.prune_share) + 1 if n >= self.tuning.prune_from else n // 2 + 1
        counts = self.chunk_counts(terms, cap)
        return [max(math.log((n - counts[t] + 0.5) / (counts[t] + 0.5)), 1e-6) for t in terms]
