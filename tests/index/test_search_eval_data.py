"""The search evaluation sets (`scripts/data/search_eval/`) hold what their README promises: every
expected page exists in its query's project, kinds are known and sized, paraphrases share at most a
third of their content words with their page, superseded pages point at their replacements, and the
tuning and held-out parts share no project, page or query. No model: it reads the JSON only."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from wiki_memory.pages import PAGE_TYPES, path_for, type_from_path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import eval_search  # noqa: E402

PARTS = {name: eval_search.load(name) for name in eval_search.PARTS}
DURABLE_TYPES = {"decision", "gotcha", "procedure"}


def pages_by_path(data):
    return {(p["project"], p["path"]): p for p in data["pages"]}


@pytest.mark.parametrize("part", eval_search.PARTS)
def test_every_expected_page_exists_in_the_query_s_project(part):
    data = PARTS[part]
    pages = pages_by_path(data)
    projects = {p["name"] for p in data["projects"]}
    for q in data["queries"]:
        assert q["project"] in projects, q["id"]
        for path in q["expected"] + q.get("superseded", []):
            assert (q["project"], path) in pages, (q["id"], path)


@pytest.mark.parametrize("part", eval_search.PARTS)
def test_kinds_are_known_and_expectations_fit_them(part):
    data = PARTS[part]
    pages = pages_by_path(data)
    for q in data["queries"]:
        assert q["kind"] in eval_search.KINDS, q["id"]
        types = {pages[(q["project"], p)]["type"] for p in q["expected"]}
        if q["kind"] == "none":
            assert q["expected"] == [] and "superseded" not in q, q["id"]
            continue
        assert q["expected"], q["id"]
        if q["kind"] == "history":
            assert types <= {"session", "handoff"}, q["id"]
        if q["kind"] == "durable":
            assert types <= DURABLE_TYPES, q["id"]
        if q["kind"] == "superseded":
            old = [pages[(q["project"], p)] for p in q["superseded"]]
            assert old and all(p["status"] == "superseded" for p in old), q["id"]
            assert {p["extra"]["superseded_by"] for p in old} <= set(q["expected"]), q["id"]
            assert all(pages[(q["project"], p)]["status"] == "active" for p in q["expected"]), q["id"]


@pytest.mark.parametrize("part", eval_search.PARTS)
def test_identifier_queries_expect_every_knowledge_page_that_quotes_them(part):
    data = PARTS[part]
    for q in (q for q in data["queries"] if q["kind"] == "identifier"):
        quoted = q["identifier"].lower()
        assert quoted in q["query"].lower(), q["id"]
        holders = {
            p["path"]
            for p in data["pages"]
            if p["project"] == q["project"]
            and p["type"] not in ("session", "handoff")
            and quoted in eval_search.page_text(p).lower()
        }
        assert holders == set(q["expected"]), q["id"]


@pytest.mark.parametrize("part", eval_search.PARTS)
def test_paraphrases_share_at_most_a_third_of_their_content_words(part):
    data = PARTS[part]
    pages = pages_by_path(data)
    too_close = []
    for q in data["queries"]:
        if q["kind"] == "paraphrase":
            (path,) = q["expected"]
            share = eval_search.overlap(q["query"], eval_search.page_text(pages[(q["project"], path)]))
            if share > eval_search.MAX_PARAPHRASE_OVERLAP + 1e-9:
                too_close.append((q["id"], q["query"], round(share, 2)))
    assert not too_close


def test_the_overlap_measure_stems_and_skips_function_words():
    page = "Merchant webhooks are retried with exponential backoff"
    assert eval_search.overlap("how are webhook retries done", page) == pytest.approx(2 / 3)
    assert eval_search.overlap("what is it", page) == 0.0
    assert eval_search.content_words("the max.poll.interval.ms setting") == {"max", "poll", "interv", "ms", "set"}


def test_tuning_and_held_out_parts_share_no_project_page_or_query():
    tune, holdout = PARTS["tune"], PARTS["holdout"]
    assert not {p["name"] for p in tune["projects"]} & {p["name"] for p in holdout["projects"]}
    assert not {p["title"] for p in tune["pages"]} & {p["title"] for p in holdout["pages"]}
    assert not {q["query"].lower() for q in tune["queries"]} & {q["query"].lower() for q in holdout["queries"]}
    ids = [q["id"] for q in tune["queries"] + holdout["queries"]]
    assert len(ids) == len(set(ids))


def test_the_sets_are_as_large_as_the_issue_asks():
    both = eval_search.load("all")
    assert len(both["pages"]) >= 240 and len(both["projects"]) >= 3
    assert len(both["queries"]) >= 300
    kinds = Counter(q["kind"] for q in both["queries"])
    assert kinds["paraphrase"] >= 40
    assert all(kinds[k] >= 25 for k in eval_search.KINDS if k != "paraphrase"), kinds
    for part in PARTS.values():  # each part on its own has every kind
        assert set(Counter(q["kind"] for q in part["queries"])) == set(eval_search.KINDS)


@pytest.mark.parametrize("part", eval_search.PARTS)
def test_pages_are_well_formed_and_their_links_resolve(part):
    data = PARTS[part]
    pages = pages_by_path(data)
    for p in data["pages"]:
        where = (p["project"], p["path"])
        assert p["type"] in PAGE_TYPES and type_from_path(p["path"]) == p["type"], where
        if p["type"] not in ("session", "handoff"):
            assert p["path"] == path_for(p["title"], p["type"], p["date"]), where
        assert 100 <= len(p["body"].split()) <= 300, where
        assert (p["status"] == "superseded") == ("superseded_by" in p["extra"]), where
        for key, back in (("superseded_by", "supersedes"), ("supersedes", "superseded_by")):
            if key in p["extra"]:
                other = pages[(p["project"], p["extra"][key])]
                assert other["extra"][back] == p["path"], where
        titles = {q["title"] for q in data["pages"] if q["project"] == p["project"]}
        for link in re.findall(r"\[\[([^\]]+)\]\]", p["body"]):
            assert link in titles or (p["project"], link) in pages, (where, link)
