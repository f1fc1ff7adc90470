"""Syncing through the memory layer, called directly: two machines share one bare remote; a
sync commits the person's hand edits first, sends and receives, merges a page changed on
both sides line by line, indexes what arrived, and reports a secret in what came in
without altering it. Real git repositories, checked with the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from wiki_memory.config import project_for_store
from wiki_memory.memory import Memory

TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape
BODY = "Line one.\n\nLine two.\n\nLine three.\n"


@pytest.fixture
def machines(tmp_path: Path):
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    made = []
    for name in ("a", "b"):
        memory = Memory(project_for_store(tmp_path / name / "wiki"))
        memory.store(create=True).host = name
        memory.add_remote("origin", str(remote))
        made.append(memory)
    yield made[0], made[1], remote
    for memory in made:
        memory.close()


def test_a_sync_sends_receives_and_indexes_what_arrived(machines):
    a, b, remote = machines
    a.write("Runbook", BODY, "procedure")
    sent = a.sync()
    assert sent.sent_commits >= 1
    assert git(remote, "rev-parse", "main").strip() == git(a.project.wiki, "rev-parse", "HEAD").strip()
    got = b.sync()
    assert "procedures/runbook.md" in got.received
    assert b.read("Runbook").page.body == a.read("Runbook").page.body
    assert [r.path for r in b.search("Line three", mode="fts").results] == ["procedures/runbook.md"]


def test_a_page_changed_on_both_machines_is_merged_line_by_line_with_the_hand_edit_first(machines):
    a, b, _remote = machines
    a.write("Runbook", BODY, "procedure")
    a.sync()
    b.sync()
    a.edit("Runbook", "find_replace", find="Line one.", replace="Line one, from A.")
    a.sync()
    page = b.project.wiki / "procedures" / "runbook.md"
    page.write_text(page.read_text().replace("Line three.", "Line three, by hand on B."))
    report = b.sync()
    assert [e.subject for e in report.edits] == ["edit: procedures/runbook.md"]  # committed first, as the person's
    assert report.merged == ["procedures/runbook.md"] and report.conflicts == []
    body = b.read("Runbook").page.body
    assert "Line one, from A." in body and "Line three, by hand on B." in body
    log = git(b.project.wiki, "log", "--format=%an|%s", "-3").splitlines()
    assert "Test Person|edit: procedures/runbook.md" in log
    a.sync()
    assert a.read("Runbook").page.body == body  # both machines end with both changes


def test_a_secret_in_what_arrives_is_reported_and_left_as_written(machines):
    a, b, _remote = machines
    a.write("Runbook", BODY, "procedure")
    # Committed with git itself, past the memory layer's redaction, as another tool might.
    (a.project.wiki / "notes").mkdir()
    (a.project.wiki / "notes" / "ci.md").write_text(f"# CI\n\nGITHUB_TOKEN={TOKEN}\n")
    git(a.project.wiki, "add", "notes/ci.md")
    git(a.project.wiki, "commit", "-qm", "remember: ci")
    a.sync()
    report = b.sync()
    assert {(f.path, f.family) for f in report.secrets} == {("notes/ci.md", "github-token")}
    assert TOKEN in (b.project.wiki / "notes" / "ci.md").read_text()  # reported, never altered
