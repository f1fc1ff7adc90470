"""Commands on sessions and handoffs: handoff, handoff write, consolidate, import, demo."""

from __future__ import annotations

import json
import sys

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.demo import demo as run
from wiki_memory.cli.inout import import_instructions_command, import_wiki_command
from wiki_memory.cli.output import Progress, echo_json, read_stdin, say_redacted, warnings_to_stderr
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Actor, agent_name, default_transcripts, find_transcripts, import_transcripts


@main.group(invoke_without_command=True)
@click.option(
    "--session", "session_id", metavar="ID", help="As this session would see it (its own handoff is left out)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the text, the handoff pages and the size as JSON.")
@click.option(
    "--explain", is_flag=True, help="Show each item with the recorded events (journal lines, calls) it came from."
)
@click.pass_context
def handoff(ctx: click.Context, session_id: str | None, as_json: bool, explain: bool) -> None:
    """Print what the next session in this project will be handed when it starts.

    Exactly the text the SessionStart hook gives an agent: the newest handoffs not
    written by that session, preferences, and related decisions and gotchas.

    \b
    Examples:
      wiki-memory handoff
      wiki-memory handoff --json
      wiki-memory handoff --explain
      wiki-memory handoff write --summary "Refresh moved before the retry" --next "Fix admin_client.py"
    """
    if ctx.invoked_subcommand is not None:
        return
    app: App = ctx.obj
    if explain:
        explained = app.memory.handoff_explain(session_id)
        if as_json:
            echo_json(explained.as_dict())
        else:
            click.echo(explained.text(), nl=False)
        return
    view = app.memory.handoff(session_id)
    if as_json:
        echo_json(view.as_dict() if view else {"text": None, "handoffs": [], "pending": [], "chars": 0})
    elif view is None:
        click.echo(
            "No handoff yet: no session of this project has been consolidated, and memory holds "
            "no preferences, decisions or gotchas to offer.",
            err=True,
        )
    else:
        click.echo(view.text)


@handoff.command(name="write")
@click.option("--summary", "-s", help="What was being done and where it stands (read from stdin when omitted).")
@click.option("--done", "done", multiple=True, metavar="TEXT", help="Something finished (repeat for several).")
@click.option("--failed", "failed", multiple=True, metavar="TEXT", help="An approach that failed, and why.")
@click.option("--next", "next_steps", multiple=True, metavar="TEXT", help="A next step.")
@click.option("--question", "questions", multiple=True, metavar="TEXT", help="An open question.")
@click.option("--file", "files", multiple=True, metavar="PATH", help="A file touched.")
@click.option("--agent", metavar="NAME", help="Written by this agent (e.g. codex) rather than by you.")
@click.option("--session", "session_id", metavar="ID", help="The session this handoff is from.")
@click.option("--json", "as_json", is_flag=True, help="Print path and commit as JSON.")
@pass_app
def handoff_write(
    app: App,
    summary: str | None,
    done: tuple[str, ...],
    failed: tuple[str, ...],
    next_steps: tuple[str, ...],
    questions: tuple[str, ...],
    files: tuple[str, ...],
    agent: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Write a handoff on purpose (one commit); the next session gets it first.

    It takes precedence over the automatic handoff of the same session (or of the same
    moment). Writing again in the same session updates it.

    \b
    Example:
      wiki-memory handoff write --summary "Login test flake: refresh now precedes the retry" \\
          --done "Fixed src/auth/client.py" --failed "Raising the retry delay: still flaky" \\
          --next "Same fix in src/auth/admin_client.py" --file src/auth/client.py
    """
    if summary is None:
        if sys.stdin.isatty():
            raise click.UsageError("give --summary (or pipe the summary on stdin)")
        summary = read_stdin("summary")
    result = app.memory.handoff_write(
        summary, done, failed, next_steps, questions, files, actor=Actor(agent, session_id)
    )
    say_redacted(result.redacted)
    if as_json:
        echo_json({"path": result.path, "commit": result.commit, "created": result.created})
    else:
        click.echo(result.path)


@handoff.command(name="share")
@click.option("--json", "as_json", is_flag=True, help="Print the branch, the team page and the commit as JSON.")
@pass_app
def handoff_share(app: App, as_json: bool) -> None:
    """Attach the newest handoff to the code branch checked out, in the team tier.

    It is pushed to the team's main as `handoffs/branches/<branch>.md` (not reviewed: it is
    news for whoever works on the branch next), and a teammate who starts a session on
    that branch is handed it once, with your name and its age. Sharing again replaces it.

    \b
    Example:
      wiki-memory handoff share
    """
    shared = app.memory.handoff_share()
    if as_json:
        echo_json(shared.as_dict())
    else:
        click.echo(
            f"{shared.source} -> team:{shared.team_path} for branch {shared.branch} (commit {shared.commit[:8]})"
        )


@main.command()
@click.option("--session", "session_id", metavar="ID", help="Consolidate this session.")
@click.option("--pending", is_flag=True, help="Consolidate every session whose journal is not consolidated yet.")
@click.option(
    "--llm/--no-llm",
    "llm",
    default=None,
    help="Use the LLM of [consolidate] in config.toml, or not (default: use it when configured).",
)
@click.option("--force", is_flag=True, help="Consolidate again even if the journal has not changed.")
@click.option(
    "--settle",
    type=float,
    metavar="SECONDS",
    help="With --pending: skip journals written to in the last SECONDS (default 5).",
)
@click.option("--quiet", is_flag=True, help="Print nothing (background runs log instead).")
@click.option("--json", "as_json", is_flag=True, help="Print what each consolidation did as JSON.")
@pass_app
def consolidate(
    app: App,
    session_id: str | None,
    pending: bool,
    llm: bool | None,
    force: bool,
    settle: float | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Turn a finished session into a session page and a handoff page (one commit).

    Hooks run this in the background when a session ends; running it again changes
    nothing until the session's journal grows.

    \b
    Examples:
      wiki-memory consolidate --pending
      wiki-memory consolidate --session 2624e4c8-1b7e-4a51-9f0e-6a1d2e3f4a5b --no-llm
    """
    if bool(session_id) == pending:
        raise click.UsageError("give --session ID or --pending")
    if session_id:
        outcomes = [app.memory.consolidate(session_id, llm=llm, force=force)]
    else:
        outcomes = app.memory.consolidate_pending(settle=settle, llm=llm)
    if quiet:
        return
    if as_json:
        echo_json([o.as_dict() for o in outcomes])
        return
    if not outcomes:
        click.echo("nothing pending")
    for o in outcomes:
        detail = {
            "committed": f"committed {(o.commit or '')[:8]} ({o.mode})",
            "unchanged": "pages already up to date",
            "already": "already consolidated",
            "empty": "nothing substantive: no pages",
            "busy": "being consolidated by another process",
        }.get(o.status, o.message or o.status)
        click.echo(f"{o.session_id}: {detail}")
        for path in o.pages if o.status == "committed" else ():
            click.echo(f"  {path}")


TRANSCRIPT_AGENTS = ("claude-code", "codex", "gemini", "opencode")  # the agents whose transcripts we can read


def _transcript_agent(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The canonical agent name for AGENT (aliases as `install` takes them: claude, ...)."""

    if value in ("instructions", "wiki"):
        return value  # not agents: instruction files, an export (`import instructions`, `import wiki`)
    name = agent_name(value)
    if name not in TRANSCRIPT_AGENTS:
        raise click.BadParameter(
            f"{value!r}: transcripts can be imported from {', '.join(TRANSCRIPT_AGENTS)} (or: instructions, wiki)"
        )
    return name


@main.command(name="import")
@click.argument("agent", metavar="AGENT", callback=_transcript_agent)
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print what was imported, per project, as JSON.")
@click.option("--dry-run", is_flag=True, help="import instructions: show the pages, write nothing.")
@click.pass_context
def import_(ctx: click.Context, agent: str, paths: tuple[str, ...], as_json: bool, dry_run: bool) -> None:
    """Import past sessions from transcripts, as session pages.

    Without PATHs, reads the agent's default place (~/.claude/projects,
    $CODEX_HOME/sessions, ~/.gemini/tmp, or OpenCode's opencode.db). A PATH may
    also be a sub-agent's transcript (alone, or with its parent's: then its work
    joins the parent's session), a Gemini CLI session or checkpoint file, or an
    `opencode export` JSON file. Each session is filed under the project of the
    working directory its transcript records, unless --project (before the
    command) says where. The newest imported session's handoff is written, so
    the next session picks up from it. Importing again skips sessions that
    already have a page.

    \b
    Examples:
      wiki-memory import claude-code      # or: claude
      wiki-memory import codex ~/.codex/sessions/2026/11
      wiki-memory import opencode ~/.local/share/opencode/opencode.db
      wiki-memory --project . import gemini ~/.gemini/tmp/myapp/chats
      wiki-memory --project . import claude-code ~/Downloads/session.jsonl

    `import instructions [PATH...] [--dry-run]` reads the memory you already keep
    for your agents instead: CLAUDE.md (with CLAUDE.local.md and @imports),
    AGENTS.md, GEMINI.md, Cursor rules, copilot-instructions.md, .windsurfrules,
    Claude Code's auto memory of the project, a Cline memory-bank/, Serena's
    memories, a basic-memory folder; each section becomes a page (docs/import-export.md).

    \b
      wiki-memory import instructions --dry-run
      wiki-memory import instructions ~/notes/basic-memory/myapp

    `import wiki PATH` brings in what `export --format markdown|json` wrote.
    """
    if agent == "instructions":
        import_instructions_command(ctx.obj, paths, as_json=as_json, dry_run=dry_run)
        return
    if agent == "wiki":
        import_wiki_command(ctx.obj, paths, as_json=as_json, dry_run=dry_run)
        return
    if dry_run:
        raise WikiMemoryError("--dry-run is for `import instructions` and `import wiki`")

    app: App = ctx.obj
    files = find_transcripts(paths, agent) if paths else default_transcripts(agent)
    if not files:
        raise WikiMemoryError(
            f"no {agent} transcripts found" + (f" in {', '.join(paths)}" if paths else " in the default place")
        )
    forced = app.project if app.project_dir else None
    with (
        warnings_to_stderr(),
        Progress(quiet=as_json) as indexing,
        click.progressbar(
            length=len(files), label=f"reading {len(files)} transcripts", file=sys.stderr, show_pos=True
        ) as bar,
    ):
        report = import_transcripts(
            agent, files, project=forced, progress=lambda n=1: bar.update(n), index_progress=indexing
        )
    if as_json:
        echo_json(report.as_dict())
        return
    for line in report.lines():
        click.echo(line)


@main.command()
@click.option("--keep", is_flag=True, help="Keep the temporary folder (its wiki and code) to look around.")
@click.option("--json", "as_json", is_flag=True, help="Print the result (pages, what Codex receives) as JSON.")
def demo(keep: bool, as_json: bool) -> None:
    """Show the main job in a throwaway folder: Claude Code works, Codex picks up.

    A realistic Claude Code session goes through the real hook entry points (a test
    fails, a file is edited, the test passes, another fails, a plan item stays open);
    its SessionEnd consolidates it in the background; then Codex starts in the same
    directory, and this prints what Codex's SessionStart hook hands it. Your own memory
    is not touched.

    \b
    Example:
      wiki-memory demo
      wiki-memory demo --keep   # then browse the wiki it prints
    """

    result = run(keep=keep, say=(lambda line: None) if as_json else click.echo)
    if as_json:
        echo_json(result.as_dict())
        return
    if result.envelope is None:
        raise WikiMemoryError(f"Codex's SessionStart hook printed nothing: see {result.home / 'logs'} for why")
    click.echo("\nWhat Codex receives (the hook's stdout, which Codex adds to the model's context):\n")
    click.echo(json.dumps(result.envelope)[:300] + (" …" if len(json.dumps(result.envelope)) > 300 else ""))
    click.echo("\nIts additionalContext, as the model reads it:\n")
    click.echo(result.context)
    if result.log:
        click.echo("\nThe project's wiki (git log):")
        for line in result.log:
            click.echo(f"  {line}")
    if keep:
        click.echo(f"\nKept: {result.repo} (code) and {result.home} (WIKI_MEMORY_HOME)")
