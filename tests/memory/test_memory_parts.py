"""`Memory` as a facade over parts: the flows that span parts (a consolidation, then its
distillation, then the automatic sync, whose adoption of another machine's history rewrite
scrubs this machine's files) run because the code that owns each flow calls each step, not
because of an order of base classes. Real git repositories, a bare remote, real SQLite."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from conftest import git
from journals import Session

from wiki_memory.config import home, project_for_store, resolve_project
from wiki_memory.memory import Actor, EditRequest, Memory
from wiki_memory.store import Author

TOKEN = "ghp_" + "Hx4cN8vQ2mR6tY0wL3pZ7sK1dF9gJ5bA8eU2"  # fake, of the real shape
TEST_RUN = "FLASK_ENV=test pytest -q"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(path))
    return path


def auto_sync_on() -> None:
    (home() / "config.toml").write_text("[sync]\nauto = true\n")


def subjects(wiki: Path) -> list[str]:
    return git(wiki, "log", "--format=%s").splitlines()


def a_session_that_ran_the_tests(project, session_id: str) -> None:
    s = Session(project, session_id, start="2026-11-30T08:00:00").start().prompt("Add the orders endpoint")
    s.bash(TEST_RUN, "12 passed in 0.41s").stop("Added.").end().write()


def test_a_consolidation_is_distilled_and_then_synced(code_repo: Path, remote: Path):
    project = resolve_project(code_repo)
    with Memory(project) as memory:
        memory.add_remote("origin", str(remote))
    auto_sync_on()
    a_session_that_ran_the_tests(project, "s-parts-0001")

    with Memory(project) as memory:
        outcome = memory.consolidate("s-parts-0001")

    assert outcome.commit is not None
    # Distilled: the procedure page, in a commit of its own after the session's.
    page = project.wiki / "procedures" / "how-to-run-the-tests.md"
    assert page.is_file() and TEST_RUN in page.read_text(encoding="utf-8")
    log = subjects(project.wiki)
    assert log[0] == "distill: claude-code session sparts00"
    assert git(project.wiki, "rev-parse", "HEAD~1").strip() == outcome.commit
    # Synced after the distillation: the remote has the distilled page's commit too.
    assert git(remote, "rev-parse", "main") == git(project.wiki, "rev-parse", "HEAD")


def test_every_session_consolidated_as_pending_is_distilled(code_repo: Path):
    project = resolve_project(code_repo)
    a_session_that_ran_the_tests(project, "s-pend-0001")
    s = Session(project, "s-pend-0002", agent="codex", start="2026-12-03T09:00:00").start().prompt("Lint")
    s.bash("ruff check src tests", "All checks passed!").stop("Clean.").end().write()

    with Memory(project) as memory:
        outcomes = memory.consolidate_pending()

    assert sorted(o.session_id for o in outcomes) == ["s-pend-0001", "s-pend-0002"]
    log = subjects(project.wiki)
    assert "distill: claude-code session spend000" in log and "distill: codex session spend000" in log
    assert (project.wiki / "procedures" / "how-to-run-the-tests.md").is_file()
    assert (project.wiki / "procedures" / "how-to-lint-the-code.md").is_file()


def test_a_consolidations_automatic_sync_adopts_a_rewrite_and_scrubs_this_machines_files(tmp_path, remote):
    a = Memory(project_for_store(tmp_path / "a" / "wiki"))
    a.add_remote("origin", str(remote))
    a.store().commit({"notes/deploy.md": f"# Deploy\n\nexport GITHUB_TOKEN={TOKEN}\n".encode()},
                     "remember: deploy", Author.agent("codex"))  # fmt: skip
    a.sync()
    b = Memory(project_for_store(tmp_path / "b" / "wiki"))
    b.add_remote("origin", str(remote))
    b.sync()
    # A journal of B's that captured the token, and a session of B's to consolidate.
    b.project.journal_dir.mkdir(parents=True, exist_ok=True)
    captured = b.project.journal_dir / "s-captured.jsonl"
    line = {"kind": "prompt", "session_id": "s-captured", "text": f"connect with {TOKEN}"}
    captured.write_text(json.dumps(line) + "\n")
    a_session_that_ran_the_tests(b.project, "s-later-0001")
    a.forget([TOKEN])
    a.sync(replace_remote_history=True)
    auto_sync_on()
    stamp = b.wiki / ".git" / "wiki-memory" / "history-rewritten"
    assert not stamp.exists()

    b.consolidate("s-later-0001")  # its automatic sync adopts A's rewrite

    assert TOKEN.encode() not in captured.read_bytes() and "[forgotten]" in captured.read_text()
    assert stamp.exists()  # other processes of B's reopen the rewritten wiki
    assert git(remote, "rev-parse", "main") == git(b.wiki, "rev-parse", "HEAD")
    assert subjects(b.wiki)[0].startswith("distill: ")
    a.close()
    b.close()


def test_an_edit_request_is_the_edit_memory_edit_makes(tmp_path):
    with Memory(project_for_store(tmp_path / "wiki")) as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision")
        actor = Actor("codex", "s-edit-1")
        by_keywords = memory.edit("Retry policy", "find_replace", find="twice", replace="three times", actor=actor)
        request = EditRequest("Retry policy", "append", text="Except for 429s.", actor=actor)
        by_request = memory.apply_edit(request)

        assert by_keywords.replaced == 1 and by_request.commit is not None
        body = memory.read("Retry policy").page.body
        assert "Retry three times, then fail." in body and body.rstrip().endswith("Except for 429s.")
        assert subjects(memory.wiki)[:2] == [
            "update: decisions/retry-policy (append)",
            "update: decisions/retry-policy (find_replace)",
        ]
    # The facade's `edit` keeps its keyword signature; the request carries the same fields.
    fields = list(inspect.signature(EditRequest).parameters)
    assert fields[1:] == list(inspect.signature(Memory.edit).parameters)[2:]
