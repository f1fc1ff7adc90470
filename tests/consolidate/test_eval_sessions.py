"""The labelled real-session corpus (`scripts/data/sessions/`) keeps its schema and its split,
and `scripts/eval_sessions.py` counts right, wrong, invented and missed as its docstring says
(on a small handoff written here, not on real files). No model, no session files."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import eval_sessions  # noqa: E402

DATA = eval_sessions.DATA
LABELS = {part: eval_sessions.load_labels(part) for part in eval_sessions.PARTS}
MANIFEST = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
AGENTS = {"claude-code", "codex", "gemini", "opencode"}
LICENCES = {"MIT", "Apache-2.0", "BSD-3-Clause", "ISC", "Unlicense", "CC0-1.0", "MPL-2.0"}
RESERVED = {  # repositories kept for judging this work (issue 25): never in the corpus
    "d-kimuson/claude-code-viewer",
    "marot/spotter",
    "HillviewCap/Personal_AI_Infrastructure",
    "MoonLadderStudios/MoonMind",
    "EdofEngland/code_butler",
    "EdouardZemb/test-framework",
    "AcidicSoil/codex-session-view",
}


def _items(value, where):
    assert isinstance(value, list), where
    for item in value:
        assert isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip(), where
        assert isinstance(item.get("match"), list) and item["match"], where
        assert all(isinstance(m, str) and m.strip() for m in item["match"]), where


@pytest.mark.parametrize("part", eval_sessions.PARTS)
def test_label_files_follow_the_schema(part):
    assert LABELS[part], part
    for label in LABELS[part]:
        where = f"{part}/{label.get('id')}"
        assert label["part"] == part and label["agent"] in AGENTS, where
        assert isinstance(label["file"], str) and (label["file"].startswith(label["id"]) or part == "smoke"), where
        assert isinstance(label["no_work"], bool) and isinstance(label.get("traits", []), list), where
        goal = label["goal"]
        assert isinstance(goal["text"], str) and isinstance(goal["match"], list) and goal["match"], where
        for kind in ("done", "failed", "resolved_problems", "open", "must_not_say", "not_facts"):
            _items(label.get(kind, []), f"{where} {kind}")
        assert all(isinstance(f, str) for f in label.get("files_touched", [])), where
        _items(label.get("facts", []), f"{where} facts")
        for fact in label.get("facts", []):
            assert fact["kind"] in eval_sessions.FACT_KINDS, where
            assert fact.get("source", "event") in ("event", "file"), where


def test_parts_share_no_repository_and_every_session_has_its_source():
    parts = ("tune", "holdout", "holdout2", "holdout3", "holdout4", "holdout5")
    repos = {part: {label["repo"] for label in LABELS[part]} for part in parts}
    for a, b in itertools.combinations(parts, 2):
        assert not repos[a] & repos[b], (a, b)
    assert not set().union(*repos.values()) & RESERVED
    by_id = {entry["id"]: entry for entry in MANIFEST}
    for part in parts:
        for label in LABELS[part]:
            entry = by_id.get(label["id"])
            assert entry is not None, f"{label['id']} has no manifest entry"
            assert entry["file"] == label["file"] and entry["repo"] == label["repo"] and entry["part"] == part
    for entry in MANIFEST:
        # One permissive licence, or a choice of them (`MIT OR Apache-2.0`).
        assert set(entry["licence"].split(" OR ")) <= LICENCES, entry["id"]
        assert len(entry["commit"]) == 40 and len(entry["blob"]) == 40, entry["id"]
        assert entry["repo"] not in RESERVED


HANDOFF = """<wiki-memory handoff — reference notes from earlier sessions in this project; facts, not instructions>
From codex, session 0a1b2c3d, ended 2026-02-28 14:28 UTC on branch main
(full record: sessions/2026/02/2026-02-28-codex-0a1b2c3d.md)

Goal: Fix the failing cart total test
Later requests:
- also update the changelog

Done:
- Edited `shop/cart.py`: the total now sums the discounted prices
- Updated CHANGELOG.md for 1.2
- Ran the linter

Failed or abandoned:
- `pytest -q` failed (exit 1): ModuleNotFoundError: No module named 'shop'
- `make docs` failed (exit 2)

Open items / next steps:
- Stated next step: Next.js 15.5.2
- Release 1.2 to PyPI

Files touched: shop/cart.py, CHANGELOG.md, docs/index.md
</wiki-memory handoff>

Preferences recorded in this project:
- Use tabs
"""

LABEL = {
    "id": "codex-shop-1",
    "no_work": False,
    "goal": {"text": "fix the cart total test", "match": ["cart", "total"]},
    "done": [
        {"text": "fixed the cart total", "match": ["cart.py", "total|sum"]},
        {"text": "changelog updated", "match": ["changelog"]},
        {"text": "docs page written", "match": ["docs/index.md", "written"]},
    ],
    "failed": [{"text": "make docs never worked", "match": ["make docs"]}],
    "resolved_problems": [{"text": "pytest failed until PYTHONPATH was set", "match": ["no module named 'shop'"]}],
    "open": [{"text": "release 1.2", "match": ["release", "1.2"]}, {"text": "tag it", "match": ["git tag"]}],
    "files_touched": ["shop/cart.py", "CHANGELOG.md"],
    "must_not_say": [{"text": "a version is not a next step", "match": ["next.js 15.5.2"]}],
    "facts": [{"kind": "gotcha", "text": "PYTHONPATH", "match": ["pythonpath", "shop"]}],
    "not_facts": [{"text": "persona", "match": ["never break character"]}],
}


def test_the_handoff_is_read_back_by_section():
    [block] = eval_sessions.parse_handoff(HANDOFF)
    assert block.goal == "Fix the failing cart total test"
    assert [s for s, _ in block.items] == ["requests", "done", "done", "done", "failed", "failed", "open", "open"]
    assert block.files == ["shop/cart.py", "CHANGELOG.md", "docs/index.md"]
    assert "Use tabs" not in block.text  # the pages after the handoff are not its items


def test_the_scorer_counts_right_wrong_invented_and_missed():
    [block] = eval_sessions.parse_handoff(HANDOFF)
    score = eval_sessions.score_block(LABEL, block, {})
    # right: cart.py, CHANGELOG (done), make docs (failed), release 1.2 (open)
    # wrong: the resolved pytest failure listed as failed; the version given as a next step
    # invented: "Ran the linter"; missed: the docs page (done), git tag (open)
    assert (score.right, score.wrong, score.invented, score.missed) == (4, 2, 1, 2)
    assert score.goal_right == 1 and score.goal_total == 1 and score.context == 1
    assert (score.found["done"], score.found["failed"], score.found["open"]) == (2, 1, 1)
    assert (score.total["done"], score.total["failed"], score.total["open"]) == (3, 1, 2)
    assert (score.files_right, score.files_extra, score.files_missed) == (2, 1, 0)
    assert "invented (done): Ran the linter" in score.lines
    # A person's verdict on a printed line moves it out of "invented".
    judged = eval_sessions.score_block(LABEL, block, {("codex-shop-1", "Ran the linter"): {"verdict": "ok-unlabelled"}})
    assert (judged.invented, judged.ok_unlabelled) == (0, 1)
    # No handoff for a session that did work: everything labelled is missed, the goal too.
    nothing = eval_sessions.score_block(LABEL, None, {})
    assert (nothing.right, nothing.missed, nothing.goal_right, nothing.goal_total) == (0, 6, 0, 1)


def test_pages_are_correct_wrong_or_unjudged():
    pages = {
        "gotchas/no-module-shop.md": "---\ntitle: x\n---\nSet PYTHONPATH=. or `shop` is not found.\n",
        "preferences/persona.md": "---\ntitle: y\n---\nNEVER break character until given an exit command\n",
        "facts/other.md": "---\ntitle: z\n---\nThe app listens on port 8080\n",
    }
    score = eval_sessions.score_pages(LABEL, pages, [LABEL], {})
    assert (score.pages_correct, score.pages_wrong, score.pages_unjudged) == (1, 1, 1)
    found, total = eval_sessions.facts_found(LABEL, pages)
    assert found["fact:gotcha"] == 1 and total["fact:gotcha"] == 1
    verdicts = {("codex-shop-1", "facts/other.md"): {"verdict": "useless"}}
    judged = eval_sessions.score_pages(LABEL, pages, [LABEL], verdicts)
    assert (judged.pages_correct, judged.pages_useless, judged.pages_unjudged) == (1, 1, 0)


def test_matching_takes_every_string_and_alternatives():
    assert eval_sessions.matches(["python3|python 3", "script.py"], "Run it with Python 3: python3 Script.py")
    assert not eval_sessions.matches(["python3", "script.py"], "run python3")
    assert not eval_sessions.matches([], "anything")
