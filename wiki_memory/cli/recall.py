"""`wiki-memory recall`: what the hook would hand an agent for a prompt or a file, now."""

from __future__ import annotations

from typing import Any

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json


@main.command()
@click.argument("prompt", required=False)
@click.option("--file", "file", metavar="PATH", help="Recall for a read or edit of this file instead of a prompt.")
@click.option("--command", "command", metavar="CMD", help="Recall before this shell command runs instead.")
@click.option("--error", "error", metavar="TEXT", help="Recall after a failed call with this output instead.")
@click.option("--session", "session_id", metavar="ID", help="Leave out what this session was handed already.")
@click.option("--json", "as_json", is_flag=True, help="Print the pages as a list of objects.")
@click.option("--explain", is_flag=True, help="Show every candidate's scores against the floors, kept or dropped.")
@click.option("--handed", is_flag=True, help="List what the session (--session) was handed, from its journal.")
@pass_app
def recall(
    app: App,
    prompt: str | None,
    file: str | None,
    command: str | None,
    error: str | None,
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
      wiki-memory recall --command "pytest tests/test_api.py" --explain
      wiki-memory recall --error "KeyError: 'SHOP_DB_URL'"
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
    given = [n for n, v in (("PROMPT", prompt), ("--file", file), ("--command", command), ("--error", error)) if v]
    if len(given) != 1:
        raise click.UsageError(
            "give one of PROMPT, --file PATH, --command CMD or --error TEXT"
            + (f" (not {' and '.join(given)} together)" if given else "")
        )
    if command is not None or error is not None:
        _moment(memory, command, error, session_id, as_json, explain)
        return
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
            rerank = f" rerank {v.rerank:.3f}" if v.rerank is not None else ""
            click.echo(f"{'+' if v.kept else '-'} {c.path}  words {c.score:.2f}{meaning}{rerank}: {v.reason}")
            if c.matched or c.missing:
                click.echo(f"    holds: {', '.join(c.matched) or '-'}; lacks: {', '.join(c.missing) or '-'}")
        if not result.verdicts:
            click.echo("no candidate: no page holds the prompt's rarer words (or it only acknowledges)")
        click.echo("")
    if result.text:
        click.echo(result.text)
    else:
        click.echo("nothing to recall", err=True)


def _moment(
    memory: Any, command: str | None, error: str | None, session_id: str | None, as_json: bool, explain: bool
) -> None:
    """`--command` / `--error`: what the hook would hand before that command, after that error."""
    found = memory.recall_moment(command=command, error=error, session_id=session_id)
    if as_json:
        kept = [c for c in found["candidates"] if c.get("path") in found["pages"]]
        echo_json({"pages": kept, "candidates": found["candidates"], "text": found["text"]} if explain else kept)
        return
    if explain:
        for c in found["candidates"]:
            what = c.get("path") or f"{c['line']!r} -> {c['signature']!r}"
            how = f" ({c['command']})" if c.get("command") else ""
            click.echo(f"{'+' if c['kept'] else '-'} {what}{how}: {c['reason']}")
        if not found["candidates"]:
            click.echo(
                "no candidate: no gotcha or procedure names this program"
                if command is not None
                else "no candidate: no line of it names an error"
            )
        click.echo("")
    if found["text"]:
        click.echo(found["text"])
    else:
        click.echo("nothing to recall", err=True)


@main.command()
@click.option("--session", "session_id", metavar="ID", help="One session only.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as an object.")
@pass_app
def stats(app: App, session_id: str | None, as_json: bool) -> None:
    """Show what memory handed the agents in this project, per session and in total: the
    hand-overs (SessionStart, prompts, files, commands, errors), the pages handed, the
    characters and estimated tokens injected, the handed pages read afterwards, and of the
    pages handed, those marked helpful and those now marked wrong.

    \b
    Examples:
      wiki-memory stats
      wiki-memory stats --session 2624e4c8 --json
    """
    figures = app.memory.stats(session_id)
    if as_json:
        echo_json(figures)
        return
    head = f"{'session':<14} {'agent':<12} {'started':<20} {'handed':>6} {'pages':>5} {'chars':>7} {'tokens':>6}"
    click.echo(f"{head} {'read':>4} {'helpful':>7} {'wrong':>5}")
    for s in figures["sessions"]:
        click.echo(
            f"{str(s['session_id'])[:14]:<14} {str(s['agent'] or '-')[:12]:<12} {str(s['started'] or '-')[:20]:<20} "
            f"{s['injections']:>6} {s['pages_handed']:>5} {s['chars']:>7} {s['tokens']:>6} {s['read_after']:>4} "
            f"{s['helpful']:>7} {s['wrong']:>5}"
        )
    t = figures["total"]
    triggers = ", ".join(f"{k} {v}" for k, v in sorted(t["by_trigger"].items())) or "none"
    click.echo(
        f"{figures['project']}: {t['sessions']} sessions, {t['injections']} hand-overs ({triggers}), "
        f"{t['pages_handed']} pages, {t['chars']:,} characters (about {t['tokens']:,} tokens), "
        f"{t['read_after']} read afterwards, {t['helpful']} marked helpful, {t['wrong']} now marked wrong"
    )
