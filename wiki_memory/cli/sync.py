"""Commands for people and teams: watch, open, remote add/list/remove, sync."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wiki_memory.cli import App, main, pass_app
from wiki_memory.cli.output import Progress, echo_json
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Watcher

if TYPE_CHECKING:
    from wiki_memory.memory import Edit, SyncReport


def _edit_line(edit: Edit) -> str:
    return f"{edit.commit[:8]} {edit.subject}"


@main.command()
@click.option("--once", is_flag=True, help="Commit whatever is pending, then exit.")
@click.option(
    "--quiet",
    "quiet_period",
    type=click.FloatRange(min=0.05),
    default=0.5,
    show_default=True,
    metavar="SECONDS",
    help="How long a file must stay unchanged before it is committed.",
)
@click.option("--json", "as_json", is_flag=True, help="With --once: print the commits as JSON.")
@pass_app
def watch(app: App, once: bool, quiet_period: float, as_json: bool) -> None:
    """Commit your edits in the wiki folder as you save them, until Ctrl-C.

    Each settled change becomes one commit under your git identity (`edit: <path>`);
    renames and deletions are followed, editor temporary files ignored, and the search
    index updated for just those pages. A page whose front matter does not parse is
    committed anyway and reported once.

    \b
    Examples:
      wiki-memory watch            # leave it running beside your editor
      wiki-memory watch --once     # commit what you changed, then exit
    """

    memory = app.memory
    store = memory.store()  # the watcher commits through it, as the person

    def problem(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    def edited(edit: Edit) -> None:
        if not (once and as_json):
            click.echo(_edit_line(edit))

    watcher = Watcher(
        store,
        index=memory.index,
        quiet=quiet_period,
        on_edit=edited,
        on_problem=problem,
    )
    if once:
        edits = watcher.once()
        if as_json:
            echo_json([{"commit": e.commit, "subject": e.subject, "paths": list(e.paths)} for e in edits])
        elif not edits:
            click.echo("nothing to commit")
        return

    def terminate(signum: int, frame: Any) -> None:  # a service manager's stop is a Ctrl-C
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    click.echo(f"watching {store.root} (Ctrl-C to stop)", err=True)
    try:
        try:
            watcher.start()
        except OSError as e:
            limit = e.errno in (errno.ENOSPC, errno.EMFILE) and sys.platform.startswith("linux")
            raise WikiMemoryError(
                f"cannot watch {store.root}: {e.strerror or e}"
                + (" (the inotify limit: raise fs.inotify.max_user_watches)" if limit else "")
            ) from None
        watcher.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        try:
            watcher.stop()
        except KeyboardInterrupt:  # a second Ctrl-C while the last changes are committed
            pass
    click.echo(f"stopped ({len(watcher.edits)} commit{'s' if len(watcher.edits) != 1 else ''})", err=True)


def _system_opener() -> list[str] | None:
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform.startswith("win"):
        return None  # os.startfile
    for name in ("xdg-open", "gio"):
        found = shutil.which(name)
        if found:
            return [found, "open"] if name == "gio" else [found]
    return None


OPENER_WAIT_S = 5.0  # an opener that has not failed by then has handed the file on


def _open_with_the_system(target: Path) -> None:
    """Open `target` with the system's opener, or say why it cannot be opened.

    Why wait for the opener: `xdg-open` with no application for a folder or a Markdown
    file exits non-zero within a moment; left in the background, its failure went unseen
    and the command said "opened"."""
    opener = _system_opener()
    if opener is None and sys.platform.startswith("win"):
        os.startfile(str(target))  # type: ignore[attr-defined]
        return
    if opener is None:
        raise WikiMemoryError(
            f"no $EDITOR set and no system opener found; open {target} yourself, or set EDITOR (for example EDITOR=vim)"
        )
    try:
        process = subprocess.Popen(
            [*opener, str(target)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        raise WikiMemoryError(
            f"cannot run {opener[0]}: {e.strerror or e}; set EDITOR (for example EDITOR=vim)"
        ) from None
    try:
        code = process.wait(timeout=OPENER_WAIT_S)
    except subprocess.TimeoutExpired:
        return  # still running: it is showing the file
    said = (process.stderr.read() if process.stderr else b"").decode("utf-8", "replace").strip().splitlines()
    if code != 0:
        reason = said[-1] if said else f"exit status {code}"
        raise WikiMemoryError(
            f"{Path(opener[0]).name} could not open {target} ({reason}); open it yourself, or set EDITOR "
            "(for example EDITOR=vim)"
        )


@main.command(name="open")
@click.argument("page", required=False)
@pass_app
def open_cmd(app: App, page: str | None) -> None:
    """Open the wiki folder, or one page, in $VISUAL / $EDITOR (else the system's opener).

    With a terminal editor, what you changed is committed as your edit when it exits;
    with a GUI editor, run `wiki-memory watch` to commit as you save.

    \b
    Examples:
      wiki-memory open                          # the whole memory, as a folder
      wiki-memory open "Retry policy"           # one page, by title, path or id
      EDITOR="code --wait" wiki-memory open notes/ideas.md
    """
    memory = app.memory
    memory.store(create=True)
    memory.commit_hand_edits()  # what was pending is not mixed into this edit
    path = memory.find(page) if page else None
    target = memory.wiki / path if path else memory.wiki
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        _open_with_the_system(target)
        click.echo(f"opened {target}")
        click.echo("your saves become memory with `wiki-memory watch` (or before the next write)", err=True)
        return
    try:
        # The shell splits EDITOR as git does (`code --wait`); the path travels in the environment.
        subprocess.run(
            f'{editor} "$WIKI_MEMORY_OPEN"', shell=True, check=True, env={**os.environ, "WIKI_MEMORY_OPEN": str(target)}
        )
    except subprocess.CalledProcessError as e:
        raise WikiMemoryError(f"the editor ({editor}) exited with status {e.returncode}") from None
    edits = memory.commit_hand_edits([path] if path else None)
    for edit in edits:
        click.echo(_edit_line(edit))
    if not edits:
        click.echo(f"no change to {path or memory.wiki}")


@main.group()
def remote() -> None:
    """Manage the git remotes this wiki syncs with (any git host, or a bare repository).

    Remotes are the wiki repository's own (`git -C "$(wiki-memory path)" remote -v`).

    \b
    Example:
      wiki-memory remote add origin git@github.com:acme/widgets-memory.git
      wiki-memory remote list
    """


@remote.command(name="add")
@click.argument("name")
@click.argument("url")
@pass_app
def remote_add(app: App, name: str, url: str) -> None:
    """Add a remote: an https://, ssh:// or user@host:path URL, file:// or a local path.

    \b
    Examples:
      wiki-memory remote add origin git@github.com:acme/widgets-memory.git
      git init --bare -b main /srv/memory/widgets.git && wiki-memory remote add origin /srv/memory/widgets.git
    """
    added = app.memory.add_remote(name, url)
    click.echo(f"{added.name}\t{added.shown}")
    local = added.local_path
    if local is not None and not (local / "objects").is_dir():
        click.echo(
            f"note: there is no git repository at {local} yet; create one with `git init --bare -b main {local}`",
            err=True,
        )


@remote.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a list of objects.")
@pass_app
def remote_list(app: App, as_json: bool) -> None:
    """List the remotes, with when each last synced (or why it failed).

    \b
    Example:
      wiki-memory remote list --json
    """
    rows = []
    for r, info in app.memory.remotes():
        rows.append(
            {
                **r.as_dict(),
                "last_success": info.get("last_success"),
                "last_attempt": info.get("last_attempt"),
                "last_error": info.get("last_error"),
            }
        )
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no remotes; add one with `wiki-memory remote add origin <url>`", err=True)
    for row in rows:
        status = "never synced"
        if row["last_error"]:
            status = f"last sync failed {row['last_attempt']}: {row['last_error']}"
        elif row["last_success"]:
            status = f"synced {row['last_success']}"
        click.echo(f"{row['name']}\t{row['url']}\t{status}")


@remote.command(name="remove")
@click.argument("name")
@pass_app
def remote_remove(app: App, name: str) -> None:
    """Forget a remote (the wiki and the remote repository are left as they are).

    \b
    Example:
      wiki-memory remote remove backup
    """
    removed = app.memory.remove_remote(name)
    click.echo(f"removed {removed.name} ({removed.shown})")


@main.command(name="sync")
@click.argument("remote_name", metavar="[REMOTE]", required=False)
@click.option(
    "--replace-remote-history",
    is_flag=True,
    help="After `forget`: force-push this wiki's rewritten history in place of the remote's (with a lease).",
)
@click.option(
    "--keep-remote-history",
    is_flag=True,
    help="After `forget`: give up replacing the remote's history and sync with it (what was forgotten comes back).",
)
@click.option("--team", "team_only", is_flag=True, help="Sync the team tier only (see `wiki-memory team`).")
@click.option("--json", "as_json", is_flag=True, help="Print what the sync did as JSON.")
@pass_app
def sync_cmd(
    app: App,
    remote_name: str | None,
    replace_remote_history: bool,
    keep_remote_history: bool,
    team_only: bool,
    as_json: bool,
) -> None:
    """Share memory through a git remote: commit your pending edits, fetch, merge, push.

    With a team joined (`wiki-memory team join URL`), the team tier is synced too, the
    same way, with the team's remote (`--team`: only it; naming REMOTE: only yours).

    Pages changed on one side are taken; a page changed on both is merged line by line,
    or, where both changed the same lines, both versions are kept (this machine's as
    `<page>.conflict-<host>-<date>.md`, linked from the page) and reported. A page
    deleted on one side and edited on the other is kept. Nothing is ever lost; an
    unreachable remote leaves your local memory as it was. Secrets in what arrives are
    reported, never altered (`scan` and `forget` remove them).

    After `forget` here, sync refuses while the remote has the old history:
    `--replace-remote-history` replaces it, refusing if someone pushed since the rewrite.
    After a `forget` on another machine, sync adopts the new history: this machine's own
    new commits are replayed onto it, the old objects deleted, the index rebuilt.

    \b
    Examples:
      wiki-memory remote add origin git@github.com:acme/widgets-memory.git
      wiki-memory sync
      wiki-memory sync backup --json
      wiki-memory forget --string - < leaked.txt && wiki-memory sync --replace-remote-history
    """
    if replace_remote_history and keep_remote_history:
        raise click.UsageError("--replace-remote-history and --keep-remote-history are opposites: give one")
    if team_only and remote_name:
        raise click.UsageError("--team syncs the team tier with the team's remote: give no REMOTE with it")
    with Progress(quiet=as_json) as progress:  # receiving a thousand pages takes a while
        done = app.memory.sync_tiers(
            remote_name,
            team_only=team_only,
            progress=progress,
            replace_remote_history=replace_remote_history,
            keep_remote_history=keep_remote_history,
        )
    if as_json:
        shown = done.personal.as_dict() if done.personal is not None else {}
        if done.team is not None:
            shown["team"] = done.team.as_dict()  # beside the personal sync's keys, as before a team existed
        echo_json(shown)
        return
    if done.personal is not None:
        _print_sync(done.personal)
    if done.team is not None:
        click.echo("team tier:")
        _print_sync(done.team)


def _print_sync(report: SyncReport) -> None:
    if report.recovered:
        click.echo(report.recovered)
    click.echo(f"synced with {report.remote} ({report.url})")
    _print_rewrite(report)
    if report.edits:
        click.echo(
            f"committed {len(report.edits)} hand edit{'s' if len(report.edits) != 1 else ''} first: "
            + ", ".join(e.subject.removeprefix("edit: ") for e in report.edits[:5])
            + (" ..." if len(report.edits) > 5 else "")
        )
    if report.received_commits:
        changed = len(report.changed_here)
        click.echo(
            f"received {report.received_commits} commit{'s' if report.received_commits != 1 else ''}"
            f" ({changed} file{'s' if changed != 1 else ''} changed here"
            + (", fast-forward" if report.fast_forward else "")
            + ")"
        )
    for path in report.merged:
        click.echo(f"merged: {path} (changed on both sides, merged line by line)")
    for old, new in report.renamed:
        click.echo(f"followed a rename: {old} -> {new} (the other side's edit is in {new})")
    for path in report.kept:
        click.echo(f"kept: {path} (deleted on one side, edited on the other)")
    for page, copy in report.conflicts:
        page_has, copy_has = (
            (f"{report.remote}'s version", "yours") if copy in report.ours_copied else ("your version", "theirs")
        )
        click.echo(
            f"conflict: {page} was changed here and on {report.remote} at the same lines; both are "
            f"kept: the page has {page_has}, {copy_has} is in {copy} (linked from the page)"
        )
    if report.sent_commits:
        click.echo(f"sent {report.sent_commits} commit{'s' if report.sent_commits != 1 else ''}")
    if not (report.edits or report.received_commits or report.sent_commits or report.adopted or report.replaced):
        click.echo("already up to date")
    if report.index is not None and report.index.changed:
        click.echo(f"re-indexed {report.index.changed} page{'s' if report.index.changed != 1 else ''}")
    if report.index_warning:
        click.echo(f"warning: {report.index_warning}", err=True)
    for finding in report.secrets:
        where = f"{finding.path}:{finding.line}" if finding.path else "a commit message"
        click.echo(
            f"warning: {where} ({finding.family}, commit {(finding.commit or '')[:8]}) came from {report.remote} "
            "holding what looks like a secret; it is kept as written: `wiki-memory scan` lists it, "
            "`wiki-memory forget --string -` removes it",
            err=True,
        )


def _print_rewrite(report: SyncReport) -> None:
    """What a sync did about a history rewritten by `forget`, here or elsewhere."""
    if report.kept_remote_history:
        click.echo(f"gave up replacing {report.remote}'s history: run `wiki-memory forget` again, then replace it")
    if report.replaced:
        click.echo(
            f"replaced {report.remote}'s history (its main was {report.replaced[:8]}) with this machine's rewritten "
            f"one; other machines adopt it at their next sync. {report.remote} may keep the old objects until it is "
            "garbage-collected"
        )
    adopted = report.adopted
    if adopted is None:
        return
    click.echo(
        f"adopted {report.remote}'s rewritten history ({adopted.rewritten:,} commits of yours it rewrote; "
        f"{adopted.objects_removed:,} old object files deleted here)"
    )
    for replayed in adopted.replayed:
        to = f"-> {replayed.new[:8]}" if replayed.new else "(nothing left of it)"
        click.echo(f"kept your commit {replayed.old[:8]} {to}  {replayed.subject}")
        if replayed.scrubbed:
            click.echo(f"  forgotten text replaced by [forgotten] in: {', '.join(replayed.scrubbed)}")
        if replayed.left_out:
            click.echo(f"  left out its changes to forgotten pages: {', '.join(replayed.left_out)}")
