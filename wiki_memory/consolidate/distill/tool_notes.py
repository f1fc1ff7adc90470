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
MAX_FILES = 20
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
    )


def _task_plans(paths: set[str]) -> set[str]:
    """The plan files (`goal.PLAN_FILE`) that are one task's plan, done with: alone among the
    notes of their folder (`.impl/plan.md`), not one prompt among others (`.codex/prompts/`
    with `plan.md` beside `specify.md`)."""
    plans = {p for p in paths if PLAN_FILE.search(p)}
    folders = {os.path.dirname(p) for p in paths - plans}
    return {p for p in plans if os.path.dirname(p) not in folders}


def _closing(lines: list[str], mark: str) -> int:
    """The index of the first line after the first that ends with `mark` (past the end if none)."""
    return next((n for n, line in enumerate(lines[1:], 1) if line.endswith(mark)), len(lines))


def title_of(output: str) -> str:
    """The file's own title: a top-level heading as its first line, past any front matter or
    opening comment ("" if none: a file read from its middle opens with whatever line that was)."""
    lines = [line for line in (_NUMBER.sub("", raw).strip() for raw in output.splitlines()) if line]
    if lines and lines[0].startswith("---"):  # front matter, closed on a later line
        lines = lines[_closing(lines, "---") + 1 :]
    if lines and lines[0].startswith("<!--"):  # a comment, closed on its own line or a later one
        lines = lines[(0 if "-->" in lines[0] else _closing(lines, "-->")) + 1 :]
    m = _HEADING.match(lines[0]) if lines else None
    return clean(m.group(1), 100) if m else ""


def home_folder(path: str | None) -> bool:
    """Is `path` a user's home folder (`/Users/ann`, `/home/ann`, `C:\\Users\\ann`, this
    machine's `~`)? A session run there has no project: its hidden folders are the user's own
    settings (`~/.codex/skills`), not a project's notes."""
    if not path:
        return False
    parts = [p for p in path.replace("\\", "/").rstrip("/").split("/") if p and not p.endswith(":")]
    return (
        (len(parts) == 2 and parts[0].lower() in ("users", "home"))
        or parts == ["root"]
        or (os.path.normpath(path) == os.path.normpath(os.path.expanduser("~")))
    )


def tool_notes(evidence: Evidence) -> list[Candidate]:
    """The candidate of the page: each note file the session read or changed, the last time."""
    if home_folder(evidence.root):
        return []
    # Changed by any tool or through the shell (a heredoc, `sed -i`), whenever in the session.
    changed = {f for e in evidence.edits for f in e.files}
    found: dict[str, dict[str, str]] = {}
    for step in evidence.steps:
        if step.error:
            continue
        if step.kind == "read":
            raw = [step.input]
        elif step.kind == "edit":
            raw = list(step.files)
        elif step.kind == "command" and (printed := printed_file(step.input)):
            here = step_cwd(step, evidence.cwd, evidence.root)
            raw = [os.path.join(here, printed) if here and not os.path.isabs(printed) else printed]
        else:
            continue
        for name in raw:
            path = relative_to_root(name, evidence) if name else None
            if path is None or not note_path(path):
                continue
            entry = {"how": "changed" if path in changed else "read"}
            entry["date"] = step.time[:10] if len(step.time) >= 10 else evidence.date
            # (A file the session changed may no longer bear the title it was read with.)
            title = title_of(shell_output(step.output)) if step.kind != "edit" and path not in changed else ""
            if title:
                entry["title"] = title
            found[path] = entry
    for path in sorted(changed - set(found)):
        if note_path(path):
            found[path] = {"how": "changed", "date": evidence.date}
    for path in _task_plans(set(found)):
        del found[path]
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
