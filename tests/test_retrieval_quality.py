"""The retrieval promise on coding memory, with the real model: a query that paraphrases a
page finds it in the first five results at least 9 times in 10, and a query quoting an
identifier finds its page first, on the tuning set and on the held-out one
(`scripts/eval_coding.py` prints the full figures)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from wiki_memory.index import Tuning

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
import eval_coding  # noqa: E402


@pytest.mark.parametrize("dataset", ["coding_memory", "coding_memory_holdout"])
def test_paraphrases_and_identifiers_find_their_page(dataset, tmp_path, embedding_model):
    embedder = embedding_model
    data = SCRIPTS / "data" / dataset
    pages = json.loads((data / "pages.json").read_text())
    queries = json.loads((data / "queries.json").read_text())

    result = eval_coding.evaluate(pages, queries, ["hybrid"], embedder, Tuning(), tmp_path)
    summary = eval_coding.summarize(result["questions"], ["hybrid"])

    missed = [
        (r["q"], r["page"], r["hybrid.rank"])
        for r in result["questions"]
        if r["kind"] == "paraphrase" and not (r["hybrid.rank"] and r["hybrid.rank"] <= 5)
    ]
    assert summary["paraphrase"]["hybrid.r@5"] >= 0.9, missed
    assert summary["identifier"]["hybrid.r@1"] >= 0.95
    # Meaning must carry paraphrases to the top: words alone reach r@5 0.90-0.92 on these
    # sets too, but MRR only 0.76-0.77 (hybrid 0.87).
    assert summary["paraphrase"]["hybrid.mrr"] >= 0.8
