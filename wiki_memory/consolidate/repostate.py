"""The code repository's state when a session starts and when it is consolidated: every file
whose state changed in between counts as touched, whichever tool changed it (an edit tool, a
shell command, a formatter, a code generator).

The state is HEAD and the content hash of each file `git status` lists (modified, added,
untracked); a file that changes and comes back to its first content counts as untouched. At
SessionStart the hook starts a background process that records the state
(`record_start`); consolidation compares (`changed_since_start`), shortly after the session
ended only: later, other work may have changed the repository too. Uses the `git` command
(it knows the repository's ignore rules); with no git, or no repository, there is nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from wiki_memory.capture.journal import journal_file
from wiki_memory.config import Project, replace_file
from wiki_memory.consolidate.gitstate import changed_files, ignored, snapshot
from wiki_memory.consolidate.session import Session
from wiki_memory.consolidate.state import log, state_dir
from wiki_memory.consolidate.state_changes import changes_files

__all__ = [
    "changed_files",
    "changed_since_start",
    "ignored_changes",
    "record_start",
    "snapshot",
    "start_path",
    "start_state",
]

# A state is compared only this soon after the session's last event (seconds).
FRESH_FOR = 15 * 60


def start_path(project: Project, session_id: str) -> Path:
    """Where the state a session started from is kept."""

    return state_dir(project) / "repo" / (Path(journal_file(project.journal_dir, session_id)).stem + ".json")


def record_start(project: Project, session_id: str) -> bool:
    """Record the repository's state as the session starts (once: a resumed session keeps
    its first state). True when a state was recorded."""
    root = project.root
    path = start_path(project, session_id)
    if root is None or path.exists():
        return False
    state = snapshot(Path(root))
    if state is None or not project.home.is_dir():
        return False  # the project's home went away meanwhile (a demo cleaned up): write nothing
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps(state))
    return True


def start_state(project: Project, session_id: str) -> dict[str, Any] | None:
    try:
        data = json.loads(start_path(project, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def changed_since_start(
    project: Project, session_id: str, last_event: float
) -> tuple[list[str], list[str] | None] | None:
    """The files whose state changed since the session started, and those of them `git status`
    still lists (uncommitted; None when too many were dirty to list). None: no state recorded,
    or the session ended too long ago to tell its changes from later work."""
    before = start_state(project, session_id)
    if before is None or project.root is None:
        return None
    if last_event and time.time() - last_event > FRESH_FOR:
        return None
    root = Path(project.root)
    after = snapshot(root)
    if after is None:
        return None
    try:
        changed = changed_files(root, before, after)
    except Exception as e:  # noqa: BLE001 - the comparison is a bonus; the journal still names the files
        log(f"session {session_id}: repository state not compared ({type(e).__name__}: {e})")
        return None
    dirty = after.get("files")
    return changed, [p for p in changed if p in dirty] if isinstance(dirty, dict) else None


def ignored_changes(project: Project, session: Session) -> tuple[str, ...]:
    """The files the session changed that the code repository's ignore rules keep out of it
    (absolute paths): generated files, local notes. Read now, from the repository as it is."""
    if project.root is None:
        return ()
    root = Path(project.root).resolve()
    inside: dict[str, None] = {}
    for step in session.steps:
        for f in step.files if changes_files(step) else ():
            try:  # (an absolute `f` is itself)
                inside[Path(session.cwd or root, f).resolve().relative_to(root).as_posix()] = None
            except (ValueError, OSError):
                continue  # outside the repository
    try:
        return tuple(str(root / p) for p in ignored(root, list(inside)))
    except Exception as e:  # noqa: BLE001 - a bonus: without it, an ignored file is claimed uncommitted
        log(f"session {session.session_id}: ignore rules not read ({type(e).__name__}: {e})")
        return ()
