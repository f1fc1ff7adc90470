"""`wiki-memory token`: the per-person tokens of a shared MCP server (see `memory.access`)."""

from __future__ import annotations

import click

from wiki_memory.cli import main
from wiki_memory.cli.output import echo_json
from wiki_memory.memory import Tokens, named_project


@main.group(name="token")
def token() -> None:
    """Per-person tokens for a shared `wiki-memory serve --http`.

    Each token names a person (the author of every write made with it), the projects it
    reaches and whether it may write. It is printed once and kept only hashed, in
    tokens.json under the wiki-memory home (mode 0600). A running server sees a new or
    revoked token at its next request.

    \b
    Examples:
      wiki-memory token create ada --project ~/src/widgets --write --email ada@example.com
      wiki-memory token create ci --all-projects --read
      wiki-memory token list
      wiki-memory token revoke ada
    """


@token.command(name="create")
@click.argument("name")
@click.option(
    "--project",
    "projects",
    multiple=True,
    metavar="DIR|ID|NAME",
    help="A project the token reaches (repeat it): its directory, id or name.",
)
@click.option("--all-projects", is_flag=True, help="Every project the server serves.")
@click.option("--read", "access", flag_value="read", help="Search and read only.")
@click.option("--write", "access", flag_value="write", help="Read and write.")
@click.option("--email", metavar="EMAIL", help="The email of the person's commits (default NAME@this-host).")
@click.option("--json", "as_json", is_flag=True, help="Print the token and its record as JSON.")
def create(
    name: str, projects: tuple[str, ...], all_projects: bool, access: str | None, email: str | None, as_json: bool
) -> None:
    """Make a token for NAME and print it (once: it is stored only hashed).

    \b
    Example:
      wiki-memory token create ada --project widgets --write --email ada@example.com
    """
    if access is None:
        raise click.UsageError("say what the token may do: --read or --write")
    if bool(projects) == all_projects:
        raise click.UsageError("give the projects it reaches (--project P, repeated) or --all-projects")
    scope = None if all_projects else [named_project(p) for p in projects]
    grant, secret = Tokens().create(name, scope, write=access == "write", email=email)
    if as_json:
        echo_json({**grant.as_json(), "token": secret})
        return
    click.echo(secret)
    click.echo(
        f"token for {grant.name} <{grant.email}>: {grant.scope} on {grant.reach_text()}; "
        "copy it now, it is not shown again",
        err=True,
    )


@token.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON.")
def list_tokens(as_json: bool) -> None:
    """The tokens: name, email, read or read-write, projects, made, last used (never the token).

    \b
    Example:
      wiki-memory token list --json
    """
    grants = Tokens().grants()
    if as_json:
        echo_json([g.as_json() for g in grants])
        return
    if not grants:
        click.echo("no tokens (`wiki-memory token create NAME --project P --read`)")
        return
    for g in grants:
        used = g.last_used or "never used"
        click.echo(f"{g.name} <{g.email}>  {g.scope}  {g.reach_text()}  made {g.created}  last used {used}")


@token.command(name="revoke")
@click.argument("name")
def revoke(name: str) -> None:
    """Remove NAME's token; a running server refuses it from its next request.

    \b
    Example:
      wiki-memory token revoke ada
    """
    gone = Tokens().revoke(name)
    click.echo(f"revoked {gone.name}'s token")
