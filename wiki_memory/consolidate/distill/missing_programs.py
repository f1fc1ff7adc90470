"""A program this machine does not have, or will not start: a trait of the environment worth a
gotcha page the first time it shows, since the next session would only trip on it again.

What says so is the shell's own report, in any shell: bash's `rg: command not found` (exit
127), dash's `sh: 1: rg: not found`, PowerShell's `The term 'bash' is not recognized as the
name of a cmdlet` or `Program 'rg.exe' failed to run: Access is denied`, cmd's `is not
recognized as an internal or external command`, Codex's `execution error: ... NotFound` when it
could not start the program at all.

Refused, so that the page is a fact of the machine and not of one command:
- a failure some later command resolved (`gotchas` makes that page, with the fix);
- a program that ran and passed anywhere in the session (the failure had another cause: a
  working directory that was gone, a PATH set up later), or that the session installed;
- a script of the project (`./run.sh`, `bin/x`): not being executable is the project's trap;
- a program that a script or tool the command ran looked for (`python3 gen.py` printing
  `ai-webui: command not found`): the command line never names it;
- a command that ran outside the project.

The page names the program and the shell's words, the shell when they are PowerShell's (an
agent writing bash there fails on every line), and another name of the program that did run
(`python3` for `python`).
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence, Run, one_line
from wiki_memory.consolidate.distill.gotchas import missing_program, names_in, resolution
from wiki_memory.consolidate.distill.signature import missing_name, signature

# The shell would not start the program (PowerShell's words, bash's for a binary of another
# platform).
_WONT_START = re.compile(r"^Program '[^']+' failed to run|cannot execute binary file|exec format error", re.I)
_POWERSHELL = re.compile(r"name of a cmdlet|^Program '[^']+' failed to run")


def named(run: Run) -> str:
    """The program the shell could not find or start (see `missing_name`); the command's own
    program when the shell names none (only exit 127)."""
    return missing_name(run.error) or run.program


def _kin(name: str, other: str) -> bool:
    """`python3` for `python`, `pip3` for `pip`: the same program under a versioned name."""
    return other != name and other.startswith(name) and other[len(name) :].replace(".", "").isdigit()


def missing_programs(evidence: Evidence) -> list[Candidate]:
    """One gotcha page per program the session found missing or unable to start, unresolved."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for run in evidence.runs:
        if run.ok or run.outside or not (missing_program(run) or _WONT_START.search(run.error or "")):
            continue
        name = named(run)
        if not name or name in seen or name.lower() not in names_in(run) or "/" in (run.words[0] if run.words else "/"):
            # A program a script looked for is the script's business; a script of the
            # project that will not run is the project's trap.
            continue
        seen.add(name)
        ran = [r for r in evidence.runs if r.ok and name in {os.path.basename(w).lower() for w in r.words}]
        if ran or resolution(evidence, run) is not None:
            continue
        out.append(_page(evidence, run, name))
    return out


def _page(evidence: Evidence, run: Run, name: str) -> Candidate:
    sig = signature(run.error) or f"{name}: command not found"
    shell = " (the shell is PowerShell)" if _POWERSHELL.search(run.error or "") else ""
    started = _WONT_START.search(run.error or "")
    title = f"`{name}` {'will not start' if started else 'is not installed or not on PATH'} here{shell}"
    kin = next((r for r in evidence.runs if r.ok and r.words and _kin(name, r.program)), None)
    facts = {
        "signature": sig,
        "error": one_line(run.error, 300),
        "command": run.command,
        "dir": run.directory,
        "instead": kin.command if kin else "",
        "verified": kin.command if kin else "",
        "occurrence": {"date": run.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": kin is not None, "files": []},
    }  # fmt: skip
    also = f"; `{kin.program}` ran" if kin else ""
    return proposed(
        evidence,
        "gotcha",
        title=title,
        key=f"missing program: {name.lower()}",
        facts=facts,
        reason=f"`{name}` could not run ({sig[:60]!r}) and nothing ran it later{also}, in {evidence.source}",
        tags=("distilled", "environment"),
    )
