"""Claude Code: hooks in `settings.json` (`~/.claude/` or the project's `.claude/`), the MCP
server in `~/.claude.json` (user scope) or the project's `.mcp.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wiki_memory.install.base import Change, Context, Installer, hook_command, server_entry
from wiki_memory.install.configfile import JsonFile, get_server, remove_server, set_server
from wiki_memory.install.hookfile import HookSpec, add_nested, find_nested, remove_nested

# Timeouts in seconds. PostToolUse runs async: Claude does not wait for it between tools.
# PreToolUse on the file tools hands over the pages about the file (recall), and on Bash the gotcha
# or procedure a command that failed here before walks into; Claude waits for it (a few ms when
# the command matches nothing: one line of a precomputed table).
SPECS = [
    HookSpec("SessionStart", "startup|resume|clear|compact", {"timeout": 30}),
    HookSpec("UserPromptSubmit", None, {"timeout": 10}),
    HookSpec("PreToolUse", "Read|Edit|Write|MultiEdit|Bash", {"timeout": 10}),
    HookSpec("PostToolUse", "*", {"async": True, "timeout": 30}),
    HookSpec("PostToolUseFailure", "*", {"timeout": 30}),
    HookSpec("Stop", None, {"timeout": 10}),
    HookSpec("PreCompact", None, {"timeout": 10}),
    HookSpec("SessionEnd", None, {"timeout": 5}),
]


class ClaudeCodeInstaller(Installer):
    agent = "claude-code"
    binaries = ("claude",)
    config_dirs = (".claude",)

    def hooks_path(self, ctx: Context) -> Path:
        base = ctx.home if ctx.scope == "user" else ctx.root
        return base / ".claude" / "settings.json"

    def mcp_path(self, ctx: Context) -> Path:
        return ctx.home / ".claude.json" if ctx.scope == "user" else ctx.root / ".mcp.json"

    def expected_events(self) -> list[str]:
        return [s.event for s in SPECS]

    def install(self, ctx: Context) -> list[Change]:
        settings = JsonFile(self.hooks_path(ctx))
        lines = add_nested(settings.data, SPECS, lambda e: hook_command(ctx.command, self.agent, e), str(settings.path))
        changes = [settings.save(lines, ctx.dry_run)]
        if ctx.mcp:
            mcp = JsonFile(self.mcp_path(ctx))
            entry = {"type": "stdio", **server_entry(ctx.command), "env": {}}
            changes.append(mcp.save(set_server(mcp.data, "mcpServers", entry, str(mcp.path)), ctx.dry_run))
        return changes

    def uninstall(self, ctx: Context) -> list[Change]:
        settings = JsonFile(self.hooks_path(ctx))
        changes = [settings.save(remove_nested(settings.data, str(settings.path)), ctx.dry_run)]
        mcp = JsonFile(self.mcp_path(ctx))
        changes.append(mcp.save(remove_server(mcp.data, "mcpServers"), ctx.dry_run))
        return changes

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return find_nested(JsonFile(self.hooks_path(ctx)).data)

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        return get_server(JsonFile(self.mcp_path(ctx)).data, "mcpServers")


INSTALLER = ClaudeCodeInstaller()
