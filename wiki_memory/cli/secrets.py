"""Commands for secrets already in memory: `scan` the whole history, `forget` a string or a page."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import Progress, echo_json, read_stdin, warnings_to_stderr

if TYPE_CHECKING:
    from wiki_memory.memory import Forgotten

SHOWN = 100  # commits listed before "... and N more"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.pass_context
def scan(ctx: click.Context, as_json: bool) -> None:
    """Check the wiki's whole history for secrets, with the rules the hooks redact by.

    Each file version is checked once, at the commit that brought it, with every commit
    message and the files edited by hand and not committed yet. A finding shows the
    commit, the file and line, the kind of secret and the line with it redacted. Exits 1
    when something is found, 0 when nothing is.

    \b
    Examples:
      wiki-memory scan
      wiki-memory scan --json | jq '.findings[].path'
    """
    app: App = ctx.obj
    report = app.memory.scan()
    if as_json:
        echo_json(report.as_dict())
    else:
        for f in report.findings:
            where = f"{f.path}:{f.line}" if f.path else f"commit message, line {f.line}"
            commit = f.commit[:8] if f.commit else "not committed"
            click.echo(f"{commit}  {where}  {f.family}  {f.preview}")
        if not report.findings:
            click.echo("no secrets found in the wiki's history")
        else:
            click.echo(
                f"{_plural(len(report.findings), 'secret')} in {_plural(len(report.commits), 'commit')} "
                f'({_plural(len(report.paths), "file")}). See one with `git -C "$(wiki-memory path)" show '
                "COMMIT:FILE`; forget it everywhere with `wiki-memory forget --string -` (the secret on stdin), "
                "then revoke it",
                err=True,
            )
    ctx.exit(1 if report.findings else 0)


def _strings(given: tuple[str, ...]) -> list[str]:
    """The strings to forget; `-` reads them from stdin, one a line (out of shell history)."""
    out: list[str] = []
    for value in given:
        if value == "-":
            out += [line.rstrip("\r") for line in read_stdin("text to forget").split("\n") if line.strip()]
        else:
            out.append(value)
    return out


@main.command()
@click.argument("pages", nargs=-1, metavar="[PAGE]...")
@click.option(
    "--string",
    "strings",
    multiple=True,
    metavar="S",
    help="Text to forget wherever it is (repeatable); `-` reads them from stdin, one a line.",
)
@click.option("--purge", is_flag=True, help="Remove the PAGEs (path, title or id) with their whole history.")
@click.option("--dry-run", is_flag=True, help="List the commits and files it would change; change nothing.")
@click.option("--no-embed", is_flag=True, help="Rebuild the index's words only; vectors are computed later.")
@click.option(
    "--team", "on_team", is_flag=True, help="Forget on the team tier (then `sync --team --replace-remote-history`)."
)
@click.option("--json", "as_json", is_flag=True, help="Print what it did as JSON (never the strings).")
@pass_app
def forget(
    app: App,
    pages: tuple[str, ...],
    strings: tuple[str, ...],
    purge: bool,
    dry_run: bool,
    no_embed: bool,
    on_team: bool,
    as_json: bool,
) -> None:
    """Remove a string, or a page with its whole history, from the wiki's git history.

    Every commit that holds it is rewritten (the string becomes `[forgotten]`; a purged
    page goes under every path it had); authors, dates and every other page and message
    are kept, the old objects are deleted, the search index is rebuilt, and the journals,
    logs and SessionStart context are scrubbed of the string. A string is also matched
    where redaction already replaced its secret part and the rest of it remains (see
    the README). It then says what is left: the remote (`wiki-memory sync
    --replace-remote-history`), other machines, copies made before.

    \b
    Examples:
      wiki-memory forget --string - --dry-run < token.txt
      wiki-memory forget --string "db.internal.example.com"
      wiki-memory forget notes/leaked-config.md --purge
      wiki-memory forget --team --string - < token.txt && wiki-memory sync --team --replace-remote-history
    """
    if pages and not purge:
        raise click.UsageError(
            "forgetting a page removes it from all of history: say so with --purge "
            "(`wiki-memory rm PAGE` deletes it and keeps its history)"
        )
    if purge and not pages:
        raise click.UsageError("--purge needs the PAGE(s) to remove")
    if not strings and not pages:
        raise click.UsageError("give --string S (or --string - for stdin) or PAGE --purge")
    values = _strings(strings)
    with warnings_to_stderr(), Progress(quiet=as_json) as progress:
        result = app.memory.forget_on(
            values, pages, team=on_team, dry_run=dry_run, embed=not no_embed, progress=progress
        )
    if as_json:
        echo_json(result.as_dict())
        return
    _print_forgotten(result)


def _print_forgotten(result: Forgotten) -> None:
    report = result.rewrite
    what = []
    if result.strings:
        what.append(_plural(result.strings, "string"))
    if result.redacted_forms:
        what.append(f"{_plural(result.redacted_forms, 'redacted form')} of {'them' if result.strings > 1 else 'it'}")
    if result.pages:
        what.append(_plural(len(result.pages), "page"))
    subject = ", ".join(what)
    if not report.changed:
        click.echo(f"the wiki's history does not hold {subject}; nothing to rewrite")
    else:
        for commit in report.commits[:SHOWN]:
            new = "dropped" if commit.new is None else f"-> {commit.new[:8]}"
            files = ", ".join(commit.paths) + (" and the message" if commit.message and commit.paths else "")
            click.echo(f"{commit.old[:8]} {new}  {commit.subject}  ({files or 'the message'})")
        if len(report.commits) > SHOWN:
            click.echo(f"... and {len(report.commits) - SHOWN:,} more (--json lists them all)")
        verb = "would rewrite" if result.dry_run else "rewrote"
        carried = f"; {report.carried:,} later commits only get new ids" if report.carried else ""
        click.echo(
            f"{verb} {_plural(len(report.commits), 'commit')} holding {subject} "
            f"({_plural(len(report.files), 'file')}{carried})"
        )
        if report.files:
            click.echo("files: " + ", ".join(report.files[:SHOWN]) + (" ..." if len(report.files) > SHOWN else ""))
        if report.pending_edits:
            click.echo(f"uncommitted edits holding it, committed first: {', '.join(report.pending_edits)}")
    files = "would be scrubbed" if result.dry_run else "scrubbed"
    if result.local_files:
        click.echo(f"{files}: {_plural(len(result.local_files), 'local file')} (journals, logs, context)")
    if result.dry_run:
        click.echo("dry run: nothing was changed", err=True)
        return
    if report.changed:
        click.echo(f"deleted the old history's objects ({_plural(report.objects_removed, 'file')})")
    if result.index is not None:
        click.echo(f"rebuilt the search index ({_plural(result.index.added, 'page')})")
    if result.todo:
        click.echo("still to do:", err=True)
        for item in result.todo:
            click.echo(f"- {item}", err=True)
