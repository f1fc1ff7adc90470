"""End to end with the real Gemini CLI (npm `@google/gemini-cli`, the version in
agent_clis.PACKAGES), its hooks written by `wiki-memory install gemini`, against a
`FakeGemini` on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`, API-key auth, the project trusted):

- a Gemini CLI session (a failing command, a new file, a plan item left pending) is
  consolidated, and the next Codex session's first model request carries its handoff;
- Gemini CLI is handed a handoff at its start, and records its own goal, not the handoff;
- install, a real session, then uninstall leaves settings.json as it was, byte for byte;
- a wiki-memory that hangs, is missing or crashes never stops Gemini CLI.

`-m gemini-2.5-pro`: Gemini CLI offers its plan tool (`write_todos`) to Gemini 2 models only.
"""

from __future__ import annotations

import html
import time
from pathlib import Path

import pytest
from agent_clis import run_claude, run_codex, run_gemini, write_codex_config, write_gemini_settings
from e2e_checks import failing_wiki_memory, handoff_in, install, logs, stop_hanging, strings, wait_consolidated
from fake_models import FakeAnthropic, FakeGemini, FakeResponses, bash, text, tool_call

from wiki_memory.capture import journal
from wiki_memory.config import resolve_project
from wiki_memory.install import Context
from wiki_memory.install import install as install_agents
from wiki_memory.install import uninstall as uninstall_agents

MODEL = ["-m", "gemini-2.5-pro"]
FAILING = "python3 -c \"import sys; sys.exit('ValueError: trailing comma')\""


def gemini_work(repo: Path) -> list:
    todos = [
        {"description": "Write the parser", "status": "completed"},
        {"description": "Handle quoted fields", "status": "pending"},
    ]
    return [
        bash(FAILING),
        tool_call(
            "write_file",
            {"file_path": str(repo / "src" / "parser.py"), "content": "def parse(text):\n    return text.split(',')\n"},
        ),
        tool_call("write_todos", {"todos": todos}),
        text("Wrote src/parser.py. Quoted fields are not handled yet."),
    ]


def test_a_gemini_session_hands_off_to_codex(agent_clis, code_repo, tmp_path):
    home, codex_home = Path.home(), tmp_path / "codex-home"
    (code_repo / "src").mkdir()
    install("gemini")
    write_gemini_settings(home, trusted=[code_repo])
    with FakeGemini(gemini_work(code_repo)) as model:
        prompt = "Write a CSV parser in src/parser.py"
        result = run_gemini(agent_clis, ["--yolo", *MODEL, "-p", prompt], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (code_repo / "src" / "parser.py").exists()  # the tool really ran
    assert len(model.turn_requests) == 4
    pages = wait_consolidated(code_repo, "gemini")
    assert [p.split("/")[0] for p in pages] == ["sessions", "handoffs"]

    with FakeResponses([text("I have the earlier session's notes.")]) as codex_model:
        write_codex_config(codex_home, codex_model.url)
        install("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        result = run_codex(
            agent_clis,
            ["exec", "--skip-git-repo-check", "Carry on with the parser"],
            cwd=code_repo,
            home=home,
            codex_home=codex_home,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    handoff = handoff_in(codex_model.turn_requests[0].body)
    assert "From gemini, session " in handoff
    assert "Goal: Write a CSV parser in src/parser.py" in handoff
    failed = handoff.split("Failed or abandoned:", 1)[1].split("\n\n", 1)[0]
    assert "sys.exit('ValueError: trailing comma')" in failed and "failed (exit 1)" in failed
    assert "Files touched: src/parser.py" in handoff
    assert "[pending] Handle quoted fields" in handoff


def test_gemini_is_handed_the_handoff_and_keeps_its_own_goal(agent_clis, code_repo):
    home = Path.home()
    install("claude-code")
    with FakeAnthropic([bash(FAILING), text("The parser still fails on a trailing comma.")]) as claude_model:
        result = run_claude(
            agent_clis, ["-p", "Fix the CSV parser"], cwd=code_repo, home=home, base_url=claude_model.url
        )
    assert result.returncode == 0, result.stderr[-2000:]
    wait_consolidated(code_repo, "claude-code")

    install("gemini")
    write_gemini_settings(home, trusted=[code_repo])
    with FakeGemini([text("I have the notes.")]) as model:
        result = run_gemini(agent_clis, [*MODEL, "-p", "Carry on"], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    # Gemini CLI escapes < and > in a hook's context before the model sees it.
    seen = strings(model.turn_requests[0].body["contents"])
    assert "&lt;wiki-memory handoff" in seen
    handoff = handoff_in(html.unescape(seen))
    assert "From claude-code, session " in handoff and "Goal: Fix the CSV parser" in handoff
    assert "sys.exit('ValueError: trailing comma')" in handoff
    # Gemini CLI put the handoff before the prompt; its session's goal is still the user's words.
    [path] = [p for p in resolve_project(code_repo).journal_dir.glob("*.jsonl") if journal_agent(p) == "gemini"]
    assert [o.text for o in journal.read(path) if o.kind == "prompt"] == ["Carry on"]


def journal_agent(path: Path) -> str:
    return next(journal.read(path)).agent


SETTINGS = """{
  // mine
  "ui": {
    "theme": "Dracula"
  },
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "mcpServers": {
    "fs": {
      "command": "true"
    }
  },
  "hooks": {
    "AfterTool": [
      {
        "matcher": "write_file",
        "hooks": [
          {
            "type": "command",
            "command": "true",
            "timeout": 5000
          }
        ]
      }
    ]
  }
}"""


def test_install_a_session_then_uninstall_leaves_gemini_settings_as_they_were(agent_clis, code_repo):
    home = Path.home()
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)  # as Gemini CLI writes it: two spaces, no last newline (a comment of ours)
    write_gemini_settings(home, trusted=[code_repo])
    assert settings.read_text() == SETTINGS
    install("gemini")
    assert "wiki-memory" in settings.read_text() and "// mine" in settings.read_text()
    with FakeGemini([bash("echo hello-from-gemini"), text("Said hello.")]) as model:
        result = run_gemini(
            agent_clis, ["--yolo", *MODEL, "-p", "Say hello"], cwd=code_repo, home=home, base_url=model.url
        )
    assert result.returncode == 0, result.stderr[-3000:]
    [path] = list(resolve_project(code_repo).journal_dir.glob("*.jsonl"))
    kinds = [o.kind for o in journal.read(path)]
    assert kinds == ["session-start", "prompt", "tool", "stop", "session-end"], (kinds, logs())
    uninstall_agents(["gemini"], Context(command="unused"))
    assert settings.read_text() == SETTINGS


@pytest.mark.parametrize("kind", ["hanging", "missing", "crashing"])
def test_a_failing_or_hanging_wiki_memory_never_stops_gemini(agent_clis, code_repo, tmp_path, kind):
    home = Path.home()
    install_agents(["gemini"], Context(command=str(failing_wiki_memory(kind, tmp_path)), mcp=False))
    write_gemini_settings(home, trusted=[code_repo])
    started = time.monotonic()
    try:
        with FakeGemini([bash("echo still-working"), text("Finished anyway.")]) as model:
            result = run_gemini(
                agent_clis, ["--yolo", *MODEL, "-p", "Keep going"], cwd=code_repo, home=home, base_url=model.url
            )
        elapsed = time.monotonic() - started
    finally:
        called = stop_hanging(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Finished anyway." in result.stdout
    assert len(model.turn_requests) == 2
    assert "still-working" in strings(model.turn_requests[1].body["contents"])  # the tool's result, not a veto
    if kind == "hanging":
        assert called >= 3  # it was called, and hung each time (Gemini's timeout stopped each)
        assert elapsed < 120
