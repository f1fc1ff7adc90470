"""The web viewer command: `wiki-memory ui`."""

from __future__ import annotations

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.serving.http import check_bind


@main.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="N",
    help="The port (default 8766, else a free one; 0 picks a free one).",
)
@click.option(
    "--host", default="127.0.0.1", show_default=True, metavar="HOST", help="The address (any other needs --token)."
)
@click.option(
    "--token",
    envvar="WIKI_MEMORY_UI_TOKEN",
    metavar="TOKEN",
    help="The token the address carries (default: a fresh one each launch; or set WIKI_MEMORY_UI_TOKEN).",
)
@click.option("--no-open", is_flag=True, help="Print the address; do not open a browser.")
@pass_app
def ui(app: App, port: int | None, host: str, token: str | None, no_open: bool) -> None:
    """Browse and fix this project's memory in your browser.

    Recent activity (sessions, handoffs, edits by agent and by person), search, pages with
    their links and backlinks, editing (committed as you), history with diffs and revert,
    the handoff the next agent gets, pages to review, and the link graph. It serves on
    127.0.0.1 and opens the browser on an address carrying a fresh token; requests
    without it are refused. Ctrl-C stops it.

    \b
    Examples:
      wiki-memory ui
      wiki-memory ui --port 9000 --no-open
      wiki-memory --project ~/src/widgets ui
    """

    check_bind(host, token)  # refuse before paying for the imports
    from wiki_memory.ui.server import run  # deferred: Starlette, uvicorn and jinja2, only when the viewer starts

    run(app.project, host=host, port=port, token=token, open_browser=not no_open)
