"""Shell commands as evidence: which program a command line runs, whether two runs are
"the same command", which commands only look around and which verify the work, and the
fate of each run (failed, and fixed by a later run that covers it). Standard library only.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

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
_UNDO = re.compile(r"^git (checkout( --)?|restore|reset --hard|stash( push)?|revert)\b")


@lru_cache(maxsize=4096)
def _command_words(command: str) -> tuple[str, ...]:
    return tuple(_split_command(command))


def command_words(command: str) -> list[str]:
    """The words of the command that does the work: `cd x && FOO=1 uv run pytest -q` -> pytest -q."""
    return list(_command_words(command))


def _segments(command: str) -> list[str]:
    """A shell line cut at `&&`, `||`, `;`, `|` and newlines outside quotes; each part starts
    with the separator before it (`|` after a pipe, else `;`)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    sep = ";"
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i : i + 2])
                i += 2
                continue
            if ch == quote:
                quote = ""
            current.append(ch)
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == "\\" and i + 1 < len(command):
            current.append(command[i : i + 2])
            i += 2
            continue
        elif ch in ";\n&|":
            double = command[i : i + 2] in ("&&", "||")
            parts.append(sep + "".join(current).strip())
            sep = "|" if ch == "|" and not double else ";"
            current = []
            i += 2 if double else 1
            continue
        else:
            current.append(ch)
        i += 1
    parts.append(sep + "".join(current).strip())
    return parts


def _split_command(command: str) -> list[str]:
    # The last command of the line that does the work (not `cd`, `export`), and of a
    # pipeline its first stage (`pytest | tee log` is pytest).
    pieces = _segments(command.strip())
    stages: list[str] = []
    for piece in pieces:
        after_pipe, text = piece[0] == "|", piece[1:]
        if not text or re.match(r"^(cd|export|source|\.|set|pushd|popd|true|false|:|exit)(\s|$)", text):
            continue
        if not after_pipe:
            stages.append(text)
    segment = stages[-1] if stages else command.strip()
    if not any(c in segment for c in "'\"\\"):
        words = segment.split()  # nothing quoted: no need for shlex (slow on long sessions)
    else:
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
    while words and (
        re.match(r"^\w+=", words[0]) or words[0] in _WRAPPERS or words[0] == "run" or words[0].startswith("-")
    ):
        words = words[1:]
    if len(words) >= 3 and re.match(r"^python[\d.]*$", words[0]) and words[1] == "-m":
        words = words[2:]
    return words


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
    fixed_by: int | None = None  # the index of the later run that passed

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


def judge_runs(steps: Iterable[Step]) -> list[CommandRun]:
    """Every command the session ran, in order, with its fate: a failed run that a later
    run covering it passed is `fixed_by` that run."""
    runs: list[CommandRun] = []
    for s in steps:
        if s.kind != "command":
            continue
        ok = not s.error and not s.no_result
        runs.append(CommandRun(s, s.input, ok, "" if ok else error_line(s.output) or clean(s.output, 200)))
    keyed = [(command_key(r.command), r) for r in runs]
    for n, (key, run) in enumerate(keyed):
        if run.ok or run.step.rejected:
            continue
        later = next((r for k, r in keyed[n + 1 :] if r.ok and _covers(k, key)), None)
        if later is not None:
            runs[n] = replace(run, fixed_by=later.step.index)
    return runs


def is_undo(words: list[str]) -> bool:
    """Does the command (its words) throw changes away (`git checkout -- f`, `git reset --hard`)?"""
    return bool(_UNDO.match(" ".join(words)))
