"""End to end with a real agent: `wiki-memory install claude-code` writes the MCP entry, a
real `claude -p` session starts our server, its (fake) model calls the wiki-memory tools, and
what the tools return arrives in the model's next request; writes carry Claude's agent name
and session id into git."""

from __future__ import annotations

import json
from pathlib import Path

from agent_clis import run_claude
from click.testing import CliRunner
from conftest import git
from fake_models import FakeAnthropic, text, tool_call

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.pages import parse_page

PAGE_BODY = (
    "With CELERY_TASK_ALWAYS_EAGER the tasks run inline, so a dead broker never shows on a laptop.\n\n"
    "## Fix\n\nRun a real Redis in the pipeline and keep eager mode for unit tests only."
)


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _tool_result(request, tool: str) -> str:
    """The content of the tool_result answering the call of `tool`, in a Messages request."""
    messages = request.body["messages"]
    ids = [
        block["id"]
        for m in messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_use" and block.get("name") == tool
    ]
    assert ids, f"no call of {tool} in the request"
    for m in messages:
        for block in m["content"] if isinstance(m["content"], list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == ids[-1]:
                inner = block.get("content")
                return inner if isinstance(inner, str) else json.dumps(inner)
    raise AssertionError(f"no result for the call of {tool}")


def test_claude_code_searches_and_writes_memory_through_the_mcp_server(agent_clis, code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    _cli("init")
    _cli("write", "-t", "Celery eager mode masks broker timeouts", "--type", "gotcha", "--body", PAGE_BODY)
    _cli("install", "claude-code")  # hooks and the MCP entry in ~/.claude.json
    entry = json.loads((Path.home() / ".claude.json").read_text())["mcpServers"]["wiki-memory"]
    assert entry["args"] == ["serve"] and Path(entry["command"]).name == "wiki-memory"

    script = [
        # Claude Code connects MCP servers in the background and offers WaitForMcpServers while
        # one is still starting; a model that needs the server's tools calls it (if the server
        # was already up, the call is answered "no such tool" and the session goes on).
        tool_call("WaitForMcpServers", {"servers": ["wiki-memory"]}),
        tool_call("mcp__wiki-memory__search", {"query": "tests hang on the build server"}),
        tool_call(
            "mcp__wiki-memory__write",
            {
                "title": "Integration tests need Redis",
                "type": "procedure",
                "body": "Start Redis before `make test-integration`.",
            },
        ),
        text("The tests hang because eager mode hides the dead broker; I noted how to run them."),
    ]
    with FakeAnthropic(script) as model:
        result = run_claude(
            agent_clis,
            [
                "-p",
                "Why do the tests hang on CI?",
                "--output-format",
                "json",
                "--allowedTools",
                "mcp__wiki-memory__search mcp__wiki-memory__write",
            ],
            cwd=code_repo,
            home=Path.home(),
            base_url=model.url,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    session_id = json.loads(result.stdout)["session_id"]

    offered = [t["name"] for t in model.turn_requests[1].body["tools"]]
    assert "mcp__wiki-memory__search" in offered and "mcp__wiki-memory__handoff" in offered
    # The search's answer, with the page's text, is in the model's next request.
    found = _tool_result(model.turn_requests[2], "mcp__wiki-memory__search")
    assert "gotchas/celery-eager-mode-masks-broker-timeouts.md" in found
    assert "Celery eager mode masks broker timeouts" in found and "Run a real Redis in the pipeline" in found
    # The write landed as a commit by Claude Code, in Claude's session.
    written = _tool_result(model.turn_requests[3], "mcp__wiki-memory__write")
    assert "procedures/integration-tests-need-redis.md" in written
    wiki = resolve_project(code_repo).wiki
    # (The session's end then commits its consolidation on top: look the page's own commit up.)
    log = git(
        wiki,
        "log",
        "-1",
        "--format=%an|%s|%(trailers:key=Session-Id,valueonly,separator=)|%(trailers:key=Agent,valueonly,separator=)",
        "--",
        "procedures/integration-tests-need-redis.md",
    )
    assert log.strip() == f"claude-code|remember: procedures/integration-tests-need-redis|{session_id}|claude-code"
    page = parse_page((wiki / "procedures" / "integration-tests-need-redis.md").read_text(), "x.md")
    assert page.sources == (f"claude-code:{session_id[:8]}",)
