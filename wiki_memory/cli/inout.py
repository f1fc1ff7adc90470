"""Commands that bring memory in from the files agents read and take it back out:
`import instructions` (through `import`) and `export`."""

from __future__ import annotations

import sys

import click

from wiki_memory.cli import App, main
from wiki_memory.cli.output import echo_json
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.instructions import TARGETS, export_block, import_instructions


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
    counts = ", ".join(f"{report.count(a)} {a}" for a in ("created", "updated", "stale", "unchanged"))
    click.echo(f"pages that {verb} written: {counts}" + (f"; commit {report.commit[:8]}" if report.commit else ""))


@main.command(name="export")
@click.argument("target", type=click.Choice(sorted(TARGETS)))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the block is out of date.")
@click.option("--budget", type=click.IntRange(500, 100_000), default=4000, show_default=True,
              help="Most characters the block may take.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the file, whether it changed and the pages, as JSON.")
@click.pass_obj
def export(app: App, target: str, check: bool, budget: int, as_json: bool) -> None:
    """Write the project's durable pages into an instruction file, between markers.

    The block holds the active preferences, procedures, the gotchas hit most and
    decisions, within the budget; nothing outside its markers is touched, and pages
    imported from that very file are left out. Targets: agents-md (AGENTS.md),
    claude-md (CLAUDE.md), copilot (.github/copilot-instructions.md), cursor-rules
    (.cursor/rules/wiki-memory.mdc).

    \b
    Examples:
      wiki-memory export agents-md
      wiki-memory export agents-md --check    # in CI or pre-commit: exit 1 when out of date
    """
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
