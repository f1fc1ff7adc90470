"""Shell command runs and their fate: each run of a session's shell steps, whether it failed,
whether the program could not even start, and which later run fixed it (the same command
again, a broader run of the same tool, or another way of doing its job). Standard library only.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace

from wiki_memory.consolidate.commands import (
    command_key,
    command_words,
    covers,
    exit_one_means_no,
    is_probe,
    only_looks,
    program_family,
    purpose_words,
    stage_commands,
)
from wiki_memory.consolidate.oneline import ERROR_WORDS, clean, error_line, error_rank
from wiki_memory.consolidate.session import Step


@dataclass(frozen=True)
class CommandRun:
    """One command and what came of it."""

    step: Step
    command: str
    ok: bool
    error: str  # the telling line of its output when it failed
    fixed_by: int | None = None  # the index of the later run that resolved it
    found_nothing: bool = False  # it passed by answering "no" (exit 1 of a search or a test)

    @property
    def outcome(self) -> str:
        if self.step.rejected:
            return "declined by the user"
        if self.step.interrupted:
            return "interrupted"
        if self.step.no_result:
            return "no result (the session stopped)"
        if self.ok:
            return "ok"
        code = self.step.exit_code
        return f"failed (exit {code})" if code is not None else "failed"


@dataclass(frozen=True)
class Resolution:
    """A failure the session got past: the run that failed, the later run that did the same
    job and passed, the file changes in between, and the failure's telling line.

    `how` says what made the two runs one job: `rerun` (the same command, or a broader run of
    the same test runner), `same program` (its family: `python`/`python3`, `pip`/`pip3`, and
    the same operands), `same script` (`./x.sh` then `bash x.sh`), or `another program`
    (the first could not run at all: not found, not executable; the next command did its job)."""

    failed: CommandRun
    resolved_by: CommandRun
    how: str
    changes: tuple[Step, ...]  # edits and shell edits between the two runs
    error: str

    @property
    def files(self) -> tuple[str, ...]:
        """The files changed between the failure and the run that resolved it."""
        return tuple(dict.fromkeys(f for s in self.changes for f in s.files))


# What a shell says when the program itself could not run (missing, not executable).
_CANNOT_RUN = r"command not found|not found|No such file or directory|Permission denied|cannot execute|not executable"
# Commands that change files or modes: a fix made on the way, not the job done another way.
_FIX_STEPS = {"chmod", "chown", "ln", "sed", "perl", "mv", "cp", "rm", "touch", "mkdir", "tee", "patch"}


def operands(words: tuple[str, ...]) -> set[str]:
    """Non-option words after the program, paths by their last part (`src/x.py` is `x.py`)."""
    return {os.path.basename(w.rstrip("/")) or w for w in words[1:] if not w.startswith("-")}


def _same_job(earlier: CommandRun, later: CommandRun, immediate: bool, could_not_run: bool) -> str:
    """How `later` does the job `earlier` failed at ("" if it does not)."""
    if covers(command_key(later.command), command_key(earlier.command)):
        return "rerun"
    if tuple(command_words(earlier.command)) in stage_commands(later.command):
        return "rerun"  # the failing command again, in another line (`a && b` after `x && b`)
    a, b = purpose_words(earlier.command), purpose_words(later.command)
    if not a or not b:
        return ""
    if covers(tuple(w for w in b if not w.startswith("-"))[:3], tuple(w for w in a if not w.startswith("-"))[:3]):
        same_head = program_family(command_words(earlier.command)[0]) == program_family(command_words(later.command)[0])
        return "same program" if same_head else "same script"
    if b[0] in _FIX_STEPS or later.step.files:
        return ""
    # A later run naming a subcommand the first did not (`docfx build docfx.json` after `docfx
    # docfx.json`) does one part of the job, or another one: not the same job.
    extra = operands(b) - operands(a)
    narrower = any(re.fullmatch(r"[a-z][\w-]*", w) for w in extra)
    if a[0] == b[0] and operands(a) and operands(a) <= operands(b) and not narrower:
        return "same program"  # `git checkout -b B` then `git checkout B`; `python x.py` then `python src/x.py`
    if could_not_run:
        # The program could not run: another one did its job. A look around is replaced by
        # the next look around (`find` for `tree`); other work by a command on the same
        # operands (`yarn install` for `npm install`), never by whatever came next.
        probe = is_probe(earlier.command)
        if probe and is_probe(later.command) and immediate:
            return "another program"
        if not probe and not is_probe(later.command) and operands(a) & operands(b):
            return "another program"
    return ""


def cannot_run(run: CommandRun) -> bool:
    """Did the failure say that the program itself could not run (exit 126 or 127, `tree:
    command not found`, `./x.sh: Permission denied`), rather than that its work failed?"""
    if run.ok:
        return False
    if run.step.exit_code in (126, 127):
        return True
    return bool(missing_program(run))


def missing_program(run: CommandRun) -> str:
    """The program the shell said it could not run (`bash: tree: command not found`, `zsh:
    command not found: tree`, `./x.sh: Permission denied`, `'tree' is not recognized`), or "".
    Not `ls: cannot access 'f': No such file or directory` (ls ran; its operand was missing)."""
    words = command_words(run.command)
    if run.ok or not words:
        return ""
    name = os.path.basename(words[0])
    program = re.escape(name)
    said = re.compile(
        rf"(^|[\s:'\"/]){program}:\s*({_CANNOT_RUN})\s*$|command not found:\s*{program}\b|"
        rf"'{program}' is not recognized as",
        re.IGNORECASE,
    )
    return name if any(said.search(line.strip()) for line in run.step.output.splitlines()[:6]) else ""


# A command left running (Codex's `exec_command`, a background Bash), and a later call that
# reads its output or writes to it (`write_stdin {"session_id": N}`, `BashOutput {"bash_id": X}`).
RUNNING = re.compile(r"^\[running: session (\S+)\]|running in background with ID:? (\S+)", re.M)
_CONTINUES = re.compile(r"\"(?:session_id|bash_id|shell_id)\":\s*\"?([\w-]+)")
# The tool saying its own call failed, not the command's output (`write_stdin failed: ...`).
_CALL_FAILED = re.compile(r"^[\w.-]+ failed\b")


# A field of a shell tool's report that holds a placeholder (`Error: (none)`, `Output: (empty)`) or
# only a number (`Exit Code: 1`, `Signal: 0`): the report's frame, not what the command said.
_FRAME_LINE = re.compile(r"^[A-Z][\w ]{0,30}:\s*(\([a-z ]+\)|-?\d+)?$|^exit (code|status):? -?\d+$", re.IGNORECASE)


# How many lines at the top of a passing command's output may be the shell's own banner.
BANNER_LINES = 12


def _banner(steps: list[Step]) -> frozenset[str]:
    """The lines that open the output of commands that passed: what the shell prints before any
    command's own output (WSL's `wsl: Failed to translate 'E:\\gradle\\bin'` on every call, a
    login script's warning)."""
    return frozenset(
        line.strip()
        for s in steps
        if s.kind == "command" and not s.error and s.output
        for line in s.output.splitlines()[:BANNER_LINES]
        if line.strip()
    )


def _error(said: str, banner: frozenset[str]) -> str:
    """The telling line of a failure's output (`error_line`), not one of the lines every
    command opened with when another line names an error: `bash: pwsh: command not found`
    under WSL's five warnings. (A banner line that is the only error stays: a `git status ||
    true` that printed `fatal: not a git repository` does not hide a later one.)"""
    lines = said.splitlines()
    top = 0
    while top < len(lines) and (lines[top].strip() in banner or not lines[top].strip()):
        top += 1
    if 0 < top < len(lines):
        own = error_line("\n".join(lines[top:]))
        if own and error_rank(own) < 9:
            return own
    return error_line(said)


def _said(step: Step) -> str:
    """What the command itself printed: its output without the frame some shell tools put
    around it (`Command: ...`, `Directory: (root)`, `Exit Code: 1`, `Process Group PGID: 7448`)."""
    command = " ".join(step.input.split())
    lines = []
    for line in step.output.splitlines():
        bare = line.strip()
        if _FRAME_LINE.match(bare) or (command and " ".join(bare.split()).endswith(command)):
            continue
        lines.append(re.sub(r"^(Output|Error):\s+", "", line))
    return "\n".join(lines)


def said_nothing(step: Step) -> bool:
    """Did the command answer "no" with exit status 1: without a word (`grep x f`, `pacman
    -Ss x` that found nothing), or as a line ending in a search or a test whose status 1 is
    "no" (`ls d | grep x`, `pgrep a; pgrep b`), whatever earlier commands printed? An answer,
    not a failure, which always says what went wrong."""
    if step.exit_code not in (1, None) or not step.error:
        return False
    lines = [line.strip() for line in step.output.splitlines() if line.strip()]
    command = " ".join(step.input.split())
    # Nor does a line that only repeats the command (`Command: grep x f`).
    lines = [line for line in lines if not _FRAME_LINE.match(line) and not " ".join(line.split()).endswith(command)]
    codes = re.findall(r"(?im)^(?:exit code|exit status)[: ]\s*(-?\d+)\s*$", step.output)
    code = step.exit_code if step.exit_code is not None else (int(codes[-1]) if codes else None)
    # A line ending in a search says "no" by status 1 even after earlier commands printed,
    # unless one of them said why it failed (`git ls-remote x | grep y`: "Could not resolve host").
    complaint = any(error_rank(line) < 9 or ERROR_WORDS.search(line) for line in lines)
    return code == 1 and (not lines or (exit_one_means_no(step.input) and not complaint))


def _runs(steps: Iterable[Step]) -> list[CommandRun]:
    """The command runs of the steps. A command left running is judged by the call that
    collected its result (`write_stdin` to its session), under the command's own words."""
    steps = list(steps)
    runs: list[CommandRun] = []
    running: dict[str, tuple[str, int]] = {}  # process id -> (its command, its run's position)
    banner = _banner(steps)
    for s in steps:
        if s.kind != "command":
            continue
        command = s.input
        continued = _CONTINUES.search(s.input) if s.input.lstrip().startswith("{") else None
        if continued and continued.group(1) in running:
            command, position = running[continued.group(1)]
            runs[position] = replace(runs[position], ok=False, error="")  # its result is this call's
            if _CALL_FAILED.match(s.output.lstrip()):
                continue  # the call to collect it failed (`write_stdin failed: ...`): result unknown
        ok = (not s.error or said_nothing(s)) and not s.no_result
        still = RUNNING.search(s.output) if ok else None
        said = "" if ok else _said(s)
        error = "" if ok else _error(said, banner) or clean(said or s.output, 200)
        runs.append(CommandRun(s, command, ok, error, found_nothing=ok and s.error))
        if still:
            running[still.group(1) or still.group(2)] = (command, len(runs) - 1)
    # A run whose result another call collected is not a run of its own.
    return [r for r in runs if r.ok or r.error or r.step.error or r.step.no_result]


# How far after a failure another way of doing its job is looked for (runs); a rerun of the
# same command is found however late it comes.
OTHER_WAY_WINDOW = 40


def _resolve(runs: list[CommandRun]) -> list[tuple[int, int, str]]:
    """(failed run, resolving run, how) by position in `runs`: the first later run that did
    the same job and passed; a rerun of the same command is preferred to another way."""
    # Where each command (its key) passed, in order: a rerun is looked up, not searched for.
    # A look (`pytest --version`) resolves only a look: it does no job a failed run was for.
    looks = [only_looks(r.command) for r in runs]
    passed_at: dict[tuple[str, ...], list[int]] = {}
    look_passed_at: dict[tuple[str, ...], list[int]] = {}
    for m, r in enumerate(runs):
        if r.ok and not r.step.rejected:
            look_passed_at.setdefault(command_key(r.command), []).append(m)
            if not looks[m]:
                passed_at.setdefault(command_key(r.command), []).append(m)
    found: list[tuple[int, int, str]] = []
    for n, run in enumerate(runs):
        if run.ok or run.step.rejected:
            continue
        key = command_key(run.command)
        passed = look_passed_at if looks[n] else passed_at
        rerun = min(
            (
                positions[bisect_right(positions, n)]
                for later_key, positions in ((key[:size], passed.get(key[:size], [])) for size in range(1, 4))
                if positions and positions[-1] > n and covers(later_key, key)
            ),
            default=None,
        )
        best: tuple[int, str] | None = None
        could_not_run = cannot_run(run)
        # The agent's reaction to the failure: the first run after it that passed.
        first_ok = next((m for m in range(n + 1, len(runs)) if runs[m].ok), len(runs))
        for m in range(n + 1, min(len(runs), n + 1 + OTHER_WAY_WINDOW, rerun if rerun is not None else len(runs))):
            later = runs[m]
            if not later.ok or later.step.rejected or (looks[m] and not looks[n]):
                continue
            how = _same_job(run, later, m <= first_ok, could_not_run)
            if how:
                best = (m, how)
                break
        if rerun is not None:
            best = (rerun, "rerun")
        if best is not None:
            found.append((n, best[0], best[1]))
    return found


def judge_runs(steps: Iterable[Step]) -> list[CommandRun]:
    """Every command the session ran, in order, with its fate: a failed run that a later run
    resolved (see `resolutions`) is `fixed_by` that run."""
    runs = _runs(steps)
    for n, m, _how in _resolve(runs):
        runs[n] = replace(runs[n], fixed_by=runs[m].step.index)
    return runs


def resolutions(steps: Iterable[Step]) -> list[Resolution]:
    """Every failure the session got past, in order, with the run that resolved it and the
    edits (by edit tools or through the shell) made in between."""
    steps = list(steps)
    runs = _runs(steps)
    by_index = {s.index: s for s in steps}
    out: list[Resolution] = []
    for n, m, how in _resolve(runs):
        failed = replace(runs[n], fixed_by=runs[m].step.index)
        start, end = failed.step.index, runs[m].step.index
        changes = tuple(
            s
            for i in range(start + 1, end)
            if (s := by_index.get(i)) is not None and s.files and not s.error and s.kind in ("edit", "command")
        )
        out.append(Resolution(failed, runs[m], how, changes, failed.error))
    return out
