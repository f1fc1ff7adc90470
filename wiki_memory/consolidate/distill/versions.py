"""Tool versions: what a program said of its own version when the session asked it
(`op --version`, `docfx --version`, `node -v`, `go version`), as one `fact` page for the
project ("Tool versions"), updated in place per program.

Only a run that asked for the version and nothing else, and succeeded, counts; the version is
the first version-shaped token of the output's first line (build metadata after a long `+hash`
left out). A program that printed no version says nothing.
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence, segments, shell_output

TITLE = "Tool versions"
_ASKS = {"--version", "-v", "-V", "version", "--Version", "-version"}
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.]+)?)(?:\+[0-9a-f]{7,})?(?![\w])")


def version_of(output: str) -> str | None:
    """The version a `--version` run printed: the first version on its first line."""
    first = next((line.strip() for line in shell_output(output).splitlines() if line.strip()), "")
    m = _VERSION.search(first) if len(first) <= 200 else None
    return m.group(1) if m else None


# A command that installs or upgrades packages: its verb (`npm install -g`, `pip install -U`,
# `brew upgrade`, `cargo add`, pacman's and yay's `-S`).
_INSTALLS = re.compile(r"^(install|i|add|upgrade|update|-S\w*)$")


def installed_by(evidence: Evidence, program: str, before: int) -> str | None:
    """The last command that worked before step `before` and installed or upgraded a package
    named after `program` (`sudo npm install -g @google/gemini-cli@latest` for `gemini`)."""
    for run in reversed([r for r in evidence.runs if r.index < before and r.ok]):
        for part in segments(run.line or run.command):
            words = part.split()
            if not any(_INSTALLS.match(w) for w in words[1:4]):
                continue
            packages = [w for w in words[2:] if not w.startswith("-")]
            if any(program.lower() in re.split(r"[@/_.=<>:-]+", w.lower()) for w in packages):
                return part
    return None


def versions(evidence: Evidence) -> list[Candidate]:
    """The `Tool versions` candidate: each program whose version the session asked, the last answer."""
    found: dict[str, dict[str, str]] = {}
    for run in evidence.runs:
        words = [w for w in run.words if not re.match(r"^[A-Za-z_]\w*=", w)]
        if not run.ok or len(words) != 2 or words[1] not in _ASKS or len(segments(run.line or run.command)) != 1:
            continue  # (the output of a longer line is not this program's alone)
        program = os.path.basename(words[0])
        if not re.fullmatch(r"[\w.+-]+", program):
            continue
        version = version_of(run.output)
        if version:
            # The command as run: `python3 -m pytest --version` answers for the pytest of that
            # python3, not for the `pytest` on PATH.
            asked = " ".join((run.line or run.command).split())
            found[program] = {"version": version, "command": asked, "date": run.date or evidence.date}
            installed = installed_by(evidence, program, run.index)
            if installed:
                found[program]["installed"] = installed
    if not found:
        return []
    return [
        proposed(
            evidence,
            "fact",
            title=TITLE,
            key="tools",
            facts={"environment": "tools", "tools": found},
            reason=f"{', '.join(f'`{c}`' for c in [v['command'] for v in found.values()][:3])} in {evidence.source}",
            tags=("distilled", "versions"),
        )
    ]
