"""Distillation from the project's instruction file as the session was given it (Codex hands the model the
project's `AGENTS.md`): its sections become pages the way `wiki-memory import instructions`
makes them (`memory.instruction_files`: one page a section, typed by its shape, the user's
wording as its body, the file as its source and anchor).

What the harness adds to that text is not the project's: a section that points by absolute
path at files outside the project's folder or in a tool's hidden folder (Codex lists the
skills, under `~/.codex` or `.codex/skills`, in the same block) is left out.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.evidence import Evidence
from wiki_memory.memory.instruction_files import Section, Source, split_sections

#: An absolute path in a section's text (`/Users/me/.codex/skills/x/SKILL.md`, `~/.codex/...`).
_ABSOLUTE = re.compile(r"(?:(?<=[\s(`'\"])|^)(~?/[\w.-]+/[\w./-]+)")
GIVEN_TOOL = "instructions"


def given_sections(evidence: Evidence) -> list[Section]:
    """The sections of the instruction files the session was given, the harness's own left out."""
    out: list[Section] = []
    seen: set[str] = set()
    for step in evidence.steps:
        if step.tool != GIVEN_TOOL or step.error or not step.output.strip():
            continue
        path = Path(step.input)
        folder = os.path.normpath(str(path.parent))
        name = path.name
        if evidence.cwd and os.path.normpath(evidence.cwd) != folder:
            rel = os.path.relpath(str(path), evidence.cwd)
            name = rel if not rel.startswith("..") else str(path)
        source = Source(path, name, "agents-md")
        for section in split_sections(source, {}, step.output):
            if section.key in seen or _outside(section.text, folder):
                continue
            seen.add(section.key)
            out.append(section)
    return out


def _outside(text: str, folder: str) -> bool:
    """The section points at a file outside the project's folder: the harness's text."""
    for raw in _ABSOLUTE.findall(text):
        if raw.startswith("~/"):
            return True
        rel = os.path.relpath(os.path.normpath(raw), folder)
        # Outside the project, or in a tool's hidden folder inside it (Codex's `.codex/skills`
        # when CODEX_HOME is the project's): a file the project's own text would name relatively.
        if rel.startswith("..") or any(part.startswith(".") for part in Path(rel).parts[:-1]):
            return True
    return False


def given_instructions(evidence: Evidence) -> list[Candidate]:
    """A candidate page for each section of the project's instruction file the session was given."""
    out = []
    for section in given_sections(evidence):
        anchors = (section.source.name,) if not os.path.isabs(section.source.name) else ()
        out.append(
            Candidate(
                kind="instructions",
                type=section.type,
                title=section.title,
                key=section.key,
                source=evidence.source,
                date=evidence.date,
                facts={"body": section.text, "from": section.source.name, "section": section.title, "sha": section.sha},
                anchors=anchors,
                reason=f"section of {section.source.name} the session was given",
            )
        )
    return out
