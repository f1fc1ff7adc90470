"""Distillation from the project's instruction file as the session saw it (Codex hands the
model the project's `AGENTS.md`; a CLAUDE.md or GEMINI.md read whole with a file tool): its
sections become pages the way `wiki-memory import instructions`
makes them (`memory.instruction_files`: one page a section, typed by its shape, the user's
wording as its body, the file as its source and anchor).

What the harness adds to that text is not the project's: a section that points by absolute
path at files outside the project's folder or in a tool's hidden folder (Codex lists the
skills, under `~/.codex` or `.codex/skills`, in the same block) is left out, and so is a
section that is markup rather than notes: a tool's marker comment alone, or a prompt compiled
into tags (`<system>`, `<purpose>This agent is ...`), text for a model.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.evidence import Evidence, relative_to_root
from wiki_memory.consolidate.distill.manifest_parsers import _clean, _whole
from wiki_memory.memory.instruction_files import Section, Source, _kind_of, split_sections

#: An absolute path in a section's text (`/Users/me/.codex/skills/x/SKILL.md`, `~/.codex/...`).
_ABSOLUTE = re.compile(r"(?:(?<=[\s(`'\"])|^)(~?/[\w.-]+/[\w./-]+|[A-Za-z]:[\\/][\w.-]+[\\/][\w./\\-]+)")
GIVEN_TOOL = "instructions"


def _given_texts(evidence: Evidence) -> dict[str, str]:
    """path -> text of each instruction file the session was handed (Codex's AGENTS.md turn)
    or read whole with a file tool (a CLAUDE.md, GEMINI.md, AGENTS.md of the project): the
    last time it saw the file."""
    out: dict[str, str] = {}
    for step in evidence.steps:
        if step.error or not step.output.strip() or not step.input.strip():
            continue
        if step.tool == GIVEN_TOOL:
            out[step.input] = step.output
            continue
        if step.kind != "read" or _kind_of(Path(step.input)) is None:
            continue
        text, whole = _whole(_clean(step.output))
        rel = relative_to_root(step.input, evidence)
        # Only the project's own file, read whole: a user's global file, or a read cut short
        # (a range, the capture's limit), is not the file's word.
        if whole and text.strip() and rel is not None and not rel.startswith("~"):
            base = evidence.root or evidence.cwd or ""
            out[os.path.join(base, rel) if base else rel] = text
    return out


def given_sections(evidence: Evidence) -> list[Section]:
    """The sections of the instruction files the session was given, the harness's own left out."""
    out: list[Section] = []
    seen: set[str] = set()
    for raw, text in _given_texts(evidence).items():
        path = Path(raw)
        folder = os.path.normpath(str(path.parent))
        name = path.name
        if evidence.cwd and os.path.normpath(evidence.cwd) != folder:
            rel = os.path.relpath(str(path), evidence.cwd)
            name = rel if not rel.startswith("..") else str(path)
        source = Source(path, name, _kind_of(path) or "agents-md")
        for section in split_sections(source, {}, text):
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


# An HTML comment (`<!--VITE PLUS START-->`): markup, not prose.
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def _markup(text: str) -> bool:
    """A section that is markup, not notes: nothing but comments and tags (a tool's marker
    left alone), or a prompt compiled into tags (`<system>`, `<purpose>This agent is ...`),
    whose lines open with a tag one time in four or more: text for a model, not the project's."""
    lines = [line for line in _COMMENT.sub("", text).splitlines() if line.strip()]
    return sum(1 for line in lines if line.lstrip().startswith("<")) * 4 >= len(lines)


def given_instructions(evidence: Evidence) -> list[Candidate]:
    """A candidate page for each section of the project's instruction file the session was given
    (not one that is markup: see `_markup`)."""
    out = []
    for section in given_sections(evidence):
        if _markup(section.text):
            continue
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
