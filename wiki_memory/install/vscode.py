"""VS Code (Copilot's agent mode): MCP only, in `mcp.json` under `servers`, each with
`"type": "stdio"`: the user's (`Code/User/mcp.json` in the app's settings folder) or the
workspace's `.vscode/mcp.json`. Copilot reads `.github/copilot-instructions.md`."""

from __future__ import annotations

from typing import Any

from wiki_memory.install.base import server_entry
from wiki_memory.install.mcp_client import app_config_dir, simple


def _entry(command: str) -> dict[str, Any]:
    return {"type": "stdio", **server_entry(command)}


INSTALLER = simple(
    "vscode",
    lambda ctx: app_config_dir(ctx, mac="Code/User", windows="Code/User", linux="Code/User") / "mcp.json",
    table="servers",
    entry=_entry,
    project_file=".vscode/mcp.json",
    instructions="copilot",
    binaries=("code",),
)
