"""Gemini CLI: hooks and the MCP server both in `settings.json` (`~/.gemini/` or the
project's `.gemini/`); hook timeouts are in milliseconds; stdout must be JSON only.

What Gemini CLI 0.61 needs of a hook command (see capture/gemini.py): a hook that exits with
a code other than 0 or 1 and prints anything vetoes the turn or hides a tool's result, and a
hook past its timeout gets SIGTERM while Gemini waits for its stdout to close. So each
command `exec`s wiki-memory (the signal reaches it, not only the shell) with stderr sent to
/dev/null (a missing executable says nothing Gemini could take for a veto: it is a warning).
PreCompress is not hooked: Gemini fires it before every model request.

Hooks run only in folders the user trusted: the doctor says when this project is not one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wiki_memory.install.base import Change, Check, Context, Installer, hook_command, register_check, server_entry
from wiki_memory.install.configfile import JsonFile, get_server, remove_server, set_server
from wiki_memory.install.hookfile import HookSpec, add_nested, find_nested, remove_nested

_NAME = {"name": "wiki-memory"}
SPECS = [
    HookSpec("SessionStart", None, {**_NAME, "timeout": 10000}),
    HookSpec("BeforeAgent", None, {**_NAME, "timeout": 5000}),
    HookSpec("AfterTool", None, {**_NAME, "timeout": 5000}),
    HookSpec("AfterAgent", None, {**_NAME, "timeout": 5000}),
    HookSpec("SessionEnd", None, {**_NAME, "timeout": 5000}),
]


def gemini_hook_command(command: str, event: str) -> str:
    return f"exec {hook_command(command, 'gemini', event)} 2>/dev/null"


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
        lines = add_nested(settings.data, SPECS, lambda e: gemini_hook_command(ctx.command, e), str(settings.path))
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


def trust_of(folder: Path, env: dict[str, str] | Any, home: Path) -> tuple[bool | None, str]:
    """Whether Gemini CLI trusts `folder` (None: no rule says), and where that comes from, as
    Gemini CLI 0.61 decides it: the environment, `security.folderTrust.enabled`, then the
    longest matching rule of `trustedFolders.json`."""
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false" or env.get("GEMINI_RESTRICTED_MODE") == "true":
        return False, "GEMINI_CLI_TRUST_WORKSPACE=false"
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True, "GEMINI_CLI_TRUST_WORKSPACE=true"
    settings = _json(home / ".gemini" / "settings.json")
    enabled = ((settings.get("security") or {}).get("folderTrust") or {}).get("enabled", True)
    if enabled is False:
        return True, "folder trust is off (security.folderTrust.enabled)"
    rules_path = Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini" / "trustedFolders.json")
    rules = _json(rules_path)
    target = os.path.realpath(folder)
    best, verdict = -1, None
    for rule, level in rules.items():
        base = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        base = os.path.realpath(base)
        if (target == base or target.startswith(base.rstrip(os.sep) + os.sep)) and len(rule) > best:
            best, verdict = len(rule), level
    if verdict == "DO_NOT_TRUST":
        return False, f"{rules_path} says DO_NOT_TRUST"
    if verdict in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True, f"{rules_path}"
    return None, f"no rule in {rules_path}"


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@register_check("gemini")
def folder_trust(ctx: Context, installer: Installer) -> list[Check]:
    """Gemini CLI runs hooks only in trusted folders: is this project one?"""
    try:
        if not installer.installed_hooks(ctx):
            return []
    except Exception:  # noqa: BLE001 - the hooks check reports an unreadable file
        return []
    trusted, why = trust_of(ctx.root, ctx.env, ctx.home)
    if trusted:
        return [Check("gemini", "folder trust", "ok", f"{ctx.root} is trusted ({why})")]
    return [
        Check(
            "gemini",
            "folder trust",
            "warn",
            f"{ctx.root} is not a trusted folder ({why}): Gemini CLI runs no hooks there; "
            "trust it when Gemini CLI asks, or with `/permissions trust` in Gemini CLI",
        )
    ]
