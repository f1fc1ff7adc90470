"""The goal of a session opened by a slash command: its argument is the user's request only when
it is words; an argument of identifiers belongs to the command ("Ran /erk:plan-implement 8371"),
and a later message never stands in for the request the command made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import consolidate_session, git
from handoffs import handoff_of
from hooked import Hooked

from wiki_memory.capture.prompts import in_words
from wiki_memory.cli import main
from wiki_memory.config import resolve_project


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


def goal_of(handoff: str) -> str:
    """The goal paragraph of a handoff page (without its later requests)."""
    body = handoff.split("## Goal\n", 1)[1].split("\n## ", 1)[0].strip()
    return body.split("\n\nLater requests:", 1)[0]


def later_requests(handoff: str) -> str:
    body = handoff.split("## Goal\n", 1)[1].split("\n## ", 1)[0]
    return body.split("Later requests:", 1)[1] if "Later requests:" in body else ""


def recorded(name: str, args: str = "") -> str:
    """A slash command as Claude Code records it in a user turn."""
    return f"<command-message>{name.lstrip('/')}</command-message>\n<command-name>{name}</command-name>" + (
        f"\n<command-args>{args}</command-args>" if args else ""
    )


def test_an_argument_of_identifiers_is_the_commands_not_the_goal(project, code_repo):
    s = Hooked(code_repo, "cmdid-a-0001")
    s.start()
    s.prompt(recorded("/erk:plan-implement", "8371"))
    s.bash("erk plan show 8371", "Plan 8371: add retries to the fetcher")
    s.edit("src/fetch.py")
    s.stop("Implemented plan 8371: the fetcher retries three times.")
    assert goal_of(handoff_of(project, "cmdid-a-0001")) == "Ran /erk:plan-implement 8371"
    # A command typed at the prompt (the hook's form) with a flag and a number.
    t = Hooked(code_repo, "cmdid-b-0001")
    t.start()
    t.prompt("/pr-review --pr 8160")
    t.bash("gh pr view 8160", "title: Add retries")
    t.stop("The PR looks good.")
    assert goal_of(handoff_of(project, "cmdid-b-0001")) == "Ran /pr-review --pr 8160"


def test_words_typed_as_the_argument_are_the_goal_with_the_command_named(project, code_repo):
    s = Hooked(code_repo, "cmdwords-0001")
    s.start()
    s.prompt(recorded("/speckit.specify", "Build a template for the weekly report"))
    s.edit("specs/001-report/spec.md")
    s.stop("Wrote the spec.")
    goal = goal_of(handoff_of(project, "cmdwords-0001"))
    assert goal == "Build a template for the weekly report (the session ran /speckit.specify)"


def test_a_later_message_never_becomes_the_goal_of_a_session_a_command_opened(project, code_repo):
    s = Hooked(code_repo, "cmdlater-0001")
    s.start()
    s.prompt(recorded("/erk:plan-implement"))
    s.bash("erk plan current", "Plan 8371: add retries to the fetcher")
    s.edit("src/fetch.py")
    s.stop("Started on the plan; the parent branch changed under us.")
    s.prompt("I merged the parent branch and restacked onto it, restart plan")
    s.bash("pytest -q", "3 passed")
    s.stop("Restarted the plan; tests pass.")
    handoff = handoff_of(project, "cmdlater-0001")
    assert goal_of(handoff) == "Ran /erk:plan-implement"
    assert "I merged the parent branch and restacked onto it, restart plan" in later_requests(handoff)


def test_a_command_that_only_printed_or_failed_is_not_the_request(project, code_repo):
    s = Hooked(code_repo, "house-a-0001")
    s.start()
    s.prompt(recorded("/clear"))
    s.prompt("<local-command-stdout></local-command-stdout>")
    s.prompt(recorded("/security-review"))
    s.prompt("<local-command-stderr>Error: Bash command failed: fatal: not a git repository</local-command-stderr>")
    s.prompt("log in to GitHub with the gh CLI")
    s.bash("gh auth status", "Logged in to github.com")
    s.stop("You are logged in.")
    assert goal_of(handoff_of(project, "house-a-0001")).startswith("log in to GitHub with the gh CLI")
    # A command the agent did nothing for (no call, no answer) asked for nothing either.
    t = Hooked(code_repo, "house-b-0001")
    t.start()
    t.prompt("/model opus")
    t.prompt("rename the helper in utils.py")
    t.edit("utils.py")
    t.stop("Renamed it.")
    assert goal_of(handoff_of(project, "house-b-0001")).startswith("rename the helper in utils.py")


def test_the_goal_of_a_command_run_names_the_command_turn_as_its_evidence(project, code_repo):
    s = Hooked(code_repo, "cmdtrace-0001")
    s.start()
    s.prompt(recorded("/erk:plan-implement", "8371"))
    s.edit("src/fetch.py")
    s.stop("Implemented the plan.")
    consolidate_session(project, "cmdtrace-0001")
    result = CliRunner().invoke(main, ["--project", str(code_repo), "handoff", "--explain", "--json"])
    assert result.exit_code == 0, result.output
    (handed,) = json.loads(result.output)["handoffs"]
    goal = next(i for i in handed["items"] if i["section"] == "Goal")
    assert goal["text"] == "Ran /erk:plan-implement 8371"
    (ref,) = goal["evidence"]
    lines = Path(handed["journal"]).read_text(encoding="utf-8").splitlines()
    assert "<command-args>8371</command-args>" in json.loads(lines[int(ref.split()[-1]) - 1])["text"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ("8371", False),
        ("--pr 8160", False),
        ("#12", False),
        ("src/app.py tests/test_app.py", False),
        ("https://github.com/o/r/pull/3", False),
        ("feature-branch 42", False),
        ("Build a template for the docs", True),
        ("fix the flaky test", True),
        ("ログイン画面を直して", True),
    ],
)
def test_an_argument_is_a_request_in_words_only_when_it_has_prose(args, words):
    assert in_words(args) is words


def test_a_custom_prompt_filled_with_identifiers_is_the_goal_as_a_run(project, code_repo):
    custom = (
        "## User Input\n\n```text\n8371 --dry-run\n```\n\n"
        "You **MUST** consider the user input before proceeding (if not empty).\n\n## Outline\n\n"
        "1. Load the plan named by the input.\n2. Check out its branch.\n"
        "3. Implement each step.\n4. Run the tests.\n5. Report what changed.\n"
    )
    s = Hooked(code_repo, "slotid-0001")
    s.start()
    s.prompt(custom)
    s.edit("src/fetch.py")
    s.stop("Implemented the plan.")
    assert goal_of(handoff_of(project, "slotid-0001")) == "Ran a custom command prompt: 8371 --dry-run"


def read(s: Hooked, path: str, text: str) -> None:
    """A Read call as Claude Code reports it (its text with line numbers)."""
    numbered = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.splitlines(), 1))
    s.tool("Read", {"file_path": str(s.cwd / path)}, {"type": "text", "file": {"content": numbered}})


PLAN = "# Plan: Add retries to the fetcher\n\n## Context\n\nThe fetcher gives up after one timeout.\n"


def test_the_plan_a_command_had_the_agent_read_names_the_work_with_its_evidence(project, code_repo):
    s = Hooked(code_repo, "cmdplan-0001")
    s.start()
    s.prompt(recorded("/erk:plan-implement", "8371"))
    s.bash("erk exec setup-impl --issue 8371", '{"success": true}')
    read(s, ".impl/plan.md", PLAN)
    s.edit("src/fetch.py")
    s.stop("Implemented the plan.")
    goal = "Ran /erk:plan-implement 8371 (the plan it read: “Add retries to the fetcher”)"
    assert goal_of(handoff_of(project, "cmdplan-0001")) == goal
    result = CliRunner().invoke(main, ["--project", str(code_repo), "handoff", "--explain", "--json"])
    assert result.exit_code == 0, result.output
    (handed,) = json.loads(result.output)["handoffs"]
    item = next(i for i in handed["items"] if i["section"] == "Goal")
    lines = Path(handed["journal"]).read_text(encoding="utf-8").splitlines()
    events = [json.loads(lines[int(ref.split()[-1]) - 1]) for ref in item["evidence"]]
    assert [e["kind"] for e in events] == ["prompt", "tool"]
    assert events[1]["tool"] == "Read" and events[1]["input"].endswith(".impl/plan.md")


def test_only_a_plan_file_read_before_the_first_change_names_the_work(project, code_repo):
    s = Hooked(code_repo, "cmdplan-0002")
    s.start()
    s.prompt(recorded("/erk:plan-implement"))
    read(s, "README.md", "# Widgets\n\nA widget store.\n")  # the project's title, not the task
    s.edit("src/fetch.py")
    read(s, "docs/plans/next.md", "# Rewrite the fetcher in Rust\n")  # read after the work began
    s.stop("Done.")
    assert goal_of(handoff_of(project, "cmdplan-0002")) == "Ran /erk:plan-implement"
    # A shell that printed the plan (Codex reads with `cat` and `sed -n`) names it too.
    t = Hooked(code_repo, "cmdplan-0003")
    t.start()
    t.prompt(recorded("/speckit.implement"))
    t.bash("sed -n '1,200p' specs/001-retries/plan.md", "# Implementation Plan: Fetcher retries\n\n**Branch**: x\n")
    t.edit("src/fetch.py")
    t.stop("Done.")
    goal = "Ran /speckit.implement (the plan it read: “Implementation Plan: Fetcher retries”)"
    assert goal_of(handoff_of(project, "cmdplan-0003")) == goal
