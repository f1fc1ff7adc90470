"""How often each page was handed out, read, found or marked helpful: counters kept outside
git (`usage.jsonl` beside the wiki), so that the wiki's log stays a record of what changed
and not of who looked. Explicit marks are commits besides (`Memory.mark`).

`record` appends one line and never raises (the SessionStart hook calls it); `counts` adds
them up. Standard library only; the counters live with the page model, below everything
that counts (the SessionStart hook, `Memory`'s reads, searches and marks).
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Protocol

    class Project(Protocol):
        """A project as the counters see it (`config.Project`): where its files live."""

        @property
        def home(self) -> Path: ...


USAGE_FILE = "usage.jsonl"
TOTALS_FILE = "usage-totals.json"
COMPACT_AT = 4 * 1024 * 1024  # bytes of lines before they are folded into the totals
EVENTS = ("handed", "read", "found", "helpful")


def usage_path(project: Project) -> str:
    return os.path.join(str(project.home), USAGE_FILE)


def record(project: Project, event: str, paths: Iterable[str], *, agent: str | None = None) -> None:
    """One line: `event` (handed, read, found, helpful) for `paths`; never raises."""
    try:
        listed = [p for p in paths if p]
        if not listed:
            return
        line = {"t": int(time.time()), "e": event, "p": listed}
        if agent:
            line["a"] = agent
        os.makedirs(str(project.home), exist_ok=True)
        fd = os.open(usage_path(project), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(line, separators=(",", ":")) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - a counter must never cost the agent anything
        pass


def _add(totals: dict[str, dict[str, int]], text: str) -> None:
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or line.get("e") not in EVENTS or not isinstance(line.get("p"), list):
            continue
        for path in line["p"]:
            if isinstance(path, str):
                entry = totals.setdefault(path, {})
                entry[line["e"]] = entry.get(line["e"], 0) + 1


def counts(project: Project) -> dict[str, dict[str, int]]:
    """path -> {handed, read, found, helpful: count}; lines past COMPACT_AT are folded into
    `usage-totals.json` first."""
    totals_path = os.path.join(str(project.home), TOTALS_FILE)
    try:
        with open(totals_path, encoding="utf-8") as f:
            totals = json.load(f)
        if not isinstance(totals, dict):
            totals = {}
    except (OSError, ValueError):
        totals = {}
    path = usage_path(project)
    try:
        size = os.path.getsize(path)
    except OSError:
        return totals
    if size > COMPACT_AT:
        moving = f"{path}.{os.getpid()}"
        try:
            os.replace(path, moving)
            with open(moving, encoding="utf-8", errors="replace") as f:
                _add(totals, f.read())
            tmp = f"{totals_path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(totals, f)
            os.replace(tmp, totals_path)
            os.remove(moving)
        except OSError:
            pass
        return totals
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            _add(totals, f.read())
    except OSError:
        pass
    return totals
