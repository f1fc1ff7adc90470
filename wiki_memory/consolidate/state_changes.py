"""What a shell command changes besides files' content: whether a step changed files, a command
that undoes earlier work (`git checkout -- f`, `git reset --hard`), the stage of a command that
changes a system's state when it succeeds (a package installed, a commit pushed, a service
started), and a removal of something that was not there. Standard library only.
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.command_runs import CommandRun
from wiki_memory.consolidate.commands import CHANGE_VERBS, command_words, stage_commands
from wiki_memory.consolidate.session import Step


def changes_files(step: Step) -> bool:
    """Did the step change files (an edit tool, or a shell command that wrote files)?"""
    return bool(step.files) and not step.error and step.kind in ("edit", "command")


_RESET = re.compile(r"^git (reset( \S+)* --hard|stash( (push|save|-\S+)( .*)?)?$|revert \S)")


def is_undo(words: list[str]) -> bool:
    """Does the command (its words) throw changes away? `git checkout -- f`, `git checkout .`,
    `git restore f`, `git reset --hard`, `git stash`, `git revert C`; not a checkout of a
    branch (`git checkout main`, `git checkout -b x`), nor `git restore --staged f`."""
    if len(words) < 2 or os.path.basename(words[0]) != "git":
        return False
    sub, rest = words[1], words[2:]
    if sub == "checkout":
        if any(w in ("-b", "-B", "--orphan", "-") for w in rest):
            return False
        if "--" in rest:
            return True
        # A file, not a branch: `.`, or a name with an extension (`src/app.py`).
        return any(w == "." or re.search(r"\.[A-Za-z0-9]{1,6}$", w) for w in rest if not w.startswith("-"))
    if sub == "restore":
        return "--staged" not in rest or "--worktree" in rest or "-W" in rest
    return bool(_RESET.match(" ".join(words)))


def undo_targets(words: list[str]) -> list[str]:
    """What an undo (see `is_undo`) throws away: its files, or [] for the whole tree."""
    skip = {"HEAD", "--", "--hard", "--staged", "--worktree", "checkout", "restore", "reset", "stash", "push", "save"}
    return [w for w in words[2:] if not w.startswith("-") and w not in skip and not re.match(r"^HEAD[~^]", w)]


# Programs whose every successful run changes something (files, processes) by itself.
_CHANGE_PROGRAMS = {"rm", "rmdir", "kill", "pkill", "killall", "ln", "mv", "cp", "chmod", "chown"}
# A PowerShell cmdlet (Verb-Noun) whose verb changes state: `Remove-Item`, `Install-Module`,
# `Stop-Service`. Not the ones that write a file's content (`Set-Content`): those are edits.
_PS_CHANGE = re.compile(
    r"(remove|new|copy|move|rename|install|uninstall|start|stop|restart|enable|disable|register|unregister)-[a-z]+",
    re.IGNORECASE,
)
# Package managers whose operation is an option (`pacman -S x`, `yay -Rns x`): -S installs
# (not -Ss, -Si, -Sl, -Sg: searches and listings), -R removes, -U installs a file.
_OPTION_VERB = re.compile(r"^-(S[yuwcd]*|R\w*|U\w*)$")


def change_stage(command: str) -> tuple[str, ...]:
    """The words of the first stage of the line that changes the system's state when it
    succeeds (see `CHANGE_VERBS`), or () when the line only looks, checks or edits files."""
    return next(iter(_change_stages(command)), ())


def only_stages(command: str) -> bool:
    """Does the line change nothing but git's index (`git add -A && git status`)? Staging
    prepares a commit: the commit, or its absence, is what happened."""
    stages = _change_stages(command)
    return bool(stages) and all(words[:2] == ("git", "add") for words in stages)


def _change_stages(command: str) -> list[tuple[str, ...]]:
    return [words for words in stage_commands(command) if _changes_state(words)]


def _changes_state(words: tuple[str, ...]) -> bool:
    program = os.path.basename(words[0])
    if program in _CHANGE_PROGRAMS or _PS_CHANGE.fullmatch(program):
        return True
    if program == "git":
        sub = words[1] if len(words) > 1 else ""
        creates = sub in ("checkout", "switch") and any(w in ("-b", "-B", "-c", "-C") for w in words[2:])
        return sub in CHANGE_VERBS or creates
    if len(words) > 1 and _OPTION_VERB.match(words[1]) and program in ("pacman", "yay", "paru", "pikaur"):
        return True
    # The verb among the first words (`npm install -g x`, `docker compose up`, `op account add`).
    head = [w for w in words[1:4] if not w.startswith("-")]
    return any(w in CHANGE_VERBS or re.fullmatch(r"(set|add|create|remove|delete)-[a-z-]+", w) for w in head)


# What a tool says when what it was asked to remove is not there.
_ABSENT = re.compile(
    r"not installed|no installed|is not installed|not found|no such|does not exist|doesn't exist|"
    r"nothing to (remove|uninstall|do)|unknown (package|app|application|service)|no matching",
    re.IGNORECASE,
)
_REMOVE_VERBS = {"uninstall", "remove", "purge", "erase", "delete", "rm", "rmdir"}


def already_absent(run: CommandRun) -> bool:
    """Did a removal fail only because what it removes is not there (`flatpak uninstall x`:
    "No installed refs found", `pip uninstall x`: "not installed")? Then the state it was run
    for holds: not a failure."""
    if run.ok or not run.error or run.step.rejected or run.step.interrupted:
        return False
    words = command_words(run.command)
    if not words:
        return False
    program = os.path.basename(words[0])
    removes = (
        program in _REMOVE_VERBS
        or program.lower().startswith(("remove-", "uninstall-"))
        or any(w in _REMOVE_VERBS for w in words[1:4] if not w.startswith("-"))
    )
    # pacman's remove is an option (`pacman -Rns x`); elsewhere `-R` is recursion.
    pacman = program in ("pacman", "yay", "paru", "pikaur")
    removes = removes or (pacman and len(words) > 1 and bool(re.match(r"^-R\w*$", words[1])))
    return removes and bool(_ABSENT.search(run.error))
