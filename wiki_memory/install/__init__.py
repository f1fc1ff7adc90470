"""Installing wiki-memory into the agents: their hook entries, their MCP server entry, and
(for Codex) trust in the hooks; removing exactly that again; and the doctor's checks.

    from wiki_memory.install import Context, install, uninstall, doctor
    changes = install(["claude-code"], Context(command="/usr/local/bin/wiki-memory"))

One module per agent (`claude_code`, `codex`, `gemini`, `cursor`, `opencode`), each an `Installer`
with the same interface (see `base`); `configfile` edits their JSON and TOML files,
`hookfile` the hook entries in them. The doctor's checks are each installer's own (hooks,
MCP entry, `mcp_probe`: the server starts and lists its tools), wiki-memory's (`checks`),
and any added per agent with `base.register_check`. `instructions` writes the block for
AGENTS.md / CLAUDE.md that tells agents without our hooks when to use the memory tools.
"""

from __future__ import annotations

import importlib
from dataclasses import replace

from wiki_memory.capture.adapter import AGENTS, agent_name
from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import checks
from wiki_memory.install.base import Change, Check, Context, Installer, register_check, this_executable

__all__ = [
    "AGENTS",
    "MCP_CLIENTS",
    "Change",
    "Check",
    "Context",
    "Installer",
    "connected_agents",
    "doctor",
    "install",
    "installer",
    "register_check",
    "resolve_agents",
    "this_executable",
    "uninstall",
]


#: Clients with no hooks, reached through MCP only (`mcp_client`): name -> module.
MCP_CLIENTS = {
    "claude-desktop": "claude_desktop",
    "vscode": "vscode",
    "zed": "zed",
    "windsurf": "windsurf",
    "goose": "goose",
    "copilot-cli": "copilot_cli",
}


def installer(agent: str) -> Installer:
    """The installer of one agent or MCP-only client (canonical name or alias)."""
    if agent.lower() in MCP_CLIENTS:
        return importlib.import_module(f"wiki_memory.install.{MCP_CLIENTS[agent.lower()]}").INSTALLER
    name = agent_name(agent)
    if name is None:
        known = ", ".join([*AGENTS, *MCP_CLIENTS])
        raise WikiMemoryError(f"unknown agent {agent!r} (known: {known}, or all)")
    return importlib.import_module(f"wiki_memory.install.{AGENTS[name]}").INSTALLER


def resolve_agents(names: list[str] | tuple[str, ...], ctx: Context, detect: bool = True) -> list[str]:
    """Canonical agent names; `all` is every agent found on this machine (every agent we
    know when `detect` is False, as for uninstall: removing finds what is there)."""
    agents: list[str] = []
    for name in names:
        if name.lower() == "all" and not detect:
            agents.extend(AGENTS)
        elif name.lower() == "all":
            found = [a for a in AGENTS if installer(a).detect(ctx)]
            if not found:
                raise WikiMemoryError(
                    "no agent found on this machine (looked for claude, codex, gemini, cursor and "
                    "opencode on PATH and their folders in your home); name one explicitly"
                )
            agents.extend(found)
        else:
            agents.append(installer(name).agent)
    return list(dict.fromkeys(agents))


def install(agents: list[str] | tuple[str, ...], ctx: Context) -> dict[str, list[Change]]:
    """Install the hooks (and MCP entry unless `ctx.mcp` is False) of each agent."""
    if not ctx.command:
        ctx = _with_command(ctx)
    return {agent: installer(agent).install(ctx) for agent in resolve_agents(agents, ctx)}


def uninstall(agents: list[str] | tuple[str, ...], ctx: Context) -> dict[str, list[Change]]:
    """Remove what `install` added for each agent."""
    return {agent: installer(agent).uninstall(ctx) for agent in resolve_agents(agents, ctx, detect=False)}


def doctor(agents: list[str] | tuple[str, ...], ctx: Context) -> list[Check]:
    """Checks of wiki-memory itself, then of each agent named; with none named, of each
    agent that is connected (`connected_agents`), or one line saying none is."""
    found = checks.own_checks(ctx)
    names = resolve_agents(agents, ctx) if agents else connected_agents(ctx)
    if not names:
        other = replace(ctx, scope="user" if ctx.scope == "project" else "project")
        found.append(checks.no_agent_connected(ctx, connected_agents(other)))
    for agent in names:
        found.extend(installer(agent).doctor(ctx))
    return found


def connected_agents(ctx: Context) -> list[str]:
    """The agents with our hooks or our MCP entry in their files (in `ctx`'s scope)."""
    return [agent for agent in [*AGENTS, *MCP_CLIENTS] if installer(agent).is_connected(ctx)]


def _with_command(ctx: Context) -> Context:
    return replace(ctx, command=this_executable())
