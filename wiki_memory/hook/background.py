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

from wiki_memory import logs
from wiki_memory.config import Project
from wiki_memory.consolidate.state import state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Sequence

PENDING_EVERY = 10.0  # seconds between two starts of the pending work, at most


def project_arg(project: Project) -> str:
    """The project as the worker's argument (JSON of its fields)."""
    return json.dumps(project.fields())


def spawn(project: Project, args: Sequence[str]) -> int | None:
    """Start `python -m wiki_memory.hook.worker PROJECT ARGS...` detached; returns its pid."""
    command = [sys.executable, "-m", "wiki_memory.hook.worker", project_arg(project), *args]
    cwd = str(project.root) if project.root and project.root.is_dir() else "/"
    return logs.start_detached("consolidate", command, cwd, env=dict(os.environ))


def start_session(project: Project, session_id: str) -> int | None:
    """Consolidate one session now, in the background (SessionEnd)."""
    return spawn(project, ["session", session_id])


def start_snapshot(project: Project, session_id: str) -> int | None:
    """Record the code repository's state as a session starts, in the background (once per
    session; only in a git repository): consolidation compares it with the state at the end.
    The process is `python -I -S consolidate/gitstate.py`: the standard library alone, no
    `site`, so that on a busy machine it takes little from the hook and the agent."""
    root = project.root
    if root is None or os.environ.get("WIKI_MEMORY_REPO_STATE") == "0":
        return None
    if not os.path.exists(os.path.join(str(root), ".git")):
        return None
    from wiki_memory.capture.journal import journal_file

    stem = os.path.basename(str(journal_file(project.journal_dir, session_id)))[: -len(".jsonl")]
    out = os.path.join(str(state_dir(project)), "repo", stem + ".json")
    if os.path.exists(out):
        return None  # a resumed session keeps the state it started from
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "consolidate", "gitstate.py")
    return spawn_light([sys.executable, "-I", "-S", script, str(root), out, str(project.home)])


def spawn_light(command: Sequence[str]) -> int | None:
    """Start `command` detached (in a session of its own, no tie to the hook's pipes) without
    waiting for it to start: `fork` then `exec` in the child. (`subprocess` and `posix_spawn`
    both wait until the child has exec'd, which on a busy machine is the time it waits for a
    core: the hook would pay it.)"""
    err = logs.open_for_child("consolidate")
    pid: int | None
    try:
        if hasattr(os, "fork"):
            pid = os.fork()
        else:
            import subprocess

            pid = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL if err is None else err, start_new_session=True, close_fds=True,
            ).pid  # fmt: skip
    except OSError as e:
        logs.write("consolidate", f"could not start {' '.join(command[:4])} ...: {e}")
        pid = None
    if pid != 0:  # the parent: the child keeps its own copy of the log's descriptor
        if err is not None:
            os.close(err)
        return pid
    try:  # the child: nothing but system calls until it becomes `command`
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(null if err is None else err, 2)
        os.closerange(3, 256)
        os.execv(command[0], list(command))
    finally:
        os._exit(127)


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
