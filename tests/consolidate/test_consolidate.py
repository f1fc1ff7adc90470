"""Extractive consolidation from crafted journals: verdicts, pages, idempotence, pending, concurrency."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import consolidate_pending, consolidate_session, git
from journals import PlanItem, Session, age, set_config

from wiki_memory.capture import journal
from wiki_memory.config import resolve_project
from wiki_memory.consolidate import state
from wiki_memory.consolidate.extract import summarize
from wiki_memory.consolidate.run import read_state
from wiki_memory.consolidate.session_sources import load_session
from wiki_memory.store import Author, Store


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "fix/jwt-refresh")
    return resolve_project(code_repo)


def section(text: str, name: str) -> str:
    """The body of one `## name` section of a page."""
    part = text.split(f"## {name}\n", 1)[1]
    return part.split("\n## ", 1)[0]


def wiki_file(project, rel: str) -> str:
    return (project.wiki / rel).read_text(encoding="utf-8")


def consolidated(project, sid: str) -> tuple[str, str]:
    outcome = consolidate_session(project, sid)
    assert outcome.status == "committed", outcome
    session_path, handoff_path = outcome.pages[:2]
    return wiki_file(project, session_path), wiki_file(project, handoff_path)


def test_a_failure_later_fixed_is_done_and_one_never_fixed_is_failed_and_open(project):
    s = Session(project, "s-fixed-0001").start().prompt("Fix the flaky login test (401 one run in ten)")
    s.bash("pytest tests/test_login.py -k refresh", "E   AssertionError: 401 != 200\n1 failed", error=True)
    s.edit("src/auth/client.py")
    s.bash("pytest tests/test_login.py -k refresh", "1 passed")
    s.bash("make typecheck", "src/auth/admin.py:3: error: Incompatible return value type", error=True)
    s.bash("make typecheck", "src/auth/admin.py:3: error: Incompatible return value type", error=True)
    s.stop("Fixed the refresh order.").end().write()
    session_page, handoff = consolidated(project, "s-fixed-0001")

    done, failed, open_items = (
        section(handoff, n) for n in ("Done", "Failed or abandoned approaches", "Open items / next steps")
    )
    assert "pytest tests/test_login.py -k refresh" in done
    assert "AssertionError: 401 != 200" in done and "src/auth/client.py" in done
    assert "pytest" not in failed and "pytest" not in open_items
    assert "`make typecheck` failed" in failed and "(2 times)" in failed
    assert "Incompatible return value type" in failed
    # Told once, as a failure: not again as an open item.
    assert "make typecheck" not in open_items
    assert "Fix the flaky login test" in section(handoff, "Goal")
    assert "`src/auth/client.py`" in section(handoff, "Files touched")
    assert "[[sessions/2026/11/2026-11-30-claude-code-sfixed00.md]]" in section(handoff, "Where to look")
    # The session page keeps every command with its outcome.
    commands = section(session_page, "Commands")
    assert commands.count("`pytest tests/test_login.py -k refresh`") == 2
    assert "(failed)" in commands and "(ok)" in commands


def test_a_broader_run_that_passes_fixes_a_narrow_failure(project):
    s = Session(project, "s-broad-0001").start().prompt("Make the parser accept trailing commas")
    s.bash("cd src && python -m pytest tests/test_parser.py::test_trailing", "FAILED test_trailing", error=True)
    s.edit("src/parser.py").bash("python -m pytest", "120 passed").stop("Done.").end().write()
    summary = summarize(load_session(journal.journal_file(project.journal_dir, "s-broad-0001")))
    assert not summary.failed
    assert any("failed at first" in line and "then `python -m pytest` passed" in line for line in summary.done)
    # A bare `make` (another target) passing says nothing about `make lint`.
    t = Session(project, "s-broad-0002").start().prompt("Clean up the lint errors")
    t.bash("make lint", "src/a.py:1: F401 unused import", error=True).bash("make", "built").end().write()
    other = summarize(load_session(journal.journal_file(project.journal_dir, "s-broad-0002")))
    assert other.failed == ("`make lint` failed: src/a.py:1: F401 unused import",)


def test_probing_commands_that_fail_are_not_failed_approaches(project):
    s = Session(project, "s-probe-0001").start().prompt("Where is the config loaded?")
    s.bash("grep -rn load_config src", "", error=True).bash("ls does-not-exist", "No such file", error=True)
    s.bash("git status", "fatal: not a git repository", error=True)
    s.stop("It is loaded in src/config.py.").end().write()
    summary = summarize(load_session(journal.journal_file(project.journal_dir, "s-probe-0001")))
    assert summary.failed == ()
    assert not [line for line in summary.open if "failing" in line]


def test_pending_plan_items_of_every_agent_are_open(project):
    # Claude Code's TodoWrite (the whole list each time).
    s = Session(project, "s-todo-0001").start().prompt("Add rate limiting to the API")
    s.todo(("Write the limiter", "in_progress"), ("Wire it into the router", "pending"))
    s.todo(("Write the limiter", "completed"), ("Wire it into the router", "pending"), ("Document it", "pending"))
    s.stop("The limiter is written.").end().write()
    # Claude Code's TaskCreate / TaskUpdate (one item at a time, by id).
    t = Session(project, "s-task-0001").start().prompt("Split the settings module")
    t.tool("TaskCreate", "Move the loaders", plan=(PlanItem("Move the loaders", "pending", "1"),))
    t.tool("TaskCreate", "Update the imports", plan=(PlanItem("Update the imports", "pending", "2"),))
    t.tool("TaskCreate", "Delete the old module", plan=(PlanItem("Delete the old module", "pending", "3"),))
    t.tool("TaskUpdate", "1", plan=(PlanItem("", "completed", "1"),))
    t.tool("TaskUpdate", "2", plan=(PlanItem("", "in_progress", "2"),))
    t.tool("TaskUpdate", "3", plan=(PlanItem("", "deleted", "3"),))
    t.stop("Loaders moved.").end().write()
    # Codex's update_plan.
    c = Session(project, "s-plan-0001", agent="codex").start().prompt("Port the CLI to click")
    c.tool(
        "update_plan",
        "2 plan steps",
        "Plan updated",
        plan=(PlanItem("Port the commands", "completed"), PlanItem("Port the tests", "pending")),
    )
    c.stop("Commands ported.").end().write()

    todo = summarize(load_session(journal.journal_file(project.journal_dir, "s-todo-0001")))
    # The pending steps of one plan are one open item, in plan order.
    assert "[pending] Wire it into the router; Document it" in todo.open
    assert "[completed] Write the limiter" in todo.done
    task = summarize(load_session(journal.journal_file(project.journal_dir, "s-task-0001")))
    assert "[in progress] Update the imports" in task.open
    assert "[completed] Move the loaders" in task.done
    assert not any("Delete the old module" in line for line in task.open + task.done)
    plan = summarize(load_session(journal.journal_file(project.journal_dir, "s-plan-0001")))
    assert "[pending] Port the tests" in plan.open and "[completed] Port the commands" in plan.done


def test_final_message_questions_and_next_steps_and_a_mid_task_end_are_open(project):
    s = Session(project, "s-final-0001").start().prompt("Migrate the users table")
    s.edit("migrations/0042_users.py").stop(
        "I wrote migration 0042.\n\n## Next steps\n- Run it against staging\n\nShould I drop the old column too?"
    )
    s.prompt("Also add an index on email").edit("migrations/0043_email_index.py")
    s.bash("alembic upgrade head", "").write()  # no stop, no end: the agent was killed mid-task
    summary = summarize(load_session(journal.journal_file(project.journal_dir, "s-final-0001")))
    # The answer belongs to the first request, not the last: no "final report"; the last request
    # was being worked on when the agent died.
    assert not any(line.startswith("Final report") for line in summary.done)
    assert any("stopped mid-task" in line and "alembic upgrade head" in line for line in summary.open)
    # It names the request it was working on: the last one, left unfinished.
    assert any(line.startswith("The session stopped mid-task on “Also add an index on email”") for line in summary.open)
    s2 = Session(project, "s-final-0002").start().prompt("Migrate the users table")
    s2.edit("migrations/0042_users.py").stop(
        "I wrote migration 0042.\n\n## Next steps\n- Run it against staging\n\nShould I drop the old column too?"
    )
    s2.end().write()
    summary2 = summarize(load_session(journal.journal_file(project.journal_dir, "s-final-0002")))
    assert "Stated next step: Run it against staging" in summary2.open
    assert "Question left for the user: Should I drop the old column too?" in summary2.open
    assert "Final report: I wrote migration 0042." in summary2.done


def test_a_session_killed_in_a_tool_call_says_so(project):
    s = Session(project, "s-killed-0001").start().prompt("Upgrade the ORM")
    s.edit("pyproject.toml").tool("Bash", "pip install -U sqlalchemy", no_result=True).write()
    summary = summarize(load_session(journal.journal_file(project.journal_dir, "s-killed-0001")))
    assert any("stopped mid-task" in line and "pip install -U sqlalchemy" in line for line in summary.open)
    # The call that never got its result was running when it stopped.
    assert "The session stopped mid-task on “Upgrade the ORM”, while `Bash pip install -U sqlalchemy` was running" in (
        " ".join(summary.open)
    )


def test_consolidation_commits_both_pages_once_and_is_idempotent(project):
    Session(project, "s-idem-0001").start().prompt("Rename the billing module").edit("src/billing.py").bash(
        "pytest", "3 passed"
    ).stop("Renamed.").end().write()
    first = consolidate_session(project, "s-idem-0001")
    assert first.status == "committed" and len(first.pages) == 2
    log = git(project.wiki, "log", "--format=%an|%s|%b")
    assert log.count("consolidate: claude-code session sidem000") == 1
    assert "Session-Id: s-idem-0001" in log and "Agent: claude-code" in log
    shown = git(project.wiki, "show", "--name-only", "--format=", first.commit).split()
    assert sorted(shown) == sorted(first.pages)  # both pages in one commit
    before = {p: wiki_file(project, p) for p in first.pages}

    again = consolidate_session(project, "s-idem-0001")
    assert again.status == "already" and again.commit == first.commit
    forced = consolidate_session(project, "s-idem-0001", force=True)
    assert forced.status == "unchanged" and forced.commit is None  # same pages: nothing to commit
    assert git(project.wiki, "log", "--format=%s").count("consolidate:") == 1
    assert {p: wiki_file(project, p) for p in first.pages} == before
    git(project.wiki, "fsck", "--strict")


def test_a_resumed_session_updates_its_pages_in_place(project):
    s = Session(project, "s-resume-0001").start().prompt("Speed up the importer").edit("src/importer.py")
    s.stop("First pass done.").end().write()
    first = consolidate_session(project, "s-resume-0001")
    s.start("resume").prompt("Now cache the parsed rows").edit("src/cache.py").stop("Cached.").end().write()
    second = consolidate_session(project, "s-resume-0001")
    assert second.status == "committed" and second.pages == first.pages
    handoff = wiki_file(project, second.handoff)
    assert "`src/cache.py`" in handoff and "`src/importer.py`" in handoff
    assert "Now cache the parsed rows" in handoff  # a later request
    assert len(list((project.wiki / "handoffs").rglob("*.md"))) == 1


def test_nothing_substantive_makes_no_pages_and_hides_no_handoff(project):
    Session(project, "s-real-0001").start().prompt("Add CSV export").edit("src/export.py").stop(
        "Export added."
    ).end().write()
    consolidate_session(project, "s-real-0001")
    Session(project, "s-empty-0001", start="2026-11-30T09:00:00").start().end().write()
    Session(project, "s-hello-0001", start="2026-11-30T09:30:00").start().prompt("hi").stop(
        "Hello! How can I help?"
    ).end().write()
    assert consolidate_session(project, "s-empty-0001").status == "empty"
    assert consolidate_session(project, "s-hello-0001").status == "empty"
    assert read_state(project, journal.journal_file(project.journal_dir, "s-empty-0001"))["status"] == "empty"
    assert git(project.wiki, "log", "--format=%s").count("consolidate:") == 1
    from wiki_memory.consolidate.handoff import handoff_for_next_session

    view = handoff_for_next_session(project, session_id="new-session")
    assert view is not None and "Goal: Add CSV export" in view.text


def test_pending_finishes_a_killed_consolidation(project):
    """SIGKILL `consolidate --session` at several points; `--pending` always ends in the same state."""
    for n, delay in enumerate((0.05, 0.3, 0.6, 1.0)):
        sid = f"s-kill-{n:04d}"
        Session(project, sid, start=f"2026-11-30T1{n}:00:00").start().prompt(f"Task number {n}").edit(
            f"src/task{n}.py"
        ).bash("pytest", "ok").stop("Done.").end().write()
        process = subprocess.Popen(
            [sys.executable, "-m", "wiki_memory", "--project", str(project.root), "consolidate", "--session", sid],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
    outcomes = consolidate_pending(project, settle=0)
    finished = {o.session_id for o in outcomes if o.status in ("committed", "unchanged")}
    for n in range(4):
        sid = f"s-kill-{n:04d}"
        state = read_state(project, journal.journal_file(project.journal_dir, sid))
        assert state is not None and state["status"] in ("committed", "unchanged"), (sid, outcomes)
        assert (project.wiki / state["handoff"]).is_file()
        assert f"Task number {n}" in wiki_file(project, state["handoff"])
    assert finished <= {f"s-kill-{n:04d}" for n in range(4)}
    assert consolidate_pending(project, settle=0) == []  # nothing left
    git(project.wiki, "fsck", "--strict")
    assert git(project.wiki, "status", "--porcelain") == ""


def test_concurrent_session_ends_of_two_sessions(project):
    for sid, task, hour in (("s-par-a001", "Refactor the cache", "08"), ("s-par-b001", "Document the API", "09")):
        Session(project, sid, start=f"2026-11-30T{hour}:00:00").start().prompt(task).edit(f"src/{sid}.py").stop(
            "Done."
        ).end().write()
    project.wiki.parent.mkdir(parents=True, exist_ok=True)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wiki_memory",
                "--project",
                str(project.root),
                "consolidate",
                "--session",
                sid,
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sid in ("s-par-a001", "s-par-b001")
    ]
    for process in processes:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert '"status": "committed"' in out
    subjects = git(project.wiki, "log", "--format=%s").splitlines()
    assert sum(s.startswith("consolidate:") for s in subjects) == 2
    git(project.wiki, "fsck", "--strict")
    from wiki_memory.consolidate.handoff import handoff_for_next_session

    view = handoff_for_next_session(project, session_id="someone-else")
    assert "Document the API" in view.text and "Refactor the cache" in view.text
    assert view.handoffs[0].endswith("-sparb001.md")  # the newest first


def test_after_session_consolidates_in_a_detached_process(project):
    from wiki_memory.hook import startup

    Session(project, "s-bg-0001").start().prompt("Add a health endpoint").edit("src/health.py").stop(
        "Added /health."
    ).end().write(age_seconds=0)
    startup.after_session(project, "claude-code", "s-bg-0001")
    state_file = state.state_dir(project) / "s-bg-0001.json"
    deadline = time.time() + 30
    while not state_file.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert state_file.exists(), (Path(os.environ["WIKI_MEMORY_HOME"]) / "logs" / "consolidate.log").read_text()
    handoff = read_state(project, journal.journal_file(project.journal_dir, "s-bg-0001"))["handoff"]
    assert "Add a health endpoint" in wiki_file(project, handoff)


def test_background_start_runs_in_its_own_session():
    # The hook may be killed with its process group; the consolidation must not be.
    project = resolve_project(os.getcwd())
    from wiki_memory.hook import background

    pid = background.spawn(project, ["--version"])
    assert pid is not None
    try:
        assert os.getsid(pid) == pid != os.getsid(0)
    except ProcessLookupError:
        pass  # already finished: `--version` is quick
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def test_settled_journals_only(project):
    Session(project, "s-fresh-0001").start().prompt("Live session").edit("a.py").write(age_seconds=0)
    Session(project, "s-old-0001").start().prompt("Old session").edit("b.py").end().write(age_seconds=30)
    names = [p.name for p in state.pending_journals(project, settle=5)]
    assert names == ["s-old-0001.jsonl"]  # the live one is mid-turn: left alone
    assert [p.name for p in state.pending_journals(project, settle=5, exclude=("s-old-0001",))] == []
    consolidate_session(project, "s-old-0001")
    assert state.pending_journals(project, settle=5) == []
    # A line appended after consolidation makes the journal pending again.
    Session(project, "s-old-0001").prompt("One more thing").write(age_seconds=10)
    assert [p.name for p in state.pending_journals(project, settle=5)] == ["s-old-0001.jsonl"]
    age(journal.journal_file(project.journal_dir, "s-fresh-0001"), 60)
    assert len(state.pending_journals(project, settle=5)) == 2


def test_a_session_whose_turn_is_over_need_not_settle(project):
    def fresh() -> list[str]:
        return [p.name for p in state.pending_journals(project, settle=5)]

    # Ended, even when asynchronous hooks (Claude Code's PostToolUse) append after the end.
    Session(project, "s-ended-0001").start().prompt("Just ended").stop("Done.").end().edit("c.py").write(age_seconds=0)
    # Stopped: the agent answered and waits (or was closed before its SessionEnd hook ran).
    Session(project, "s-stopped-0001").start().prompt("Answered").edit("d.py").stop("Done.").write(age_seconds=0)
    # Mid-turn, and resumed after an end: live, left alone until they settle.
    Session(project, "s-busy-0001").start().prompt("Working").stop("One.").prompt("Two").edit("e.py").write(
        age_seconds=0
    )
    Session(project, "s-resumed-0001").start().prompt("A").end().start("resume").prompt("B").write(age_seconds=0)
    assert sorted(fresh()) == ["s-ended-0001.jsonl", "s-stopped-0001.jsonl"]


def test_memory_the_session_wrote_or_read_is_where_to_look(project):
    s = Session(project, "s-mem-0001").start().prompt("Why does the login retry fail?")
    s.tool("mcp__wiki-memory__search", "login retry", '[{"path": "decisions/retry-policy.md", "score": 0.8}]')
    s.tool("mcp__wiki-memory__read", "decisions/retry-policy.md", "# Retry policy\nRetry twice.")
    s.tool(
        "mcp__wiki-memory__write",
        "JWT refresh must happen before the retry",
        '{"path": "gotchas/jwt-refresh-must-happen-before-the-retry.md", "commit": "abc123"}',
    )
    s.bash('wiki-memory write -t "Login flake notes" --type note --body x', "notes/login-flake-notes.md")
    s.stop("Recorded the cause as a gotcha.").end().write()
    _, handoff = consolidated(project, "s-mem-0001")
    where = section(handoff, "Where to look")
    assert "[[gotchas/jwt-refresh-must-happen-before-the-retry.md]]" in where
    assert "[[notes/login-flake-notes.md]]" in where and "[[decisions/retry-policy.md]]" in where
    done = section(handoff, "Done")
    assert "Recorded in memory: gotchas/jwt-refresh-must-happen-before-the-retry.md, notes/login-flake-notes.md" in done
    assert "decisions/retry-policy.md" not in done  # read, not written


def test_a_consolidation_commit_syncs_when_auto_sync_is_on(project, tmp_path):
    from conftest import open_store

    from wiki_memory.sync import add_remote

    remote = tmp_path / "team-wiki.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    store = open_store(project)
    add_remote(store, "origin", str(remote))
    store.close()
    set_config("[sync]\nauto = true\n")
    Session(project, "s-sync-0001").start().prompt("Document the deploy").edit("docs/deploy.md").stop(
        "Documented."
    ).end().write()
    outcome = consolidate_session(project, "s-sync-0001")
    assert git(remote, "log", "--format=%s", "main").splitlines()[0] == "consolidate: claude-code session ssync000"
    assert outcome.handoff in git(remote, "ls-tree", "-r", "--name-only", "main")


def test_a_session_consolidated_after_its_stop_is_no_longer_in_progress_after_its_end(project):
    """The pending worker may consolidate a session after its Stop, before its SessionEnd;
    once the end is consolidated too, the handoff no longer says it may still be running."""
    from wiki_memory.consolidate.handoff import handoff_for_next_session

    s = Session(project, "s-stop-0001").start().prompt("Add the CSV export").edit("src/export.py")
    s.stop("Export added.").write()
    first = consolidate_session(project, "s-stop-0001")
    assert first.status == "committed"
    assert "in_progress: true" in wiki_file(project, first.handoff)
    assert "no session end was recorded" in handoff_for_next_session(project, session_id="next").text
    # A key of a person's own, added between the two, is not the consolidator's to drop.
    store = Store(project.wiki)
    store.write(store.read(first.handoff).with_meta(reviewed_by="Dev"), Author("Dev", "dev@example.com"))
    s.end().write()
    second = consolidate_session(project, "s-stop-0001")
    assert second.status == "committed" and second.handoff == first.handoff
    handoff = wiki_file(project, second.handoff)
    assert "in_progress" not in handoff and "reviewed_by: Dev" in handoff
    assert "no session end was recorded" not in handoff_for_next_session(project, session_id="next").text
