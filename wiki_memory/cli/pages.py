"""Commands on pages and their history: init, path, write, show, list, mv, rm, log, diff,
revert, edit, status."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import echo_json, read_stdin, say_redacted
from wiki_memory.config import template
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Actor, EditRequest, Written, project_paths, write_project_file
from wiki_memory.pages import PAGE_TYPES, STATUSES, render_page

WRITABLE_TYPES = tuple(t for t in PAGE_TYPES if t != "handoff")  # handoffs: `handoff write`

agent_option = click.option(
    "--agent", metavar="NAME", help="Commit as this agent (e.g. claude-code) rather than as you."
)
session_option = click.option(
    "--session", "session_id", metavar="ID", help="Session id for the commit's Session-Id trailer."
)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the project and its paths as JSON.")
@pass_app
def init(app: App, as_json: bool) -> None:
    """Create this project's wiki (a git repository) if needed, and print its path.

    Safe to run again: an existing wiki is left as it is.

    \b
    Example:
      cd ~/src/my-service && wiki-memory init
    """
    store = app.memory.store(create=True)
    write_project_file(app.project)
    if as_json:
        echo_json(_project_info(app))
    else:
        click.echo(str(store.root))


def _project_info(app: App) -> dict[str, object]:
    return project_paths(app.project)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print every path of the project as JSON.")
@pass_app
def path(app: App, as_json: bool) -> None:
    """Print the path of this project's wiki (whether or not it exists yet).

    \b
    Example:
      git -C "$(wiki-memory path)" log --oneline
    """
    if as_json:
        echo_json(_project_info(app))
    else:
        click.echo(str(app.project.wiki))


def _read_body(body: str | None, title: str, page_type: str) -> str:
    if body is not None:
        return body
    if not sys.stdin.isatty():
        return read_stdin("body")
    # A person at a terminal: start from the type's template in their editor.
    text = click.edit(template(f"{page_type}.md").replace("{title}", title), extension=".md")
    if text is None or not text.strip():
        raise WikiMemoryError("nothing written: the editor was closed without a body")
    return text


def _written(written: Written, as_json: bool) -> None:
    say_redacted(written.redacted)
    if as_json:
        echo_json(
            {
                "path": written.path,
                "commit": written.commit,
                "created": written.created,
                "id": written.id,
                "redacted": list(written.redacted),
            }
        )
    else:
        click.echo(written.path)


@main.command()
@click.option("--title", "-t", required=True, help="The page title; the file name is its slug.")
@click.option(
    "--type",
    "page_type",
    type=click.Choice(WRITABLE_TYPES),
    default="note",
    show_default=True,
    help="What kind of memory this is; it decides the folder.",
)
@click.option("--tag", "tags", multiple=True, help="A tag (repeat for several); an update keeps the page's tags "
              "unless given.")  # fmt: skip
@click.option("--body", "-b", help="The Markdown body; read from stdin when omitted.")
@click.option("--status", type=click.Choice(STATUSES), help="active (a new page's default), superseded, archived; "
              "an update keeps the page's unless given.")  # fmt: skip
@click.option("--source", "sources", multiple=True, help="Where this came from (e.g. claude-code:2624e4c8).")
@click.option("--path", "page_path", help="Store at this path instead of <folder>/<slug>.md.")
@agent_option
@session_option
@click.option("--json", "as_json", is_flag=True, help="Print path, commit and whether it was created.")
@pass_app
def write(
    app: App,
    title: str,
    page_type: str,
    tags: tuple[str, ...],
    body: str | None,
    status: str | None,
    sources: tuple[str, ...],
    page_path: str | None,
    agent: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Create or update a page (one commit) and print its path.

    Writing a title that already exists updates that page: its id, `created`, tags and
    status stay unless given. The same title under another type is refused (give --path
    to update that page). With no --body and nothing on stdin, opens $EDITOR on the
    type's template.

    \b
    Examples:
      wiki-memory write -t "JWT refresh must happen before the retry" --type gotcha \\
          --tag auth --body "The retry used the expired token; refresh first."
      echo "Use uv, not pip." | wiki-memory write -t "Package manager" --type preference
    """
    text = _read_body(body, title, page_type)
    written = app.memory.write(
        title,
        text,
        page_type,
        tags=list(tags) if tags else None,
        path=page_path,
        status=status,
        sources=sources,
        actor=Actor(agent, session_id),
    )
    _written(written, as_json)


@main.command()
@click.argument("page")
@click.option("--rev", help="Show the page as it was at this revision (commit id, HEAD~3, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print path, front matter and body as JSON.")
@pass_app
def show(app: App, page: str, rev: str | None, as_json: bool) -> None:
    """Print a page, named by its path, its title or its id.

    \b
    Examples:
      wiki-memory show gotchas/jwt-refresh-must-happen-before-the-retry.md
      wiki-memory show "JWT refresh must happen before the retry" --rev HEAD~2
    """

    view = app.memory.read(page, rev)
    found = view.page
    if as_json:
        echo_json(
            {"path": found.path, "title": found.title, "type": found.type, "meta": dict(found.meta), "body": found.body}
            | {"drift": view.drift}
        )
    else:
        click.echo(render_page(found), nl=False)
        if view.drift:
            click.echo(f"wiki-memory: this page {view.drift}", err=True)


@main.command(name="list")
@click.option("--type", "page_type", type=click.Choice(PAGE_TYPES), help="Only pages of this type.")
@click.option("--tag", help="Only pages with this tag.")
@click.option("--status", type=click.Choice(STATUSES), help="Only pages with this status.")
@click.option("--json", "as_json", is_flag=True, help="Print a list of objects.")
@pass_app
def list_pages(app: App, page_type: str | None, tag: str | None, status: str | None, as_json: bool) -> None:
    """List pages: path, type and title, filtered by type, tag or status.

    \b
    Examples:
      wiki-memory list --type decision
      wiki-memory list --tag auth --json
    """
    rows, errors = app.memory.list_pages(page_type, tag, status)
    if as_json:
        echo_json([row.as_dict() for row in rows])
    else:
        for row in rows:
            click.echo(f"{row.path}\t{row.type}\t{row.title}")
    for error in errors:
        click.echo(f"warning: {error}", err=True)


@main.command()
@click.argument("page")
@click.argument("dest", required=False)
@click.option("--title", help="Give the page a new title (and, without DEST, the matching file name).")
@agent_option
@session_option
@pass_app
def mv(app: App, page: str, dest: str | None, title: str | None, agent: str | None, session_id: str | None) -> None:
    """Move or rename a page (its id stays; one commit).

    \b
    Examples:
      wiki-memory mv notes/retry.md decisions/retry-policy.md
      wiki-memory mv "Retry" --title "Retry policy"
    """
    if not dest and not title:
        raise click.UsageError("give a DEST path, or --title")
    click.echo(app.memory.move(page, dest, title=title, actor=Actor(agent, session_id)).path)


@main.command()
@click.argument("page")
@agent_option
@session_option
@pass_app
def rm(app: App, page: str, agent: str | None, session_id: str | None) -> None:
    """Delete a page (one commit; it stays in git history and can be reverted).

    \b
    Example:
      wiki-memory rm notes/old-idea.md
    """
    deleted = app.memory.delete(page, actor=Actor(agent, session_id))
    click.echo(f"removed {deleted.path} ({deleted.commit[:8]})")


@main.command()
@click.argument("page", required=False)
@click.option("-n", "limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many commits.")
@click.option("--json", "as_json", is_flag=True, help="Print a list of commit objects.")
@pass_app
def log(app: App, page: str | None, limit: int, as_json: bool) -> None:
    """Show the history of the wiki, or of one page (following renames; a deleted page by its path).

    \b
    Examples:
      wiki-memory log -n 5
      wiki-memory log "Retry policy" --json
    """
    app.memory.store()  # a project with no wiki yet says so
    commits = app.memory.history(page, limit).commits
    if as_json:
        echo_json([c.as_dict() for c in commits])
        return
    for c in commits:
        click.echo(f"{c.short} {c.time} {c.author}: {c.subject}")


@main.command()
@click.argument("args", nargs=-1, metavar="[REV [REV]] [PAGE]")
@pass_app
def diff(app: App, args: tuple[str, ...]) -> None:
    """Show changes: uncommitted hand edits; since REV; or between two revisions.

    The last argument may name a page to limit the diff to it.

    \b
    Examples:
      wiki-memory diff                  # what you edited and did not commit yet
      wiki-memory diff HEAD~3           # what changed in the last three commits
      wiki-memory diff HEAD~3 HEAD "Retry policy"
    """
    revs, page = app.memory.diff_args(args)
    click.echo(app.memory.diff(revs, page), nl=False)


@main.command()
@click.argument("commit")
@agent_option
@session_option
@pass_app
def revert(app: App, commit: str, agent: str | None, session_id: str | None) -> None:
    """Undo a commit with a new commit (later edits to other lines are kept).

    \b
    Example:
      wiki-memory log -n 3
      wiki-memory revert 3f2c1a9b
    """
    target, new = app.memory.revert(commit, actor=Actor(agent, session_id))
    click.echo(f"reverted {target[:8]} with {new[:8]}")


@main.command()
@click.argument("page")
@click.option(
    "--append", "append_text", metavar="TEXT", help="Add TEXT at the end of the page (or of --heading's section)."
)
@click.option("--heading", metavar="HEADING", help="With --append or --section-text: the section, by its heading.")
@click.option("--section-text", metavar="TEXT", help="Replace what is under --heading with TEXT.")
@click.option("--find", "find_text", metavar="OLD", help="Replace the exact text OLD ...")
@click.option("--replace", "replace_text", metavar="NEW", help="... with NEW (only if it occurs --count times).")
@click.option("--count", "expected_count", type=click.IntRange(min=1), default=1, show_default=True,
              help="How many occurrences of --find you expect.")  # fmt: skip
@click.option("--status", type=click.Choice(STATUSES), help="Mark the page active, archived or superseded.")
@click.option("--superseded-by", metavar="PAGE", help="With --status superseded: the page that replaces it.")
@agent_option
@session_option
@click.option("--json", "as_json", is_flag=True, help="Print path, commit and whether it changed.")
@pass_app
def edit(
    app: App,
    page: str,
    append_text: str | None,
    heading: str | None,
    section_text: str | None,
    find_text: str | None,
    replace_text: str | None,
    expected_count: int,
    status: str | None,
    superseded_by: str | None,
    agent: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Change a page: open it in $EDITOR (your edit is committed when it closes), or change
    part of it in one commit without an editor (refused rather than guessed when the
    heading or text is not found as asked).

    \b
    Examples:
      EDITOR=vim wiki-memory edit "Retry policy"
      wiki-memory edit "Retry policy" --append "Except for 429s: honour Retry-After."
      wiki-memory edit "Retry policy" --heading Why --section-text "Two retries cover 99% of blips."
      wiki-memory edit "Retry policy" --find "twice" --replace "three times"
      wiki-memory edit "Old retry policy" --status superseded --superseded-by "Retry policy"
    """
    chosen = [
        name
        for name, given in (
            ("append", append_text is not None),
            ("replace_section", section_text is not None),
            ("find_replace", find_text is not None or replace_text is not None),
            ("set_status", status is not None),
        )
        if given
    ]
    if len(chosen) > 1:
        raise click.UsageError("give one change at a time: --append, --section-text, --find/--replace or --status")
    if not chosen:
        _edit_in_editor(app, page)
        return
    request = EditRequest(
        page,
        chosen[0],
        text=append_text if append_text is not None else section_text,
        heading=heading,
        find=find_text,
        replace=replace_text,
        expected_count=expected_count,
        status=status,
        superseded_by=superseded_by,
        actor=Actor(agent, session_id),
    )
    written = app.memory.apply_edit(request)
    say_redacted(written.redacted)
    if as_json:
        echo_json({"path": written.path, "commit": written.commit, "changed": written.changed,
                   "replaced": written.replaced, "redacted": list(written.redacted)})  # fmt: skip
    else:
        click.echo(f"{written.path} ({written.commit[:8]})" if written.commit else f"no change to {written.path}")


def _edit_in_editor(app: App, page: str) -> None:
    """The page's text in a copy outside the wiki, opened in $EDITOR; on close, saved as the
    person's edit against the version it started from (merged with, or kept beside, what
    changed meanwhile: an agent's write while the editor was open is not reverted)."""
    memory = app.memory
    memory.commit_hand_edits()  # what was pending is not mixed into this edit
    source = memory.page_source(page)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    folder = Path(tempfile.mkdtemp(prefix="wiki-memory-edit-"))
    copy = folder / Path(source.path).name
    copy.write_bytes(source.text.encode("utf-8"))
    try:
        subprocess.run(f'{editor} "$WIKI_MEMORY_EDIT_FILE"', shell=True, check=True,
                       env={**os.environ, "WIKI_MEMORY_EDIT_FILE": str(copy)})  # fmt: skip
    except subprocess.CalledProcessError as e:
        shutil.rmtree(folder, ignore_errors=True)
        raise WikiMemoryError(f"the editor ({editor}) exited with status {e.returncode}; nothing committed") from None
    data = copy.read_bytes()
    if data == source.text.encode("utf-8"):
        shutil.rmtree(folder, ignore_errors=True)
        click.echo(f"no change to {source.path}")
        return
    try:
        written = memory.save_text(source.path, data.decode("utf-8"), base=source.blob)
    except (WikiMemoryError, UnicodeDecodeError) as e:
        reason = "it is not UTF-8 text" if isinstance(e, UnicodeDecodeError) else str(e)
        raise WikiMemoryError(f"{reason}; your text is kept in {copy}") from None
    shutil.rmtree(folder, ignore_errors=True)
    say_redacted(written.redacted)
    commit = (written.commit or "")[:8]
    if written.conflict_copy:
        click.echo(
            f"{source.path} changed while the editor was open ({written.merged}) at the same lines: it is kept as "
            f"it is, and your version is in {written.conflict_copy} ({commit}); merge what you need, then delete it"
        )
    elif written.merged:
        click.echo(f"committed {source.path} ({commit}), merged with {written.merged} made while the editor was open")
    else:
        click.echo(f"committed {source.path} ({commit})" if written.commit else f"no change to {source.path}")


def _index_line(index: dict[str, Any]) -> str:
    if "error" in index:
        return f"unavailable ({index['error']}); `wiki-memory reindex` rebuilds it"
    if not index["chunks"] and not index["current"]:
        return "not built yet (the first search or `wiki-memory reindex` builds it)"
    waiting = index["without_vectors"]
    line = f"{index['chunks']} chunks, " + (
        f"{waiting} without a vector yet (each search adds a second's worth; `wiki-memory reindex` adds them all)"
        if waiting
        else "every one with a vector"
    )
    return line + ("" if index["current"] else "; behind the wiki (the next search or reindex catches up)")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as a JSON object.")
@pass_app
def status(app: App, as_json: bool) -> None:
    """Show the project, its wiki, pages by type, the last commit, pending hand edits and
    how far the search index is (chunks still without a vector, caught up or not).

    \b
    Example:
      wiki-memory status --json
    """
    info = app.memory.status()
    if as_json:
        echo_json(info)
        return
    click.echo(f"project:  {info['name']} ({info['id']})")
    click.echo(f"code:     {info['root'] or '-'}")
    click.echo(f"wiki:     {info['wiki']}" + ("" if info["exists"] else "  (not created: run `wiki-memory init`)"))
    if not info["exists"]:
        return
    by_type = ", ".join(f"{k} {v}" for k, v in sorted(info["pages_by_type"].items()))
    click.echo(f"pages:    {info['pages']}" + (f" ({by_type})" if by_type else ""))
    last = info["last_commit"]
    if last:
        click.echo(f"last:     {last['short']} {last['time']} {last['author']}: {last['subject']}")
    pending = info["pending_edits"]
    if pending:
        click.echo(f"pending:  {len(pending)} uncommitted hand edit(s): " + ", ".join(pending[:5]))
    for broken in info["broken_pages"]:
        click.echo(f"broken:   {broken['path']}: {broken['error']} (fix its front matter; `wiki-memory review`)")
    for copy in info["conflict_copies"]:
        click.echo(f"conflict: {copy['path']}, a version of {copy['page']} kept beside it (`wiki-memory review`)")
    if info["index"] is not None:
        click.echo(f"index:    {_index_line(info['index'])}")
