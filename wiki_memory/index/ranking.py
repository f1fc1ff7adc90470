"""Ranking the chunks of a search, then its pages.

`Ranker.fts` ranks chunks by bm25 in FTS5, `Ranker.vector` by cosine similarity in the
vector matrix; `fuse` turns those rankings into pages by reciprocal rank fusion, the vector
ranking weighted by how much of the query the best word match holds (`vector_weight`), and
`top` demotes superseded and archived pages and keeps the best `k`.

In a big wiki a query's frequent words only score the matches its rarer words make
(`without_common_words`): see Tuning.prune_from and prune_share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from wiki_memory.index.db import Database, Kept
from wiki_memory.index.query import Query, fts_expression, fts_quote
from wiki_memory.index.tuning import Tuning

if TYPE_CHECKING:
    from wiki_memory.index.matrix import VectorMatrix

INACTIVE = ("superseded", "archived")
Ranking = list[tuple[int, str, float]]  # (chunk id, page, score), best first


# A page found by a search: (fused score, path, the rankings that found it). A plain tuple:
# a search makes hundreds, and a NamedTuple made and read them 30% slower (~80 us a search).
Candidate = tuple[float, str, tuple[str, ...]]


@dataclass(frozen=True)
class Fused:
    """The rankings of a search fused: its pages (in no order), the fused score of each chunk
    found, and each page's chunks found (in the order found)."""

    pages: list[Candidate]
    chunk_score: dict[int, float]
    chunks_of: dict[str, list[int]]


class Ranker:
    """The rankings of one index, with what it keeps between searches (the chunk count,
    the counts of query words, whether any page is inactive) until the index changes."""

    def __init__(self, db: Database, tuning: Tuning):
        self.db = db
        self.tuning = tuning
        self._total: Kept[int] = Kept(db, survives_embedding=True)
        # Chunk counts of query words: {word: (count, the cap it was counted to)}.
        self._counts: Kept[dict[str, tuple[int, int]]] = Kept(db, survives_embedding=True)
        self._inactive: Kept[bool] = Kept(db, survives_embedding=True)

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
        # Counting stops at the threshold that matters (a word in 20,000 chunks costs 1.7 ms
        # to count, stopping at 5% 0.3 ms): in a big index, past prune_share.
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
        words, and a word in 20,000 chunks costs 1.7 ms to count."""
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
        `depth`. Why: bm25 costs FTS5 ~3 us a matching row, and such a query matches a fifth
        of a big wiki. At 10,000 pages (scripts/bench_mcp.py, "redis cache times out under
        load"): 8,000 rows, 23 ms; those with every word, 3.5 ms. The top 8 were the same
        (pages, order, snippets) for all 550 queries compared on the two benchmark wikis.
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
        sql = (
            f"SELECT f.rowid, c.page, -bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts f "
            f"JOIN chunks c ON c.id = f.rowid JOIN pages p ON p.path = c.page "
            f"WHERE chunks_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?"
        )
        return self.db.conn.execute(
            sql, [t.title_weight, t.heading_weight, t.text_weight, expression, *params, depth]
        ).fetchall()

    def vector(self, vectors: VectorMatrix | None, query: Any, where: str, params: list[Any], depth: int) -> Ranking:
        """The chunks of `vectors` nearest to `query` (the query's unit vector), best first."""
        import numpy as np

        if vectors is None:
            return []
        ids, matrix, pages, alive = vectors.view()
        scores = matrix @ query
        if alive is not None:  # rows of pages rewritten or deleted since the matrix was read
            scores[~alive] = -np.inf
        if where != "1":
            allowed = np.fromiter(
                (
                    r[0]
                    for r in self.db.conn.execute(
                        f"SELECT c.id FROM chunks c JOIN pages p ON p.path = c.page WHERE {where}", params
                    )
                ),
                dtype=np.int64,
            )
            scores = np.where(np.isin(ids, allowed), scores, -np.inf)
        n = min(depth, len(scores))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((ids[top], -scores[top]))]  # ties: by chunk id, whatever the rows' order
        top = top[np.isfinite(scores[top])]
        return list(zip(ids[top].tolist(), [pages[i] for i in top.tolist()], scores[top].tolist(), strict=False))

    # Fusion -----------------------------------------------------------------------------

    def fuse(self, rankings: dict[str, Ranking], vector_weight: float | None = None) -> Fused:
        """Reciprocal rank fusion at page level: a page's rank in each ranking is the rank of
        its best chunk among distinct pages. `vector_weight`: the vector ranking's weight for
        this query (see `vector_weight`), else Tuning's."""
        t = self.tuning
        weights = {"fts": t.fts_weight, "vector": t.vector_weight if vector_weight is None else vector_weight}
        page_score: dict[str, float] = {}
        chunk_score: dict[int, float] = {}
        chunks_of: dict[str, list[int]] = {}
        found_by: dict[str, list[str]] = {}
        rrf_k = t.rrf_k
        for name, ranking in rankings.items():
            w = weights[name] if len(rankings) > 1 else 1.0
            seen_pages: set[str] = set()  # a page's rank is its best chunk's among distinct pages
            for rank, (chunk_id, page, _score) in enumerate(ranking, start=rrf_k + 1):
                add = w / rank
                if chunk_id in chunk_score:
                    chunk_score[chunk_id] += add
                else:
                    chunk_score[chunk_id] = add
                    chunks_of.setdefault(page, []).append(chunk_id)
                if page not in seen_pages:
                    seen_pages.add(page)
                    page_score[page] = page_score.get(page, 0.0) + w / (rrf_k + len(seen_pages))
                    found_by.setdefault(page, []).append(name)
        # Each page's chunks are ordered by score later, for the pages shown only.
        pages = [(score, page, tuple(found_by[page])) for page, score in page_score.items()]
        return Fused(pages, chunk_score, chunks_of)

    def vector_weight(self, query: Query, fts: Ranking) -> float:
        """How much to trust meaning for this query: little when the best word match holds
        all the query's words, more as it holds fewer (a paraphrase shares few words with
        its page). Words are compared as the FTS5 tokenizer stems them."""
        t = self.tuning
        if t.vector_weight_max <= t.vector_weight:
            return t.vector_weight
        phrases = [" ".join(p) for p in query.phrases]
        words = [w for w in query.words if not any(w in p for p in query.phrases)]
        if not fts or not (phrases or words):
            return t.vector_weight_max
        row = self.db.conn.execute(
            "SELECT title, heading, text FROM chunks_fts WHERE rowid = ?", (fts[0][0],)
        ).fetchone()
        chunk, *terms = self.tokens([" ".join(row or ())] + phrases + words)
        present = set(chunk)
        matched = sum(1 for term in terms if term and all(stem in present for stem in term))
        coverage = matched / len(terms)
        return t.vector_weight + (t.vector_weight_max - t.vector_weight) * (1.0 - coverage)

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text as the FTS5 tokenizer (porter unicode61) indexes it: its terms in order."""
        c = self.db.conn
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_words USING fts5(x, tokenize='porter unicode61')")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_words_v USING fts5vocab(temp, wm_words, 'instance')")
        c.executemany("INSERT INTO temp.wm_words(rowid, x) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(texts)])
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in c.execute("SELECT term, doc, offset FROM temp.wm_words_v"):
            found.setdefault(doc, []).append((offset, term))
        c.execute("DELETE FROM temp.wm_words")
        return [[term for _, term in sorted(found.get(i + 1, []))] for i in range(len(texts))]

    def top(self, fused: Fused, k: int) -> list[Candidate]:
        """The `k` best pages of `fused`, best first (ties by path), superseded and archived
        pages demoted by Tuning.inactive_factor."""
        if not fused.pages:
            return []
        # Statuses of every candidate: the demotion can reorder them.
        inactive = (
            {
                row[0]
                for row in self.db.conn.execute(
                    f"SELECT path FROM pages WHERE status IN ({', '.join('?' * len(INACTIVE))})", INACTIVE
                )
            }
            if self.has_inactive()
            else set()
        )
        factor = self.tuning.inactive_factor
        scored = [(score * factor if path in inactive else score, path, by) for score, path, by in fused.pages]
        scored.sort(key=lambda c: (-c[0], c[1]))
        return scored[:k]

    def has_inactive(self) -> bool:
        """Is any page superseded or archived (kept until the index changes)?"""
        if self._inactive.valid():
            return self._inactive.value
        return self._inactive.put(
            self.db.conn.execute(
                f"SELECT 1 FROM pages WHERE status IN ({', '.join('?' * len(INACTIVE))}) LIMIT 1", INACTIVE
            ).fetchone()
            is not None
        )
