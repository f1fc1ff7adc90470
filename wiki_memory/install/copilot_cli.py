"""GitHub Copilot CLI: MCP only, in `~/.copilot/mcp-config.json` (`$COPILOT_HOME` moves the
folder) under `mcpServers`, each with `"type": "local"` and the tools it may call
(`["*"]`). It reads `.github/copilot-instructions.md` and `AGENTS.md`."""

from __future__ import annotations

from typing import Any

from wiki_memory.install.base import server_entry
from wiki_memory.install.mcp_client import home_env, simple


def _entry(command: str) -> dict[str, Any]:
    return {"type": "local", **server_entry(command), "tools": ["*"]}


INSTALLER = simple(
    "copilot-cli",
    lambda ctx: home_env(ctx, "COPILOT_HOME", ctx.home / ".copilot") / "mcp-config.json",
    entry=_entry,
    instructions="copilot",
    binaries=("copilot",),
)
