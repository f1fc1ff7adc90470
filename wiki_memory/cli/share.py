"""Commands that share with the team tier: share, shared (and `handoff share`, in handoff.py;
the pages worth sharing are listed by `review`, in review.py)."""

from __future__ import annotations

import sys

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json
from wiki_memory.memory import PERSONAL, ShareProposal, ShareResult


@main.command()
@click.argument("pages", nargs=-1, required=True)
@click.option("--message", "-m", metavar="TEXT", help="Why the team should have these pages (the request's text).")
@click.option(
    "--allow",
    multiple=True,
    type=click.Choice(PERSONAL),
    help="Share a page of this personal type on purpose (sessions, handoffs and preferences are not shared otherwise).",
)
@click.option("--dry-run", is_flag=True, help="Show what would be pushed; push nothing.")
@click.option("--yes", "-y", is_flag=True, help="Push without asking (asked only on a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print the proposal (and what was pushed) as JSON.")
@pass_app
def share(
    app: App,
    pages: tuple[str, ...],
    message: str | None,
    allow: tuple[str, ...],
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Propose personal pages to the team tier, for review as a pull request.

    The pages go as one commit on the team's main, pushed as a branch of yours
    (`share/<you>/<page>`); with `gh`, `glab` or `tea` logged in the request is opened,
    else its address is printed. What will be pushed is shown first; a page holding a
    secret is refused and nothing is pushed. Sharing a page again updates its branch.

    \b
    Examples:
      wiki-memory share gotchas/jwt-refresh-must-happen-before-the-retry.md --dry-run
      wiki-memory share "JWT refresh must happen before the retry" -m "bit us twice this week"
      wiki-memory share preferences/tabs.md --allow preference
    """
    proposal = app.memory.share_plan(pages, message, allow)
    if as_json and dry_run:
        echo_json({**proposal.as_dict(), "pushed": False})
        return
    if not as_json:
        _show(proposal)
    if dry_run:
        click.echo("dry run: nothing was pushed", err=True)
        return
    if not yes and not as_json and sys.stdin.isatty() and not click.confirm("Push this branch?", default=True):
        click.echo("nothing was pushed", err=True)
        return
    result = app.memory.share_push(proposal)
    if as_json:
        echo_json(result.as_dict())
    else:
        _say_pushed(result)


def _show(proposal: ShareProposal) -> None:
    base = proposal.base[:8] if proposal.base else "(empty)"
    click.echo(f"To the team tier ({proposal.remote}), branch {proposal.branch} on main {base}, as {proposal.author}:")
    for page in proposal.pages:
        where = f" beside {page.beside} (someone else's page there)" if page.beside else ""
        click.echo(f"  {page.how}: {page.team_path}{where}  <- {page.path}")
    click.echo("")
    click.echo(proposal.diff, nl=False)


def _say_pushed(result: ShareResult) -> None:
    proposal = result.proposal
    verb = "updated" if proposal.previous else "pushed"
    click.echo(f"{verb} {proposal.branch} on the team remote ({proposal.remote})")
    request = result.request
    if request is not None and request.url:
        said = "its open request shows the update" if request.existed else "opened"
        click.echo(f"{said}: {request.url}")
        return
    if request is not None and request.existed:
        click.echo(f"its open request ({request.cli}) shows the update")
        return
    if request is not None and request.error:
        click.echo(f"{request.cli} could not open the request: {request.error}", err=True)
    if result.compare:
        click.echo(f"open the request: {result.compare}")
    else:
        click.echo(f"ask a teammate to review and merge {proposal.branch} into main")


@main.command()
@click.option("--offline", is_flag=True, help="Do not ask the team remote; answer as of the last fetch.")
@click.option("--json", "as_json", is_flag=True, help="Print the pages as JSON.")
@pass_app
def shared(app: App, offline: bool, as_json: bool) -> None:
    """List the pages shared from here: proposed (under review) or merged, and changed since.

    \b
    Examples:
      wiki-memory shared
      wiki-memory shared --offline --json
    """
    states, note = app.memory.shared_pages(fetch=not offline)
    if as_json:
        echo_json({"pages": [s.as_dict() for s in states], "note": note})
        return
    if note:
        click.echo(f"note: {note}", err=True)
    if not states:
        click.echo("nothing shared from here yet (`wiki-memory review` lists pages worth sharing)")
        return
    for s in states:
        changed = "; changed here since" if s.changed else ""
        click.echo(f"[{s.state}] {s.path} -> team:{s.team_path} ({s.branch}, {s.at[:10]}{changed})")
