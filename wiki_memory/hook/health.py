"""Whether memory is working, told in one line at SessionStart: a dead install must not go
unnoticed for months. What counts, since the project's last SessionStart:

- hook calls that failed (a bug of ours, a payload we could not read: `logs/hooks.log`);
- background consolidations that failed (`logs/consolidate.log`), or sessions waiting for
  one for over a day;
- recent sessions whose journals have no end (no Stop, no SessionEnd: the end hooks do not run);
- the recall helper crashing (`logs/recall-helper.log`).

The logs are shared by every project of the home: how far each was read is kept per project
(`<project home>/health.json`, byte offsets), so each problem is told once. Standard library
only; nothing here raises.
"""

from __future__ import annotations

import json
import os
import re
import time

from wiki_memory import logs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiki_memory.config import Project

DAY = 86400.0
RECENT = 7 * DAY  # journals this recent count as recent sessions
ENDLESS = 3  # this many recent sessions in a row with no end: the end hooks do not run
_FAILED = re.compile(
    r"\b[A-Z]\w*(Error|Exception)\b|not JSON|not an object|has no session id|unknown (agent|event)|over the .* limit"
)
_BACKGROUND_FAILED = re.compile(r"\bbackground (session|pending)\b.*\b[A-Z]\w*(Error|Exception)\b")
_HELPER_FAILED = re.compile(r"Traceback|\b[A-Z]\w*(Error|Exception)\b|no embedding model")


def _new_lines(path: str, start: int) -> tuple[list[str], int]:
    """The lines written to a log since byte `start` (all of it when it was rotated), and its size."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            f.seek(start if 0 <= start <= size else 0)
            data = f.read(1 << 20)
    except OSError:
        return [], 0
    return data.decode("utf-8", "replace").splitlines(), size


def _ended(path: str) -> bool:
    """Does a journal record an end of a turn or of the session (read from its tail)?"""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))
            tail = f.read()
    except OSError:
        return True
    return any(k in tail for k in (b'"kind":"stop"', b'"kind":"session-end"', b'"kind": "stop"'))


def problems(
    project: Project, session_id: str, env: Mapping[str, str] | None = None, now: float | None = None
) -> list[str]:
    """What is wrong with memory in this project since its last SessionStart (and remember
    how far the logs were read)."""
    from wiki_memory.consolidate import state

    now = time.time() if now is None else now
    marker = os.path.join(str(project.home), "health.json")
    try:
        with open(marker, encoding="utf-8") as f:
            read = json.load(f)
        if not isinstance(read, dict):
            read = {}
    except (OSError, ValueError):
        read = {}
    found: list[str] = []
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for name, shape in (("hooks", _FAILED), ("consolidate", _BACKGROUND_FAILED), ("recall-helper", _HELPER_FAILED)):
        # A log seen for the first time: only what comes from now on counts.
        start = read.get(name)
        lines, sizes[name] = _new_lines(str(logs.path(name, env)), start if isinstance(start, int) else -1)
        counts[name] = 0 if not isinstance(start, int) else sum(1 for line in lines if shape.search(line))
    if counts["hooks"]:
        found.append(f"{counts['hooks']} hook call{'s' if counts['hooks'] > 1 else ''} failed since the last session")
    if counts["consolidate"]:
        n = counts["consolidate"]
        found.append(f"{n} consolidation{'s' if n > 1 else ''} failed")
    waiting = [
        p for p in state.pending_journals(project, settle=DAY, exclude=(session_id,), now=now) if now - _mtime(p) > DAY
    ]
    if waiting:
        found.append(f"{len(waiting)} session{'s' if len(waiting) > 1 else ''} waiting over a day to be consolidated")
    recent = _recent_journals(project, session_id, now)
    if len(recent) >= ENDLESS and not any(_ended(p) for p in recent[:ENDLESS]):
        found.append(f"the last {ENDLESS} sessions recorded no end (Stop, SessionEnd)")
    if counts["recall-helper"]:
        found.append("the recall helper failed")
    try:
        partial = f"{marker}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as f:
            json.dump(sizes, f)
        os.replace(partial, marker)
    except OSError:
        pass
    return found


def _mtime(path: object) -> float:
    try:
        return os.path.getmtime(str(path))
    except OSError:
        return 0.0


def _recent_journals(project: Project, session_id: str, now: float) -> list[str]:
    """The journals of other sessions written in the last week, newest first."""
    from wiki_memory.capture.journal import journal_file

    own = journal_file(project.journal_dir, session_id).name
    found: list[tuple[float, str]] = []
    try:
        with os.scandir(project.journal_dir) as entries:
            for entry in entries:
                if entry.name.endswith(".jsonl") and entry.name != own:
                    mtime = entry.stat().st_mtime
                    if now - mtime < RECENT:
                        found.append((mtime, entry.path))
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)]


def line(project: Project, session_id: str, env: Mapping[str, str] | None = None) -> str | None:
    """The one line SessionStart adds when memory is not working, or None."""
    try:
        found = problems(project, session_id, env)
    except Exception as e:  # noqa: BLE001 - the session starts anyway; the reason is logged
        logs.write("hooks", f"health at session start {session_id}: {type(e).__name__}: {e}", env)
        return None
    if not found:
        return None
    return f"wiki-memory is not working as it should: {'; '.join(found)}. Run `wiki-memory doctor`."
