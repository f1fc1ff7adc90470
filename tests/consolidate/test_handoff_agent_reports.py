"""Checks delegated to a sub-agent: its report's verdict is handed as the sub-agent's word."""

from __future__ import annotations

import pytest
from conftest import git
from handoffs import handoff_of, section, steps_of
from hooked import Hooked

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.agent_reports import _commands_asked


@pytest.fixture
def project(code_repo):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


def _task(s: Hooked, description: str, report: str) -> Hooked:
    return s.tool(
        "Task",
        {"description": description, "prompt": f"{description} and report", "subagent_type": "devrun"},
        {"status": "completed", "content": [{"type": "text", "text": report}], "totalDurationMs": 5000},
    )


def test_the_last_report_of_a_delegated_check_is_done_in_the_sub_agents_words(project, code_repo):
    s = Hooked(code_repo, "agent-report-1")
    s.prompt("Add tests for the config loader")
    s.edit("tests/test_config.py")
    _task(s, "Run bot tests", "## Test Results\n\npytest failed: 1 issue found\n\n- test_missing_fields")
    s.edit("tests/test_config.py", "x", "y")
    _task(s, "Re-run bot tests", f"pytest passed: 23 tests in {code_repo}/tests\n\nAll tests passed successfully")
    _task(s, "Explore the loader", "Now I have a complete picture of the loader.\n\nIt reads .env first.")
    s.stop("Tests added; all pass.")
    handoff = handoff_of(project, "agent-report-1")
    done, failed = section(handoff, "Done"), section(handoff, "Failed or abandoned approaches")
    assert 'Sub-agent "Re-run bot tests" reported: pytest passed: 23 tests in tests' in done  # relative
    assert "1 issue found" not in handoff  # the failure the re-run got past
    assert "Explore the loader" not in handoff  # research, no verdict
    assert "Sub-agent" not in failed


def test_a_failing_report_is_failed_unless_a_check_passed_after_it(project, code_repo):
    s = Hooked(code_repo, "agent-report-2")
    s.prompt("Run CI")
    _task(s, "Run fast CI checks", "## Results\n\n**make fast-ci: FAILED** - 2 code style issues found")
    s.stop("Two files need formatting.")
    failed = section(handoff_of(project, "agent-report-2"), "Failed or abandoned approaches")
    assert 'Sub-agent "Run fast CI checks" reported: make fast-ci: FAILED - 2 code style issues found' in failed

    s = Hooked(code_repo, "agent-report-3")
    s.prompt("Run CI and fix it")
    _task(s, "Run fast CI checks", "make fast-ci: FAILED - 2 code style issues found")
    s.bash("prettier --write docs/a.md", "docs/a.md 20ms")
    s.bash("make fast-ci", "All checks passed")
    s.stop("Fixed the formatting; CI passes.")
    assert "Sub-agent" not in section(handoff_of(project, "agent-report-3"), "Failed or abandoned approaches")


def test_a_check_a_sub_agent_ran_and_passed_is_a_procedure(project, code_repo):
    prompt = "Run the bot's tests and report results:\n\ncd packages/bot && uv run pytest tests/ -v\n\nGive counts."
    s = Hooked(code_repo, "agent-report-4")
    s.prompt("Add tests for the bot")
    s.edit("packages/bot/tests/test_cli.py")
    s.tool(
        "Task",
        {"description": "Run bot tests", "prompt": prompt, "subagent_type": "devrun"},
        {"status": "completed", "content": [{"type": "text", "text": "pytest passed: 114 tests in 3.39s"}]},
    )
    s.tool(
        "Task",
        {"description": "Run lint", "prompt": "Run `ruff check packages/bot` and report.", "subagent_type": "devrun"},
        {"status": "completed", "content": [{"type": "text", "text": "ruff check failed: 2 errors found"}]},
    )
    s.stop("Tests added and passing.")
    assert steps_of(project, "agent-report-4")[1].meta["asked"] == prompt  # what the sub-agent was asked
    handoff_of(project, "agent-report-4")
    tests_page = (project.wiki / "procedures" / "how-to-run-the-tests.md").read_text(encoding="utf-8")
    assert "uv run pytest tests/ -v" in tests_page and "packages/bot" in tests_page
    assert not (project.wiki / "procedures" / "how-to-lint-the-code.md").exists()  # it failed


@pytest.mark.parametrize(
    "prompt, commands",
    [
        ("Run the suite:\n\ncd /w/erk/packages/bot && uv run pytest tests/ -v\n\nReport counts.",
         ["cd /w/erk/packages/bot && uv run pytest tests/ -v"]),
        ("Run `make fast-ci` and report the failures.", ["make fast-ci"]),
        ("Run prettier on the changed doc: prettier --check docs/a.md", ["prettier --check docs/a.md"]),
        ("Verify it parses and lint it:\n1. python -c 'import ast'\n2. ruff check src/x.py", ["ruff check src/x.py"]),
        ("Explore the codebase and tell me how the tests run.", []),
        ("pytest is flaky here, check it", []),
    ],
)  # fmt: skip
def test_the_checks_a_prompt_asks_for_are_read_by_their_shape(prompt, commands):
    assert _commands_asked(prompt) == commands
