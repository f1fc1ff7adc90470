"""Commands on a page's standing and its review: mark, supersede, anchor, review."""

from __future__ import annotations

import shlex

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json
from wiki_memory.cli.pages import agent_option, session_option
from wiki_memory.memory import VERDICTS, Actor

reason_option = click.option("--reason", metavar="TEXT", help="Why (kept in the commit's Reason: trailer).")


@main.command()
@click.argument("page")
@click.argument("verdict", type=click.Choice(VERDICTS))
@reason_option
@agent_option
@session_option
@click.option("--json", "as_json", is_flag=True, help="Print the page, its status and the commit as JSON.")
@pass_app
def mark(
    app: App,
    page: str,
    verdict: str,
    reason: str | None,
    agent: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Mark a page helpful, wrong, stale, archived or active (one commit, as you or --agent).

    Wrong and archived pages are never handed to an agent again (SessionStart, default
    search); a stale one is, with its note. `active` puts a page back and re-anchors it to
    its code files as they are now (you checked it still holds). `helpful` counts.

    \b
    Examples:
      wiki-memory mark gotchas/jwt-refresh.md wrong --reason "the retry was removed in v2"
      wiki-memory mark "How to run the tests" helpful
    """
    marked = app.memory.mark(page, verdict, reason=reason, actor=Actor(agent, session_id))
    if as_json:
        echo_json(marked.as_dict())
        return
    times = "once" if marked.helpful == 1 else f"{marked.helpful} times"
    what = f"helpful ({times})" if verdict == "helpful" else marked.status
    done = f"commit {marked.commit[:8]}" if marked.commit else "it already read so; nothing to commit"
    click.echo(f"{marked.path}: {what} ({done})")


@main.command()
@click.argument("old")
@click.argument("new")
@reason_option
@agent_option
@session_option
@click.option("--json", "as_json", is_flag=True, help="Print both pages and the commit as JSON.")
@pass_app
def supersede(
    app: App, old: str, new: str, reason: str | None, agent: str | None, session_id: str | None, as_json: bool
) -> None:
    """Replace page OLD by page NEW (one commit: OLD superseded_by NEW, NEW supersedes OLD).

    OLD is no longer handed to an agent; search finds it with --status superseded (or any)
    and names NEW beside it.

    \b
    Example:
      wiki-memory supersede decisions/use-sqlite.md decisions/use-postgres.md --reason "we outgrew SQLite"
    """
    done = app.memory.supersede(old, new, reason=reason, actor=Actor(agent, session_id))
    if as_json:
        echo_json(done.as_dict())
        return
    what = f"commit {done.commit[:8]}" if done.commit else "it already read so; nothing to commit"
    click.echo(f"{done.old}: superseded by {done.new} ({what})")


@main.command()
@click.argument("page")
@click.argument("files", nargs=-1)
@reason_option
@agent_option
@session_option
@pass_app
def anchor(
    app: App,
    page: str,
    files: tuple[str, ...],
    reason: str | None,
    agent: str | None,
    session_id: str | None,
) -> None:
    """Anchor a page to the code files it is about, each at its current git blob; with no
    FILES, re-anchor its files as they are now. A page whose anchored files change is shown
    as "may be stale" wherever it is handed out, and listed by `review`.

    \b
    Examples:
      wiki-memory anchor gotchas/jwt-refresh.md src/auth/client.py
      wiki-memory anchor gotchas/jwt-refresh.md          # checked: still true
    """
    written = app.memory.anchor(page, files, reason=reason, actor=Actor(agent, session_id))
    anchors = written.page.meta.get("anchors") or []
    names = ", ".join(a["path"] if isinstance(a, dict) else str(a) for a in anchors)
    done = f"commit {written.commit[:8]}" if written.commit else "unchanged"
    click.echo(f"{written.path}: anchored to {names} ({done})")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the items as JSON (kind, paths, message, command).")
@pass_app
def review(app: App, as_json: bool) -> None:
    """List what needs a person or an agent, each with the command that resolves it:
    drifted anchors, expired pages, likely duplicates, active decisions that contradict
    each other, links to wrong or superseded pages, broken lifecycle fields; and, with a
    team tier joined, personal pages worth sharing with it (`[share]`: gotchas,
    procedures, decisions and facts seen in two sessions or more, not on the team tier).

    \b
    Examples:
      wiki-memory review
      wiki-memory review --json
    """
    found = app.memory.review()
    worth = app.memory.share_candidates()
    if as_json:
        echo_json({**found.as_dict(), "share": [c.as_dict() for c in worth]})
        return
    if found.note:
        click.echo(f"note: {found.note}", err=True)
    if not found.items and not worth:
        click.echo(f"nothing to review ({found.pages} pages)")
        return
    for item in found.items:
        click.echo(f"[{item.kind}] {item.message}")
        click.echo(f"   -> {item.command}")
    for c in worth:
        click.echo(f"[share] {c.path}: {c.why}")
        click.echo(f"   -> wiki-memory share {shlex.quote(c.path)}")
    click.echo(f"{len(found.items) + len(worth)} to review ({found.pages} pages)", err=True)
