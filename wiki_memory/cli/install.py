"""Commands that connect the agents: install, uninstall, doctor, and hook (what the agents run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.inout import client_blocks
from wiki_memory.cli.output import echo_json
from wiki_memory.config import find_code_root
from wiki_memory.hook.main import main as hook_main
from wiki_memory.install import Context, this_executable
from wiki_memory.install import doctor as run_doctor
from wiki_memory.install import install as do_install
from wiki_memory.install import uninstall as do_uninstall

if TYPE_CHECKING:
    from wiki_memory.install import Change

AGENT_HELP = (
    "claude-code, codex, gemini, cursor, opencode, or all (every agent found on this machine); "
    "MCP-only clients: claude-desktop, vscode, zed, windsurf, goose, copilot-cli"
)

scope_option = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="user: your home's settings, for every project; project: this repository's "
    "settings files (.claude/, .codex/, .gemini/, .cursor/, .opencode/).",
)
dry_run_option = click.option("--dry-run", is_flag=True, help="Print what would change and write nothing.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")


def _context(
    app: App, scope: str, dry_run: bool, mcp: bool = True, codex: str | None = None, command: str | None = None
) -> Context:

    root = None
    if app.project_dir or scope == "project":
        start = Path(app.project_dir) if app.project_dir else Path.cwd()
        root = find_code_root(start) or start.absolute()
    return Context(
        scope=scope, project_root=root, command=command or this_executable(), codex=codex, mcp=mcp, dry_run=dry_run
    )


def _report(results: dict[str, list[Change]], as_json: bool, dry_run: bool) -> None:
    if as_json:
        echo_json({agent: [c.to_dict() for c in changes] for agent, changes in results.items()})
    else:
        for agent, changes in results.items():
            click.echo(f"{agent}:")
            for change in changes:
                _echo_change(change, dry_run)
    if any(c.action == "error" for changes in results.values() for c in changes):
        sys.exit(1)


def _echo_change(change: Change, dry_run: bool) -> None:
    verbs = {
        "create": "would create" if dry_run else "created",
        "update": "would update" if dry_run else "updated",
        "delete": "would delete" if dry_run else "deleted",
        "unchanged": "unchanged",
        "trust": "would trust in" if dry_run else "trusted in",
        "note": "note",
        "error": "error",
    }
    where = f" {change.path}" if change.path else ""
    backup = f" (backup: {change.backup})" if change.backup else ""
    head = f"  {verbs.get(change.action, change.action)}{where}{backup}"
    if change.action == "unchanged":
        click.echo(head + (f": {change.lines[0]}" if change.lines else ": already up to date"))
        return
    click.echo(head)
    for line in change.lines:
        click.echo(f"    {line}", err=change.action == "error")


@main.command()
@click.argument("agents", nargs=-1, required=True, metavar="AGENT...")
@scope_option
@dry_run_option
@click.option("--no-mcp", is_flag=True, help="Install the hooks only, not the MCP server entry.")
@click.option(
    "--codex",
    "codex",
    metavar="PATH",
    help="The codex executable used to trust Codex's hooks (default: codex on PATH).",
)
@json_option
@pass_app
def install(
    app: App, agents: tuple[str, ...], scope: str, dry_run: bool, no_mcp: bool, codex: str | None, as_json: bool
) -> None:
    """Connect agents to wiki-memory: their hooks and MCP server entry.

    AGENT is claude-code, codex, gemini, cursor, opencode, or all (every agent found on
    this machine); or a client without hooks, reached through MCP only: claude-desktop,
    vscode, zed, windsurf, goose, copilot-cli (with --scope project, the memory block
    of `export` goes in the instruction file it reads).
    The entries name this installation's executable by its absolute path, so they work
    whatever the agent's PATH. Existing files are merged (every entry that is not ours
    is kept) and backed up first; running it again changes nothing. Codex's hooks are
    then trusted through `codex app-server`; OpenCode gets a plugin in its plugins folder.

    \b
    Example:
      wiki-memory install claude-code codex
      wiki-memory install all --dry-run
      wiki-memory install cursor --scope project --no-mcp
    """

    ctx = _context(app, scope, dry_run, mcp=not no_mcp, codex=codex)
    results = do_install(agents, ctx)
    client_blocks(app, results, ctx)  # MCP-only clients: the memory block in the file they read
    _report(results, as_json, dry_run)


@main.command()
@click.argument("agents", nargs=-1, required=True, metavar="AGENT...")
@scope_option
@dry_run_option
@json_option
@pass_app
def uninstall(app: App, agents: tuple[str, ...], scope: str, dry_run: bool, as_json: bool) -> None:
    """Remove exactly what `install` added: our hooks, our MCP entry, Codex's trust in our hooks.

    AGENT is claude-code, codex, gemini, cursor, opencode, or all. Use the same --scope as the
    install. Other entries are left as they are; files are backed up first.

    \b
    Example:
      wiki-memory uninstall claude-code
      wiki-memory uninstall all --scope project --dry-run
    """

    ctx = _context(app, scope, dry_run)
    results = do_uninstall(agents, ctx)
    client_blocks(app, results, ctx, remove=True)
    _report(results, as_json, dry_run)


@main.command()
@click.argument("agents", nargs=-1, metavar="[AGENT...]")
@scope_option
@click.option("--codex", "codex", metavar="PATH", help="The codex executable to ask about hook trust.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@pass_app
def doctor(app: App, agents: tuple[str, ...], scope: str, codex: str | None, as_json: bool) -> None:
    """Check the installation: each agent, its hooks and MCP entry, Codex's trust, the store, the model.

    With no AGENT, checks wiki-memory itself and the agents it is installed in (our hooks or
    MCP entry in their files); name an agent to check it whatever its state. Exits 1 when a
    check fails.

    \b
    Example:
      wiki-memory doctor
      wiki-memory doctor codex --json
    """

    checks = run_doctor(agents, _context(app, scope, False, codex=codex))
    if as_json:
        echo_json([c.to_dict() for c in checks])
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "--  "}
        for check in checks:
            click.echo(f"{marks.get(check.status, check.status)} {check.agent:<12} {check.name:<16} {check.detail}")
    if any(c.status == "fail" for c in checks):
        sys.exit(1)


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("agent")
@click.argument("event", required=False)
def hook(agent: str, event: str | None) -> None:
    """Record one hook call of an agent (what the installed hooks run; reads the payload on stdin).

    AGENT is claude-code, codex, gemini, cursor or opencode; EVENT is the agent's event
    name (PostToolUse, beforeSubmitPrompt, session.idle) or its kebab-case form, else taken
    from the payload's hook_event_name. Appends redacted observations to the session's
    journal, prints the handoff on SessionStart, and always exits 0: problems go to
    WIKI_MEMORY_HOME/logs/hooks.log, never to the agent.

    \b
    Example:
      echo '{"session_id":"s1","cwd":"'$PWD'","hook_event_name":"UserPromptSubmit","prompt":"hi"}' \\
        | wiki-memory hook claude-code
    """

    sys.exit(hook_main([agent] + ([event] if event else [])))
