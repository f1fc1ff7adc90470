"""Shared helpers for the MCP server tests: running async test bodies, calling tools through the
SDK's own client, spawning `wiki-memory serve`."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from wiki_memory.mcp.scope import SESSION_ENV

PAGE_TOOLS = {
    *("search", "read", "write", "edit", "delete", "recent", "history", "links", "handoff", "handoff_write"),
    *("feedback", "supersede"),
}


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async test body to completion (the SDK's client is async); a failure inside the
    client's task groups is raised as itself, not wrapped in exception groups."""
    try:
        return anyio.run(fn)
    except BaseException as e:
        leaf: BaseException = e
        while len(getattr(leaf, "exceptions", ())) == 1:
            leaf = leaf.exceptions[0]  # type: ignore[attr-defined]
        if leaf is e:
            raise
        raise leaf from None


def serve_command() -> list[str]:
    """The `wiki-memory serve` an agent spawns: the installed console script."""
    script = Path(sys.executable).parent / "wiki-memory"
    if script.exists():
        return [str(script), "serve"]
    found = shutil.which("wiki-memory")
    return [found, "serve"] if found else [sys.executable, "-m", "wiki_memory", "serve"]


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment for a spawned server, without an enclosing agent's session."""
    env = {k: v for k, v in os.environ.items() if k not in SESSION_ENV and k != "CLAUDE_PROJECT_DIR"}
    env.update(extra)
    return env


async def call(client: Any, tool: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; return its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {result.content[0].text}"
    assert result.content and result.content[0].type == "text" and result.content[0].text.strip()
    return result.structured_content


async def fail(client: Any, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a tool error; return its message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.content[0].text}"
    text = result.content[0].text
    assert "\n  For further information" not in text and "Traceback" not in text
    return text
