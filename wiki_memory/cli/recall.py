"""`wiki-memory recall`: what the hook would hand an agent for a prompt or a file, now."""

from __future__ import annotations

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json


@main.command()
@click.argument("prompt", required=False)
@click.option("--file", "file", metavar="PATH", help="Recall for a read or edit of this file instead of a prompt.")
@click.option("--session", "session_id", metavar="ID", help="Leave out what this session was handed already.")
@click.option("--json", "as_json", is_flag=True, help="Print the pages as a list of objects.")
@click.option("--explain", is_flag=True, help="Show every candidate's scores against the floors, kept or dropped.")
@click.option("--handed", is_flag=True, help="List what the session (--session) was handed, from its journal.")
@pass_app
def recall(
    app: App,
    prompt: str | None,
    file: str | None,
    session_id: str | None,
    as_json: bool,
    explain: bool,
    handed: bool,
) -> None:
    """Show exactly what the prompt hook would inject for PROMPT (or the file hook for
    --file PATH) now: at most a few pages, each with one or two lines of its best passage.

    Words decide with meaning when the warm helper is running (the hook starts it); without
    it, words alone decide, more strictly. Nothing is recorded: asking is not handing over.

    \b
    Examples:
      wiki-memory recall "the login test fails one run in ten with 401"
      wiki-memory recall --file src/auth/client.py --json
      wiki-memory recall "why do retries double-charge?" --explain
      wiki-memory recall --session 2624e4c8 --handed
    """
    memory = app.memory
    if handed:
        if not session_id:
            raise click.UsageError("--handed needs --session ID")
        entries = memory.recalled(session_id)
        if as_json:
            echo_json(entries)
            return
        for e in entries:
            click.echo(f"{e['time']} {e['trigger']}: {e['subject']}")
            for path in e["pages"]:
                click.echo(f"  {path}")
        if not entries:
            click.echo("nothing was handed to that session by recall", err=True)
        return
    if prompt is None and file is None:
        raise click.UsageError("give a PROMPT or --file PATH")
    if prompt is not None and file is not None:
        raise click.UsageError("give a PROMPT or --file PATH, not both")
    result = memory.recall(prompt, file=file, session_id=session_id)
    passages = dict(result.passages)
    kept = [v for v in result.verdicts if v.candidate.path in result.pages]
    if as_json:
        rows = []
        for v in kept:
            row = v.as_dict()
            row["passage"] = passages.get(v.candidate.path, "")
            rows.append(row)
        if explain:
            echo_json({"pages": rows, "candidates": [v.as_dict() for v in result.verdicts]})
        else:
            echo_json(rows)
        return
    if explain:
        for v in result.verdicts:
            c = v.candidate
            meaning = f" meaning {v.meaning:.2f}" if v.meaning is not None else ""
            click.echo(f"{'+' if v.kept else '-'} {c.path}  words {c.score:.2f}{meaning}: {v.reason}")
            if c.matched or c.missing:
                click.echo(f"    holds: {', '.join(c.matched) or '-'}; lacks: {', '.join(c.missing) or '-'}")
        if not result.verdicts:
            click.echo("no candidate: no page holds the prompt's rarer words (or it only acknowledges)")
        click.echo("")
    if result.text:
        click.echo(result.text)
    else:
        click.echo("nothing to recall", err=True)
