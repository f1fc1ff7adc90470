"""Commands that bring memory in from the files agents read and take it back out:
`import instructions` (through `import`) and `export`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wiki_memory.cli import App, main
from wiki_memory.cli.output import echo_json
from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import Change, installer
from wiki_memory.install.mcp_client import McpClient
from wiki_memory.memory import (
    TARGETS,
    export_block,
    export_wiki,
    import_instructions,
    import_wiki,
    parse_age,
    project_summaries,
    prune_sessions,
    remove_block,
    session_rows,
    settings_in_force,
)

if TYPE_CHECKING:
    from wiki_memory.install import Context


def import_instructions_command(app: App, paths: tuple[str, ...], *, as_json: bool, dry_run: bool) -> None:
    """`wiki-memory import instructions`: print what each section became."""
    report = import_instructions(app.memory, paths, dry_run=dry_run)
    if as_json:
        echo_json(report.as_dict())
        return
    if not report.files and not report.pages:
        raise WikiMemoryError("no instruction files found" + (f" in {', '.join(paths)}" if paths else ""))
    verb = "would be" if dry_run else "were"
    click.echo(f"read {len(report.files)} files: {', '.join(report.files)}")
    for page in report.pages:
        if page.action != "unchanged":
            click.echo(f"  {page.action:8} {page.path} ({page.type}) <- {', '.join(page.sources)}")
    if report.redacted:
        click.echo(f"secrets replaced by [REDACTED:<kind>]: {', '.join(report.redacted)}", err=True)
    counts = ", ".join(f"{report.count(a)} {a}" for a in ("created", "updated", "stale", "unchanged"))
    click.echo(f"pages that {verb} written: {counts}" + (f"; commit {report.commit[:8]}" if report.commit else ""))


@main.command(name="export")
@click.argument("target", required=False, type=click.Choice(sorted(TARGETS)))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the block is out of date.")
@click.option("--budget", type=click.IntRange(500, 100_000), default=4000, show_default=True,
              help="Most characters the block may take.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]),
              help="Export the whole wiki instead: every page as a Markdown file, or one JSON file.")  # fmt: skip
@click.option("--out", type=click.Path(file_okay=True, dir_okay=True), help="Where --format writes (default: .).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_obj
def export(
    app: App, target: str | None, check: bool, budget: int, fmt: str | None, out: str | None, as_json: bool
) -> None:
    """Write the project's durable pages into an instruction file, or the whole wiki out.

    With TARGET, a block of the active preferences, procedures, the gotchas hit most
    and decisions, within the budget, between markers in the target's file; nothing
    outside the markers is touched, and pages imported from that very file are left
    out. Targets: agents-md (AGENTS.md), claude-md (CLAUDE.md), copilot
    (.github/copilot-instructions.md), cursor-rules (.cursor/rules/wiki-memory.mdc).

    With --format, every page as it is stored, for another machine or tool;
    `wiki-memory import wiki PATH` brings it back.

    \b
    Examples:
      wiki-memory export agents-md
      wiki-memory export agents-md --check    # in CI or pre-commit: exit 1 when out of date
      wiki-memory export --format markdown --out ~/backup/widgets
    """
    if fmt is not None:
        if target is not None:
            raise WikiMemoryError("give a TARGET or --format, not both")

        done = export_wiki(app.memory, fmt, Path(out or "."))
        if as_json:
            echo_json(done.as_dict())
        else:
            click.echo(f"{done.pages} pages written to {done.path} ({done.format})")
        return
    if target is None:
        raise WikiMemoryError(f"give a TARGET ({', '.join(sorted(TARGETS))}) or --format markdown|json")
    result = export_block(app.memory, target, check=check, budget=budget)
    if as_json:
        echo_json(result.as_dict())
    elif check:
        click.echo(f"{result.path}: {'out of date' if result.changed else 'up to date'} ({len(result.pages)} pages)")
    else:
        state = "updated" if result.changed else "unchanged"
        click.echo(f"{result.path}: {state} ({len(result.pages)} pages)")
    if check and result.changed:
        sys.exit(1)


def import_wiki_command(app: App, paths: tuple[str, ...], *, as_json: bool, dry_run: bool) -> None:
    """`wiki-memory import wiki PATH`: an export's pages into this project."""

    if len(paths) != 1:
        raise WikiMemoryError("import wiki takes one PATH: an export's folder or JSON file")
    report = import_wiki(app.memory, Path(paths[0]), dry_run=dry_run)
    if as_json:
        echo_json(report.as_dict())
        return
    verb = "would be written" if dry_run else "written"
    commit = f"; commit {report.commit[:8]}" if report.commit else ""
    click.echo(f"{len(report.written)} pages {verb}, {report.unchanged} already the same{commit}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the projects as JSON.")
def projects(as_json: bool) -> None:
    """List every project with a wiki: its code path, pages, last session, size.

    \b
    Example:
      wiki-memory projects
    """

    rows = project_summaries()
    if as_json:
        echo_json([r.as_dict() for r in rows])
        return
    for r in rows:
        last = (r.last_session or "never")[:16].replace("T", " ")
        click.echo(
            f"{r.name}\t{r.pages} pages\t{r.sessions} sessions (last {last})\t{_size(r.size)}\t{r.root or r.wiki}"
        )


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.option("-n", "limit", type=click.IntRange(1), help="Only the newest N.")
@click.pass_obj
def sessions(app: App, as_json: bool, limit: int | None) -> None:
    """List this project's sessions, newest first: agent, session id, when, page.

    \b
    Example:
      wiki-memory sessions -n 10
    """

    rows = session_rows(app.memory)[:limit]
    if as_json:
        echo_json([r.as_dict() for r in rows])
        return
    for r in rows:
        when = (r.ended or r.started or "")[:16].replace("T", " ")
        click.echo(f"{when}\t{r.agent}\t{r.session_id[:8]}\t{r.path}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@click.pass_obj
def config(app: App, as_json: bool) -> None:
    """Show the settings in force for this project, and where each came from.

    Each comes from the environment, config.toml, the repository's trusted
    .wiki-memory.toml, or the default.

    \b
    Example:
      wiki-memory config
    """

    rows = settings_in_force(app.project)
    if as_json:
        echo_json([r.as_dict() for r in rows])
        return
    for r in rows:
        value = json.dumps(r.value) if not isinstance(r.value, str) else r.value
        click.echo(f"{r.name} = {value}\t({r.source})")


@main.command()
@click.option("--sessions-older-than", "age", required=True, metavar="AGE", help="90d, 12w, 6m or 1y.")
@click.option("--dry-run", is_flag=True, help="List the pages, remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was (or would be) removed as JSON.")
@click.pass_obj
def prune(app: App, age: str, dry_run: bool, as_json: bool) -> None:
    """Take old session pages out of the wiki's tree, in one commit.

    They stay in the history (`wiki-memory log`, `git log`); handoffs, distilled
    pages and every other page are untouched.

    \b
    Example:
      wiki-memory prune --sessions-older-than 90d --dry-run
    """

    result = prune_sessions(app.memory, parse_age(age), dry_run=dry_run)
    if as_json:
        echo_json(result.as_dict())
        return
    for path in result.paths:
        click.echo(f"  {path}")
    verb = "would be removed" if dry_run else "removed"
    commit = f" (commit {result.commit[:8]})" if result.commit else ""
    click.echo(f"{len(result.paths)} session pages ended before {result.cutoff[:10]} {verb}{commit}")


def client_blocks(app: App, results: dict[str, list[Change]], ctx: Context, *, remove: bool = False) -> None:
    """At project scope, the memory block (`export`) in the instruction file each MCP-only
    client reads, added to what `install` reports (or taken out again by `uninstall`)."""
    if ctx.scope != "project":
        return
    for agent, changes in results.items():
        client = installer(agent)
        if not isinstance(client, McpClient) or not client.instructions:
            continue
        if remove:
            done = remove_block(app.memory, client.instructions, dry_run=ctx.dry_run)
            action = ("delete" if not done.text else "update") if done.changed else "unchanged"
            changes.append(Change(done.path, action, ["- the memory block"] if done.changed else []))
        else:
            done = export_block(app.memory, client.instructions, check=ctx.dry_run)
            line = f"+ the memory block ({len(done.pages)} pages; `wiki-memory export {client.instructions}` renews it)"
            changes.append(Change(done.path, "update" if done.changed else "unchanged", [line] if done.changed else []))
