"""`wiki-memory trust`: honour a repository's own `.wiki-memory.toml` (see `config`, "Trust")."""

from __future__ import annotations

from pathlib import Path

import click

from wiki_memory import config
from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json


@main.command(name="trust")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--remove", is_flag=True, help="Stop trusting it.")
@click.option("--json", "as_json", is_flag=True, help="Print what the file asks for as JSON.")
@pass_app
def trust(app: App, path: Path | None, remove: bool, as_json: bool) -> None:
    """Trust a repository's `.wiki-memory.toml`, so its `store` and `name` count.

    A repository's own file may point its memory at another wiki (`store`) or share a
    project's memory by name (`name`); wiki-memory honours it only for a repository you
    trust: this command (the file as it is now: a changed file is no longer trusted), or
    `[trust] paths = ["~/src/company"]` in config.toml for every repository under a folder.
    PATH is the repository (default: this project's).

    \b
    Examples:
      wiki-memory trust                 # the repository of the current directory
      wiki-memory trust ~/src/widgets --remove
    """
    start = path if path is not None else Path(app.project_dir or ".")
    root = config.find_code_root(start.resolve()) or start.resolve()
    asks = config.trust(root, remove=remove)
    if as_json:
        echo_json({"root": str(root), "trusted": not remove, "asks": asks})
        return
    what = ", ".join(f"{k} = {v!r}" for k, v in asks.items()) or "nothing (no store or name)"
    if remove:
        click.echo(f"no longer trusted: {root / config.PROJECT_FILE}")
    else:
        click.echo(f"trusted {root / config.PROJECT_FILE} as it is now: {what}")
