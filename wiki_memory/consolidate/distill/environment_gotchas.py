"""Traps of the environment, not of one command: the same error on commands of different
programs that never pass (a permission mode denying the shell), a file tool that takes only
one spelling of a path (`C:\\x` not `/c/x`), and an edit tool refused over where the file is
and the file then written from the shell.
"""

from __future__ import annotations

import re

from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import (
    AHEAD,
    Evidence,
    Run,
    one_line,
    shell_writes,
)
from wiki_memory.consolidate.distill.signature import (
    is_assertion,
    is_static_finding,
    is_telling,
    signature,
)
from wiki_memory.consolidate.oneline import cut_at_word
from wiki_memory.consolidate.run_verdicts import escalated_past
from wiki_memory.consolidate.session import Step

# The line the capture adds to a command the agent's sandbox stopped (`exit_status.sandbox_denial`).
SANDBOXED = re.compile(r"^\[\w+ by the sandbox (\w+): exit code -?\d+\]$", re.M)

#: How many of the commands an environment's error stopped a gotcha lists.
MAX_COMMANDS = 5


def environment_gotchas(evidence: Evidence, known: set[str]) -> list[Candidate]:
    """The same error on commands of different programs, never passing: it comes from where
    they ran, not from any of them (`Permission to use Bash has been auto-denied in dontAsk
    mode.` on `tmux -V` and `chmod +x x`), a trap of the environment."""
    by_sig: dict[str, list[Run]] = {}
    for run in evidence.runs:
        sig = signature(run.error) if not run.ok and run.error else ""
        if sig and sig not in known and is_telling(sig) and not is_assertion(sig) and not is_static_finding(sig):
            by_sig.setdefault(sig, []).append(run)
    out: list[Candidate] = []
    for sig, runs in by_sig.items():
        programs = list(dict.fromkeys(r.program for r in runs if r.words))
        if len(programs) < 2 or any(r.ok and r.program in programs for r in evidence.runs if r.index > runs[0].index):
            continue  # one program's own failure, or the environment let it through after all
        first = runs[0]
        facts = {
            "signature": sig,
            "command": first.command,
            "dir": first.directory,
            "error": one_line(first.error, 300),
            "commands": [r.command for r in runs][:MAX_COMMANDS],
            "occurrence": {"date": first.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                           "fixed": False, "files": []},
        }  # fmt: skip
        names = ", ".join(f"`{p}`" for p in programs[:4])
        out.append(
            proposed(
                evidence,
                "gotcha",
                title=f"{cut_at_word(sig, 110)} (on any command: {names})",
                key=sig,
                facts=facts,
                reason=f"{len(runs)} commands of {len(programs)} programs failed with {sig[:60]!r} "
                f"in {evidence.source}",
                tags=("distilled", "environment"),
            )
        )
    return out


# A path spelled with a drive: `C:\\x`, `C:/x` (Windows) or `/c/x`, `/mnt/c/x`, `/cygdrive/c/x`
# (Git Bash, WSL, Cygwin).
_WINDOWS_DRIVE = re.compile(r"^([A-Za-z]):[\\/]")
_POSIX_DRIVE = re.compile(r"^/(?:mnt/|cygdrive/)?([A-Za-z])/")


def _path_parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


def _head(path: str, tail: int) -> str:
    """`path` without its last `tail` parts, as it was spelled."""
    pieces = re.split(r"[\\/]+", path.rstrip("\\/"))
    return ("\\" if _WINDOWS_DRIVE.match(path) else "/").join(pieces[: len(pieces) - tail])


def path_spelling(failed: str, worked: str) -> str:
    """How a path that a file tool refused and one it took name the same file in two spellings:
    a drive written the Windows way and the POSIX way, or a relative path and an absolute one
    ending with it. "" when they are not the same file so spelled (a wrong guess of a folder)."""
    a, b = _path_parts(failed), _path_parts(worked)
    common = 0
    while common < min(len(a), len(b)) and a[-1 - common].lower() == b[-1 - common].lower():
        common += 1
    if common < 1 or failed == worked:
        return ""
    drive_a = _WINDOWS_DRIVE.match(failed) or _POSIX_DRIVE.match(failed)
    drive_b = _WINDOWS_DRIVE.match(worked) or _POSIX_DRIVE.match(worked)
    windows_a, windows_b = bool(_WINDOWS_DRIVE.match(failed)), bool(_WINDOWS_DRIVE.match(worked))
    same_drive = drive_a and drive_b and drive_a.group(1).lower() == drive_b.group(1).lower()
    if same_drive and windows_a != windows_b and common >= 2:
        spelling = "Windows" if windows_b else "POSIX"
        return f"the tool takes the {spelling} spelling `{_head(worked, common)}`…, not `{_head(failed, common)}`…"
    if (
        common == len(a)
        and not failed.startswith(("/", "~"))
        and not windows_a
        and (worked.startswith("/") or windows_b)
    ):
        return "the tool takes an absolute path, not a relative one"
    return ""


def same_file(a: str, b: str) -> bool:
    """Two spellings of one file: the same last two path parts (or the whole name, when one is
    only a name), whatever the separators and the drive."""
    x, y = _path_parts(a), _path_parts(b)
    tail = min(2, len(x), len(y))
    return tail > 0 and [p.lower() for p in x[-tail:]] == [p.lower() for p in y[-tail:]]


# A file tool's error that is about where the file is, not what it holds ("File path must be
# within one of the workspace directories", "Permission denied", "not allowed").
_PLACE = re.compile(r"\b(path|director(y|ies)|workspace|folder|outside|permission|denied|not allowed)\b", re.I)


def _edited_from_shell(evidence: Evidence, step: Step, path: str) -> Run | None:
    """A later shell command that worked and wrote the file an edit tool refused (`powershell
    -Command "(Get-Content f) -replace 'a','b' | Set-Content f"` for `replace f`)."""
    for run in [r for r in evidence.runs if r.index > step.index][:AHEAD]:
        if run.ok and any(same_file(path, w) for w in shell_writes(run.line or run.command)):
            return run
    return None


def file_tool_gotchas(evidence: Evidence) -> list[Candidate]:
    """A file tool (Read, Edit, Write) that refused a path, then took the same file spelled
    another way (see `path_spelling`), or an edit tool refused over where the file is and a
    shell command wrote it instead: a trap of the environment, with the way that works."""
    out: list[Candidate] = []
    seen: set[str] = set()
    steps = [st for st in evidence.steps if st.kind in ("read", "edit") and st.input.strip()]
    for i, step in enumerate(steps):
        if not step.error or step.tool in seen:
            continue
        said = [line for line in re.sub(r"</?tool_use_error>", "", step.output).splitlines() if line.strip()]
        error = one_line(said[0] if said else "", 200)  # (the tool's own line; what follows repeats it)
        shell = _edited_from_shell(evidence, step, step.input.strip()) if step.kind == "edit" else None
        if shell is not None and _PLACE.search(error):
            seen.add(step.tool)
            out.append(
                _file_tool_gotcha(evidence, step, error, shell.command, "the shell wrote the file the tool would not")
            )
            continue
        for later in steps[i + 1 : i + 1 + AHEAD]:
            if later.error or later.tool != step.tool:
                continue
            how = path_spelling(step.input.strip(), later.input.strip())
            if not how:
                continue
            seen.add(step.tool)
            out.append(_file_tool_gotcha(evidence, step, error, f"{later.tool} {later.input.strip()}", how))
            break
    return out


def _file_tool_gotcha(evidence: Evidence, step: Step, error: str, instead: str, how: str) -> Candidate:
    sig = signature(error) or "refused the path"
    title = f"{step.tool} fails with {sig!r} on paths like `{step.input.strip()}`"
    key = f"{step.tool}: {sig}"
    facts = {
        "signature": key,
        "error": error,
        "command": f"{step.tool} {step.input.strip()}",
        "instead": instead,
        "differs": how,
        "verified": instead,
        "occurrence": {"date": evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": True, "files": []},
    }  # fmt: skip
    return proposed(
        evidence,
        "gotcha",
        title=title if len(title) <= 160 else title[:157] + "…",
        key=key,
        facts=facts,
        reason=f"{step.tool} refused `{one_line(step.input, 60)}`, then {how} in {evidence.source}",
        tags=("distilled",),
    )


def sandbox_of(evidence: Evidence, run: Run, later: Run) -> str:
    """The sandbox that stopped `run`, `later` having passed outside it: its name, or "". The
    sandbox says so (Codex's denial), or only the run that passed does: it asked to run
    outside, and `run` had not (a network call the sandbox cut: "Could not resolve host")."""
    denied = SANDBOXED.search(run.output)
    if denied:
        return denied.group(1)
    if escalated_past(evidence.steps[run.index], evidence.steps[later.index]):
        return evidence.agent.replace("-", " ").title()  # (its agent's: `Codex`, `Claude Code`)
    return ""


def passed_outside(evidence: Evidence, run: Run) -> bool:
    """Did the same line pass later, run outside the agent's sandbox (and `run` inside it)?"""
    same = (run.command, run.directory, run.env)
    return any(
        r.index > run.index
        and r.ok
        and (r.command, r.directory, r.env) == same
        and escalated_past(evidence.steps[run.index], evidence.steps[r.index])
        for r in evidence.runs
    )
