"""Claude Desktop: MCP only, in `claude_desktop_config.json` (`mcpServers`), in the app's
settings folder (macOS `~/Library/Application Support/Claude/`, Windows `%APPDATA%\\Claude\\`,
elsewhere `~/.config/Claude/`). It reads no instruction file."""

from __future__ import annotations

from wiki_memory.install.mcp_client import app_config_dir, simple

INSTALLER = simple(
    "claude-desktop",
    lambda ctx: app_config_dir(ctx, mac="Claude", windows="Claude", linux="Claude") / "claude_desktop_config.json",
)
