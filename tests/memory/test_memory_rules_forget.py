"""Secrets and history in the memory layer, called directly: `scan` finds a secret in an
old commit and in a file not committed yet, `forget` takes a string or a page out of the
whole history and out of what is derived from it (the search index, the journals), a dry
run changes nothing, and what would rewrite everything is refused. Checked with the git
CLI over every object of the real repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.memory import InputError, Memory

TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape
HOSTNAME = "db7.internal.acme-corp.example"  # no redaction rule finds it: only `forget` removes it


@pytest.fixture
def memory(code_repo: Path):
    with Memory.at(code_repo) as memory:
        memory.write("Database host", f"The replica is {HOSTNAME}; read only.", "fact")
        memory.write("Release steps", "Tag, push, publish.", "procedure")
        memory.write("Database host", f"The replica is {HOSTNAME}; read only, port 5433.", "fact")
        yield memory


def objects(memory: Memory) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=memory.project.wiki,
        capture_output=True,
        check=True,
    ).stdout


def journal_with(memory: Memory, session: str, text: str) -> Path:
    memory.project.journal_dir.mkdir(parents=True, exist_ok=True)
    path = memory.project.journal_dir / f"{session}.jsonl"
    path.write_text(json.dumps({"kind": "prompt", "session_id": session, "text": f"connect to {text}"}) + "\n")
    return path


def test_scan_finds_a_secret_in_an_old_commit_and_in_an_uncommitted_edit(memory):
    wiki = memory.project.wiki
    assert memory.scan().findings == []  # writes are redacted: none got in
    (wiki / "notes").mkdir()
    (wiki / "notes" / "ci.md").write_text(f"---\ntitle: CI\ntype: note\n---\n# CI\n\nGITHUB_TOKEN={TOKEN}\n")
    git(wiki, "add", "notes/ci.md")
    git(wiki, "commit", "-qm", "by hand")
    leaked = git(wiki, "rev-parse", "HEAD").strip()
    (wiki / "notes" / "ci.md").write_text("---\ntitle: CI\ntype: note\n---\n# CI\n\nSee the vault.\n")
    git(wiki, "commit", "-qam", "cleaned by hand")
    (wiki / "facts" / "database-host.md").write_text(f"---\ntitle: Database host\ntype: fact\n---\nTOKEN {TOKEN}\n")
    report = memory.scan()
    assert {(f.commit, f.path, f.family) for f in report.findings} == {
        (leaked, "notes/ci.md", "github-token"),
        (None, "facts/database-host.md", "github-token"),
    }
    assert TOKEN not in json.dumps(report.as_dict())  # the report never holds the secret


def test_forget_a_string_takes_it_out_of_every_commit_the_index_and_the_journals(memory):
    journal = journal_with(memory, "s-1", HOSTNAME)
    memory.reindex(embed=False)
    assert [r.path for r in memory.search(HOSTNAME, mode="fts").results] == ["facts/database-host.md"]
    page_id = memory.read("Database host").page.id
    done = memory.forget([HOSTNAME], embed=False)
    assert not done.dry_run and done.strings == 1 and len(done.rewrite.commits) == 2
    assert HOSTNAME.encode() not in objects(memory)
    assert HOSTNAME not in git(memory.project.wiki, "log", "-p", "--all")
    page = memory.read("Database host").page
    assert page.id == page_id and "The replica is [forgotten]; read only, port 5433." in page.body
    assert memory.search(HOSTNAME, mode="fts").results == []
    # The index rebuilt in a new file: an index updated in place keeps old text in its free pages.
    index_files = list(memory.project.index_path.parent.glob(memory.project.index_path.name + "*"))
    assert index_files and not [f for f in index_files if HOSTNAME.encode() in f.read_bytes()]
    assert HOSTNAME not in journal.read_text() and "[forgotten]" in journal.read_text()
    assert str(journal) in done.local_files
    assert git(memory.project.wiki, "status", "--porcelain") == ""
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=memory.project.wiki, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
    assert memory.read("Release steps").page.body.endswith("Tag, push, publish.\n")  # the rest kept


def test_a_dry_run_says_what_it_would_reach_and_changes_nothing(memory):
    journal = journal_with(memory, "s-1", HOSTNAME)
    head = git(memory.project.wiki, "rev-parse", "HEAD")
    before = journal.read_bytes()
    done = memory.forget([HOSTNAME], dry_run=True)
    assert done.dry_run and done.rewrite.files == ("facts/database-host.md",) and len(done.rewrite.commits) == 2
    assert done.local_files == (str(journal),) and done.todo == ()
    assert git(memory.project.wiki, "rev-parse", "HEAD") == head
    assert HOSTNAME.encode() in objects(memory) and journal.read_bytes() == before


def test_forget_a_page_removes_every_version_and_keeps_the_others(memory):
    release = memory.read("Release steps").page
    done = memory.forget(pages=["Database host"], embed=False)
    assert done.pages == ("facts/database-host.md",)
    wiki = memory.project.wiki
    assert git(wiki, "log", "--all", "--format=%H", "--", "facts/database-host.md") == ""
    assert HOSTNAME.encode() not in objects(memory)
    tree = git(wiki, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "facts/database-host.md" not in tree and "procedures/release-steps.md" in tree
    assert memory.read("Release steps").page.body == release.body


def test_forget_refuses_what_would_rewrite_everything_and_changes_nothing(memory):
    head = git(memory.project.wiki, "rev-parse", "HEAD")
    with pytest.raises(InputError, match="at least 3 characters"):
        memory.forget(["db"])
    with pytest.raises(InputError, match="spaces and punctuation only"):
        memory.forget(["- : -"])
    with pytest.raises(InputError, match="nothing to forget"):
        memory.forget()
    assert git(memory.project.wiki, "rev-parse", "HEAD") == head
    assert HOSTNAME.encode() in objects(memory)


def test_history_is_newest_first_per_page_or_whole_and_refuses_a_bad_count(memory):
    whole = memory.history(n=None)
    subjects = [c.subject for c in whole.commits]
    assert subjects == [
        "update: facts/database-host",
        "remember: procedures/release-steps",
        "remember: facts/database-host",
        "init: wiki-memory wiki",
    ]
    one = memory.history("Database host")
    assert one.path == "facts/database-host.md"
    assert [c.subject for c in one.commits] == ["update: facts/database-host", "remember: facts/database-host"]
    assert [c.id for c in memory.history(n=1).commits] == [git(memory.project.wiki, "rev-parse", "HEAD").strip()]
    with pytest.raises(InputError, match="`n` is how many commits"):
        memory.history(n=0)
