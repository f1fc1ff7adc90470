"""Consolidation started from a hook, in a process of its own that outlives the hook.

Claude Code gives a SessionEnd hook about 1.5 s and Codex 3 s, and both may exit right
after: consolidation (git, maybe an LLM) runs in a detached process (`hook/worker.py`),
in its own session (`start_new_session`), with no tie to the hook's pipes. The worker is
handed the project itself, not a directory to resolve again. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time

from wiki_memory.config import Project, home
from wiki_memory.consolidate.state import log, state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Sequence

PENDING_EVERY = 10.0  # seconds between two starts of the pending work, at most


def project_arg(project: Project) -> str:
    """The project as the worker's argument (JSON of its fields)."""
    return json.dumps(project.fields())


def spawn(project: Project, args: Sequence[str]) -> int | None:
    """Start `python -m wiki_memory.hook.worker PROJECT ARGS...` detached; returns its pid."""
    import subprocess

    command = [sys.executable, "-m", "wiki_memory.hook.worker", project_arg(project), *args]
    try:
        logs = home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "consolidate.log", "ab") as err:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=str(project.root) if project.root and project.root.is_dir() else "/",
                env=dict(os.environ),
                start_new_session=True,
                close_fds=True,
            )
    except OSError as e:
        log(f"could not start {' '.join(command[:4])} ...: {e}")
        return None
    return process.pid


def start_session(project: Project, session_id: str) -> int | None:
    """Consolidate one session now, in the background (SessionEnd)."""
    return spawn(project, ["session", session_id])


def start_pending(project: Project, *, every: float = PENDING_EVERY) -> int | None:
    """Finish every journal left unconsolidated (and rebuild a stale SessionStart context),
    at most once every `every` seconds."""
    marker = state_dir(project) / "pending.started"
    try:
        if time.time() - marker.stat().st_mtime < every:
            return None
    except FileNotFoundError:
        pass
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        return None
    return spawn(project, ["pending"])
