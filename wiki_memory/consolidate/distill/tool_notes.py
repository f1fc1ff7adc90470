"""Notes kept for tools and agents in the project's hidden folders: the Markdown a session
read or wrote under a dot-folder of the project (`.specify/memory/constitution.md`,
`.codex/prompts/specify.md`, `.kiro/specs/x/requirements.md`, `.cursor/rules/style.mdc`,
`.github/copilot-instructions.md`), with the title each file gave itself. One `fact` page for
the project, updated in place per file and anchored to the files, so drift marks it when one
changes.

Such files steer the work (a spec kit's constitution and templates, an agent's prompts and
rules), and a new session finds them only by looking: hidden folders do not show in a
plain listing. Which tool a folder belongs to is not guessed: the page says where the files
are and what each calls itself. Folders of machinery are left out (`.git`, a virtualenv, an
editor's settings, caches), and so is anything but Markdown (a tool's state, its scripts).
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.commands import printed_file
from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence, relative_to_root, shell_output, step_cwd
from wiki_memory.consolidate.goal import PLAN_FILE
from wiki_memory.consolidate.oneline import clean

TITLE = "Notes for tools and agents in hidden folders"
#: How many files one session adds to the page, at most.
MAX_FILES = 12
_MARKDOWN = (".md", ".mdc", ".markdown")
# Hidden folders of machinery, not notes: version control, environments, editors, caches.
_MACHINERY = frozenset(
    ".git .hg .svn .venv .env .tox .nox .idea .vscode .vs .fleet .cache .pytest_cache .mypy_cache .ruff_cache "
    ".next .nuxt .svelte-kit .turbo .parcel-cache .expo .gradle .m2 .yarn .npm .pnpm-store .terraform "
    ".dart_tool .bundle .cargo .rustup .local .config .Trash".split()
)
# A file's title: a top-level Markdown heading, and a Read tool's line numbers (`     1→`).
_HEADING = re.compile(r"^#\s+(\S.*?)\s*#*$")
_NUMBER = re.compile(r"^\s*\d+\s*(?:→|\t|:)")


def note_path(path: str) -> bool:
    """Is a project-relative path Markdown inside a hidden folder that is no machinery's?"""
    parts = path.replace("\\", "/").split("/")
    return (
        len(parts) >= 2
        and parts[0].startswith(".")
        and parts[0] not in (".", "..")
        and parts[0] not in _MACHINERY
        and path.lower().endswith(_MARKDOWN)
        and not PLAN_FILE.search(path)  # the plan of one task (`goal.plan_read`), done with it
    )


def title_of(output: str) -> str:
    """The file's own title: a top-level heading as its first line, past any front matter or
    opening comment ("" if none: a file read from its middle opens with whatever line that was)."""
    lines = [_NUMBER.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line]
    for opens, closes in (("---", "---"), ("<!--", "-->")):
        if lines and lines[0].startswith(opens) and not (opens == "<!--" and closes in lines[0]):
            ends = next((n for n, line in enumerate(lines[1:], 1) if line.endswith(closes)), None)
            lines = lines[ends + 1 :] if ends is not None else []
        elif lines and opens == "<!--" and lines[0].startswith(opens):
            lines = lines[1:]  # a comment on one line
    m = _HEADING.match(lines[0]) if lines else None
    return clean(m.group(1), 100) if m else ""


def tool_notes(evidence: Evidence) -> list[Candidate]:
    """The candidate of the page: each note file the session read or changed, the last time."""
    found: dict[str, dict[str, str]] = {}
    for step in evidence.steps:
        if step.error:
            continue
        if step.kind == "read":
            raw, how = [step.input], "read"
        elif step.kind == "edit":
            raw, how = list(step.files), "changed"
        elif step.kind == "command" and (printed := printed_file(step.input)):
            here = step_cwd(step, evidence.cwd, evidence.root)
            raw, how = [os.path.join(here, printed) if here and not os.path.isabs(printed) else printed], "read"
        else:
            continue
        for name in raw:
            path = relative_to_root(name, evidence) if name else None
            if path is None or not note_path(path):
                continue
            date = step.time[:10] if len(step.time) >= 10 else evidence.date
            entry = {"how": how, "date": date}
            # (A file the session changed may no longer bear the title it was read with.)
            title = title_of(shell_output(step.output)) if how == "read" else ""
            if title:
                entry["title"] = title
            found[path] = entry
    if not found:
        return []
    paths = list(found)[-MAX_FILES:]
    return [
        proposed(
            evidence,
            "fact",
            title=TITLE,
            key="notes",
            facts={"environment": "notes", "tools": {p: found[p] for p in paths}},
            anchors=tuple(paths),
            reason=f"{', '.join(f'`{p}`' for p in paths[:3])} in {evidence.source}",
            tags=("distilled", "notes"),
        )
    ]
