"""Shell commands as evidence: which program a command line runs, whether two runs are
"the same command", which commands only look around and which verify the work, and the
fate of each run (failed, and fixed by a later run that covers it). Standard library only.
"""

from __future__ import annotations

import os
import re
import shlex
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from wiki_memory.capture.shell import segments, split_heredocs
from wiki_memory.consolidate.oneline import clean, error_line
from wiki_memory.consolidate.session import Step

_PROBES = {
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "rg",
    "ag",
    "find",
    "fd",
    "which",
    "type",
    "echo",
    "printf",
    "pwd",
    "wc",
    "file",
    "stat",
    "tree",
    "du",
    "df",
    "ps",
    "env",
    "printenv",
    "date",
    "whoami",
    "id",
    "uname",
    "sed",
    "awk",
    "jq",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "test",
    "[",
    "true",
    "false",
    "sleep",
    "command",
    "hostname",
}
_GIT_PROBES = {
    "status",
    "log",
    "diff",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "blame",
    "remote",
    "describe",
    "config",
    "grep",
    "shortlog",
    "reflog",
    "fetch",
}
_VERIFY = re.compile(
    r"\b(pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|karma|playwright|cypress|rspec|minitest|phpunit|"
    r"go (test|build|vet)|cargo (test|build|check|clippy|nextest)|(npm|pnpm|yarn|bun)( run)? (test|build|lint|"
    r"check|typecheck|type-check|e2e)|bun test|make\b|cmake --build|ninja|gradle|gradlew|mvn|tsc|mypy|pyright|"
    r"ruff|eslint|flake8|pylint|black --check|prettier --check|dotnet (test|build)|ctest|bazel (test|build)|"
    r"swift (test|build)|mix test|elixir|deno test|zig build|just)\b"
)
_WRAPPERS = {
    "sudo",
    "time",
    "nice",
    "env",
    "npx",
    "bunx",
    "uv",
    "poetry",
    "pipenv",
    "hatch",
    "pdm",
    "rye",
    "timeout",
    "xvfb-run",
}


@lru_cache(maxsize=4096)
def _command_words(command: str) -> tuple[str, ...]:
    return tuple(_split_command(command))


def command_words(command: str) -> list[str]:
    """The words of the command that does the work: `cd x && FOO=1 uv run pytest -q` -> pytest -q."""
    return list(_command_words(command))


def _split_command(command: str) -> list[str]:
    # The last command of the line that does the work (not `cd`, `export`), and of a
    # pipeline its first stage (`pytest | tee log` is pytest).
    pieces = segments(split_heredocs(command.strip())[0])
    stages: list[str] = []
    for piece in pieces:
        after_pipe, text = piece[0] == "|", piece[1:]
        if not text or re.match(r"^(cd|export|source|\.|set|pushd|popd|true|false|:|exit)(\s|$)", text):
            continue
        if not after_pipe:
            stages.append(text)
    return _stage_words(stages[-1] if stages else command.strip())


@lru_cache(maxsize=4096)
def stage_commands(command: str) -> tuple[tuple[str, ...], ...]:
    """The words of every command the line runs (not the stages a pipe feeds):
    `sudo -u me pactl info && pactl list` -> (pactl info), (pactl list)."""
    pieces = segments(split_heredocs(command.strip())[0])
    return tuple(
        words
        for piece in pieces
        if piece[0] != "|" and piece[1:]
        for words in [tuple(_stage_words(piece[1:]))]
        if words and words[0] not in ("cd", "export", "source", ".", "set", "true", "false", ":", "exit", "echo")
    )


def _stage_words(segment: str) -> list[str]:
    """One command's words without its environment settings and wrappers (`sudo -u me`)."""
    if not any(c in segment for c in "'\"\\"):
        words = segment.split()  # nothing quoted: no need for shlex (slow on long sessions)
    else:
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
    words = _without_redirections(words)
    wrapped = False
    while words and (
        re.match(r"^\w+=", words[0]) or words[0] in _WRAPPERS or words[0] == "run" or words[0].startswith("-")
    ):
        if wrapped and words[0] in ("-u", "-g") and len(words) > 1:
            words = words[1:]  # `sudo -u user`: the user is the option's value, not the program
        wrapped = wrapped or words[0] in _WRAPPERS
        words = words[1:]
    if len(words) >= 3 and re.match(r"^python[\d.]*$", words[0]) and words[1] == "-m":
        words = words[2:]
    return words


def _without_redirections(words: list[str]) -> list[str]:
    """The words without `2>&1`, `> log`, `<in`: where output goes is not what runs."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*(>>?|<|&>>?|>\|)", word):
            skip = True  # the target is the next word
        elif not re.match(r"^\d*(>>?|<|&>)", word):
            out.append(word)
    return out


def shown(command: str, limit: int = 160) -> str:
    """A command as one short line for a summary: heredoc bodies left out (`<<'EOF' …`)."""
    text, bodies = split_heredocs(command)
    if bodies:
        text = re.sub(r"(<<-?\s*(['\"]?)[A-Za-z_][\w.-]*\2)", r"\1 …", text, count=1)
    return clean(text, limit)


def command_key(command: str) -> tuple[str, ...]:
    """What makes two runs "the same command": the program and its first two arguments."""
    words = command_words(command)
    return tuple(w for w in words if not w.startswith("-"))[:3]


def is_probe(command: str) -> bool:
    """Does the command only look around (`ls`, `cat`, `grep`, `git status`)? Its failure is noise."""
    words = command_words(command)
    if not words:
        return True
    program = os.path.basename(words[0])
    if program == "git":
        return len(words) < 2 or words[1] in _GIT_PROBES
    return program in _PROBES


def is_verification(command: str) -> bool:
    """Does the command check the work (a test run, a build, a type checker, a linter)?"""
    return bool(_VERIFY.search(" ".join(command_words(command))))


# A subcommand that only reads (`brew info`, `npm view`, `gh issue list`, `kubectl get`).
_READ_ONLY = re.compile(
    r"^(--?(version|help|v|h|V)|info|show|view|list|ls|search|status|outdated|doctor|whoami|version|help|get|"
    r"describe|inspect|cat|log|logs|ps|top|audit|why|explain|query|read|config|env|which|where|print)$"
)
_WEB_READERS = {"curl", "wget", "http", "https", "xh", "ping", "dig", "nslookup", "host", "whois", "traceroute"}
_WRITES_OUT = re.compile(r"\s(-o|-O|--output|-X\s*(POST|PUT|PATCH|DELETE)|-d|--data\S*|-F|-T)\b")


def only_looks(command: str) -> bool:
    """Does the command only look or fetch (a probe, `brew info`, `pactl info`, `curl URL`),
    changing nothing? Checks (tests, builds) are not looks: see `is_verification`."""
    if is_probe(command):
        return True
    words = purpose_words(command)
    if not words:
        return True
    if words[0] in _WEB_READERS:
        return not _WRITES_OUT.search(" " + command)
    operands = [w for w in words[1:] if not w.startswith("-")]
    flags = [w for w in words[1:] if w.startswith("-")]
    if not operands:
        return bool(flags) and all(_READ_ONLY.match(f) for f in flags)
    if _READ_ONLY.match(operands[0]):
        return True
    # A subcommand group, then its verb (`gh repo view`, `docker image ls`); not a change verb
    # then its operand (`apt install info` installs a package named info).
    return (
        len(operands) > 1
        and re.fullmatch(r"[a-z][a-z-]*", operands[0]) is not None
        and operands[0] not in _CHANGE_VERBS
        and bool(_READ_ONLY.match(operands[1]))
    )


_TEST_RUNNERS = {"pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox", "ava", "karma"}


def _covers(later: tuple[str, ...], earlier: tuple[str, ...]) -> bool:
    """A later run covers an earlier one: the same command, or a broader run of the same
    test runner (`pytest` after `pytest tests/x.py`; not `make` after `make lint`)."""
    if not later or not earlier or later[0] != earlier[0]:
        return False
    if later == earlier:
        return True
    return earlier[: len(later)] == later and (len(later) >= 2 or os.path.basename(later[0]) in _TEST_RUNNERS)


@dataclass(frozen=True)
class CommandRun:
    """One command and what came of it."""

    step: Step
    command: str
    ok: bool
    error: str  # the telling line of its output when it failed
    fixed_by: int | None = None  # the index of the later run that resolved it

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


# The interpreters that run a script named as their first operand (`python x.py` is `x.py`).
_INTERPRETERS = {"python", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node"}
# What a shell says when the program itself could not run (missing, not executable).
_CANNOT_RUN = r"command not found|not found|No such file or directory|Permission denied|cannot execute|not executable"
# Commands that change files or modes: a fix made on the way, not the job done another way.
_FIX_STEPS = {"chmod", "chown", "ln", "sed", "perl", "mv", "cp", "rm", "touch", "mkdir", "tee", "patch"}


def _family(program: str) -> str:
    """A program by its family: `/usr/bin/python3.11` and `python` are `python`, `pip3` is `pip`."""
    name = os.path.basename(program)
    if name.startswith("./"):
        name = name[2:]
    family = re.sub(r"(?<=[a-z])[\d.]+$", "", name)
    return family or name


@lru_cache(maxsize=4096)
def purpose_words(command: str) -> tuple[str, ...]:
    """The words of a command with its program named by family and a script run through an
    interpreter named by the script: `python3 ./x.py --v` -> (x.py, --v); `./x.sh` -> (x.sh)."""
    words = list(_command_words(command))
    if not words:
        return ()
    head = _family(words[0])
    if head in _INTERPRETERS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest and ("." in rest[0] or "/" in rest[0]):
            script = rest[0][2:] if rest[0].startswith("./") else rest[0]
            return (script, *words[words.index(rest[0]) + 1 :])
    if words[0].startswith("./"):
        return (words[0][2:], *words[1:])
    return (head, *words[1:])


def _operands(words: tuple[str, ...]) -> set[str]:
    """Non-option words after the program, paths by their last part (`src/x.py` is `x.py`)."""
    return {os.path.basename(w.rstrip("/")) or w for w in words[1:] if not w.startswith("-")}


def _same_job(earlier: CommandRun, later: CommandRun, immediate: bool, could_not_run: bool) -> str:
    """How `later` does the job `earlier` failed at ("" if it does not)."""
    if _covers(command_key(later.command), command_key(earlier.command)):
        return "rerun"
    if tuple(command_words(earlier.command)) in stage_commands(later.command):
        return "rerun"  # the failing command again, in another line (`a && b` after `x && b`)
    a, b = purpose_words(earlier.command), purpose_words(later.command)
    if not a or not b:
        return ""
    if _covers(tuple(w for w in b if not w.startswith("-"))[:3], tuple(w for w in a if not w.startswith("-"))[:3]):
        same_head = _family(command_words(earlier.command)[0]) == _family(command_words(later.command)[0])
        return "same program" if same_head else "same script"
    if b[0] in _FIX_STEPS or later.step.files:
        return ""
    # A later run naming a subcommand the first did not (`docfx build docfx.json` after `docfx
    # docfx.json`) does one part of the job, or another one: not the same job.
    extra = _operands(b) - _operands(a)
    narrower = any(re.fullmatch(r"[a-z][\w-]*", w) for w in extra)
    if a[0] == b[0] and _operands(a) and _operands(a) <= _operands(b) and not narrower:
        return "same program"  # `git checkout -b B` then `git checkout B`; `python x.py` then `python src/x.py`
    if could_not_run:
        # The program could not run: another one did its job. A look around is replaced by
        # the next look around (`find` for `tree`); other work by a command on the same
        # operands (`yarn install` for `npm install`), never by whatever came next.
        probe = is_probe(earlier.command)
        if probe and is_probe(later.command) and immediate:
            return "another program"
        if not probe and not is_probe(later.command) and _operands(a) & _operands(b):
            return "another program"
    return ""


def cannot_run(run: CommandRun) -> bool:
    """Did the failure say that the program itself could not run (exit 126 or 127, `tree:
    command not found`, `./x.sh: Permission denied`), rather than that its work failed?"""
    if run.ok:
        return False
    if run.step.exit_code in (126, 127):
        return True
    words = command_words(run.command)
    if not words:
        return False
    # The shell names the program it could not run: `bash: tree: command not found`, `zsh:
    # command not found: tree`, `./x.sh: Permission denied`, `'tree' is not recognized`. Not
    # `ls: cannot access 'f': No such file or directory` (ls ran; its operand was missing).
    program = re.escape(os.path.basename(words[0]))
    said = re.compile(
        rf"(^|[\s:'\"/]){program}:\s*({_CANNOT_RUN})\s*$|command not found:\s*{program}\b|"
        rf"'{program}' is not recognized as",
        re.IGNORECASE,
    )
    return any(said.search(line.strip()) for line in run.step.output.splitlines()[:6])


# A command left running (Codex's `exec_command`, a background Bash), and a later call that
# reads its output or writes to it (`write_stdin {"session_id": N}`, `BashOutput {"bash_id": X}`).
RUNNING = re.compile(r"^\[running: session (\S+)\]|running in background with ID:? (\S+)", re.M)
_CONTINUES = re.compile(r"\"(?:session_id|bash_id|shell_id)\":\s*\"?([\w-]+)")
# The tool saying its own call failed, not the command's output (`write_stdin failed: ...`).
_CALL_FAILED = re.compile(r"^[\w.-]+ failed\b")


# A field of a shell tool's report that holds a placeholder (`Error: (none)`, `Output: (empty)`) or
# only a number (`Exit Code: 1`, `Signal: 0`): the report's frame, not what the command said.
_FRAME_LINE = re.compile(r"^[A-Z][\w ]{0,30}:\s*(\([a-z ]+\)|-?\d+)?$|^exit (code|status):? -?\d+$", re.IGNORECASE)


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
    """Did the command exit 1 without a word (`grep x f`, `cmd | grep x`, `pacman -Ss x`
    that found nothing)? Exit status 1 with no output is a search's or a test's "no": an
    answer, not a failure, which always says what went wrong."""
    if step.exit_code not in (1, None) or not step.error:
        return False
    lines = [line.strip() for line in step.output.splitlines() if line.strip()]
    command = " ".join(step.input.split())
    # Nor does a line that only repeats the command (`Command: grep x f`).
    lines = [line for line in lines if not _FRAME_LINE.match(line) and not " ".join(line.split()).endswith(command)]
    codes = re.findall(r"(?im)^(?:exit code|exit status)[: ]\s*(-?\d+)\s*$", step.output)
    code = step.exit_code if step.exit_code is not None else (int(codes[-1]) if codes else None)
    return code == 1 and not lines


def _runs(steps: Iterable[Step]) -> list[CommandRun]:
    """The command runs of the steps. A command left running is judged by the call that
    collected its result (`write_stdin` to its session), under the command's own words."""
    runs: list[CommandRun] = []
    running: dict[str, tuple[str, int]] = {}  # process id -> (its command, its run's position)
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
        runs.append(CommandRun(s, command, ok, "" if ok else error_line(said) or clean(said or s.output, 200)))
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
    passed_at: dict[tuple[str, ...], list[int]] = {}
    for m, r in enumerate(runs):
        if r.ok and not r.step.rejected:
            passed_at.setdefault(command_key(r.command), []).append(m)
    found: list[tuple[int, int, str]] = []
    for n, run in enumerate(runs):
        if run.ok or run.step.rejected:
            continue
        key = command_key(run.command)
        rerun = min(
            (
                positions[bisect_right(positions, n)]
                for later_key, positions in ((key[:size], passed_at.get(key[:size], [])) for size in range(1, 4))
                if positions and positions[-1] > n and _covers(later_key, key)
            ),
            default=None,
        )
        best: tuple[int, str] | None = None
        could_not_run = cannot_run(run)
        # The agent's reaction to the failure: the first run after it that passed.
        first_ok = next((m for m in range(n + 1, len(runs)) if runs[m].ok), len(runs))
        for m in range(n + 1, min(len(runs), n + 1 + OTHER_WAY_WINDOW, rerun if rerun is not None else len(runs))):
            later = runs[m]
            if not later.ok or later.step.rejected:
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


# The verbs by which command-line tools change the state of a system when they succeed: a
# package installed or removed, a commit or a push, a branch made, a service started, a
# setting set. Verbs of the tools' own grammar (`npm install x`, `flatpak uninstall x`,
# `git push`, `systemctl restart x`, `pactl set-card-profile`), not names of programs.
_CHANGE_VERBS = {
    "install",
    "uninstall",
    "reinstall",
    "remove",
    "purge",
    "erase",
    "upgrade",
    "add",
    "delete",
    "create",
    "deploy",
    "publish",
    "enable",
    "disable",
    "start",
    "stop",
    "restart",
    "reload",
    "login",
    "logout",
    "apply",
    "commit",
    "push",
    "merge",
    "pull",
    "clone",
    "tag",
    "rebase",
    "cherry-pick",
    "mount",
    "umount",
}
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
    succeeds (see `_CHANGE_VERBS`), or () when the line only looks, checks or edits files."""
    for words in stage_commands(command):
        program = os.path.basename(words[0])
        if program in _CHANGE_PROGRAMS or _PS_CHANGE.fullmatch(program):
            return words
        if program == "git":
            sub = words[1] if len(words) > 1 else ""
            creates = sub in ("checkout", "switch") and any(w in ("-b", "-B", "-c", "-C") for w in words[2:])
            if sub in _CHANGE_VERBS or creates:
                return words
            continue
        if len(words) > 1 and _OPTION_VERB.match(words[1]) and program in ("pacman", "yay", "paru", "pikaur"):
            return words
        # The verb among the first words (`npm install -g x`, `docker compose up`, `op account add`).
        head = [w for w in words[1:4] if not w.startswith("-")]
        if any(w in _CHANGE_VERBS or re.fullmatch(r"(set|add|create|remove|delete)-[a-z-]+", w) for w in head):
            return words
    return ()


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
    removes = removes or (len(words) > 1 and bool(re.match(r"^-R\w*$", words[1])))
    return removes and bool(_ABSENT.search(run.error))
