"""End to end with the real OpenCode (npm `opencode-ai`, the version in agent_clis.PACKAGES),
its plugin and MCP entry written by `wiki-memory install opencode`, talking through its
anthropic provider to a `FakeAnthropic` on 127.0.0.1:

- an OpenCode session (a failing command, an edit, a plan item left pending) is consolidated,
  and the next Claude Code session's first model request carries its handoff;
- a Claude Code session is handed to OpenCode, in OpenCode's system prompt;
- install, a real session, then uninstall leaves OpenCode's configuration as it was;
- a wiki-memory that hangs, is missing or crashes never stops OpenCode.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from agent_clis import opencode_env, run_claude, run_opencode, seed_opencode_sdk
from click.testing import CliRunner
from e2e_checks import failing_wiki_memory, handoff_in, install, logs, stop_hanging, strings, wait_consolidated
from fake_models import FakeAnthropic, bash, text, tool_call

from wiki_memory.capture import journal
from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.install import Context, jsonc
from wiki_memory.install import install as install_agents

FAILING = "python3 -c \"import sys; sys.exit('AssertionError: widget total 9 != 10')\""
WIDGET = "def total(xs):\n    return sum(xs)\n"


def opencode_work(repo: Path) -> list:
    """A session's model turns: a test that fails, an edit, a plan with an item left, an answer."""
    todos = [
        {"content": "Fix the off-by-one in total()", "status": "completed", "priority": "high"},
        {"content": "Add a regression test for widget totals", "status": "pending", "priority": "high"},
    ]
    return [
        bash(FAILING, "Let me run the widget test first."),
        tool_call(
            "edit",
            {"filePath": str(repo / "src" / "widget.py"), "oldString": "sum(xs)", "newString": "sum(xs) + 1"},
        ),
        tool_call("todowrite", {"todos": todos}),
        text("I changed src/widget.py; the widget test still fails. Next: the regression test."),
    ]


def test_an_opencode_session_hands_off_to_claude_code(agent_clis, code_repo):
    home = Path.home()
    (code_repo / "src").mkdir()
    (code_repo / "src" / "widget.py").write_text(WIDGET)
    install("opencode")
    install("claude-code")
    with FakeAnthropic(opencode_work(code_repo)) as model:
        prompt = "Fix the widget total off-by-one in src/widget.py"
        result = run_opencode(agent_clis, prompt.split(), cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sum(xs) + 1" in (code_repo / "src" / "widget.py").read_text()  # the edit really happened
    pages = wait_consolidated(code_repo, "opencode")
    assert [p.split("/")[0] for p in pages] == ["sessions", "handoffs"]

    with FakeAnthropic([text("I have the earlier session's notes.")]) as claude_model:
        result = run_claude(agent_clis, ["-p", "Carry on"], cwd=code_repo, home=home, base_url=claude_model.url)
    assert result.returncode == 0, result.stderr[-2000:]
    handoff = handoff_in(claude_model.turn_requests[0].body)
    assert "From opencode, session " in handoff
    assert "Goal: Fix the widget total off-by-one in src/widget.py" in handoff
    failed = handoff.split("Failed or abandoned:", 1)[1].split("\n\n", 1)[0]
    assert "sys.exit('AssertionError: widget total 9 != 10')" in failed and "failed (exit 1)" in failed
    assert "Files touched: src/widget.py" in handoff
    assert "[pending] Add a regression test for widget totals" in handoff

    # The session is in OpenCode's own database too: `import` finds it, already a page.
    imported = CliRunner().invoke(main, ["import", "opencode", "--json"], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["skipped"] == {resolve_project(code_repo).id: [pages[0]]}


def test_a_claude_code_session_hands_off_to_opencode(agent_clis, code_repo):
    home = Path.home()
    (code_repo / "src").mkdir()
    widget = code_repo / "src" / "widget.py"
    install("claude-code")
    install("opencode")
    with FakeAnthropic(
        [
            bash(FAILING, "Let me run the widget test first."),
            tool_call("Write", {"file_path": str(widget), "content": "def total(xs):\n    return sum(xs) + 1\n"}),
            tool_call("TaskCreate", {"subject": "Add a regression test for widget totals", "description": "cover it"}),
            text("I rewrote src/widget.py; the widget test still fails."),
        ]
    ) as claude_model:
        result = run_claude(
            agent_clis, ["-p", "Fix the widget total"], cwd=code_repo, home=home, base_url=claude_model.url
        )
    assert result.returncode == 0, result.stderr[-2000:]
    wait_consolidated(code_repo, "claude-code")

    with FakeAnthropic([text("I have the earlier session's notes.")]) as model:
        result = run_opencode(agent_clis, ["Carry", "on"], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    system = model.turn_requests[0].body["system"]
    handoff = handoff_in(system)  # in OpenCode's system prompt, through its own mechanism
    assert "From claude-code, session " in handoff and "Goal: Fix the widget total" in handoff
    assert "sys.exit('AssertionError: widget total 9 != 10')" in handoff
    assert "Files touched: src/widget.py" in handoff
    assert "[pending] Add a regression test for widget totals" in handoff
    # Every turn of the session gets it; OpenCode's side calls (its title, on another model) do not.
    assert all("<wiki-memory handoff" in strings(r.body["system"]) for r in model.turn_requests)
    side = [r for r in model.requests if r.path.endswith("/v1/messages") and r not in model.turn_requests]
    assert side and all("<wiki-memory handoff" not in strings(r.body) for r in side)
    # OpenCode's own session was recorded under its words, not the handoff's.
    [path] = list(resolve_project(code_repo).journal_dir.glob("ses_*.jsonl"))
    prompts = [o.text for o in journal.read(path) if o.kind == "prompt"]
    assert prompts == ["Carry on"]


USER_JSONC = """{
  // my OpenCode settings
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "notes": {"type": "local", "command": ["true"], "enabled": false}, /* off for now */
  },
}"""
MY_PLUGIN = "export const Mine = async () => ({})\n"


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_a_session_then_uninstall_leaves_opencode_s_config_as_it_was(agent_clis, code_repo, scope):
    home = Path.home()
    folder = home / ".config" / "opencode" if scope == "user" else code_repo / ".opencode"
    config = folder / "opencode.jsonc"
    folder.mkdir(parents=True)
    config.write_text(USER_JSONC)
    (folder / "plugins").mkdir()
    (folder / "plugins" / "mine.js").write_text(MY_PLUGIN)
    seed_opencode_sdk(folder)  # OpenCode's own files, which it would fetch before loading a plugin
    before = {p: p.read_bytes() for p in (config, folder / "plugins" / "mine.js")}

    result = CliRunner().invoke(main, ["--project", str(code_repo), "install", "opencode", "--scope", scope])
    assert result.exit_code == 0, result.output
    assert (folder / "plugins" / "wiki-memory.js").is_file()
    assert jsonc.loads(config.read_text())["mcp"]["wiki-memory"]["type"] == "local"
    listed = subprocess.run(
        [str(agent_clis.opencode), "mcp", "list"],
        cwd=code_repo,
        env=opencode_env(home, "http://127.0.0.1:9", {"PWD": str(code_repo)}),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert "wiki-memory" in listed.stdout and "connected" in listed.stdout, listed.stdout + listed.stderr

    with FakeAnthropic([bash("echo hello-from-opencode"), text("Said hello.")]) as model:
        result = run_opencode(agent_clis, ["Say", "hello"], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    [path] = list(resolve_project(code_repo).journal_dir.glob("ses_*.jsonl"))
    # In OpenCode's order: the plugin's calls run side by side, so lines land in any order.
    kinds = [o.kind for o in sorted(journal.read(path), key=lambda o: o.time)]
    assert kinds[:2] == ["session-start", "prompt"] and "tool" in kinds and kinds[-1] == "stop", (kinds, logs())

    result = CliRunner().invoke(main, ["--project", str(code_repo), "uninstall", "opencode", "--scope", scope])
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in before} == before  # byte for byte
    assert not (folder / "plugins" / "wiki-memory.js").exists()


@pytest.mark.parametrize("kind", ["hanging", "missing", "crashing"])
def test_a_failing_or_hanging_wiki_memory_never_stops_opencode(agent_clis, code_repo, tmp_path, kind):
    install_agents(["opencode"], Context(command=str(failing_wiki_memory(kind, tmp_path)), mcp=False))
    started = time.monotonic()
    try:
        with FakeAnthropic([bash("echo still-working"), text("Finished anyway.")]) as model:
            result = run_opencode(agent_clis, ["Keep", "going"], cwd=code_repo, home=Path.home(), base_url=model.url)
        elapsed = time.monotonic() - started
    finally:
        called = stop_hanging(tmp_path)  # the stand-ins left sleeping (fire and forget)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Finished anyway." in result.stdout
    assert len(model.turn_requests) == 2 and "still-working" in strings(model.turn_requests[1].body["messages"])
    assert all("<wiki-memory handoff" not in strings(r.body) for r in model.requests)
    if kind == "hanging":
        assert called >= 3  # it was called, and hung each time
        assert elapsed < 120
