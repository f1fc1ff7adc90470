"""What a session was handed already: one small file per session beside the journal.

`<project home>/recall/<session>.seen` holds one line per page path handed to the session
(by SessionStart's handoff, by a prompt's recall) and one `file:<path>` line per file whose
pages were looked up, appended with a single write; a page is never handed twice in one
session, and a file's pages are looked up once.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from wiki_memory.config import Project

#: The line that starts the record afresh after the agent's context was compacted: what was
#: handed before it is no longer in the model's context, so it may be handed again.
COMPACTED = "--compacted--"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
#: Page paths as SessionStart's text names them (`decisions/retry-policy.md`).
# A team page is named `team:<path>` (see `recall.tier`).
_PAGE_PATH = re.compile(
    r"(?:\bteam:)?\b(?:decisions|gotchas|procedures|facts|preferences|notes|sessions|handoffs)/[\w./-]+?\.md\b"
)


def seen_file(project: Project, session_id: str) -> str:
    name = _UNSAFE.sub("_", session_id)[:128].lstrip(".") or "unknown"
    return os.path.join(project.home, "recall", f"{name}.seen")


def read(project: Project, session_id: str) -> set[str]:
    """Everything handed to (or looked up for) the session since its context was last compacted."""
    try:
        with open(seen_file(project, session_id), encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return set()
    if COMPACTED in lines:
        lines = lines[len(lines) - lines[::-1].index(COMPACTED) :]
    return set(lines)


def reset(project: Project, session_id: str) -> None:
    """The session's context was compacted: everything may be handed again (never raises:
    a record that cannot be written only means pages are not handed twice)."""
    try:
        add(project, session_id, [COMPACTED])
    except OSError:
        pass


def add(project: Project, session_id: str, entries: Iterable[str]) -> None:
    """Record page paths (or `file:<path>` lines) as handed to the session."""
    lines = "".join(f"{e}\n" for e in entries if e and "\n" not in e)
    if not lines or not session_id:
        return
    path = seen_file(project, session_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, lines.encode("utf-8"))
    finally:
        os.close(fd)


def pages_named(text: str) -> list[str]:
    """The page paths a text names (what SessionStart handed)."""
    return list(dict.fromkeys(m.group(0) for m in _PAGE_PATH.finditer(text)))
