"""Where a finished session is read from: its journal (each observation carrying its line
number), the agent's transcript when one can be found, and the branch its working directory
had checked out. `load_session` puts them together into one `Session`. Standard library only
at import time, so the hook path can read a session that ended but was not consolidated yet.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wiki_memory.capture.adapter import load
from wiki_memory.capture.observation import Observation
from wiki_memory.config import find_code_root
from wiki_memory.consolidate.session import Session, build_session, merge_observations
from wiki_memory.consolidate.state import log


def current_branch(cwd: str | None) -> str | None:
    """The branch checked out in the code repository of `cwd`, read from its HEAD file."""
    if not cwd:
        return None
    root = find_code_root(Path(cwd)) if Path(cwd).exists() else None
    if root is None:
        return None
    dot_git = root / ".git"
    git_dir = dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        git_dir = Path(text[7:].strip())
        git_dir = git_dir if git_dir.is_absolute() else (root / git_dir).resolve()
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None


def read_journal(journal_path: Path) -> list[Any]:
    """A journal's observations in order, each carrying its line number (`meta["line"]`) so
    that what a summary says can name the line it came from."""

    out = []
    with open(journal_path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                data = json.loads(raw)
            except ValueError:
                continue  # a torn line: skipped, as `journal.records` does
            if isinstance(data, dict):
                o = Observation.from_dict(data)
                out.append(o._replace(meta={**o.meta, "line": number}))
    return out


def load_session(
    journal_path: Path, *, with_transcript: bool = True, max_transcript_bytes: int | None = None
) -> Session:
    """The session of a journal, completed with its transcript when one can be read (and is
    no bigger than `max_transcript_bytes`, when given)."""
    observations = read_journal(journal_path)
    first = next((o for o in observations if o.session_id), None)
    agent = first.agent if first else ""
    session_id = first.session_id if first else journal_path.stem
    transcript = []
    if with_transcript:
        transcript = read_transcript_for(agent, session_id, observations, max_bytes=max_transcript_bytes)
    session = build_session(merge_observations(observations, transcript), agent=agent or None, session_id=session_id)
    if not session.branch:
        session.branch = current_branch(session.cwd)
    return session


def read_transcript_for(
    agent: str, session_id: str, observations: Sequence[Any], *, max_bytes: int | None = None
) -> list[Any]:
    """The transcript's observations for a session, or [] (none found, unreadable, too big
    for `max_bytes`, an agent without a transcript reader)."""

    try:
        adapter = load(agent)
    except KeyError:
        return []
    path = None
    try:
        # With `max_bytes` (the hook path), only the transcript the hooks named: no searching.
        path = adapter.find_transcript(session_id, observations, search=max_bytes is None)
        if path is None or (max_bytes is not None and path.stat().st_size > max_bytes):
            return []
        return adapter.read_transcript(path)
    except Exception as e:  # noqa: BLE001 - a transcript is a bonus; the journal alone still makes the pages
        log(f"session {session_id}: transcript {path} unreadable ({type(e).__name__}: {e}); using the journal")
    return []
