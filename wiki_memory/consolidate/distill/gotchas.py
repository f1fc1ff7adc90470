"""Gotchas: a command that failed, then edits, then the same command passing, in one
session. The page holds the error's signature, the files the fix changed, the agent's own
explanation when its answer gives one, and the run that verified it.

Precision first, so these are refused:
- a failure with no telling error line (only "exit 1");
- a test assertion (the logic under test, not a trap of the project);
- findings of linters, type checkers and compilers (code being written);
- a fix that changed only files the session itself had just made, or a failure whose output
  points into such a file (the session's own new code failing);
- a failure that passed again with no edit in between (flaky, or fixed by the command line).

A failure that makes no page may still be a known gotcha hit again: it goes out as a
`gotcha-hit`, which only ever updates the page of the same signature.
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.commands import is_probe
from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.evidence import Evidence, Run, answer_between, one_line
from wiki_memory.consolidate.distill.signature import (
    is_assertion,
    is_static_finding,
    is_telling,
    signature,
    words_of,
)

_CAUSAL = re.compile(
    r"\b(because|caused by|the cause|root cause|was missing|wasn't set|was not set|isn't set|is not set|"
    r"needs? to be|needed|required|requires|must be|due to|the (problem|issue|bug) was|the fix|fixed by|"
    r"so that|expects?|was reading|defaults? to)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])|\n+")
_NOT_A_GOTCHA = {"git", "gh", "cd", "ls", "cat", "pip", "pip3", "npm", "pnpm", "yarn", "brew", "apt", "apt-get", "curl"}
_INSTALLS = re.compile(r"^(pip3?|npm|pnpm|yarn|bun|cargo|go|apt|apt-get|brew|gem|poetry|uv) (install|add|get)\b")
_RUNNER_NAMES = {
    "tests": "the tests",
    "build": "the build",
    "deploy": "the deploy",
}


def _by_index(evidence: Evidence) -> dict[int, Run]:
    return {r.index: r for r in evidence.runs}


def _explanation(evidence: Evidence, run: Run, fixed_by: int, sig: str, files: list[str]) -> str:
    """The agent's own words on the cause, when an answer around the fix names it: a
    sentence with a causal word that mentions the error's identifiers or a changed file."""
    keys = words_of(sig) | {os.path.basename(f).lower() for f in files}
    keys |= {os.path.splitext(os.path.basename(f))[0].lower() for f in files if len(os.path.basename(f)) > 4}
    keys = {k for k in keys if len(k) > 3 and k not in ("error", "file", "line", "none", "true", "false")}
    picked: list[str] = []
    for answer in answer_between(evidence, run.index, fixed_by):
        for sentence in _SENTENCE.split(answer.text):
            sentence = sentence.strip(" -*")
            low = sentence.lower()
            causal = 20 <= len(sentence) <= 400 and _CAUSAL.search(sentence)
            if causal and any(k in low for k in keys) and sentence not in picked:
                picked.append(sentence)
        if picked:
            break
    return one_line(" ".join(picked[:2]), 400) if picked else ""


def _refusal(evidence: Evidence, run: Run, sig: str) -> str | None:
    """Why this failure makes no gotcha page (None: it may)."""
    if not_a_run(run):
        return "not a command that runs the project"
    if not sig or not is_telling(sig):
        return "no telling error line"
    if is_assertion(sig):
        return "a test assertion"
    if is_static_finding(sig) or run.purpose in ("lint", "typecheck", "format"):
        return "a linter, type checker or compiler finding"
    return None


def not_a_run(run: Run) -> bool:
    """A command that looks around, asks git, installs or ran elsewhere: its failure is no trap of the project."""
    program = os.path.basename(run.words[0]) if run.words else ""
    return (
        is_probe(run.command) or program in _NOT_A_GOTCHA or bool(_INSTALLS.match(" ".join(run.words))) or run.outside
    )


def gotchas(evidence: Evidence) -> tuple[list[Candidate], list[str]]:
    """(candidates, why other failures were refused) for a session."""
    out: list[Candidate] = []
    refused: list[str] = []
    seen: set[str] = set()
    runs = _by_index(evidence)
    for run in evidence.runs:
        if run.ok or not run.error:
            continue
        sig = signature(run.error)
        if not sig or sig in seen:
            continue
        refusal = _refusal(evidence, run, sig)
        later = runs.get(run.fixed_by) if run.fixed_by is not None else None
        candidate = None
        if refusal is None and later is not None:
            candidate, refusal = _fixed(evidence, run, later, sig)
        elif refusal is None:
            refusal = "never passed later in the session"
        if candidate is not None:
            seen.add(sig)
            out.append(candidate)
            continue
        if not not_a_run(run):  # (looking around failing is noise, not worth a line)
            refused.append(f"`{one_line(run.command, 80)}` ({sig[:80]}): {refusal}")
        if is_telling(sig) and not is_assertion(sig) and not is_static_finding(sig):
            seen.add(sig)
            out.append(_hit(evidence, run, sig, fixed=later is not None))
    return out, refused


def _fixed(evidence: Evidence, run: Run, later: Run, sig: str) -> tuple[Candidate | None, str | None]:
    edits = evidence.edits_between(run.index, later.index)
    changed = list(dict.fromkeys(f for e in edits for f in e.files))
    if not changed:
        return None, "passed again with no edit in between"
    new = evidence.new_files_before(later.index)
    kept = [f for f in changed if f not in new]
    if not kept:
        return None, "the fix changed only files the session had just made"
    if any(os.path.basename(f) in run.output for f in new if len(os.path.basename(f)) > 3):
        return None, "the failure points into a file the session had just made"
    what = _RUNNER_NAMES.get(run.purpose or "", f"`{run.words[0]}`" if run.words else "a command")
    title = f"{sig if len(sig) <= 110 else sig[:110].rsplit(' ', 1)[0] + ' …'} when running {what}"
    facts = {
        "signature": sig,
        "error": one_line(run.error, 300),
        "command": run.command,
        "dir": run.directory,
        "files": kept,
        "explanation": _explanation(evidence, run, later.index, sig, kept),
        "verified": later.command,
        "occurrence": {"date": run.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": True, "files": kept},
    }  # fmt: skip
    reason = f"failed with {sig[:60]!r}, then passed after changes to {', '.join(kept[:3])} in {evidence.source}"
    return (
        Candidate(
            kind="gotcha",
            type="gotcha",
            title=title,
            key=sig,
            source=evidence.source,
            date=evidence.date,
            facts=facts,
            anchors=tuple(kept),
            reason=reason,
            tags=("distilled",),
        ),
        None,
    )


def _hit(evidence: Evidence, run: Run, sig: str, *, fixed: bool) -> Candidate:
    """A failure that may be a known gotcha hit again: it only updates a page of the same signature."""
    facts = {
        "signature": sig,
        "command": run.command,
        "occurrence": {"date": run.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": fixed, "files": []},
    }  # fmt: skip
    return Candidate(
        kind="gotcha-hit",
        type="gotcha",
        title=sig,
        key=sig,
        source=evidence.source,
        date=evidence.date,
        facts=facts,
        reason=f"the same error ({sig[:60]!r}) again in {evidence.source}",
        create=False,
    )
