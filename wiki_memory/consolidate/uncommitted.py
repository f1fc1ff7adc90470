"""Changes a session left uncommitted: the files it changed in its git repository after its
last commit (or with no commit at all), as the next session should know before it starts.

Two ways to know, the first where it can be had:

- the repository's own state: a live session's start state was recorded, and at
  consolidation `git status` still lists the changed file (`Session.repo_uncommitted`);
- the recorded events: no commit after the file's last change. A commit is seen by its
  shape, whichever command made it: git's summary line (`[main 548dd49] message`) in the
  output (a wrapper such as `gt create`, a commit whose post-commit hook failed), or a
  `git commit` that succeeded; a tool that commits or pushes for the user (`gt submit`,
  `erk pr submit`, `git push`) may have committed what came before it. Changes set aside after
  the last change (`git stash`, `git checkout -- f`) are not claimed: where they went is not
  known.

Only files inside the working directory count (not `~/.config/x` or a plan file elsewhere),
not the files the repository's ignore rules keep out (`Session.repo_ignored`, read at
consolidation; or seen in the events: a file the session changed that its own `git status`,
run after it with no commit between, did not list is one git ignores, and stays so), and only
in a git repository: the session named its branch, or git itself answered there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from wiki_memory.capture.toolcalls import CUT_MARK
from wiki_memory.consolidate.command_runs import CommandRun
from wiki_memory.consolidate.commands import stage_commands
from wiki_memory.consolidate.oneline import relative
from wiki_memory.consolidate.session import Session, Step
from wiki_memory.consolidate.state_changes import changes_files, is_undo

#: The first words of an open item about uncommitted changes (`closing.item_keys` knows it).
LABEL = "Not committed when the session ended"
# git's summary of a commit it made: `[main 548dd49] feat: x`, `[main (root-commit) 1a2b3c4] x`.
# Anywhere a line of output may start, also after a wrapper's "stdout: " (Codex's sandbox report).
_COMMIT_LINE = re.compile(r"(?:^|stdout: )\[(?:detached HEAD|[^\]\s]+)(?: \([\w -]+\))? [0-9a-f]{7,40}\] \S", re.M)
# The verbs of tools that commit or publish commits (`git push`, `gt submit`, `erk pr submit`).
_COMMITTING = {"commit", "push", "submit", "ship", "land"}
# git subcommands whose answer shows the working directory is a repository.
_ANSWERS_IN_REPO = {"status", "diff", "log", "add", "commit", "branch", "show", "rev-parse", "stash", "restore"}


def _git_stages(run: CommandRun) -> list[tuple[str, ...]]:
    return [w for w in stage_commands(run.command) if os.path.basename(w[0]) == "git" and len(w) > 1]


def committed(run: CommandRun) -> bool:
    """Did the run make a commit (git said so, or a `git commit` succeeded)?"""
    if run.step.rejected:
        return False
    if _COMMIT_LINE.search(run.step.output or ""):
        return True
    return run.ok and any(w[1] == "commit" and "--dry-run" not in w for w in _git_stages(run))


def _may_commit(run: CommandRun) -> bool:
    """Did a tool that commits or pushes on the user's behalf succeed (`gt submit`, `erk pr
    submit`, `git push`)? What it committed is not shown: nothing before it is claimed."""
    if not run.ok or run.step.rejected:
        return False
    for words in stage_commands(run.command):
        verbs = [w for w in words[1:4] if not w.startswith("-")]
        if any(v in _COMMITTING for v in verbs):
            return True
    return False


def _sets_aside(run: CommandRun) -> bool:
    return run.ok and any(is_undo(list(w)) for w in _git_stages(run))


def _in_repository(session: Session, runs: Sequence[CommandRun]) -> bool:
    if session.branch:
        return True
    # git answered there: not a line with a fallback (`git status || echo "no repository"`).
    return any(
        run.ok and "||" not in run.command and any(w[1] in _ANSWERS_IN_REPO and "-C" not in w for w in _git_stages(run))
        for run in runs
    )


def _status_listed(output: str) -> list[str]:
    """The paths a `git status` (short or long) listed: each line's last word."""
    out = []
    for line in output.splitlines():
        words = line.strip().split()
        if words and not line.rstrip().endswith(":") and not line.lstrip().startswith(("(", "On branch", "nothing")):
            out.append(words[-1].strip('"'))
    return out


def _ignored_in_events(session: Session, runs: Sequence[CommandRun]) -> set[str]:
    """Files (relative to the working directory) the session changed that a later `git status`
    of the whole working directory, with no commit between, did not list: git ignores them."""
    out: set[str] = set()
    for run in runs:
        stages = stage_commands(run.command)
        # Only `git status` alone, whole: not one cut by `| head` or the capture, not one told to
        # leave untracked files out (`-uno`), not of a pathspec or another directory.
        words = stages[0] if run.ok and len(stages) == 1 and "|" not in run.command else ()
        if not (words and os.path.basename(words[0]) == "git" and words[1:2] == ("status",)):
            continue
        options = words[2:]
        if any(not a.startswith("-") or a.startswith(("-u", "--untracked-files", "-C")) for a in options):
            continue
        if CUT_MARK.search(run.step.output or ""):
            continue
        listed = _status_listed(run.step.output)
        last_commit = max((r.step.index for r in runs if r.step.index < run.step.index and committed(r)), default=-1)
        for step in session.steps:
            if not (last_commit < step.index < run.step.index and changes_files(step)):
                continue
            for f in (relative(p, session.cwd) for p in step.files):
                if not any(f == p.rstrip("/") or f.startswith(p.rstrip("/") + "/") for p in listed):
                    out.add(f)
    return out


def _only_made_folders(step: Step) -> bool:
    """`mkdir -p d`: an empty folder, which git does not keep."""
    stages = stage_commands(step.input) if step.kind == "command" else ()
    return bool(stages) and all(os.path.basename(w[0]) == "mkdir" for w in stages)


def _inside(name: str) -> bool:
    return not (os.path.isabs(name) or name.startswith(("~", "../")) or name == "..")


def _uncommitted(session: Session, runs: Sequence[CommandRun], files: Sequence[str]) -> tuple[list[str], list[Step]]:
    """The changed files (of `files`, relative to the working directory) left uncommitted,
    and the steps that last changed them (the evidence); ([], []) when none or not known."""
    ignored = {relative(p, session.cwd) for p in session.repo_ignored} | _ignored_in_events(session, runs)
    inside = [f for f in files if _inside(f) and f not in ignored]
    if not inside:
        return [], []
    last_change: dict[str, Step] = {}
    for step in session.steps:
        if changes_files(step):
            for f in step.files:
                last_change[relative(f, session.cwd)] = step
    if session.repo_uncommitted is not None:
        dirty = {relative(p, session.cwd) for p in session.repo_uncommitted}
        left = [f for f in inside if f in dirty]
        return left, [last_change[f] for f in left if f in last_change]
    if not _in_repository(session, runs):
        return [], []
    last_commit = max((r.step.index for r in runs if committed(r) or _may_commit(r)), default=-1)
    if any(_sets_aside(r) and r.step.index > last_commit for r in runs):
        return [], []
    left = [
        f
        for f in inside
        if f in last_change and last_change[f].index > last_commit and not _only_made_folders(last_change[f])
    ]
    return left, [last_change[f] for f in left]


def uncommitted_item(
    session: Session, runs: Sequence[CommandRun], files: Sequence[str]
) -> tuple[str, tuple[Step | str, ...]] | None:
    """The open item about the changes of `files` (the session's changed files, relative to
    its working directory) left uncommitted, and what it came from; None when none is known
    to be. All of `files` are not listed again: the handoff lists them under "Files touched"."""
    left, last_changes = _uncommitted(session, runs, files)
    if not left:
        return None
    from_state = session.repo_uncommitted is not None
    state = ("repository state at the end (`git status`)",) if from_state else ()
    if set(left) == set(files):
        what = f"the session's changes ({len(left)} file{'s' if len(left) != 1 else ''}, under Files touched)"
    else:
        what = ", ".join(left[:6]) + (f" and {len(left) - 6} more" if len(left) > 6 else "")
    if from_state:
        how = "`git status` still listed them"
    elif any(committed(r) for r in runs):
        how = "changed after the session's last `git commit`"
    else:
        how = "the session made no `git commit`"
    return f"{LABEL}: {what}; {how}.", (*last_changes[-8:], *state)
