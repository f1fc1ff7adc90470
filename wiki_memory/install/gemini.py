"""Gemini CLI: hooks and the MCP server both in `settings.json` (`~/.gemini/` or the
project's `.gemini/`); hook timeouts are in milliseconds; stdout must be JSON only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wiki_memory.install.base import Change, Context, Installer, hook_command, server_entry
from wiki_memory.install.configfile import JsonFile, get_server, remove_server, set_server
from wiki_memory.install.hookfile import HookSpec, add_nested, find_nested, remove_nested

_NAME = {"name": "wiki-memory"}
SPECS = [
    HookSpec("SessionStart", None, {**_NAME, "timeout": 30000}),
    HookSpec("BeforeAgent", None, {**_NAME, "timeout": 10000}),
    HookSpec("AfterTool", None, {**_NAME, "timeout": 30000}),
    HookSpec("AfterAgent", None, {**_NAME, "timeout": 10000}),
    HookSpec("PreCompress", None, {**_NAME, "timeout": 10000}),
    HookSpec("SessionEnd", None, {**_NAME, "timeout": 5000}),
]


class GeminiInstaller(Installer):
    agent = "gemini"
    binaries = ("gemini",)
    config_dirs = (".gemini",)

    def hooks_path(self, ctx: Context) -> Path:
        base = ctx.home if ctx.scope == "user" else ctx.root
        return base / ".gemini" / "settings.json"

    mcp_path = hooks_path  # one file holds both

    def expected_events(self) -> list[str]:
        return [s.event for s in SPECS]

    def install(self, ctx: Context) -> list[Change]:
        settings = JsonFile(self.hooks_path(ctx))
        lines = add_nested(settings.data, SPECS, lambda e: hook_command(ctx.command, self.agent, e), str(settings.path))
        if ctx.mcp:
            lines += set_server(settings.data, "mcpServers", server_entry(ctx.command), str(settings.path))
        return [settings.save(lines, ctx.dry_run)]

    def uninstall(self, ctx: Context) -> list[Change]:
        settings = JsonFile(self.hooks_path(ctx))
        lines = remove_nested(settings.data, str(settings.path)) + remove_server(settings.data, "mcpServers")
        return [settings.save(lines, ctx.dry_run)]

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return find_nested(JsonFile(self.hooks_path(ctx)).data)

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        return get_server(JsonFile(self.mcp_path(ctx)).data, "mcpServers")


INSTALLER = GeminiInstaller()
