"""The lifecycle rules of the memory layer, called directly: a mark is one commit by the
marker with `Reason:` and `Verdict:` trailers (none when the page already reads so), a
helpful mark counts, supersede changes both pages in one commit, anchors drift when their
file changes and a mark `active` re-anchors, and `review` names each kind of problem with
the command that resolves it. Checked in the real wiki with the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from wiki_memory.memory import Actor, InputError, Memory

CODEX = Actor("codex", "sess-1234567890")
TRAILERS = "%an|%s|%(trailers:key=Reason,valueonly,separator=%x2C)|%(trailers:key=Verdict,valueonly,separator=%x2C)"


@pytest.fixture
def memory(code_repo: Path):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "api.py").write_text("def orders():\n    return []\n")
    (code_repo / "src" / "db.py").write_text("URL = 'sqlite://'\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    with Memory.at(code_repo) as memory:
        yield memory


def last(memory: Memory) -> list[str]:
    return git(memory.project.wiki, "log", "-1", f"--format={TRAILERS}").strip().split("|")


def count(memory: Memory) -> int:
    return int(git(memory.project.wiki, "rev-list", "--count", "HEAD"))


def test_a_mark_is_one_commit_by_the_marker_with_its_reason_and_verdict(memory):
    memory.write("Retry policy", "Twice.", "decision")
    marked = memory.mark("Retry policy", "wrong", reason="it   misled\nthe agent", actor=CODEX)
    assert (marked.status, marked.reason) == ("wrong", "it misled the agent")  # one line
    assert marked.commit == git(memory.project.wiki, "rev-parse", "HEAD").strip()
    assert last(memory) == ["codex", "mark: wrong decisions/retry-policy", "it misled the agent", "wrong"]
    page = memory.read("Retry policy").page
    assert page.status == "wrong" and "codex:sess-123" in page.sources
    before = count(memory)
    again = memory.mark("Retry policy", "wrong", actor=CODEX)
    assert again.commit is None and count(memory) == before  # it read so already


def test_helpful_counts_every_time_and_leaves_the_status(memory):
    memory.write("Retry policy", "Twice.", "decision")
    first = memory.mark("Retry policy", "helpful")
    second = memory.mark("Retry policy", "helpful", actor=CODEX)
    assert (first.helpful, second.helpful) == (1, 2)
    assert second.status == "active" and second.commit is not None
    text = git(memory.project.wiki, "show", "HEAD:decisions/retry-policy.md")
    assert "helpful: 2\n" in text and "status: active\n" in text


def test_marks_are_refused_for_bad_input_and_commit_nothing(memory):
    memory.write("Retry policy", "Twice.", "decision")
    before = count(memory)
    with pytest.raises(InputError, match="unknown verdict 'bogus'"):
        memory.mark("Retry policy", "bogus")
    with pytest.raises(InputError, match="say why in one or two sentences"):
        memory.mark("Retry policy", "wrong", reason="x" * 501)
    assert count(memory) == before


def test_supersede_changes_both_pages_in_one_commit(memory):
    memory.write("Retry twice", "Twice.", "decision")
    memory.write("Retry thrice", "Thrice.", "decision")
    done = memory.supersede("Retry twice", "Retry thrice", reason="load grew", actor=CODEX)
    assert (done.old, done.new) == ("decisions/retry-twice.md", "decisions/retry-thrice.md")
    files = git(memory.project.wiki, "show", "--format=", "--name-only", "HEAD").split()
    assert sorted(files) == ["decisions/retry-thrice.md", "decisions/retry-twice.md"]
    assert last(memory) == [
        "codex",
        "supersede: decisions/retry-twice by decisions/retry-thrice",
        "load grew",
        "supersede",
    ]
    old, new = memory.read("Retry twice").page, memory.read("Retry thrice").page
    assert old.status == "superseded" and old.meta["superseded_by"] == "decisions/retry-thrice.md"
    assert new.status == "active" and new.meta["supersedes"] == ["decisions/retry-twice.md"]


def test_a_superseded_page_made_active_again_names_no_successor(memory):
    # The status change owns `superseded_by`: the store must drop it, not keep it as a key
    # only the old page had (the file would then contradict its own status).
    memory.write("Retry twice", "Twice.", "decision")
    memory.write("Retry thrice", "Thrice.", "decision")
    memory.supersede("Retry twice", "Retry thrice")
    memory.mark("Retry twice", "active")
    text = git(memory.project.wiki, "show", "HEAD:decisions/retry-twice.md")
    assert "status: active" in text and "superseded_by" not in text
    memory.supersede("Retry twice", "Retry thrice")
    memory.edit("Retry twice", "set_status", status="active")
    text = git(memory.project.wiki, "show", "HEAD:decisions/retry-twice.md")
    assert "status: active" in text and "superseded_by" not in text


def test_supersede_refuses_itself_and_a_hidden_successor(memory):
    memory.write("Retry twice", "Twice.", "decision")
    memory.write("Retry never", "Never.", "decision")
    memory.mark("Retry never", "wrong")
    before = count(memory)
    with pytest.raises(InputError, match="cannot supersede itself"):
        memory.supersede("Retry twice", "decisions/retry-twice.md")
    with pytest.raises(InputError, match=r"decisions/retry-never\.md is wrong itself"):
        memory.supersede("Retry twice", "Retry never")
    assert count(memory) == before and memory.read("Retry twice").page.status == "active"


def test_a_hidden_page_leaves_search_unless_asked_for(memory):
    memory.write("Retry policy", "Retry the orders request twice.", "decision")
    assert [r.path for r in memory.search("orders request", mode="fts").results] == ["decisions/retry-policy.md"]
    memory.mark("Retry policy", "archived")
    assert memory.search("orders request", mode="fts").results == []
    assert [r.path for r in memory.search("orders request", mode="fts", status="archived").results] == [
        "decisions/retry-policy.md"
    ]
    memory.mark("Retry policy", "active")
    assert [r.path for r in memory.search("orders request", mode="fts").results] == ["decisions/retry-policy.md"]


def test_an_anchor_drifts_when_its_file_changes_and_marking_active_re_anchors(memory):
    memory.write("Orders endpoint", "Returns a list.", "fact")
    anchored = memory.anchor("Orders endpoint", ["src/api.py"], reason="read the code")
    blob = git(memory.project.root, "rev-parse", "HEAD:src/api.py").strip()
    assert anchored.page.meta["anchors"] == [{"path": "src/api.py", "blob": blob}]
    assert memory.drift("Orders endpoint") == []
    (memory.project.root / "src" / "db.py").write_text("URL = 'postgres://'\n")  # another file
    assert memory.drift("Orders endpoint") == []
    (memory.project.root / "src" / "api.py").write_text("def orders():\n    return [1]\n")
    assert [(d.path, d.reason) for d in memory.drift("Orders endpoint")] == [("src/api.py", "changed")]
    memory.mark("Orders endpoint", "active")  # checked against the code as it is now
    assert memory.drift("Orders endpoint") == []
    new_blob = git(memory.project.root, "hash-object", "src/api.py").strip()
    assert memory.read("Orders endpoint").page.meta["anchors"] == [{"path": "src/api.py", "blob": new_blob}]
    with pytest.raises(InputError, match="no such file"):
        memory.anchor("Orders endpoint", ["src/missing.py"])


def test_review_names_each_problem_with_the_command_that_resolves_it(memory):
    memory.write("Old retry", "Twice.", "decision")
    memory.write("New retry", "Thrice.", "decision")
    memory.write("Use the api", "See [[Old retry]].", "gotcha")
    memory.anchor("Use the api", ["src/api.py"])
    memory.mark("Old retry", "wrong")
    source = memory.page_source("New retry")
    memory.save_text("New retry", source.text.replace("status: active\n", "status: active\nexpires: 2026-01-01\n"))
    memory.write("Lonely", "Replaced by something.", "fact", status="superseded")
    (memory.project.root / "src" / "api.py").write_text("def orders():\n    return None\n")
    review = memory.review(today="2026-06-01")
    found = {(i.kind, i.paths, i.command) for i in review.items}
    assert found >= {
        (
            "drift",
            ("gotchas/use-the-api.md",),
            "wiki-memory mark gotchas/use-the-api.md active|stale|wrong  (active: still true, re-anchored)",
        ),
        (
            "expired",
            ("decisions/new-retry.md",),
            "wiki-memory mark decisions/new-retry.md archived  (or edit its `expires:` if it still holds)",
        ),
        ("wrong-link", ("gotchas/use-the-api.md", "decisions/old-retry.md"), "wiki-memory edit gotchas/use-the-api.md"),
        ("lifecycle", ("facts/lonely.md",), "wiki-memory supersede facts/lonely.md NEW-PAGE"),
    }
    assert review.pages == 4
    assert memory.review(today="2025-12-31").of_kind("expired") == []  # the date, not the clock
