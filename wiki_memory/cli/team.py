"""`wiki-memory team join|leave|status`: the team tier beside your own memory (see docs/team.md)."""

from __future__ import annotations

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json
from wiki_memory.memory import TeamStatus


@main.group(name="team")
def team() -> None:
    """The team tier: a wiki your team shares through its git host, read beside your own.

    \b
    Examples:
      wiki-memory team join git@github.com:acme/widgets-memory.git
      wiki-memory team status
      wiki-memory team leave
    """


@team.command(name="join")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Print the team tier's status as JSON.")
@pass_app
def team_join(app: App, url: str, as_json: bool) -> None:
    """Join a team: clone its shared wiki (or, when the remote is empty, start it and push).

    URL is any git URL: a bare repository's path, file://, https://, ssh. Agents then read
    both tiers, each team page labelled with its author; `wiki-memory sync` syncs both.

    \b
    Examples:
      wiki-memory team join git@github.com:acme/widgets-memory.git
      wiki-memory team join /srv/git/widgets-memory.git
    """
    status = app.memory.team_join(url)
    if as_json:
        echo_json(status.as_dict())
        return
    click.echo(f"joined the team at {status.url}: {status.pages} team page{'s' if status.pages != 1 else ''}")
    _print_status(status)


@team.command(name="leave")
@click.option("--force", is_flag=True, help="Leave even with team commits the remote does not have (they are lost).")
@pass_app
def team_leave(app: App, force: bool) -> None:
    """Leave the team: remove the local clone and its index (the remote is never touched).

    \b
    Examples:
      wiki-memory team leave
    """
    removed = app.memory.team_leave(force=force)
    click.echo(f"left the team: removed {removed} (the team's remote is as it was)")


@team.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_app
def team_status(app: App, as_json: bool) -> None:
    """Where the team tier stands: its remote, pages, reviewed pages, unpushed commits.

    \b
    Examples:
      wiki-memory team status --json
    """
    status = app.memory.team_status()
    if as_json:
        echo_json(status.as_dict())
        return
    if not status.joined:
        click.echo("no team joined (`wiki-memory team join URL`)")
        return
    click.echo(f"team: {status.url}")
    _print_status(status)


def _print_status(status: TeamStatus) -> None:
    click.echo(f"clone: {status.wiki}")
    click.echo(f"pages: {status.pages} ({status.reviewed} reviewed)")
    held = "only reviewed pages" if status.recall == "reviewed" else "every active page"
    click.echo(f"recall: {status.recall} (agents are handed {held}; search finds them all)")
    if status.unpushed:
        n = status.unpushed
        click.echo(f"not pushed yet: {n} commit{'s' if n != 1 else ''} (`wiki-memory sync`)")
    last = status.last_sync
    if last.get("last_error"):
        click.echo(f"last sync failed: {last['last_error']}")
    elif last.get("last_success"):
        click.echo(f"last sync: {last['last_success']}")
