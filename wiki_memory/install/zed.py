"""Zed: MCP only, in its settings file (JSON with comments) under `context_servers`:
`~/.config/zed/settings.json`, or the project's `.zed/settings.json`. Zed's agent reads
the project's `AGENTS.md` (among other rules files)."""

from __future__ import annotations

from typing import Any

from wiki_memory.install.base import server_entry
from wiki_memory.install.mcp_client import simple


def _entry(command: str) -> dict[str, Any]:
    return {**server_entry(command), "env": {}}


INSTALLER = simple(
    "zed",
    lambda ctx: ctx.home / ".config" / "zed" / "settings.json",
    table="context_servers",
    entry=_entry,
    project_file=".zed/settings.json",
    instructions="agents-md",
    binaries=("zed", "zeditor"),
)
