"""Windsurf: MCP only, in `~/.codeium/windsurf/mcp_config.json` (`mcpServers`). Cascade
reads the project's `AGENTS.md` and `.windsurfrules`."""

from __future__ import annotations

from wiki_memory.install.mcp_client import simple

INSTALLER = simple(
    "windsurf",
    lambda ctx: ctx.home / ".codeium" / "windsurf" / "mcp_config.json",
    instructions="agents-md",
    binaries=("windsurf",),
)
