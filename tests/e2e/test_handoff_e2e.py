"""End to end with the real agent CLIs: one agent's session ends, the other starts in the same
directory, and the request it sends to its model carries the handoff.

Both CLIs run with their own HOME / CODEX_HOME, their hooks installed by `wiki-memory
install` (Codex's trusted by the installer), against fake model servers on 127.0.0.1 that
record every request. The first session runs a command that fails, edits a file, leaves a
plan item pending and answers; then the second session starts, and its first model request
must hold the goal, the failed command, the edited file and the pending item.
"""

from __future__ import annotations

from pathlib import Path

from agent_clis import run_claude, run_codex, write_codex_config
from e2e_checks import handoff_in as _handoff_in
from e2e_checks import install as _install
from e2e_checks import wait_consolidated as _wait_consolidated
from fake_models import FakeAnthropic, FakeResponses, bash, text, tool_call

FAILING = "python3 -c \"import sys; sys.exit('AssertionError: widget total 9 != 10')\""


def test_claude_code_session_hands_off_to_codex(agent_clis, code_repo, tmp_path):
    home, codex_home = Path.home(), tmp_path / "codex-home"
    (code_repo / "src").mkdir()
    widget = code_repo / "src" / "widget.py"
    _install("claude-code")
    with FakeAnthropic(
        [
            bash(FAILING, "Let me run the widget test first."),
            tool_call("Write", {"file_path": str(widget), "content": "def total(xs):\n    return sum(xs) + 1\n"}),
            tool_call(
                "TaskCreate",
                {"subject": "Add a regression test for widget totals", "description": "cover the off-by-one"},
            ),
            text("I rewrote src/widget.py; the widget test still fails. Next: add the regression test."),
        ]
    ) as claude_model:
        result = run_claude(
            agent_clis,
            ["-p", "Fix the widget total off-by-one in src/widget.py"],
            cwd=code_repo,
            home=home,
            base_url=claude_model.url,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    assert widget.exists()  # the edit really happened

    with FakeResponses([text("I have the earlier session's notes.")]) as codex_model:
        write_codex_config(codex_home, codex_model.url)
        _install("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        result = run_codex(
            agent_clis,
            ["exec", "--skip-git-repo-check", "Carry on with the widget work"],
            cwd=code_repo,
            home=home,
            codex_home=codex_home,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    handoff = _handoff_in(codex_model.turn_requests[0].body)
    assert "From claude-code, session " in handoff
    assert "Goal: Fix the widget total off-by-one in src/widget.py" in handoff
    failed = handoff.split("Failed or abandoned:", 1)[1].split("\n\n", 1)[0]
    assert "sys.exit('AssertionError: widget total 9 != 10')" in failed
    assert "Files touched: src/widget.py" in handoff
    assert "[pending] Add a regression test for widget totals" in handoff
    # And the session was consolidated in the background into the wiki.
    pages = _wait_consolidated(code_repo, "claude-code")
    assert [p.split("/")[0] for p in pages] == ["sessions", "handoffs"]


def test_codex_session_hands_off_to_claude_code(agent_clis, code_repo, tmp_path):
    home, codex_home = Path.home(), tmp_path / "codex-home"
    patch = (
        "*** Begin Patch\n*** Add File: src/parser.py\n+def parse(text):\n+    return text.split(',')\n*** End Patch\n"
    )
    with FakeResponses(
        [
            bash("python3 -c \"import sys; sys.exit('ValueError: trailing comma')\""),
            tool_call("apply_patch", {"input": patch}),
            tool_call(
                "update_plan",
                {
                    "plan": [
                        {"step": "Write the parser", "status": "completed"},
                        {"step": "Handle quoted fields", "status": "pending"},
                    ]
                },
            ),
            text("Wrote src/parser.py. Quoted fields are not handled yet."),
        ]
    ) as codex_model:
        write_codex_config(codex_home, codex_model.url)
        _install("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        result = run_codex(
            agent_clis,
            ["exec", "--skip-git-repo-check", "Write a CSV parser in src/parser.py"],
            cwd=code_repo,
            home=home,
            codex_home=codex_home,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (code_repo / "src" / "parser.py").exists()

    _install("claude-code")
    with FakeAnthropic([text("I have the earlier session's notes.")]) as claude_model:
        result = run_claude(
            agent_clis, ["-p", "Continue the CSV parser"], cwd=code_repo, home=home, base_url=claude_model.url
        )
    assert result.returncode == 0, result.stderr[-2000:]
    handoff = _handoff_in(claude_model.turn_requests[0].body)
    assert "From codex, session " in handoff
    assert "Goal: Write a CSV parser in src/parser.py" in handoff
    failed = handoff.split("Failed or abandoned:", 1)[1].split("\n\n", 1)[0]
    # Codex's hook carries no exit code: the failure comes from its rollout.
    assert "sys.exit('ValueError: trailing comma')" in failed and "failed (exit 1)" in failed
    assert "Files touched: src/parser.py" in handoff
    assert "[pending] Handle quoted fields" in handoff
    pages = _wait_consolidated(code_repo, "codex")
    assert [p.split("/")[0] for p in pages] == ["sessions", "handoffs"]
