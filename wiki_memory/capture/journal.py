"""The journal: one append-only JSONL file per session, under the project's home.

Parallel hooks (Claude Code runs async PostToolUse hooks side by side) each append one
whole line with a single `write` on an `O_APPEND` descriptor, under `flock`, so lines never
interleave or tear. A reader skips a line that is not JSON (a disk that filled mid-write)
rather than failing the whole session.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from wiki_memory.capture.observation import Observation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def journal_file(journal_dir: Path, session_id: str) -> Path:
    """`<journal_dir>/<session id>.jsonl`; odd characters in an id become `_`."""
    name = _UNSAFE.sub("_", session_id)[:128].lstrip(".") or "unknown"
    return journal_dir / f"{name}.jsonl"


def append(journal_dir: Path, observations: Iterable[Observation]) -> Path | None:
    """Append observations to their session's journal; returns its path (None if nothing)."""
    observations = list(observations)
    if not observations:
        return None
    path = journal_file(journal_dir, observations[0].session_id)
    text = "".join(json.dumps(o.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n" for o in observations)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Trigger: a lone UTF-16 surrogate in a payload (JSON's "\ud800" alone is valid JSON).
        # Why: it cannot be written as UTF-8, and the whole observation was dropped for it.
        data = _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
    journal_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)  # closing releases the flock
    return path


def records(path: Path) -> Iterator[dict]:
    """The JSON objects of a JSONL file (a journal, an agent's transcript) in order; a line
    that is not a JSON object (torn by a full disk, an unknown format) is skipped."""
    with open(path, "rb") as f:
        for line in f:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                yield data


def read(path: Path) -> Iterator[Observation]:
    """The observations of a journal file in order; unreadable lines are skipped."""
    return (Observation.from_dict(data) for data in records(path))
