"""What sub-agents reported: a check the agent delegated (a Task "Run the tests", a Codex
spawned agent) ran in the sub-agent, so the session's own events hold only its report.

A report counts when its first statement is a verdict, recognised by its shape ("pytest
passed: 114 tests", "make fast-ci: FAILED - 2 code style issues found", "Prettier passed",
"No linting violations found"), not when it opens with research or a plan. It is handed as the
sub-agent's word ("Sub-agent "Run erkbot tests" reported: ..."), never as the session's own
claim. Of the reports of one job (the same description, but for "run", "re-run", "verify"),
the last counts; a failure is failed only if no check passed after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from wiki_memory.consolidate.command_runs import CommandRun
from wiki_memory.consolidate.commands import command_words, is_verification
from wiki_memory.consolidate.findings import Findings
from wiki_memory.consolidate.oneline import clean
from wiki_memory.consolidate.session import Step

PREFIX = "Sub-agent"
_VERDICT = re.compile(
    r"\b(pass(ed|es|ing)?|fail(ed|s|ing|ures?)?|succeeded|successful(ly)?|correctly formatted|"
    r"no \w+( \w+)? (violations|issues|errors|problems) found|all (checks|tests) pass\w*)\b",
    re.IGNORECASE,
)
_FAILS = re.compile(r"\bfail(ed|s|ing|ures?)?\b|\berrors? found\b", re.IGNORECASE)
_NO_FAILS = re.compile(r"\b(0|no) (failures|failed|errors)\b", re.IGNORECASE)
# A line of a prompt, a span in backticks, or what follows a colon, that may be a command:
# it starts as commands do (a program, a path, `cd`, a variable), not as a sentence.
_SPAN = re.compile(r"`([^`\n]+)`")
_LIST_MARK = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_SHAPED = re.compile(r"\s--?\w|/|&&|\|")
_COMMAND_START = re.compile(r"^(?:[a-z0-9_.~/][\w.+/~-]*|[A-Z_][A-Z0-9_]*=\S*)(?:\s|$)")
# Words that say how a job was run, not which job it is ("Re-run erk-slack-bot tests").
_HOW = {"run", "re-run", "rerun", "verify", "re-verify", "reverify", "check", "recheck", "again", "the", "and"}


def _first_statement(output: str) -> str:
    """The report's first line that is not a heading, in plain words."""
    for raw in output.strip().splitlines()[:12]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        return clean(re.sub(r"^[-*>\s]+|\*\*|`", "", line).strip(), 200)
    return ""


def _job(description: str) -> tuple[str, ...]:
    return tuple(w for w in re.findall(r"[\w.-]+", description.casefold()) if w not in _HOW)


def _verdict(step: Step) -> tuple[str, bool] | None:
    """(statement, passed) when the report opens with a verdict; None otherwise."""
    if step.error or step.rejected or not step.output.strip() or re.match(r"\s*(api error|\{)", step.output, re.I):
        return None  # no report: an error, or a background launch's receipt
    statement = _first_statement(step.output)
    if not statement or not _VERDICT.search(statement):
        return None
    return statement, not _FAILS.search(statement) or bool(_NO_FAILS.search(statement))


def _reports(steps: Sequence[Step]) -> list[tuple[Step, str, bool]]:
    """Every report with a verdict: (its step, its statement, whether it passed)."""
    return [(s, *v) for s in steps if s.kind == "agent" and (v := _verdict(s)) is not None]


def _last_of_each_job(reports: list[tuple[Step, str, bool]]) -> list[tuple[Step, str, bool]]:
    jobs = [_job(step.input) for step, _, _ in reports]
    return [r for n, r in enumerate(reports) if jobs[n] not in jobs[n + 1 :]]


def agent_reports(steps: Sequence[Step], runs: Sequence[CommandRun], found: Findings, cwd: str | None) -> None:
    """Each delegated job's last report with a verdict: passed as done, failed as failed
    (paths under the working directory `cwd` shown relative to it)."""
    reports = _reports(steps)
    for step, statement, passed in _last_of_each_job(reports):
        if cwd and len(cwd) > 1:
            statement = statement.replace(cwd.rstrip("/") + "/", "")
        line = f'{PREFIX} "{clean(step.input, 80)}" reported: {statement}'
        if passed:
            found.add("done", line, step)
            continue
        checked_since = any(r.ok and is_verification(r.command) and r.step.index > step.index for r in runs) or any(
            ok and later.index > step.index for later, _, ok in reports
        )
        if not checked_since:
            found.add("failed", line, step)


def _commands_asked(prompt: str) -> list[str]:
    """The checks a sub-agent's prompt asks it to run: a line, a span in backticks or what
    follows a colon that reads as a test, lint, type-check or build command."""
    lines = [_LIST_MARK.sub("", line.strip()) for line in prompt.splitlines()]
    # Outside backticks, a command shows its shape: an option, a path or an operator.
    bare = [c for c in [*lines, *(line.rsplit(": ", 1)[1] for line in lines if ": " in line)] if _SHAPED.search(c)]
    found: list[str] = []
    for raw in [*_SPAN.findall(prompt), *bare]:
        line = raw.strip().removeprefix("$ ").strip()
        if not _COMMAND_START.match(line) or len(line) > 200 or line.endswith((".", ":", "?")):
            continue
        if command_words(line) and is_verification(line) and line not in found:
            found.append(line)
    return found


def delegated_checks(steps: Sequence[Step]) -> list[CommandRun]:
    """The checks sub-agents were asked to run and reported passed, as runs of their commands
    (each the last report of its job): how the project is checked, for the distiller."""
    out: list[CommandRun] = []
    for step, statement, passed in _last_of_each_job(_reports(steps)):
        for command in _commands_asked(str(step.meta.get("asked") or "")) if passed else ():
            run = replace(step, kind="command", tool="Bash", input=command, output=statement, meta={"delegated": True})
            out.append(CommandRun(run, command, ok=True, error=""))
    return out
