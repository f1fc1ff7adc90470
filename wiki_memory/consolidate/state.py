"""Consolidation's bookkeeping beside the wiki: which journals wait to be consolidated,
the state each consolidation leaves, and its log. Standard library only: SessionStart
asks what is pending on the hook path."""

from __future__ import annotations

import os
import time
from pathlib import Path

from wiki_memory import logs
from wiki_memory.capture.journal import journal_file
from wiki_memory.config import Project, load_settings
from wiki_memory.errors import WikiMemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Mapping, Sequence


def state_dir(project: Project) -> Path:
    """Per-session consolidation state and locks."""
    return project.home / "consolidate"


def log(message: str, env: Mapping[str, str] | None = None) -> None:
    """One line in consolidation's log (`logs/consolidate.log`, see `wiki_memory.logs`); never raises."""
    logs.write("consolidate", message, env)


def _at_rest(path: Path) -> bool:
    """True when the session's last turn is over: its last Stop or end comes after its last
    prompt or start (read from the file's tail). Such a journal need not settle first: the
    agent is waiting for the user, or gone. Lines of asynchronous hooks (Claude Code's
    PostToolUse) that land after the Stop do not count."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read()
    except OSError:
        return False

    def last(kind: bytes) -> int:
        return max(tail.rfind(b'"kind":"' + kind + b'"'), tail.rfind(b'"kind": "' + kind + b'"'))

    return max(last(b"stop"), last(b"session-end")) > max(last(b"prompt"), last(b"session-start"))


def settle_seconds() -> float:
    """How long a journal must be quiet before `--pending` takes it (`[consolidate] settle_seconds`)."""

    try:
        return load_settings().consolidate.settle_seconds
    except WikiMemoryError:
        return 5.0


def pending_journals(
    project: Project, *, settle: float = 5.0, exclude: Sequence[str] = (), now: float | None = None
) -> list[Path]:
    """Journals not consolidated as they stand, quiet for `settle` seconds (or whose last turn
    is over), newest first.

    A journal is consolidated when its state file is at least as new as the journal:
    consolidation stamps the state file with the journal's time as it read it, so a line
    appended meanwhile makes the journal newer again. Two directory listings, no reads.
    """

    now = time.time() if now is None else now
    skip = {journal_file(project.journal_dir, sid).name for sid in exclude if sid}
    states: dict[str, float] = {}
    try:
        with os.scandir(state_dir(project)) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    states[entry.name[:-5]] = entry.stat().st_mtime
    except OSError:
        pass
    found: list[tuple[float, Path]] = []
    try:
        with os.scandir(project.journal_dir) as entries:
            for entry in entries:
                if not entry.name.endswith(".jsonl") or entry.name in skip:
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                if st.st_size == 0:
                    continue
                done = states.get(entry.name[:-6])
                if done is not None and done >= st.st_mtime:
                    continue
                # A journal still being written is left alone, unless its turn is over.
                if now - st.st_mtime < settle and not _at_rest(Path(entry.path)):
                    continue
                found.append((st.st_mtime, Path(entry.path)))
    except OSError:
        return []
    found.sort(reverse=True)
    return [path for _, path in found]
