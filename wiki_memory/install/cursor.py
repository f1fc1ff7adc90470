"""Cursor: hooks in `hooks.json` (`version: 1`, flat lists of `{command}`) and the MCP
server in `mcp.json`, under `~/.cursor/` or the project's `.cursor/`.

Besides the events of the design (sessionStart, beforeSubmitPrompt, postToolUse, stop,
sessionEnd) we hook afterAgentResponse: Cursor's stop does not carry the final message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wiki_memory.install.base import Change, Context, Installer, hook_command, server_entry
from wiki_memory.install.configfile import JsonFile, get_server, remove_server, set_server
from wiki_memory.install.hookfile import HookSpec, add_flat, find_flat, remove_flat

SPECS = [
    HookSpec(e)
    for e in ("sessionStart", "beforeSubmitPrompt", "postToolUse", "afterAgentResponse", "stop", "sessionEnd")
]


class CursorHooksFile(JsonFile):
    def is_empty(self) -> bool:
        return not {k: v for k, v in self.data.items() if k != "version"}


class CursorInstaller(Installer):
    agent = "cursor"
    binaries = ("cursor-agent", "cursor")
    config_dirs = (".cursor",)

    def _dir(self, ctx: Context) -> Path:
        return (ctx.home if ctx.scope == "user" else ctx.root) / ".cursor"

    def hooks_path(self, ctx: Context) -> Path:
        return self._dir(ctx) / "hooks.json"

    def mcp_path(self, ctx: Context) -> Path:
        return self._dir(ctx) / "mcp.json"

    def expected_events(self) -> list[str]:
        return [s.event for s in SPECS]

    def install(self, ctx: Context) -> list[Change]:
        hooks = CursorHooksFile(self.hooks_path(ctx))
        if not hooks.existed:
            hooks.data["version"] = 1  # an existing file keeps what it had: uninstall restores it
        lines = add_flat(hooks.data, SPECS, lambda e: hook_command(ctx.command, self.agent, e), str(hooks.path))
        changes = [hooks.save(lines, ctx.dry_run)]
        if ctx.mcp:
            mcp = JsonFile(self.mcp_path(ctx))
            changes.append(
                mcp.save(set_server(mcp.data, "mcpServers", server_entry(ctx.command), str(mcp.path)), ctx.dry_run)
            )
        return changes

    def uninstall(self, ctx: Context) -> list[Change]:
        hooks = CursorHooksFile(self.hooks_path(ctx))
        changes = [hooks.save(remove_flat(hooks.data, str(hooks.path)), ctx.dry_run)]
        mcp = JsonFile(self.mcp_path(ctx))
        changes.append(mcp.save(remove_server(mcp.data, "mcpServers"), ctx.dry_run))
        return changes

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return find_flat(CursorHooksFile(self.hooks_path(ctx)).data)

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        return get_server(JsonFile(self.mcp_path(ctx)).data, "mcpServers")


INSTALLER = CursorInstaller()
