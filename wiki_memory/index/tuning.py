"""The knobs of chunking and ranking, shared by the index's parts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """The knobs of chunking and ranking. Each default was chosen on the tuning part of
    scripts/data/search_eval, the first five LoCoMo conversations and the coding-memory set
    together (scripts/eval_search.py, eval_locomo.py, eval_coding.py; the figures are in
    docs/benchmarks.md)."""

    # Small chunks point at the passage that answers; the snippet then grows around them.
    chunk_words: int = 60
    context_words: int = 150  # the first result: grow each passage with its neighbours to this many words
    other_words: int = 40  # the other results: shorter passages, so that more pages fit a budget
    passages: int = 3  # passages of one page in its snippet at most...
    passage_ratio: float = 0.8  # ...each with at least this share of the best passage's score
    # ...or of it when words alone rank (no model, or --mode fts): a chunk's bm25 share of the
    # best falls off faster than a cosine does (LoCoMo 1-5, fts e@500: 0.8 0.742, 0.5 0.751).
    words_passage_ratio: float = 0.5
    depth: int = 200  # chunks taken from each ranking before fusion (at least)
    # Fusion by scores: a page scores the cosine similarity of its best chunk to the query,
    # plus fts_weight times the bm25 of its best chunk over the best bm25 of the search.
    # Cosine is on one scale for every query, so a page that meaning finds far ahead of the
    # rest keeps its lead; bm25 is not, so it only counts relative to the search's best
    # (see ranking.Ranker.fuse).
    fts_weight: float = 0.4
    title_weight: float = 3.0  # bm25 column weights: title (and tags), heading, text
    heading_weight: float = 1.5
    text_weight: float = 1.0
    # Subtracted from a page's score (on the scale of a cosine similarity):
    log_penalty: float = 0.1  # session and handoff logs, unless the query asks what happened
    inactive_penalty: float = 0.25  # superseded and archived pages (and never above their replacement)
    # In an index of prune_from chunks or more, words in more than prune_share of them only
    # score the matches that a rarer word of the query made (see ranking.Ranker.without_common_words):
    # the cost of a search, not its results (the top 8 were the same on the benchmark wikis).
    prune_from: int = 5000
    prune_share: float = 0.05


DEFAULT_TUNING = Tuning()
