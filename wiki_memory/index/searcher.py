"""A search's work, behind `Index.search`: the query's rankings by words (FTS5) and by meaning
(the vector matrix), embedded on another thread while the words are ranked, fused, weighed by
the priors, optionally reranked, and cut into results with their snippets. The index's lock
and catch-up are `Index`'s; this part only reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from wiki_memory.index import snippets
from wiki_memory.index.db import Database
from wiki_memory.index.embed import Embedder, EmbeddingFailed
from wiki_memory.index.priors import Priors
from wiki_memory.index.query import Filter, filters, parse_query
from wiki_memory.index.ranking import Candidate, Fused, Ranker, Ranking
from wiki_memory.index.rerank import Reranker
from wiki_memory.index.results import SearchResult
from wiki_memory.index.tuning import Tuning
from wiki_memory.index.vectors import Vectors

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

_background: ThreadPoolExecutor | None = None
_background_lock = threading.Lock()


def _in_background(fn: Callable[..., Any], *args: Any) -> Future[Any]:
    """`fn(*args)` on a shared worker thread (two at most, started on first use)."""
    global _background
    with _background_lock:
        if _background is None:
            from concurrent.futures import ThreadPoolExecutor  # deferred: it brings logging; words need neither

            _background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wiki-memory-query")
    return _background.submit(fn, *args)


class Searcher:
    """Answers one search from the index's parts (`Index` holds one and calls it under its lock)."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        vectors: Vectors,
        ranker: Ranker,
        priors: Priors,
        reranker: Reranker,
        tuning: Tuning,
    ):
        self.db = db
        self.embedder = embedder
        self.vectors = vectors
        self.ranker = ranker
        self.priors = priors
        self.reranker = reranker
        self.tuning = tuning

    def search(
        self,
        text: str,
        k: int,
        mode: str,
        type_: Filter,
        tag: Filter,
        status: Filter,
        since: str | None,
        max_chars: int | None,
        not_status: Filter = None,
        rerank: bool = True,
        *,
        vectors: bool,
    ) -> list[SearchResult]:
        """The `k` best pages for `text` (see `Index.search`); `vectors`: rank by meaning too."""
        asked = parse_query(text)
        query = self.ranker.without_common_words(asked)
        where, params = filters(type_, tag, status, since, not_status)
        depth = max(self.tuning.depth, k * 8)
        rankings: dict[str, Ranking] = {}
        # Hybrid: the query is embedded on another thread while FTS5 ranks the words (both
        # release the GIL). Why: side by side, a hybrid query costs about what its slower half
        # costs alone, not the sum of both.
        query_vector = _in_background(self.embedder.embed_query, text) if vectors and mode == "hybrid" else None
        if mode != "vector" or not vectors:
            rankings["fts"] = self.ranker.fts(query, where, params, depth)
        if vectors:
            try:
                vector = query_vector.result() if query_vector is not None else self.embedder.embed_query(text)
            except EmbeddingFailed:  # said once by the embedder: this search goes on by words
                vector = None
            if vector is not None:
                rankings["vector"] = self.ranker.vector(self.vectors.matrix(), vector, where, params, depth)
            elif "fts" not in rankings:
                rankings["fts"] = self.ranker.fts(query, where, params, depth)
        # How sure the words are: the share of the query (weighed by rarity) that the best
        # word match holds. A paraphrase's best match holds few of its words, or common ones.
        word_chunks = [rankings["fts"][0][0]] if rankings.get("fts") else []
        shares = self.ranker.coverage(asked, word_chunks) if word_chunks and "vector" in rankings else {}
        fused = self.ranker.fuse(rankings, sure=shares.get(word_chunks[0], 1.0) if shares else 1.0)
        reranking = rerank and self.reranker.enabled
        top = self.priors.top(fused, max(k, self.reranker.top) if reranking else k, history=asked.history)
        coverage = None
        if "fts" in rankings:
            best = {c[1]: fused.word_chunk[c[1]] for c in top if c[1] in fused.word_chunk}
            shares.update(self.ranker.coverage(asked, [c for c in best.values() if c not in shares]))
            coverage = {page: shares[chunk] for page, chunk in best.items()}
        if reranking:
            return self._reranked(text, top, k, fused, max_chars, coverage)
        return snippets.results(
            self.db.conn, top, fused, self.tuning, max_chars, replaced=self.priors.replacements(), coverage=coverage
        )

    def _reranked(
        self,
        text: str,
        top: list[Candidate],
        k: int,
        fused: Fused,
        max_chars: int | None,
        coverage: dict[str, float] | None,
    ) -> list[SearchResult]:
        """The `k` best of the fused candidates `top` as the reranker orders them (its
        score and each page's fused rank on the results), or in the fused order when it
        fails (said once). The reranker reads each page's title, heading and best passage."""
        replaced = self.priors.replacements()
        found = snippets.results(self.db.conn, top, fused, self.tuning, None, replaced=replaced, coverage=coverage)
        documents = ["\n".join(dict.fromkeys(p for p in (r.title, r.heading, r.snippet) if p)) for r in found]
        scores = self.reranker.scores(text, documents)
        if scores is None:
            return snippets.results(
                self.db.conn, top[:k], fused, self.tuning, max_chars, replaced=replaced, coverage=coverage
            )
        rank = {r.path: n for n, r in enumerate(found, 1)}
        score = {r.path: s for r, s in zip(found, scores, strict=True)}
        # Ties keep the fused order (sorted is stable).
        order = keep_replacements_first(sorted(found, key=lambda r: -score[r.path]))[:k]
        by_path = {c[1]: c for c in top}
        results = snippets.results(
            self.db.conn,
            [by_path[r.path] for r in order],
            fused,
            self.tuning,
            max_chars,
            replaced=replaced,
            coverage=coverage,
        )
        return [replace(r, rerank=score[r.path], fused_rank=rank[r.path]) for r in results]


def keep_replacements_first(results: list[SearchResult]) -> list[SearchResult]:
    """`results` with each superseded page moved just below its replacement when both are
    there: whatever a reranker says, a superseded page never ranks above the page that
    replaced it (as the priors keep it in the fused order)."""
    present = {r.path for r in results}
    placed: list[SearchResult] = []
    done: set[str] = set()
    waiting: dict[str, list[SearchResult]] = {}

    def place(r: SearchResult) -> None:
        placed.append(r)
        done.add(r.path)
        for after in waiting.pop(r.path, []):
            place(after)

    for r in results:
        target = r.superseded_by
        if target and target in present and target not in done and target != r.path:
            waiting.setdefault(target, []).append(r)
        else:
            place(r)
    for left in waiting.values():  # a cycle of replacements: the reranker's order
        for r in left:
            if r.path not in done:
                place(r)
    return placed
