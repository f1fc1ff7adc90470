"""Codex: hooks in `hooks.json` under `CODEX_HOME` (default `~/.codex`, or the project's
`.codex/`), the MCP server as `[mcp_servers.wiki-memory]` in `config.toml` beside it, and
trust in the hooks recorded through `codex app-server`.

Codex silently skips a hook that is not trusted. After writing `hooks.json` the installer
asks `codex app-server` for the hooks it sees (`hooks/list`), writes
`hooks.state.<key>.trusted_hash` for ours (`config/batchWrite`), and lists them again to
verify; without a `codex` executable it says how to trust them by hand. A hook's key holds
its position (`<file>:<event>:<group>:<handler>`), so uninstalling moves the trust of any
other hook whose position changed along with it, and drops ours.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import Change, Check, Context, Installer, hook_command, is_our_hook, server_entry
from wiki_memory.install.codex_app_server import AppServer
from wiki_memory.install.configfile import (
    JsonFile,
    TomlFile,
    backup,
    get_server,
    prune_empty,
    remove_server,
    set_server,
)
from wiki_memory.install.hookfile import HookSpec, add_nested, find_nested, nested_keys, remove_nested

# Timeouts in seconds; Codex caps SessionEnd at 3. PreToolUse for `apply_patch` (recall of the
# pages about the files it edits) and for the shell (`Bash`): a command that failed here before
# gets its gotcha; one that matches nothing reads one line of a precomputed table.
SPECS = [
    HookSpec("SessionStart", None, {"timeout": 30}),
    HookSpec("UserPromptSubmit", None, {"timeout": 10}),
    HookSpec("PreToolUse", "apply_patch|Bash", {"timeout": 10}),
    HookSpec("PostToolUse", "*", {"timeout": 30}),
    HookSpec("Stop", None, {"timeout": 10}),
    HookSpec("PreCompact", None, {"timeout": 10}),
    HookSpec("SessionEnd", None, {"timeout": 3}),
]

TRUST_BY_HAND = (
    "Codex runs hooks only once they are trusted: start `codex`, open /hooks and trust the "
    "wiki-memory hooks, or run `wiki-memory install codex --codex /path/to/codex` to trust them "
    "through `codex app-server`."
)


def _super_table() -> Any:
    import tomlkit  # deferred: tomlkit loads only when a TOML config is written

    return tomlkit.table(is_super_table=True)


class CodexInstaller(Installer):
    agent = "codex"
    binaries = ("codex",)
    config_dirs = (".codex",)

    def codex_home(self, ctx: Context) -> Path:
        if ctx.scope == "project":
            return ctx.root / ".codex"
        value = ctx.env.get("CODEX_HOME")
        return Path(value).expanduser() if value else ctx.home / ".codex"

    def hooks_path(self, ctx: Context) -> Path:
        return self.codex_home(ctx) / "hooks.json"

    def mcp_path(self, ctx: Context) -> Path:
        return self.codex_home(ctx) / "config.toml"

    def user_config(self, ctx: Context) -> Path:
        """Where Codex keeps trust: the user's config.toml, whatever the scope."""
        value = ctx.env.get("CODEX_HOME")
        return (Path(value).expanduser() if value else ctx.home / ".codex") / "config.toml"

    def binary(self, ctx: Context) -> str | None:
        return ctx.codex or super().binary(ctx)

    def expected_events(self) -> list[str]:
        return [s.event for s in SPECS]

    # -- install --------------------------------------------------------------------------------
    def install(self, ctx: Context) -> list[Change]:
        hooks = JsonFile(self.hooks_path(ctx))
        lines = add_nested(hooks.data, SPECS, lambda e: hook_command(ctx.command, self.agent, e), str(hooks.path))
        changes = [hooks.save(lines, ctx.dry_run)]
        if ctx.mcp:
            config = TomlFile(self.mcp_path(ctx))
            entry = server_entry(ctx.command)
            lines = set_server(config.data, "mcp_servers", entry, str(config.path), new_table=_super_table)
            changes.append(config.save(lines, ctx.dry_run))
        changes.append(self.trust(ctx))
        return changes

    def _server_cwd(self, ctx: Context) -> Path:
        return ctx.root if ctx.scope == "project" else ctx.home

    def _ours(self, hooks: list[dict[str, Any]], ctx: Context) -> list[dict[str, Any]]:
        path = str(self.hooks_path(ctx))
        return [h for h in hooks if is_our_hook(h.get("command")) and h.get("sourcePath", path) == path]

    def trust(self, ctx: Context) -> Change:
        """Trust our hooks through `codex app-server` and verify; a note when it cannot."""
        codex = self.binary(ctx)
        config_path = self.user_config(ctx)
        if codex is None:
            return Change(None, "note", [TRUST_BY_HAND])
        if ctx.dry_run:
            return Change(config_path, "trust", [f"would trust the wiki-memory hooks through `{codex} app-server`"])
        cwd = self._server_cwd(ctx)
        try:
            with AppServer(codex, config_path.parent, cwd, ctx.env) as server:
                ours = self._ours(server.hooks(cwd), ctx)
                if not ours:
                    hint = (
                        " (is the project trusted in Codex?)"
                        if ctx.scope == "project"
                        else " (are hooks turned off with `[features] hooks = false`?)"
                    )
                    return Change(config_path, "error", [f"Codex does not list the wiki-memory hooks{hint}"])
                untrusted = [h for h in ours if h.get("trustStatus") != "trusted"]
                if not untrusted:
                    return Change(config_path, "unchanged", [f"{len(ours)} hooks already trusted"])
                saved = backup(config_path) if config_path.exists() else None
                server.trust(untrusted)
                left = [h for h in self._ours(server.hooks(cwd), ctx) if h.get("trustStatus") != "trusted"]
        except WikiMemoryError as e:
            return Change(config_path, "error", [f"could not trust the hooks: {e}", TRUST_BY_HAND])
        if left:
            return Change(
                config_path,
                "error",
                [
                    f"{len(left)} hooks still untrusted after writing their trust: "
                    + ", ".join(h.get("key", "?") for h in left),
                    TRUST_BY_HAND,
                ],
            )
        return Change(
            config_path, "trust", [f"+ hooks.state: trusted {len(untrusted)} hooks (verified with hooks/list)"], saved
        )

    # -- uninstall -------------------------------------------------------------------------------
    def uninstall(self, ctx: Context) -> list[Change]:
        hooks = JsonFile(self.hooks_path(ctx))
        prefix = str(hooks.path)
        before = nested_keys(hooks.data, prefix)
        handlers_before = {key: _handler(hooks.data, ev, gi, hi) for key, (ev, gi, hi, _) in before.items()}
        lines = remove_nested(hooks.data, prefix)
        after = {
            id(_handler(hooks.data, ev, gi, hi)): key
            for key, (ev, gi, hi, _) in nested_keys(hooks.data, prefix).items()
        }
        ours = [key for key, (_, _, _, mine) in before.items() if mine]
        # Trigger: removing our groups can shift another hook's position, hence its key.
        # Why: its trust is recorded under the key; it moves with it so it stays trusted.
        moved = {
            key: after[id(h)]
            for key, h in handlers_before.items()
            if not before[key][3] and id(h) in after and after[id(h)] != key
        }
        changes = [hooks.save(lines, ctx.dry_run)]

        config = TomlFile(self.user_config(ctx))
        lines = self._forget_trust(config.data, ours, moved)
        if ctx.scope == "user":
            lines += remove_server(config.data, "mcp_servers")
            changes.append(config.save(lines, ctx.dry_run))
        else:
            changes.append(config.save(lines, ctx.dry_run))
            project_config = TomlFile(self.mcp_path(ctx))
            changes.append(project_config.save(remove_server(project_config.data, "mcp_servers"), ctx.dry_run))
        return changes

    @staticmethod
    def _forget_trust(data: Any, ours: list[str], moved: dict[str, str]) -> list[str]:
        hooks = data.get("hooks")
        state = hooks.get("state") if isinstance(hooks, MutableMapping) else None
        if not isinstance(state, MutableMapping):
            return []
        lines = []
        entries = {key: state[key] for key in list(state) if key in moved}
        for key in ours:
            if key in state:
                del state[key]
                lines.append(f"- hooks.state.{key}")
        for key in entries:
            del state[key]
        for old, entry in entries.items():
            state[moved[old]] = entry
            lines.append(f"~ hooks.state.{old} -> {moved[old]}")
        prune_empty(hooks, "state")
        prune_empty(data, "hooks")
        return lines

    # -- doctor ----------------------------------------------------------------------------------
    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        return find_nested(JsonFile(self.hooks_path(ctx)).data)

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        return get_server(TomlFile(self.mcp_path(ctx)).data, "mcp_servers")

    def check_hooks(self, ctx: Context) -> list[Check]:
        checks = super().check_hooks(ctx)
        if not self.installed_hooks(ctx):
            return checks
        return checks + [self.check_trust(ctx)]

    def check_trust(self, ctx: Context) -> Check:
        """Are our hooks trusted? Asked of `codex app-server` (hooks/list) when it is here."""
        codex = self.binary(ctx)
        if codex is None:
            return Check(
                self.agent, "hooks trusted", "warn", "cannot verify without the codex executable; " + TRUST_BY_HAND
            )
        cwd = self._server_cwd(ctx)
        try:
            with AppServer(codex, self.user_config(ctx).parent, cwd, ctx.env) as server:
                ours = self._ours(server.hooks(cwd), ctx)
        except WikiMemoryError as e:
            return Check(self.agent, "hooks trusted", "fail", str(e))
        untrusted = [h.get("eventName", "?") for h in ours if h.get("trustStatus") != "trusted"]
        if not ours:
            return Check(self.agent, "hooks trusted", "fail", "codex app-server does not list our hooks")
        if untrusted:
            return Check(
                self.agent,
                "hooks trusted",
                "fail",
                f"untrusted: {', '.join(untrusted)}; run `wiki-memory install codex` again",
            )
        return Check(self.agent, "hooks trusted", "ok", f"{len(ours)} hooks trusted (codex app-server hooks/list)")


def _handler(data: dict[str, Any], event: str, group: int, handler: int) -> Any:
    return data["hooks"][event][group]["hooks"][handler]


INSTALLER = CodexInstaller()
