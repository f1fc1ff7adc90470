"""Distillation with no LLM: procedures, gotchas and the user's statements, from crafted
journals through the memory library (real git, real SQLite), and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.consolidate import context_build
from wiki_memory.consolidate.handoff import handoff_for_next_session
from wiki_memory.memory import Memory
from wiki_memory.pages import parse_page


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "config.py").write_text("DB_URL = None\n")
    (code_repo / "src" / "api.py").write_text("def orders():\n    return []\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def page(project, rel: str) -> tuple[dict, str]:
    """(front matter, body) of a page as wiki-memory reads it."""
    found = parse_page((project.wiki / rel).read_text(encoding="utf-8"), rel)
    return dict(found.meta), found.body


def durable(project) -> list[str]:
    return sorted(
        str(p.relative_to(project.wiki))
        for p in project.wiki.rglob("*.md")
        if p.parts[len(project.wiki.parts)] in ("procedures", "gotchas", "decisions", "preferences")
    )


def subjects(project) -> list[str]:
    return git(project.wiki, "log", "--format=%s").splitlines()


def test_a_command_that_worked_makes_one_page_per_purpose_updated_in_place(project):
    s = Session(project, "s-proc-0001", start="2026-11-30T08:00:00").start().prompt("Add the orders endpoint")
    line = "cd src && source ../.venv/bin/activate && cd .. && FLASK_ENV=test pytest -q"
    s.edit("src/api.py").bash(line, "12 passed in 0.41s")
    s.bash("ruff check src tests", "All checks passed!").stop("Added.").end().write()
    consolidate_session(project, "s-proc-0001")
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert meta["distilled"] == "procedure" and meta["purpose"] == "tests" and meta["evidence"] == 1
    assert meta["sources"] == ["claude-code:sproc000"]
    assert meta["commands"] == [
        {"command": "FLASK_ENV=test pytest -q", "dir": ".", "env": ["source ../.venv/bin/activate"],
         "last_worked": "2026-11-30", "by": "claude-code", "session": "claude-code:sproc000"},
    ]  # fmt: skip
    assert "Run `FLASK_ENV=test pytest -q` in `.`, after `source ../.venv/bin/activate`." in body
    assert (project.wiki / "procedures/how-to-lint-the-code.md").exists()

    # A later session, another agent, a changed command: the same page, the new command first.
    s = Session(project, "s-proc-0002", agent="codex", start="2026-12-03T09:00:00").start().prompt("Speed it up")
    s.edit("src/api.py").bash("python -m pytest -q -x", "12 passed in 0.30s").stop("Faster.").end().write()
    consolidate_session(project, "s-proc-0002")
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert [c["command"] for c in meta["commands"]] == ["python -m pytest -q -x", "FLASK_ENV=test pytest -q"]
    assert body.splitlines()[2] == "Run `python -m pytest -q -x` in `.`."
    assert "It last worked on 2026-12-03 (codex, codex:sproc000)." in body
    assert meta["sources"] == ["claude-code:sproc000", "codex:sproc000"] and meta["evidence"] == 2
    assert subjects(project).count("distill: codex session sproc000") == 1
    assert len(list((project.wiki / "procedures").glob("*.md"))) == 2  # tests and lint, no new page


def test_a_failure_alone_or_a_default_run_makes_no_page_and_a_recorded_command_failing_again_is_noted(project):
    s = Session(project, "s-fail-0001").start().prompt("Run the suite")
    s.bash("make test", "make: *** No rule to make target 'test'.  Stop.", error=True)
    s.bash("python -m pytest -q", "3 passed").bash("npm test", "5 passing")  # what everyone tries first
    s.stop("Ran them.").end().write()
    consolidate_session(project, "s-fail-0001")
    assert durable(project) == []

    Session(project, "s-fail-0002", start="2026-12-01T08:00:00").start().prompt("Test").bash(
        "tox -e py312", "3 passed"
    ).stop("ok").end().write()
    consolidate_session(project, "s-fail-0002")
    for sid, day in (("s-again-01", "2026-12-02"), ("s-later-01", "2026-12-03")):
        s = Session(project, sid, start=f"{day}T08:00:00").start().prompt("Test again")
        s.bash("tox -e py312", "ImportError: cannot import name 'orders' from 'src.api'", error=True).stop("Broken.")
        s.end().write()
        consolidate_session(project, sid)
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert [c["command"] for c in meta["commands"]] == ["tox -e py312"]  # the failure never replaced it
    assert meta["failures"][0]["times"] == 2
    assert "`tox -e py312` failed (2 times): ImportError: cannot import name 'orders' from 'src.api'" in body
    # A default run that works updates the page that exists.
    Session(project, "s-fail-0005", start="2026-12-04T08:00:00").start().prompt("Test").bash(
        "python -m pytest -q", "3 passed"
    ).stop("ok").end().write()
    consolidate_session(project, "s-fail-0005")
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert [c["command"] for c in meta["commands"]] == ["python -m pytest -q", "tox -e py312"]


def test_narrow_runs_are_parts_and_piped_or_outside_runs_are_not_procedures(project):
    s = Session(project, "s-narrow-001").start().prompt("Check one test")
    s.bash("cd tests && pytest test_api.py::test_orders -q", "1 passed")
    s.bash("pytest -q -k orders", "1 failed", error=True)  # a part failing says nothing of the suite
    s.bash("pytest -q 2>&1 | tail -3", "=== 2 failed, 9 passed in 1.2s ===")  # exit 0: tail's
    s.bash("cd /opt/other && npm test", "5 passing")
    s.bash("npm run build:prod 2>&1 | tail -5", "webpack compiled successfully")  # the output vouches
    s.stop("Checked.").end().write()
    consolidate_session(project, "s-narrow-001")
    assert durable(project) == ["procedures/how-to-build-the-project.md", "procedures/how-to-run-the-tests.md"]
    meta, _ = page(project, "procedures/how-to-build-the-project.md")
    assert [c["command"] for c in meta["commands"]] == ["npm run build:prod"]
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert [(c["command"], c["dir"], c.get("part")) for c in meta["commands"]] == [
        ("pytest test_api.py::test_orders -q", "tests", True)
    ]
    assert meta["failures"] == []
    assert body.splitlines()[2] == "Run one part of it: `pytest test_api.py::test_orders -q` in `tests`."


def test_a_piped_run_that_printed_nothing_passed_unless_a_grep_hid_its_output(project):
    # Nothing came through `tail`: the command printed nothing at all, and a failure says
    # what went wrong (`tsc` and a script that writes files print nothing when they work).
    s = Session(project, "s-quiet-0001").start().prompt("Check the types and regenerate the docs")
    s.bash("npx tsc -p tsconfig.app.json --noEmit 2>&1 | tail -20", "")
    s.bash("python scripts/gen_docs.py 2>&1 | head -5", "")
    s.bash("make lint 2>&1 | grep -i error", "")  # grep found nothing: the run's output is unknown
    s.stop("Checked.").end().write()
    consolidate_session(project, "s-quiet-0001")
    scripts, types = "procedures/how-to-run-the-projects-scripts.md", "procedures/how-to-type-check-the-code.md"
    assert durable(project) == [scripts, types]
    meta, _ = page(project, types)
    assert [c["command"] for c in meta["commands"]] == ["npx tsc -p tsconfig.app.json --noEmit"]
    meta, _ = page(project, scripts)
    assert [c["command"] for c in meta["commands"]] == ["python scripts/gen_docs.py"]


def _keyerror_session(project, sid: str, *, agent: str, day: str, line: int) -> None:
    s = Session(project, sid, agent=agent, start=f"{day}T08:00:00").start().prompt("Make the orders test pass")
    s.bash(
        "python -m pytest -q",
        f'  File "{project.root}/src/config.py", line {line}, in load\n'
        f"E   KeyError: 'SHOP_DB_URL'\n1 failed in 0.{line}s",
        error=True,
    )
    s.edit("src/config.py")
    s.stop("It failed because SHOP_DB_URL was not set in the test environment; config.py now defaults it.")
    s.bash("python -m pytest -q", "4 passed in 0.2s").stop("Fixed.").end().write()


def test_a_failure_fixed_by_an_edit_is_a_gotcha_and_the_same_error_again_updates_it(project):
    _keyerror_session(project, "s-gotcha-001", agent="claude-code", day="2026-11-30", line=12)
    consolidate_session(project, "s-gotcha-001")
    path = "gotchas/keyerror-shop-db-url-when-running-the-tests.md"
    meta, body = page(project, path)
    blob = git(project.root, "hash-object", "src/config.py").strip()
    assert meta["signature"] == "KeyError: 'SHOP_DB_URL'" and meta["evidence"] == 1
    assert meta["anchors"] == [{"path": "src/config.py", "blob": blob}]
    assert "**Fix**: changed `src/config.py`." in body
    assert "**Cause, as the agent explained it**: It failed because SHOP_DB_URL was not set" in body
    assert "**Verified**: `python -m pytest -q` passed afterwards." in body

    # Another agent, another day, other line numbers and timings: the same page.
    _keyerror_session(project, "s-gotcha-002", agent="codex", day="2026-12-04", line=31)
    consolidate_session(project, "s-gotcha-002")
    assert len(list((project.wiki / "gotchas").glob("*.md"))) == 1
    meta, body = page(project, path)
    assert meta["evidence"] == 2 and meta["sources"] == ["claude-code:sgotcha0", "codex:sgotcha0"]
    assert [o["session"] for o in meta["occurrences"]] == ["claude-code:sgotcha0", "codex:sgotcha0"]
    message = git(project.wiki, "log", "-1", "--format=%B", "--grep", "distill: codex")
    assert f"updated {path} (duplicate: the same signature)" in message


@pytest.mark.parametrize(
    "failure,between",
    [
        ("E   AssertionError: assert 9 == 10", "edit"),  # the logic under test
        ("src/api.py:3:1: F401 'os' imported but unused", "edit"),  # a linter
        ('src/api.py:4: error: Incompatible return value type (got "int", expected "str")  [return-value]', "edit"),
        ("exit status 1", "edit"),  # no telling line
        ("ConnectionResetError: [Errno 104] Connection reset by peer", "nothing"),  # passed again, no edit: flaky
        ("ModuleNotFoundError: No module named 'src.orders'", "new-file"),  # the session's own new code
    ],
)
def test_failures_that_make_no_gotcha(project, failure, between):
    s = Session(project, "s-refuse-01").start().prompt("Work on orders")
    if between == "new-file":
        s.tool("Write", f"{project.root}/src/orders.py", "create", files=(f"{project.root}/src/orders.py",))
    s.bash("python -m pytest -q", failure, error=True)
    if between == "edit":
        s.edit("src/api.py")
    elif between == "new-file":
        s.tool("Write", f"{project.root}/src/orders.py", "update", files=(f"{project.root}/src/orders.py",))
    s.bash("python -m pytest -q", "4 passed").stop("Done.").end().write()
    consolidate_session(project, "s-refuse-01")
    assert not (project.wiki / "gotchas").exists() or not list((project.wiki / "gotchas").glob("*.md"))


def test_the_users_preferences_and_decisions_in_their_words_and_what_is_refused(project):
    s = Session(project, "s-state-001").start()
    s.prompt(
        "Add CSV export. From now on, use pnpm instead of npm. Can you always run the tests first? "
        "Never do that again! We use Postgres, not SQLite.\n```\n# always use tabs\n```"
    )
    s.prompt("If the build fails, never retry. Always be careful. Never commit .env files or secrets to the repo.")
    s.prompt("Let's use a dict here.")
    s.edit("src/api.py").stop("Done.").end().write()
    consolidate_session(project, "s-state-001")
    assert durable(project) == [
        "decisions/we-use-postgres-not-sqlite.md",
        "preferences/from-now-on-use-pnpm-instead-of-npm.md",
        "preferences/never-commit-env-files-or-secrets-to-the-repo.md",
    ]
    meta, body = page(project, "decisions/we-use-postgres-not-sqlite.md")
    assert meta["statement"] == "We use Postgres, not SQLite" and meta["names"] == ["postgres"]
    assert meta["negated"] == ["sqlite"] and meta["sources"] == ["claude-code:sstate00"]
    assert "> We use Postgres, not SQLite" in body
    # Preferences are handed to the next session.
    text = handoff_for_next_session(project, session_id="next").text
    assert "From now on, use pnpm instead of npm" in text


def test_a_decision_the_user_reverses_is_superseded_and_never_handed_out(project):
    Session(project, "s-rev-0001").start().prompt("Store orders. Let's go with SQLite for the database.").edit(
        "src/api.py"
    ).stop("Stored.").end().write()
    consolidate_session(project, "s-rev-0001")
    old = "decisions/lets-go-with-sqlite-for-the-database.md"
    assert page(project, old)[0]["status"] == "active"
    Session(project, "s-rev-0002", start="2026-12-01T08:00:00").start().prompt(
        "Actually we use Postgres for the database, not SQLite."
    ).edit("src/config.py").stop("Switched.").end().write()
    consolidate_session(project, "s-rev-0002")
    new = "decisions/we-use-postgres-for-the-database-not-sqlite.md"
    meta = page(project, old)[0]
    assert (meta["status"], meta["superseded_by"]) == ("superseded", new)
    assert page(project, new)[0]["supersedes"] == [old]
    message = git(project.wiki, "log", "-1", "--format=%B", "--grep", "supersede:")
    assert message.startswith(f"supersede: {old[:-3]} by {new[:-3]}")
    assert 'Reason: the user said "We use Postgres for the database, not SQLite" in claude-code:srev0002' in message
    with Memory(project) as memory:
        assert old not in [r.path for r in memory.search("which database do we use").results]
        assert old in [r.path for r in memory.search("which database do we use", status="superseded").results]
        context_build.refresh(project, memory.store(), memory.index)
    text = handoff_for_next_session(project, session_id="x").text or ""
    assert old not in text and new in text


def test_a_page_a_person_edited_is_never_rewritten(project):
    Session(project, "s-hand-0001").start().prompt("Test").bash("uv run pytest -q", "3 passed").stop("ok").end().write()
    consolidate_session(project, "s-hand-0001")
    path = project.wiki / "procedures/how-to-run-the-tests.md"
    path.write_text(path.read_text().replace("Run `uv run pytest -q`", "Run `uv run pytest -q` (needs Docker running)"))
    Session(project, "s-hand-0002", start="2026-12-02T08:00:00").start().prompt("Test").bash(
        "tox -e py312", "3 passed"
    ).stop("ok").end().write()
    consolidate_session(project, "s-hand-0002")
    meta, body = page(project, "procedures/how-to-run-the-tests.md")
    assert "(needs Docker running)" in body and body.rstrip().endswith(
        "- 2026-12-02: `tox -e py312` in `.` worked (claude-code)"
    )
    assert [c["command"] for c in meta["commands"]] == ["tox -e py312", "uv run pytest -q"]
    log = git(project.wiki, "log", "--format=%an %s")
    assert "Test Person edit: procedures/how-to-run-the-tests.md" in log  # the person's words, as theirs


@pytest.mark.usefixtures("embedding_model")
def test_a_statement_close_to_an_existing_page_updates_that_page(project):
    with Memory(project) as memory:
        memory.write("Always run ruff before you commit", "Lint with ruff before every commit.", "preference")
    Session(project, "s-near-0001").start().prompt("Always run ruff before committing.").edit("src/api.py").stop(
        "ok"
    ).end().write()
    consolidate_session(project, "s-near-0001")
    assert durable(project) == ["preferences/always-run-ruff-before-you-commit.md"]
    meta, _ = page(project, "preferences/always-run-ruff-before-you-commit.md")
    assert "claude-code:snear000" in meta["sources"]
