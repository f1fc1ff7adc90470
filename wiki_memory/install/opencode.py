"""OpenCode: a plugin file in its plugin folder and the MCP server in `opencode.json`.

- The plugin (`opencode_plugin.js`, shipped beside this module) is written as
  `wiki-memory.js` in `$XDG_CONFIG_HOME/opencode/plugins/` (user scope; `~/.config/...`) or
  the project's `.opencode/plugins/`, with this installation's command written into it.
  OpenCode loads every `.js` file there; there is nothing to register.
- The MCP server is `mcp.wiki-memory` (`{"type": "local", "command": [..., "serve"]}`) in
  the configuration file already there (`opencode.json`, `opencode.jsonc` or the older
  `config.json`; in project scope also `.opencode/opencode.json[c]`), else a new
  `opencode.json`. The file is edited as text (`jsonc`): its comments and layout stay, and
  uninstall gives back the very same bytes.
- Uninstall removes our plugin file (and the plugin folder if that leaves it empty) and our
  MCP entry, nothing else. OpenCode itself installs its plugin SDK beside any plugin
  (`package.json`, `node_modules/`): those are OpenCode's and stay.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import jsonc
from wiki_memory.install.base import MCP_NAME, Change, Check, Context, Installer
from wiki_memory.install.configfile import write_atomic

PLUGIN_NAME = "wiki-memory.js"
#: The OpenCode events the plugin forwards (see capture/opencode.py).
EVENTS = (
    "session.created",
    "chat.message",
    "message.part.updated",
    "session.idle",
    "session.error",
    "session.compacted",
)
_COMMAND_LINE = re.compile(r"^const WIKI_MEMORY = (\[.*\]) // wiki-memory:command", re.M)
_MARKER = "// wiki-memory:command"


def plugin_template() -> str:
    return resources.files("wiki_memory.install").joinpath("opencode_plugin.js").read_text(encoding="utf-8")


def command_argv(command: str) -> list[str]:
    """This installation's `wiki-memory` as an argument list (a path, or `python -m wiki_memory`)."""
    return shlex.split(command) if " -m wiki_memory" in command else [command]


def render_plugin(argv: list[str]) -> str:
    """The plugin with the command `argv` written in."""
    template = plugin_template()
    line = f"const WIKI_MEMORY = {json.dumps(argv)} {_MARKER}"
    rendered, n = _COMMAND_LINE.subn(lambda _: line, template, count=1)
    if n != 1:
        raise WikiMemoryError("the OpenCode plugin template has no command line (a broken installation?)")
    return rendered


def plugin_command(text: str) -> list[str] | None:
    """The command a plugin file of ours runs, or None when the file is not ours."""
    m = _COMMAND_LINE.search(text)
    if not m:
        return None
    try:
        argv = json.loads(m.group(1))
    except ValueError:
        return None
    return [str(a) for a in argv] if isinstance(argv, list) and argv else None


def mcp_entry_for(command: str) -> dict[str, Any]:
    return {"type": "local", "command": [*command_argv(command), "serve"], "enabled": True}


def is_our_mcp(entry: Any) -> bool:
    """Whether an OpenCode MCP entry runs our `serve`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), list):
        return False
    words = [w for w in entry["command"] if isinstance(w, str)]
    return "serve" in words and any(Path(w).name == "wiki-memory" or w == "wiki_memory" for w in words)


class OpenCodeInstaller(Installer):
    agent = "opencode"
    binaries = ("opencode",)

    def config_dir(self, ctx: Context) -> Path:
        if ctx.scope == "project":
            return ctx.root / ".opencode"
        xdg = ctx.env.get("XDG_CONFIG_HOME")
        return (Path(xdg) if xdg and os.path.isabs(xdg) else ctx.home / ".config") / "opencode"

    def hooks_path(self, ctx: Context) -> Path:
        return self.config_dir(ctx) / "plugins" / PLUGIN_NAME

    def mcp_path(self, ctx: Context) -> Path:
        """The configuration file that is there (the first of OpenCode's names), else a new `opencode.json`."""
        names = ["opencode.json", "opencode.jsonc", "config.json"]
        candidates = [self.config_dir(ctx) / n for n in names]
        if ctx.scope == "project":
            candidates = [ctx.root / n for n in names[:2]] + candidates[:2]
        found = next((p for p in candidates if p.is_file()), None)
        return found or candidates[0]

    def detect(self, ctx: Context) -> bool:
        if self.binary(ctx) is not None:
            return True
        xdg = self.config_dir(Context(scope="user", home=ctx.home, env=ctx.env))
        return xdg.is_dir() or (ctx.home / ".local" / "share" / "opencode").is_dir()

    def expected_events(self) -> list[str]:
        return list(EVENTS)

    # -- the plugin ---------------------------------------------------------------------------
    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        """The events our plugin forwards, with the hook command it runs for each."""
        path = self.hooks_path(ctx)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as e:
            raise WikiMemoryError(f"{path} cannot be read: {e}") from None
        argv = plugin_command(text)
        if argv is None:
            return {}
        command = " ".join(shlex.quote(a) for a in argv)
        return {event: [f"{command} hook {self.agent} {event}"] for event in EVENTS}

    def _install_plugin(self, ctx: Context) -> Change:
        path = self.hooks_path(ctx)
        wanted = render_plugin(command_argv(ctx.command))
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == wanted:
            return Change(path, "unchanged", [])
        if current is not None and plugin_command(current) is None:
            raise WikiMemoryError(f"{path} exists and is not wiki-memory's plugin; move it aside (nothing was changed)")
        line = f"{'~' if current is not None else '+'} plugin: {' '.join(command_argv(ctx.command))} hook opencode ..."
        if not ctx.dry_run:
            write_atomic(path, wanted)
        return Change(path, "update" if current is not None else "create", [line])

    def _uninstall_plugin(self, ctx: Context) -> Change:
        path = self.hooks_path(ctx)
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Change(path, "unchanged", [])
        if plugin_command(current) is None:
            return Change(path, "unchanged", [])
        if not ctx.dry_run:
            path.unlink()
        return Change(path, "delete", ["- plugin"])

    # -- the MCP entry ------------------------------------------------------------------------
    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        servers = jsonc.JsoncFile(self.mcp_path(ctx)).data.get("mcp")
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        if not isinstance(entry, dict):
            return None
        command = entry.get("command")
        if isinstance(command, list) and command:
            # As the doctor's checks read every agent's entry: a command and its arguments.
            return {**entry, "command": str(command[0]), "args": [str(a) for a in command[1:]]}
        return dict(entry)

    def _install_mcp(self, ctx: Context) -> Change:
        config = jsonc.JsoncFile(self.mcp_path(ctx))
        entry = mcp_entry_for(ctx.command)
        servers = config.data.get("mcp")
        if servers is not None and not isinstance(servers, dict):
            raise WikiMemoryError(f"{config.path}: `mcp` is not an object of servers; nothing was changed")
        current = servers.get(MCP_NAME) if servers else None
        if current == entry:
            return Change(config.path, "unchanged", [])
        if current is not None and not is_our_mcp(current):
            raise WikiMemoryError(f"{config.path}: mcp.{MCP_NAME} is not wiki-memory's server; nothing was changed")
        if current is not None:
            config.text = jsonc.remove(config.text, ["mcp", MCP_NAME])
        if servers is None:
            config.text = jsonc.add_member(config.text, [], "mcp", {MCP_NAME: entry})
        else:
            config.text = jsonc.add_member(config.text, ["mcp"], MCP_NAME, entry)
        line = f"{'~' if current is not None else '+'} mcp.{MCP_NAME}: {' '.join(entry['command'])}"
        return config.save([line], ctx.dry_run)

    def _uninstall_mcp(self, ctx: Context) -> Change:
        config = jsonc.JsoncFile(self.mcp_path(ctx))
        servers = config.data.get("mcp")
        if not isinstance(servers, dict) or not is_our_mcp(servers.get(MCP_NAME)):
            return Change(config.path, "unchanged", [])
        config.text = jsonc.remove(config.text, ["mcp"] if list(servers) == [MCP_NAME] else ["mcp", MCP_NAME])
        return config.save([f"- mcp.{MCP_NAME}"], ctx.dry_run)

    # -- the interface --------------------------------------------------------------------------
    def install(self, ctx: Context) -> list[Change]:
        changes = [self._install_plugin(ctx)]
        if ctx.mcp:
            changes.append(self._install_mcp(ctx))
        return changes

    def uninstall(self, ctx: Context) -> list[Change]:
        changes = [self._uninstall_plugin(ctx), self._uninstall_mcp(ctx)]
        if not ctx.dry_run and any(c.action == "delete" for c in changes):
            # The folders install made, if nothing else is in them now.
            for folder in (self.hooks_path(ctx).parent, self.config_dir(ctx)):
                try:
                    folder.rmdir()
                except OSError:
                    break
        return changes

    def doctor(self, ctx: Context) -> list[Check]:
        checks = super().doctor(ctx)
        path = self.hooks_path(ctx)
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            return checks
        argv = plugin_command(current)
        if argv is not None and current != render_plugin(argv):
            checks.append(
                Check(
                    self.agent,
                    "plugin version",
                    "warn",
                    f"{path} was written by another version of wiki-memory; run `wiki-memory install opencode"
                    + (" --scope project" if ctx.scope == "project" else "")
                    + "` again",
                )
            )
        return checks


INSTALLER = OpenCodeInstaller()
