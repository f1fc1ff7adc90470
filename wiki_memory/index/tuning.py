"""The knobs of chunking and ranking, shared by the index's parts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """The knobs of chunking and ranking. Each default was chosen on the first five LoCoMo
    conversations together with the coding-memory set (scripts/eval_locomo.py,
    scripts/eval_coding.py; the figures are in docs/benchmarks.md)."""

    # Small chunks point at the passage that answers; the snippet then grows around them.
    chunk_words: int = 60
    context_words: int = 150  # the first result: grow each passage with its neighbours to this many words
    other_words: int = 40  # the other results: shorter passages, so that more pages fit a budget
    passages: int = 3  # passages of one page in its snippet at most...
    passage_ratio: float = 0.8  # ...each with at least this share of the best passage's score
    depth: int = 200  # chunks taken from each ranking before fusion (at least)
    rrf_k: int = 20  # reciprocal rank fusion: score = sum(weight / (rrf_k + rank))
    fts_weight: float = 1.0
    # The dense ranking is trusted little when the best word match holds every query word
    # (LoCoMo: bm25 is the stronger ranker) and up to vector_weight_max as it holds fewer
    # (a paraphrase shares few words with its page: meaning must carry it).
    vector_weight: float = 0.15
    vector_weight_max: float = 1.0
    title_weight: float = 3.0  # bm25 column weights: title (and tags), heading, text
    heading_weight: float = 1.5
    text_weight: float = 1.0
    inactive_factor: float = 0.5  # superseded and archived pages rank below active ones
    # In an index of prune_from chunks or more, words in more than prune_share of them only
    # score the matches that a rarer word of the query made (see ranking.Ranker.without_common_words):
    # the cost of a search, not its results (the top 8 were the same on the benchmark wikis).
    prune_from: int = 5000
    prune_share: float = 0.05


DEFAULT_TUNING = Tuning()
