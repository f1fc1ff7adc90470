"""End to end with the real agent CLIs: `wiki-memory install AGENT`, then a real session
against a fake model on 127.0.0.1 that answers with a tool call, then text; the session's
journal must hold its prompt, the tool call with its output, the final message and its end."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent_clis import run_claude, run_codex, write_codex_config
from click.testing import CliRunner
from fake_models import FakeAnthropic, FakeResponses, bash, text

from wiki_memory.capture import journal
from wiki_memory.cli import main
from wiki_memory.config import resolve_project


def _journal(repo: Path, wait_for: set[str] = frozenset({"session-end"}), timeout: float = 20.0):
    """The session's journal, once it holds the kinds in `wait_for`.

    Why wait: the agents run some hooks asynchronously (Claude Code's PostToolUse) or at
    exit (SessionEnd), so on a loaded machine a line can land just after the CLI returns.
    """
    directory = resolve_project(repo).journal_dir
    deadline = time.monotonic() + timeout
    while True:
        files = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
        observations = list(journal.read(files[0])) if len(files) == 1 else []
        if wait_for <= {o.kind for o in observations} or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(files) == 1, f"expected one session journal in {directory}, found {files}"
    return files[0], observations


def _install(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(main, ["install", *args], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_claude_code_session_lands_in_the_journal(agent_clis, code_repo):
    home = Path.home()
    _install("claude-code")
    with FakeAnthropic([bash("echo hello-from-the-tool"), text("Done: the tool said hello.")]) as model:
        result = run_claude(
            agent_clis,
            ["-p", "Say hello with a tool", "--output-format", "json"],
            cwd=code_repo,
            home=home,
            base_url=model.url,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    session_id = json.loads(result.stdout)["session_id"]
    path, observations = _journal(code_repo, {"session-start", "prompt", "tool", "stop", "session-end"})
    assert path.stem == session_id
    kinds = [o.kind for o in observations]
    logs = sorted((Path(os.environ["WIKI_MEMORY_HOME"]) / "logs").glob("*.log"))
    assert {"session-start", "prompt", "tool", "stop", "session-end"} <= set(kinds), (
        kinds,
        result.stderr[-2000:],
        [p.read_text()[-2000:] for p in logs],
    )
    assert kinds.index("session-start") < kinds.index("prompt") < kinds.index("stop") < kinds.index("session-end")
    prompt = next(o for o in observations if o.kind == "prompt")
    assert prompt.text == "Say hello with a tool" and prompt.agent == "claude-code"
    tool = next(o for o in observations if o.kind == "tool")
    assert tool.tool == "Bash" and tool.input == "echo hello-from-the-tool"
    assert "hello-from-the-tool" in tool.output and not tool.error
    assert next(o for o in observations if o.kind == "stop").text == "Done: the tool said hello."
    assert all(o.session_id == session_id and o.cwd == str(code_repo) for o in observations)
    # The tool really ran and its result went back to the model.
    assert "hello-from-the-tool" in json.dumps(model.turn_requests[1].body["messages"])


def test_codex_session_lands_in_the_journal_with_hooks_trusted_by_the_installer(agent_clis, code_repo, tmp_path):
    home = Path.home()
    codex_home = tmp_path / "codex-home"
    with FakeResponses([bash("echo hello-from-codex"), text("Done: codex said hello.")]) as model:
        write_codex_config(codex_home, model.url)
        output = _install("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        assert "trusted 7 hooks (verified with hooks/list)" in output
        # No --dangerously-bypass-hook-trust: the hooks run because the installer trusted them.
        result = run_codex(
            agent_clis,
            ["exec", "--skip-git-repo-check", "Say hello with a tool"],
            cwd=code_repo,
            home=home,
            codex_home=codex_home,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    _path, observations = _journal(code_repo)
    kinds = [o.kind for o in observations]
    assert kinds[0] == "session-start" and kinds[-1] == "session-end", kinds
    assert {"prompt", "tool", "stop"} <= set(kinds), kinds
    assert next(o for o in observations if o.kind == "prompt").text == "Say hello with a tool"
    tool = next(o for o in observations if o.kind == "tool")
    assert tool.agent == "codex" and tool.tool == "Bash" and tool.input == "echo hello-from-codex"
    assert "hello-from-codex" in tool.output and not tool.error
    assert next(o for o in observations if o.kind == "stop").text == "Done: codex said hello."
    assert tool.meta.get("turn_id") and tool.meta.get("model") == "gpt-5.5"


def _envelope_hook(tmp_path: Path, agent: str, marker: str) -> str:
    """A SessionStart hook printing our adapter's envelope around `marker`."""
    from wiki_memory.capture import adapter

    script = tmp_path / f"{agent}-session-start.sh"
    envelope = json.dumps(adapter.load(agent).envelope("SessionStart", marker))
    script.write_text(f"#!/bin/sh\ncat > /dev/null\nprintf '%s\\n' '{envelope}'\n")
    script.chmod(0o755)
    return str(script)


def test_claude_code_reads_our_session_start_envelope(agent_clis, code_repo, tmp_path):
    home = Path.home()
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    command = _envelope_hook(tmp_path, "claude-code", "HANDOFF-MARKER-7f3a: the login test was fixed.")
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}}))
    with FakeAnthropic([text("OK.")]) as model:
        result = run_claude(agent_clis, ["-p", "What happened before?"], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HANDOFF-MARKER-7f3a: the login test was fixed." in json.dumps(model.turn_requests[0].body)


def test_codex_reads_our_session_start_envelope(agent_clis, code_repo, tmp_path):
    from wiki_memory.install.codex_app_server import AppServer

    home, codex_home = Path.home(), tmp_path / "codex-home"
    command = _envelope_hook(tmp_path, "codex", "HANDOFF-MARKER-91c2: retry policy decided.")
    codex_home.mkdir()
    (codex_home / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}})
    )
    with FakeResponses([text("OK.")]) as model:
        write_codex_config(codex_home, model.url)
        with AppServer(str(agent_clis.codex), codex_home, code_repo) as server:
            server.trust(server.hooks(code_repo))
        result = run_codex(
            agent_clis,
            ["exec", "--skip-git-repo-check", "What happened before?"],
            cwd=code_repo,
            home=home,
            codex_home=codex_home,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HANDOFF-MARKER-91c2: retry policy decided." in json.dumps(model.turn_requests[0].body)
