"""Gemini CLI: hooks and the MCP server both in `settings.json` (`~/.gemini/` or the
project's `.gemini/`); hook timeouts are in milliseconds; stdout must be JSON only. The file
is edited as text (`jsonc`): Gemini CLI allows comments in it, and uninstall gives back the
very same bytes.

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

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import jsonc
from wiki_memory.install.base import (
    MCP_NAME,
    Change,
    Check,
    Context,
    Installer,
    hook_command,
    is_our_hook,
    is_our_server,
    register_check,
    server_entry,
)
from wiki_memory.install.configfile import get_server
from wiki_memory.install.hookfile import HookSpec, find_nested, nested_group

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
        settings = jsonc.JsoncFile(self.hooks_path(ctx))
        lines = [line for spec in SPECS if (line := _put_hook(settings, spec, ctx.command))]
        if ctx.mcp:
            lines += _put_server(settings, server_entry(ctx.command))
        return [settings.save(lines, ctx.dry_run)]

    def uninstall(self, ctx: Context) -> list[Change]:
        settings = jsonc.JsoncFile(self.hooks_path(ctx))
        lines = _take_hooks(settings) + _take_server(settings)
        return [settings.save(lines, ctx.dry_run)]

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return find_nested(jsonc.JsoncFile(self.hooks_path(ctx)).data)

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        return get_server(jsonc.JsoncFile(self.mcp_path(ctx)).data, "mcpServers")


# settings.json, edited as text: Gemini CLI reads it with comments and writes it with
# two-space indents and no last newline; what we add and remove is only our own span.


def _table(data: dict[str, Any], key: str, where: Path) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise WikiMemoryError(f"{where}: `{key}` is not an object; nothing was changed")
    return value


def _groups(hooks: dict[str, Any] | None, event: str, where: Path) -> list[Any] | None:
    groups = hooks.get(event) if hooks else None
    if groups is not None and not isinstance(groups, list):
        raise WikiMemoryError(f"{where}: hooks.{event} is not a list; nothing was changed")
    return groups


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_our_hook(handler.get("command"))


def _drop_ours(settings: jsonc.JsoncFile, event: str, groups: list[Any]) -> list[str]:
    """Take our handlers out of one event's groups (a group of ours alone, whole); the commands."""
    taken: list[str] = []
    for gi in range(len(groups) - 1, -1, -1):
        handlers = groups[gi].get("hooks") if isinstance(groups[gi], dict) else None
        if not isinstance(handlers, list):
            continue
        ours = [hi for hi, h in enumerate(handlers) if _is_ours(h)]
        if ours and len(ours) == len(handlers):
            settings.text = jsonc.remove(settings.text, ["hooks", event, gi])
        else:
            for hi in reversed(ours):
                settings.text = jsonc.remove(settings.text, ["hooks", event, gi, "hooks", hi])
        taken[:0] = [handlers[hi]["command"] for hi in ours]
    return taken


def _put_hook(settings: jsonc.JsoncFile, spec: HookSpec, command: str) -> str | None:
    """Our group for one event, in place; the line that says what changed, or None."""
    event = spec.event
    desired = nested_group(spec, gemini_hook_command(command, event))
    groups = _groups(_table(settings.data, "hooks", settings.path), event, settings.path)
    ours = [g for g in groups or () if isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks") or ())]
    if ours == [desired]:
        return None
    if groups:
        _drop_ours(settings, event, groups)
    hooks = _table(settings.data, "hooks", settings.path)
    if hooks is None:
        settings.text = jsonc.add_member(settings.text, [], "hooks", {event: [desired]})
    elif _groups(hooks, event, settings.path) is None:
        settings.text = jsonc.add_member(settings.text, ["hooks"], event, [desired])
    else:
        settings.text = jsonc.add_item(settings.text, ["hooks", event], desired)
    return f"{'~' if ours else '+'} {event}: {desired['hooks'][0]['command']}"


def _take_hooks(settings: jsonc.JsoncFile) -> list[str]:
    hooks = settings.data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    lines: list[str] = []
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        taken = _drop_ours(settings, event, groups)
        lines.extend(f"- {event}: {c}" for c in taken)
        if taken and not settings.data["hooks"][event]:
            settings.text = jsonc.remove(settings.text, ["hooks", event])
    if lines and not settings.data["hooks"]:
        settings.text = jsonc.remove(settings.text, ["hooks"])
    return lines


def _put_server(settings: jsonc.JsoncFile, entry: dict[str, Any]) -> list[str]:
    servers = _table(settings.data, "mcpServers", settings.path)
    current = servers.get(MCP_NAME) if servers else None
    if current == entry:
        return []
    if current is not None:
        settings.text = jsonc.remove(settings.text, ["mcpServers", MCP_NAME])
    if servers is None:
        settings.text = jsonc.add_member(settings.text, [], "mcpServers", {MCP_NAME: entry})
    else:
        settings.text = jsonc.add_member(settings.text, ["mcpServers"], MCP_NAME, entry)
    return [
        f"{'~' if current is not None else '+'} mcpServers.{MCP_NAME}: {' '.join([entry['command'], *entry['args']])}"
    ]


def _take_server(settings: jsonc.JsoncFile) -> list[str]:
    servers = settings.data.get("mcpServers")
    if not isinstance(servers, dict) or not is_our_server(servers.get(MCP_NAME)):
        return []
    path = ["mcpServers"] if list(servers) == [MCP_NAME] else ["mcpServers", MCP_NAME]
    settings.text = jsonc.remove(settings.text, path)
    return [f"- mcpServers.{MCP_NAME}"]


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
