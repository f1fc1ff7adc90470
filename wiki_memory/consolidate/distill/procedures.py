"""Procedures: the commands that test, type-check, lint, format, build or deploy the project
and worked, one page per purpose ("How to run the tests"), with where to run them and what
they need; a recorded command that fails again is noted on its page.

Precision first: a command counts only when it succeeded (a run piped into `tail` only when
its output says it passed), ran inside the project, and ran the whole suite or build, not
one test or one file. A failure alone never makes a page.
"""

from __future__ import annotations

from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.evidence import Evidence, Run
from wiki_memory.consolidate.distill.signature import signature

TITLES = {
    "tests": "How to run the tests",
    "typecheck": "How to type-check the code",
    "lint": "How to lint the code",
    "format": "How to format the code",
    "build": "How to build the project",
    "deploy": "How to deploy",
}


def _usable(run: Run) -> bool:
    return run.purpose is not None and not run.narrow and not run.outside and bool(run.words)


def procedures(evidence: Evidence) -> list[Candidate]:
    """One candidate per purpose the session ran a command for successfully, holding each
    distinct command that worked (its last run) and the commands that failed last."""
    worked: dict[str, dict[str, Run]] = {}
    failed: dict[str, dict[str, Run]] = {}
    for run in evidence.runs:
        if not _usable(run):
            continue
        assert run.purpose is not None
        # A later run of the same command decides: the last one is how the session left it.
        worked.setdefault(run.purpose, {}).pop(run.command, None)
        failed.setdefault(run.purpose, {}).pop(run.command, None)
        if run.ok:
            worked[run.purpose][run.command] = run
        elif run.error and run.fixed_by is None:
            failed[run.purpose][run.command] = run
    out = []
    for purpose, title in TITLES.items():
        good = list(worked.get(purpose, {}).values())
        bad = list(failed.get(purpose, {}).values())
        if not good and not bad:
            continue
        who = {"by": evidence.agent, "session": evidence.source}
        commands = [
            {
                "command": r.command,
                "dir": r.directory,
                "env": list(r.env),
                "last_worked": r.date or evidence.date,
                **who,
            }
            for r in good
        ]
        failures = [
            {"command": r.command, "dir": r.directory, "error": signature(r.error) or r.error,
             "date": r.date or evidence.date, **who}
            for r in bad
        ]  # fmt: skip
        reason = (
            f"{len(good)} command{'s' if len(good) != 1 else ''} for {purpose} worked in {evidence.source}"
            if good
            else f"a recorded {purpose} command failed in {evidence.source}"
        )
        out.append(
            Candidate(
                kind="procedure",
                type="procedure",
                title=title,
                key=purpose,
                source=evidence.source,
                date=evidence.date,
                facts={"purpose": purpose, "commands": commands, "failures": failures},
                reason=reason,
                create=bool(good),  # a failure alone never makes a page
                tags=("distilled", purpose),
            )
        )
    return out
