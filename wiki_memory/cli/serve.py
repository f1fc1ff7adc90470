"""The MCP server commands: serve (stdio or streamable HTTP) and install-instructions."""

from __future__ import annotations

from pathlib import Path

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json
from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import instructions
from wiki_memory.memory import Tokens


@main.command()
@click.option(
    "--http", "use_http", is_flag=True, help="Serve streamable HTTP at /mcp (with GET /health) instead of stdio."
)
@click.option(
    "--host",
    default=None,
    metavar="HOST",
    help="HTTP: the address to bind (default 127.0.0.1; any other needs tokens).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="N",
    help="HTTP: the port (default 8765; 0 picks a free one).",
)
@click.option(
    "--token",
    envvar="WIKI_MEMORY_TOKEN",
    metavar="TOKEN",
    help="HTTP: one shared token for the whole server, `Authorization: Bearer TOKEN` (or set WIKI_MEMORY_TOKEN). "
    "For a team, make one token per person instead: `wiki-memory token create`.",
)
@click.option(
    "--agent", metavar="NAME", help="Attribute writes to this agent (default: the MCP client's name, e.g. claude-code)."
)
@click.option("--session", "session_id", metavar="ID", help="Session id for the writes' Session-Id trailer.")
@click.option(
    "--projects",
    "projects",
    multiple=True,
    metavar="DIR|ID|all",
    help="Let calls reach this project too (repeat it; `all`: every project). By default a server reaches its "
    "own project and, over stdio, its client's roots.",
)
@pass_app
def serve(
    app: App,
    use_http: bool,
    host: str | None,
    port: int | None,
    token: str | None,
    agent: str | None,
    session_id: str | None,
    projects: tuple[str, ...],
) -> None:
    """Run the MCP server: this project's memory as tools for any agent.

    Over stdio by default (what an agent spawns; `wiki-memory install` writes the entry).
    Each call reaches the project named by its `project` argument, else the project of
    the directory the server runs in (or `--project DIR`), else the client's MCP roots.
    A `project` argument reaches only the server's own project, its client's roots
    (stdio only) and those named by `--projects` or `[mcp] projects` in config.toml.

    Over HTTP, once any person's token exists (`wiki-memory token create`), every request
    needs one (or the shared --token): each reaches only its projects, a read token
    cannot write, writes are committed as its person, refusals go to logs/access.log.
    Without tokens it serves 127.0.0.1 only.

    \b
    Examples:
      wiki-memory serve                                    # stdio, for an agent
      wiki-memory serve --http --port 8765                 # http://127.0.0.1:8765/mcp
      wiki-memory serve --http --host 0.0.0.0 --token "$WIKI_MEMORY_TOKEN"
      wiki-memory serve --http --host 0.0.0.0 --projects all   # a team: people's tokens
      wiki-memory serve --projects ~/src/api               # calls may name that project too
    """
    from wiki_memory.mcp.transport import (  # deferred: the MCP SDK, only when serving
        DEFAULT_HOST,
        DEFAULT_PORT,
        check_bind,
    )

    if not use_http and (host is not None or port is not None):
        raise click.UsageError("--host and --port are for --http")
    tokens = Tokens() if use_http else None
    if tokens is not None:
        check_bind(host or DEFAULT_HOST, token, people=tokens.any())  # refuse before paying for the imports

    from wiki_memory.mcp.server import build_server  # deferred: the MCP SDK, only when serving
    from wiki_memory.mcp.transport import serve_http, serve_stdio  # deferred: the MCP SDK, only when serving

    server = build_server(
        project_dir=app.project_dir,
        agent=agent,
        session_id=session_id,
        session_from_env=not use_http,
        projects=projects,
        roots=not use_http,
        tokens=tokens,
    )
    if use_http:
        serve_http(server, host=host or DEFAULT_HOST, port=DEFAULT_PORT if port is None else port, token=token)
    else:
        serve_stdio(server)


@main.command(name="install-instructions")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--remove", is_flag=True, help="Take the block out instead.")
@click.option("--print", "print_only", is_flag=True, help="Print the block and change nothing.")
@click.option("--dry-run", is_flag=True, help="Say what would change and write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
@pass_app
def install_instructions(
    app: App, files: tuple[Path, ...], remove: bool, print_only: bool, dry_run: bool, as_json: bool
) -> None:
    """Write the instruction block that tells agents when to use the memory tools.

    For agents without wiki-memory's hooks (VS Code Copilot, Zed, Claude Desktop, ...):
    when to call `handoff` and `search`, what to `write`, when to `handoff_write`. The
    block goes between `<!-- wiki-memory:start -->` and `<!-- wiki-memory:end -->`
    markers in each FILE (default: AGENTS.md at the project's root); running it again
    updates the block in place, `--remove` takes it out; the rest of the file is kept.

    \b
    Examples:
      wiki-memory install-instructions                     # AGENTS.md of this project
      wiki-memory install-instructions AGENTS.md CLAUDE.md
      wiki-memory install-instructions --remove CLAUDE.md
    """

    if print_only:
        click.echo(instructions.block(), nl=False)
        return
    if not files:
        root = app.project.root
        if root is None:
            raise WikiMemoryError(
                "this project's memory is not tied to a directory (WIKI_MEMORY_STORE or a "
                "pinned store); name the file: wiki-memory install-instructions AGENTS.md"
            )
        files = (root / "AGENTS.md",)
    changes = [instructions.plan(path.absolute(), remove=remove) for path in files]
    if not dry_run:
        for change in changes:
            try:
                instructions.apply(change)
            except OSError as e:
                raise WikiMemoryError(f"cannot write {change.path}: {e.strerror}") from None
    if as_json:
        echo_json([{"path": str(c.path), "action": c.action, "dry_run": dry_run} for c in changes])
        return
    done = {
        "added": "added the block to",
        "updated": "updated the block in",
        "removed": "removed the block from",
        "unchanged": "no change to",
    }
    would = {
        "added": "would add the block to",
        "updated": "would update the block in",
        "removed": "would remove the block from",
        "unchanged": "no change to",
    }
    for change in changes:
        line = f"{(would if dry_run else done)[change.action]} {change.path}"
        if change.action == "removed" and change.new_text is None:
            line += (
                " (and delete the file: it held only the block)"
                if dry_run
                else " (and deleted the file: it held only the block)"
            )
        click.echo(line)
