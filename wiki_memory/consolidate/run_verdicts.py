"""What the extractive summary says of the session's command runs: failures a later run fixed
(with what changed in between), each command by its last run (declined, failed, a check that
passed), commands that changed the system's state, and changes thrown away. Standard library
only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from wiki_memory.consolidate.command_runs import RUNNING, CommandRun, missing_program
from wiki_memory.consolidate.commands import (
    command_key,
    command_words,
    is_probe,
    is_verification,
    only_looks,
    program_family,
    shown,
)
from wiki_memory.consolidate.findings import Findings
from wiki_memory.consolidate.oneline import clean, error_line, relative
from wiki_memory.consolidate.session import Step
from wiki_memory.consolidate.state_changes import (
    already_absent,
    change_stage,
    changes_files,
    is_undo,
    only_stages,
    undo_targets,
)


def fixed_failures(runs: list[CommandRun], steps: list[Step], cwd: str | None, found: Findings) -> set[tuple[str, ...]]:
    """Failures that a later run fixed: Done, with what changed in between. Returns the
    commands (their keys) told as fixed."""
    reported_fixed: set[tuple[str, ...]] = set()
    by_index = {r.step.index: r for r in runs}
    for run in runs:
        if run.fixed_by is None:
            continue
        key = command_key(run.command)
        changed = _between(steps, run.step.index, run.fixed_by, cwd)
        changes = [s for s in steps[run.step.index + 1 : run.fixed_by] if changes_files(s)]
        after = f" after changes to {', '.join(changed[:5])}" if changed else ""
        later_cmd = by_index[run.fixed_by].command if run.fixed_by in by_index else steps[run.fixed_by].input
        later = by_index.get(run.fixed_by)
        # A search that then ran and found nothing got past the failure; it did not "pass".
        passed = "ran and found nothing" if later is not None and later.found_nothing else "passed"
        same = later_cmd.strip() == run.command.strip()
        again = (
            f"then {'ran again and found nothing' if passed != 'passed' else 'passed'}"
            if same
            else f"then `{shown(later_cmd, 120)}` {passed}"
        )
        if escalated_past(run.step, steps[run.fixed_by]):
            again += " with escalated permissions, outside the sandbox"
        line = f"`{shown(run.command, 120)}` failed at first ({run.error or run.outcome}), {again}{after}."
        found.add("stories", line, run.step, *changes, steps[run.fixed_by])
        # A look that failed and then worked (`pactl info` as root, then as the user) changed
        # nothing: a story (and a gotcha candidate), not work done.
        if key not in reported_fixed and not only_looks(run.command):
            reported_fixed.add(key)
            found.add("done", line, run.step, *changes, steps[run.fixed_by])
    return reported_fixed


def escalated_past(failed: Step, later: Step) -> bool:
    """The later run asked for the permissions the agent's sandbox withholds and the failed
    one had not: what stopped the command was the sandbox (a network call, a write to
    `.git`), and running it outside got past it."""
    return bool(later.meta.get("escalated")) and not failed.meta.get("escalated")


def last_runs(
    runs: list[CommandRun], reported_fixed: set[tuple[str, ...]], found: Findings, steps: Sequence[Step] = ()
) -> None:
    """Each command by its last run: declined, failed (and open: the state the session
    left), or a verification that passed (unless already told as a fix). `steps`: the
    session's, to see a failed write done by a later step."""
    last_by_key: dict[tuple[str, ...], CommandRun] = {}
    counts: dict[tuple[str, ...], int] = {}
    failures: dict[tuple[str, ...], list[Step]] = {}
    for run in runs:
        key = command_key(run.command)
        last_by_key[key] = run
        if not run.ok:
            counts[key] = counts.get(key, 0) + 1
            failures.setdefault(key, []).append(run.step)
    for key, run in last_by_key.items():
        if (run.step.not_permitted or run.step.rejected) and only_looks(run.command):
            # A look around the settings refused or the user declined (most often to say
            # where to look instead): nothing was tried, nothing failed.
            continue
        if run.step.not_permitted:
            found.add("failed", f"`{shown(run.command, 160)}` was not run: {refusal(run.step)}", run.step)
            continue
        if run.step.rejected:
            found.add("failed", f"The user declined to run `{shown(run.command, 160)}`.", run.step)
            continue
        if run.ok or run.fixed_by is not None or is_probe(run.command):
            continue
        if run.step.no_result:
            continue  # the session stopped while it ran: reported as a mid-task end
        if only_looks(run.command) and _ABSENT.search(run.error):
            continue  # a look for something that is not there (a 404, no such file): an answer
        gone_without = _went_without(run, runs)
        if gone_without:
            found.add("stories", gone_without, run.step)
            continue
        if _written_later(run, steps):
            continue  # it was to write files, and a later step wrote them: the job got done
        if already_absent(run):
            # A removal that found nothing to remove: the state it was run for holds.
            found.add("done", f"`{shown(run.command, 160)}`: already gone ({run.error}).", run.step)
            continue
        times = f" ({counts[key]} times)" if counts.get(key, 0) > 1 else ""
        what = "was interrupted" if run.step.interrupted else run.outcome
        tried = failures.get(key, [run.step])[-3:]
        found.add(
            "failed", f"`{shown(run.command, 160)}` {what}{times}" + (f": {run.error}" if run.error else "."), *tried
        )
        # Told once, under Failed: a failure no later run fixed is what the session left
        # failing (and closes there when a later session's run of it passes).
        found.add(
            "stories",
            f"`{shown(run.command, 120)}` {what}" + (f" ({run.error})" if run.error else "") + "; no later run passed.",
            *tried,
        )
    _state_changes(runs, reported_fixed, found)
    # Passing checks, one line per check program (`dotnet build` of five projects is one line).
    passed: dict[tuple[str, ...], list[CommandRun]] = {}
    for key, run in last_by_key.items():
        # One still running when last seen is not known to have passed.
        if (
            run.ok
            and is_verification(run.command)
            and key not in reported_fixed
            and not RUNNING.search(run.step.output)
        ):
            passed.setdefault(_check_program(run.command), []).append(run)
    for program, group in passed.items():
        if len(group) == 1:
            found.add("done", f"`{shown(group[0].command, 160)}` passed (last run).", group[0].step)
            continue
        targets = list(dict.fromkeys(t for r in group for t in _check_targets(r.command, len(program))))
        named = f" ({', '.join(targets[:4])}{', …' if len(targets) > 4 else ''})" if targets else ""
        found.add(
            "done",
            f"`{' '.join(program)}` passed on its last run for {len(group)} targets{named}.",
            *(r.step for r in group[-3:]),
        )


# What a look says when what it looked for is not there.
_ABSENT = re.compile(
    r"\b404\b|not found|cannot find|can't find|could not find|does not exist|doesn't exist|no such", re.IGNORECASE
)


def _written_later(run: CommandRun, steps: Sequence[Step]) -> bool:
    """A command meant to write files (a patch through the shell, a heredoc into a file) that
    failed, and every one of those files was written by a later step that worked."""
    if is_verification(run.command):
        return False  # a check's job is to pass, not the log it wrote (`pytest | tee log`)
    meant = set(run.step.files)
    later = {f for s in steps if s.index > run.step.index and changes_files(s) for f in s.files}
    return bool(meant) and meant <= later


def _went_without(run: CommandRun, runs: list[CommandRun]) -> str:
    """A program that could not run at all (`bash` on a Windows box, a tool not installed)
    and that the session never ran again, going on with other commands that worked: what it
    learned of its environment, not work left failing. "" when that is not so."""
    missing = missing_program(run)
    family = program_family(missing) if missing else ""
    later = [r for r in runs if r.step.index > run.step.index]
    if not family or not any(r.ok for r in later):
        return ""
    if any(program_family((command_words(r.command) or [""])[0]) == family for r in later):
        return ""
    return f"`{family}` could not run here ({run.error or run.outcome}); the session went on without it."


# What a tool says when the change it was asked for was there already: nothing was done.
_NO_CHANGE = re.compile(
    r"already up[- ]to[- ]date|nothing to commit|is already (installed|the newest|up[- ]to[- ]date)|"
    r"^nothing to do\b|there is nothing to",
    re.IGNORECASE | re.MULTILINE,
)


def _state_changes(runs: list[CommandRun], reported_fixed: set[tuple[str, ...]], found: Findings) -> None:
    """Commands that changed the system's state and succeeded (a package installed or
    removed, a commit pushed, a branch made, a service started): done, each once, as the
    command says it. One still running when last seen is not known to have succeeded."""
    seen: set[str] = set()
    for run in runs:
        command = " ".join(run.command.split())
        if not run.ok or run.step.rejected or command in seen or command_key(run.command) in reported_fixed:
            continue
        if not change_stage(run.command) or only_stages(run.command) or RUNNING.search(run.step.output):
            continue
        seen.add(command)
        same = _NO_CHANGE.search(run.step.output)
        if same:  # it had been done already: the tool's words say so
            found.add("done", f"`{shown(run.command, 160)}`: {clean(same.group(0), 80)}.", run.step)
        else:
            found.add("done", f"`{shown(run.command, 160)}` succeeded.", run.step)


def refusal(step: Step) -> str:
    """Why the permission settings refused a call, in the agent's words when it gave them."""
    said = error_line(step.output)
    return (
        f"{said}"
        if said and re.search(r"permission|denied|refused|not allowed", said, re.I)
        else ("the permission settings refused it.")
    )


def _check_program(command: str) -> tuple[str, ...]:
    """A check by its program and subcommand: `dotnet build x.csproj -v q` -> (dotnet, build)."""
    words = command_words(command)
    head = tuple(words[:1])
    if len(words) > 1 and re.fullmatch(r"[a-z][\w-]*", words[1]):
        head = (*head, words[1])
    return head


def _check_targets(command: str, skip: int) -> list[str]:
    """What a check ran on: its operands that name files or folders, by their last part
    (option values such as `Release` or `minimal` are not targets)."""
    words = command_words(command)[skip:]
    return [
        os.path.basename(w.rstrip("/")) or w
        for w in words
        if ("." in w or "/" in w[1:]) and not w.startswith("-") and "=" not in w and ":" not in w
    ]


def reverts(runs: list[CommandRun], found: Findings) -> None:
    """Commands that threw changes away (`git checkout -- f`): abandoned approaches."""
    for run in runs:
        words = command_words(run.command)
        if run.ok and is_undo(words):
            targets = undo_targets(words)
            what = ", ".join(targets) if targets else "the working tree"
            verb = "set aside" if words[1] == "stash" else "reverted"
            found.add("failed", f"Changes to {what} were {verb} (`{shown(run.command, 120)}`).", run.step)


def _between(steps: list[Step], start: int, end: int, cwd: str | None) -> list[str]:
    files: list[str] = []
    for s in steps[start + 1 : end]:
        if changes_files(s):
            for f in s.files:
                name = relative(f, cwd)
                if name not in files:
                    files.append(name)
    return files
