"""The handoff tools and the `resume` prompt: what the next session is told, and an explicit
handoff written through the server."""

from __future__ import annotations

import pytest
from conftest import git
from mcp import Client
from mcp_helpers import call, fail, run
from mcp_types import Implementation

from wiki_memory.config import resolve_project
from wiki_memory.mcp.scope import SESSION_ENV
from wiki_memory.mcp.server import build_server


@pytest.fixture(autouse=True)
def no_agent_session(monkeypatch):
    for var in (*SESSION_ENV, "WIKI_MEMORY_AGENT"):
        monkeypatch.delenv(var, raising=False)


def test_handoff_write_then_handoff_and_resume(code_repo, monkeypatch):
    monkeypatch.setenv("CODEX_SESSION_ID", "019a77c2-5b1e-7aa0")
    server = build_server(project_dir=str(code_repo))

    async def body():
        async with Client(server, client_info=Implementation(name="codex-mcp-client", version="0.171.0")) as client:
            empty = await call(client, "handoff")
            assert empty["text"] is None and empty["handoffs"] == []
            result = await client.call_tool("handoff", {})
            assert result.content[0].text.startswith("No handoff yet")
            prompt = await client.get_prompt("resume", {})
            assert "no handoff yet" in prompt.messages[0].content.text.lower()

            written = await call(
                client,
                "handoff_write",
                summary="Fixing the flaky login test: the refresh must run before the retry.",
                done=["Moved the refresh before the retry in src/auth/client.py"],
                failed=["Raising the retry delay to 2 s: still 5 failures in 50 runs"],
                next_steps=["Apply the same fix to src/auth/admin_client.py"],
                open_questions=["Does the admin client share the token cache?"],
                files=["src/auth/client.py", "tests/test_login.py"],
            )
            assert written["path"].startswith("handoffs/") and written["path"].endswith("-explicit.md")
            assert written["created"] and len(written["commit"]) == 40
            told = await call(client, "handoff")
            assert told["handoffs"] == [written["path"]]
            for words in ("flaky login test", "Raising the retry delay to 2 s", "src/auth/admin_client.py"):
                assert words in told["text"]
            prompt = await client.get_prompt("resume", {})
            text = prompt.messages[0].content.text
            assert prompt.messages[0].role == "user" and told["text"] in text
            assert "Raising the retry delay to 2 s" in text
            assert "summary" in await fail(client, "handoff_write", summary="  ")

    run(body)
    server.close()
    wiki = resolve_project(code_repo).wiki
    log = git(wiki, "log", "-1", "--format=%an|%(trailers:key=Session-Id,valueonly,separator=)")
    assert log.strip() == "codex|019a77c2-5b1e-7aa0"
