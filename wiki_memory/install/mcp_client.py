"""Clients that reach memory only through MCP (no hooks): Claude Desktop, VS Code, Zed,
Windsurf, GitHub Copilot CLI (`claude_desktop`, `vscode`, `zed`, `windsurf`, `copilot_cli`;
Goose, whose file is YAML, is `goose`).

Each writes our server entry in its client's own JSON file, in that client's own shape, as
text (`jsonc`): comments, key order and indentation stay, and uninstall gives back the very
bytes there were. The same rules as every installer: merged, backed up, idempotent, exact
uninstall; the doctor starts the server through the written entry and lists its tools.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import jsonc
from wiki_memory.install.base import MCP_NAME, Change, Check, Context, Installer, is_our_server, server_entry


def app_config_dir(ctx: Context, *, mac: str, windows: str, linux: str) -> Path:
    """A desktop application's settings folder on this system (under `ctx.home`)."""
    if sys.platform == "darwin":
        return ctx.home / "Library" / "Application Support" / mac
    if sys.platform == "win32":
        return Path(ctx.env.get("APPDATA") or ctx.home / "AppData" / "Roaming") / windows
    return Path(ctx.env.get("XDG_CONFIG_HOME") or ctx.home / ".config") / linux


class McpClient(Installer):
    """An MCP-only client: one JSON file holds its servers under `table`."""

    table: str = "mcpServers"
    project_file: str | None = None  # the project-scope file, relative to the repository
    instructions: str | None = None  # the `export` target whose file the client reads

    def user_path(self, ctx: Context) -> Path:
        raise NotImplementedError

    def entry(self, command: str) -> dict[str, Any]:
        """Our server entry in this client's shape."""
        return server_entry(command)

    # -- where ---------------------------------------------------------------------------------
    def mcp_path(self, ctx: Context) -> Path:
        if ctx.scope == "user":
            return self.user_path(ctx)
        if self.project_file is None:
            raise WikiMemoryError(f"{self.agent} has no project settings file; use --scope user")
        return ctx.root / self.project_file

    def hooks_path(self, ctx: Context) -> Path:
        return self.mcp_path(ctx)

    def is_connected(self, ctx: Context) -> bool:
        if ctx.scope == "project" and self.project_file is None:
            return False
        return super().is_connected(ctx)

    def expected_events(self) -> list[str]:
        return []  # no hooks: memory comes through MCP and the instruction file it reads

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return {}

    # -- install ---------------------------------------------------------------------------------
    def install(self, ctx: Context) -> list[Change]:
        if not ctx.mcp:
            return [Change(None, "note", [f"{self.agent} has no hooks: with --no-mcp there is nothing to install"])]
        settings = jsonc.JsoncFile(self.mcp_path(ctx))
        return [settings.save(put_server(settings, self.table, self.entry(ctx.command)), ctx.dry_run)]

    def uninstall(self, ctx: Context) -> list[Change]:
        path = self.mcp_path(ctx)
        if not path.exists():
            return [Change(path, "unchanged", [])]
        settings = jsonc.JsoncFile(path)
        return [settings.save(take_server(settings, self.table), ctx.dry_run)]

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        path = self.mcp_path(ctx)
        if not path.exists():
            return None
        servers = jsonc.JsoncFile(path).data.get(self.table)
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        return dict(entry) if isinstance(entry, dict) and is_our_server(entry) else None

    # -- doctor ------------------------------------------------------------------------------------
    def doctor(self, ctx: Context) -> list[Check]:
        """Is the client on this machine; is our entry there; does it start a server."""
        found = self.detect(ctx)
        checks = [Check(self.agent, "installed", "ok" if found else "skip", self._where(ctx, found))]
        checks.extend(self.check_mcp(ctx))
        checks.extend(self.check_mcp_server(ctx))
        return checks

    def _where(self, ctx: Context, found: bool) -> str:
        binary = self.binary(ctx)
        if binary:
            return binary
        return f"{self.user_path(ctx).parent} exists" if found else f"{self.user_path(ctx).parent} not found"

    def detect(self, ctx: Context) -> bool:
        return self.binary(ctx) is not None or self.user_path(ctx).parent.is_dir()


def put_server(settings: jsonc.JsoncFile, table: str, entry: dict[str, Any]) -> list[str]:
    """Our entry in `settings[table]`, replacing an older one of ours in place; the lines changed."""
    servers = settings.data.get(table)
    if servers is not None and not isinstance(servers, dict):
        raise WikiMemoryError(f"{settings.path}: `{table}` is not an object; nothing was changed")
    current = servers.get(MCP_NAME) if servers else None
    if current == entry:
        return []
    if current is not None and not is_our_server(current):
        raise WikiMemoryError(
            f"{settings.path}: `{table}.{MCP_NAME}` is someone else's server; rename it, then run this again"
        )
    if current is not None:
        settings.text = jsonc.remove(settings.text, [table, MCP_NAME])
    if servers is None:
        settings.text = jsonc.add_member(settings.text, [], table, {MCP_NAME: entry})
    else:
        settings.text = jsonc.add_member(settings.text, [table], MCP_NAME, entry)
    words = " ".join([str(entry.get("command")), *[str(a) for a in entry.get("args", [])]])
    return [f"{'~' if current is not None else '+'} {table}.{MCP_NAME}: {words}"]


def take_server(settings: jsonc.JsoncFile, table: str) -> list[str]:
    """Our entry out of `settings[table]` (the table too when nothing else is in it)."""
    servers = settings.data.get(table)
    if not isinstance(servers, dict) or not is_our_server(servers.get(MCP_NAME)):
        return []
    path: list[str | int] = [table] if list(servers) == [MCP_NAME] else [table, MCP_NAME]
    settings.text = jsonc.remove(settings.text, path)
    return [f"- {table}.{MCP_NAME}"]


def simple(
    agent: str,
    user_path: Callable[[Context], Path],
    *,
    table: str = "mcpServers",
    entry: Callable[[str], dict[str, Any]] = server_entry,
    project_file: str | None = None,
    instructions: str | None = None,
    binaries: tuple[str, ...] = (),
) -> McpClient:
    """An MCP client installer from its facts (what each client module declares)."""

    class Client(McpClient):
        def user_path(self, ctx: Context) -> Path:
            return user_path(ctx)

        def entry(self, command: str) -> dict[str, Any]:
            return entry(command)

    client = Client()
    client.agent, client.table, client.project_file = agent, table, project_file
    client.instructions, client.binaries = instructions, binaries
    return client


def home_env(ctx: Context, var: str, default: Path) -> Path:
    """A folder an environment variable may move (COPILOT_HOME, ...)."""
    value = ctx.env.get(var)
    return Path(os.path.expanduser(value)) if value else default
