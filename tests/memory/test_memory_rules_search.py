"""What the memory layer hands back, called directly: search by words and by meaning (the
real embedding model), its filters and refusals, hidden statuses left out, recall for a
prompt and for a file without recording anything, and the team tier's pages named
`team:<path>` with their author. A real wiki, a real SQLite index, a real bare team
repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.memory import InputError, Memory

POOL = "The Postgres pool of 20 runs out when the nightly import runs; raise max_connections."


@pytest.fixture
def memory(code_repo: Path):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "api.py").write_text("def orders():\n    return []\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    with Memory.at(code_repo) as memory:
        memory.write("Connection pool exhausted under load", POOL, "gotcha", tags=["db"])
        memory.write("Release steps", "Tag the version, push the tag, then publish the wheel.", "procedure")
        memory.write("Orders endpoint", "orders() returns a list and never None.", "fact", tags=["api"])
        memory.anchor("Orders endpoint", ["src/api.py"])
        yield memory


def paths(report) -> list[str]:
    return [r.path for r in report.results]


def test_search_by_words_gives_the_page_its_passage_and_honours_the_filters(memory):
    found = memory.search("publish the wheel", mode="fts")
    assert paths(found) == ["procedures/release-steps.md"]
    hit = found.results[0]
    assert (hit.title, hit.type, hit.tier) == ("Release steps", "procedure", "personal")
    assert "publish the wheel" in hit.snippet and hit.retrievers == ("fts",)
    assert memory.search("publish the wheel", mode="fts", type="gotcha").results == []
    assert paths(memory.search("nightly import", mode="fts", tag="db")) == [
        "gotchas/connection-pool-exhausted-under-load.md"
    ]
    assert memory.search("nightly import", mode="fts", tag="api").results == []


def test_search_by_meaning_finds_a_page_that_shares_no_word_with_the_query(memory, embedding_model):
    memory.reindex()
    query = "too many simultaneous database clients"
    assert memory.search(query, mode="fts").results == []  # no word in common
    found = memory.search(query, mode="hybrid")
    assert found.note is None  # the model was there
    assert paths(found)[0] == "gotchas/connection-pool-exhausted-under-load.md"
    assert found.results[0].retrievers == ("vector",)


def test_search_refuses_what_it_cannot_answer(memory):
    with pytest.raises(InputError, match="`query` is empty"):
        memory.search("   ")
    with pytest.raises(InputError, match="`k` is how many pages"):
        memory.search("wheel", k=0)
    with pytest.raises(InputError, match="`max_chars` is a budget"):
        memory.search("wheel", max_chars=0)


def test_a_project_without_memory_answers_empty_and_creates_nothing(tmp_path):
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    with Memory.at(elsewhere) as memory:
        report = memory.search("anything at all")
        assert (report.results, report.note) == ([], "this project has no memory yet")
        assert memory.recent() == [] and memory.review().note == "this project has no memory yet"
        assert not memory.exists and not memory.project.wiki.exists()


def test_a_drifted_result_carries_its_note(memory):
    assert memory.search("returns a list", mode="fts").drift == {}
    (memory.project.root / "src" / "api.py").write_text("def orders():\n    return None\n")
    report = memory.search("returns a list", mode="fts")
    assert paths(report) == ["facts/orders-endpoint.md"]
    assert report.drift == {"facts/orders-endpoint.md": "may be stale (src/api.py changed since)"}


def test_recall_hands_the_page_for_a_prompt_and_for_a_file_and_records_nothing(memory):
    handed = memory.recall("why does the postgres pool run out during the nightly import", session_id="s-1")
    assert handed.pages == ("gotchas/connection-pool-exhausted-under-load.md",)
    assert "Connection pool exhausted under load" in handed.text and POOL in handed.text
    about = memory.recall(file=str(memory.project.root / "src" / "api.py"))
    assert (about.trigger, about.subject, about.pages) == ("file", "src/api.py", ("facts/orders-endpoint.md",))
    # Asking is not handing over: the same prompt again is handed the same page.
    again = memory.recall("why does the postgres pool run out during the nightly import", session_id="s-1")
    assert again.pages == handed.pages and memory.recalled("s-1") == []
    assert not list(memory.project.journal_dir.glob("*.jsonl"))
    with pytest.raises(InputError, match="give a prompt or a file, not both"):
        memory.recall("pool", file="src/api.py")


def test_recall_leaves_a_page_marked_wrong_out(memory):
    prompt = "why does the postgres pool run out during the nightly import"
    assert memory.recall(prompt).pages == ("gotchas/connection-pool-exhausted-under-load.md",)
    memory.mark("Connection pool exhausted under load", "wrong", reason="the pool is 50 now")
    assert memory.recall(prompt).pages == ()


def test_team_pages_come_back_named_team_with_their_author(memory, tmp_path):
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    status = memory.team_join(bare.as_uri())
    assert status.joined
    # A teammate lands a page on the team's main with the git CLI.
    work = tmp_path / "alice-work"
    git(tmp_path, "clone", "-q", bare.as_uri(), str(work))
    (work / "gotchas").mkdir(exist_ok=True)
    (work / "gotchas" / "vpn-before-deploy.md").write_text(
        "---\ntitle: Connect the VPN before a deploy\ntype: gotcha\nstatus: active\n---\n"
        "# Connect the VPN before a deploy\n\nThe deploy script hangs on the registry without the VPN.\n"
    )
    alice = {"GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.com"}
    env = {**os.environ, **alice, "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.com"}
    for args in (["add", "."], ["commit", "-qm", "share: vpn"], ["push", "-q", "origin", "main"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
    memory.sync_tiers()
    found = memory.search("deploy script hangs on the registry", mode="fts").results
    hit = next(r for r in found if r.path.startswith("team:"))
    assert (hit.path, hit.tier, hit.author) == (
        "team:gotchas/vpn-before-deploy.md",
        "team",
        "Alice <alice@example.com>",
    )
    view = memory.read("team:gotchas/vpn-before-deploy.md")
    assert view.path == "team:gotchas/vpn-before-deploy.md" and "Alice <alice@example.com>" in (view.note or "")
    # The personal wiki holds none of it: the team tier is its own repository.
    assert "vpn" not in git(memory.project.wiki, "ls-tree", "-r", "--name-only", "HEAD")
