"""`wiki-memory serve` as agents run it: a child process speaking MCP over stdio, driven by the
SDK's client (by an independent one, the MCP Inspector CLI: tests/e2e/test_mcp_stdio_e2e.py)."""

from __future__ import annotations

from pathlib import Path

import anyio
from conftest import git
from mcp import Client, StdioServerParameters
from mcp_helpers import PAGE_TOOLS, call, clean_env, fail, run, serve_command
from mcp_types import Implementation

from wiki_memory.config import resolve_project


def stdio(repo: Path, **env: str) -> StdioServerParameters:
    command = serve_command()
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(repo), env=clean_env(**env))


def test_a_session_over_stdio(code_repo):
    async def body():
        params = stdio(code_repo, CLAUDE_CODE_SESSION_ID="5d30935b-01ed-4ac6")
        async with Client(params, client_info=Implementation(name="claude-code", version="2.1.197")) as client:
            assert client.server_info.name == "wiki-memory"
            assert {t.name for t in (await client.list_tools()).tools} == PAGE_TOOLS
            out = await call(
                client,
                "write",
                title="Celery eager mode masks broker timeouts",
                type="gotcha",
                body="Tests pass locally and hang on the build server.\n\n## Fix\n\n"
                "CELERY_TASK_ALWAYS_EAGER=False in CI.",
            )
            found = await call(client, "search", query="tests hang on the build server")
            assert found["results"][0]["path"] == out["path"] and found["results"][0]["snippet"]
            page = await call(client, "read", page=found["results"][0]["path"])
            assert "CELERY_TASK_ALWAYS_EAGER=False in CI." in page["body"]
            await call(
                client,
                "edit",
                page=out["path"],
                operation="replace_section",
                heading="Fix",
                text="Run a real broker in CI.",
            )
            history = await call(client, "history", page=out["path"])
            assert [c["subject"] for c in history["commits"]] == [
                "update: gotchas/celery-eager-mode-masks-broker-timeouts (replace_section)",
                "remember: gotchas/celery-eager-mode-masks-broker-timeouts",
            ]
            assert "no page" in await fail(client, "read", page="Nothing like it")
            # A 10 MB argument crosses the pipe, is refused, and the server goes on.
            assert "over the" in await fail(client, "write", title="Huge", type="note", body="y" * 10_000_000)
            assert len((await call(client, "recent"))["pages"]) == 1

    run(body)
    wiki = resolve_project(code_repo).wiki
    log = git(
        wiki,
        "log",
        "-1",
        "--format=%an|%(trailers:key=Session-Id,valueonly,separator=)|%(trailers:key=Agent,valueonly,separator=)",
    )
    assert log.strip() == "claude-code|5d30935b-01ed-4ac6|claude-code"
    git(wiki, "fsck", "--strict")


def test_two_stdio_servers_writing_to_one_project_at_once(code_repo):
    """Two agents' servers on one project: every write lands, appends to one page included."""
    rounds = 8

    async def agent(name: str) -> None:
        async with Client(stdio(code_repo), client_info=Implementation(name=name, version="1")) as client:
            for i in range(rounds):
                await call(client, "write", title=f"{name} note {i}", type="note", body=f"from {name}, {i}")
                await call(client, "edit", page="Shared log", operation="append", text=f"- {name} {i}")

    async def body():
        async with Client(stdio(code_repo)) as client:
            await call(client, "write", title="Shared log", type="note", body="Entries:")
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, "codex")
            tg.start_soon(agent, "claude-code")

    run(body)
    wiki = resolve_project(code_repo).wiki
    subjects = git(wiki, "log", "--format=%s").splitlines()
    assert len([s for s in subjects if s.startswith("remember: notes/") and "note-" in s]) == 2 * rounds
    assert len([s for s in subjects if s == "update: notes/shared-log (append)"]) == 2 * rounds
    shared = (wiki / "notes" / "shared-log.md").read_text()
    for name in ("codex", "claude-code"):
        for i in range(rounds):
            assert f"- {name} {i}\n" in shared
    assert git(wiki, "status", "--porcelain") == ""
    git(wiki, "fsck", "--strict")
