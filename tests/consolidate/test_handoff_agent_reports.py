"""Checks delegated to a sub-agent: its report's verdict is handed as the sub-agent's word."""

from __future__ import annotations

import pytest
from conftest import git
from handoffs import handoff_of, section
from hooked import Hooked

from wiki_memory.config import resolve_project


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
