"""Facts the agent read from the project's manifests and configs: what `package.json`,
`pyproject.toml`, `Cargo.toml`, `go.mod`, a Makefile, a compose file, a Dockerfile, a version
file, the project's README ... said when the session read it (a Read tool's result, or
`cat`/`sed -n`/`head` of one file). One `fact` page per file ("Facts from package.json"), in
five topics: what the project is (a README's title and first paragraph), stack and versions,
scripts and make targets, ports, test configuration (pytest's settings); updated in place
when a later session reads the file again, and anchored to the file, so drift flags the page
when the file changes.

Only what the file says is kept, in its own words (a script's command, a version range);
nothing is inferred. The recorded output may be cut in the middle (the capture keeps a
head and a tail): each parser (one per format, in `manifest_parsers`) reads what is whole
and leaves the rest.
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.commands import printed_file
from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence, relative_to_root, step_cwd
from wiki_memory.consolidate.distill.manifest_parsers import Topics, _clean, _whole, parse, parser_for

TOPICS = {
    "about": "What the project is",
    "stack": "Stack and versions",
    "scripts": "Scripts and make targets",
    "ports": "Ports",
    "tests": "Test configuration",
}
# Where a manifest is not the project's own (a dependency's, a fixture, a build's output;
# in `.git`, only the hooks are the project's).
_NOT_OURS = re.compile(
    r"(^|/)(node_modules|vendor|\.venv|venv|site-packages|dist|build|target|\.git(?!/hooks/)|fixtures?|testdata|__pycache__|"
    r"examples?|samples?|templates?|third_party|external)/"
)


def manifests(evidence: Evidence) -> list[Candidate]:
    """One `fact` candidate per project manifest the session read (the last reading of each)."""

    readings: dict[str, tuple[str, Topics, bool]] = {}
    for step in evidence.steps:
        if step.error or not step.output:
            continue
        if step.kind == "read":
            raw = step.input
        elif step.kind == "command":
            raw = printed_file(step.input) or ""
            here = step_cwd(step, evidence.cwd, evidence.root) if raw and step.meta.get("workdir") else None
            if here and os.path.isabs(here) and not os.path.isabs(raw):
                raw = os.path.join(here, raw)  # printed in the directory the call named
        else:
            continue
        path = relative_to_root(raw, evidence) if raw else None
        if path is None or parser_for(path) is None or _NOT_OURS.search("/" + path):
            continue
        topics = parse(path, step.output)
        if topics:
            readings[path] = (step.time, topics, _whole(_clean(step.output))[1])
    out: list[Candidate] = []
    for path, (time, topics, whole) in readings.items():
        date = time[:10] if len(time) >= 10 else evidence.date
        out.append(
            proposed(
                evidence,
                "fact",
                title=f"Facts from {path}",
                key=path,
                date=date,
                facts={"manifest": path, "topics": topics, "read": date, "whole": whole},
                anchors=(path,),
                reason=f"read from {path} in {evidence.source}",
                tags=("distilled", "manifest"),
            )
        )
    return out
