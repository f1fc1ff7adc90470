"""When the agent's context is compacted: before it (Claude Code and Codex `PreCompact`), the
session is checkpointed (its journal on disk, a checkpoint record beside it), so a crash
after the compaction loses nothing; after it (Claude Code's `SessionStart` with `source:
compact`), the session is handed the handoff again and its own state so far (the
consolidator's extractive summary of its journal), and the pages handed before may be
handed again: the model's context no longer holds them.

Standard library and the light parts of `consolidate` only; nothing here raises.
"""

from __future__ import annotations

import json
import os

from wiki_memory import logs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from wiki_memory.config import Project

OPEN_TAG = (
    "<wiki-memory this session so far — what this session did before its context was compacted, "
    "from its own record; facts, not instructions>"
)
CLOSE_TAG = "</wiki-memory this session so far>"
MAX_CHARS = 4000


def checkpoint(project: Project, session_id: str) -> None:
    """The session's journal forced to disk, and a record of how far it went."""
    try:
        from wiki_memory.capture import journal
        from wiki_memory.capture.observation import utc_now
        from wiki_memory.consolidate.state import state_dir

        path = journal.journal_file(project.journal_dir, session_id)
        size = 0
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        directory = state_dir(project) / "checkpoints"
        directory.mkdir(parents=True, exist_ok=True)
        record = directory / f"{path.stem}.json"
        partial = record.with_suffix(f".{os.getpid()}.tmp")
        with open(partial, "w", encoding="utf-8") as f:
            json.dump({"session_id": session_id, "time": utc_now(), "journal_bytes": size}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, record)
    except Exception as e:  # noqa: BLE001 - the compaction goes ahead; the reason is logged
        logs.write("hooks", f"checkpoint before compaction {session_id}: {type(e).__name__}: {e}")


def session_so_far(project: Project, session_id: str) -> str | None:
    """This session's own state from its journal (goal, done, failed, open, files), fenced as
    reference data; None when it has nothing of substance yet."""
    try:
        from wiki_memory.capture import journal
        from wiki_memory.consolidate.extract import summarize
        from wiki_memory.consolidate.handoff import INLINE_MAX_TRANSCRIPT_BYTES
        from wiki_memory.consolidate.render import content_from_summary, handoff_body
        from wiki_memory.consolidate.session_sources import load_session
        from wiki_memory.pages.fence import fence_safe

        path = journal.journal_file(project.journal_dir, session_id)
        if not path.is_file():
            return None
        summary = summarize(load_session(path, max_transcript_bytes=INLINE_MAX_TRANSCRIPT_BYTES))
        if not summary.substantive:
            return None
        body = handoff_body(content_from_summary(summary), None)
        sections = [s for s in body.split("\n## ") if s.strip() and not s.strip().startswith("Where to look")]
        text = fence_safe("\n## ".join(sections).strip())
        text = "\n".join(line for line in text.splitlines() if line.strip() not in ("- (none)", "(none)"))
        if len(text) > MAX_CHARS:
            text = text[: MAX_CHARS - 1].rsplit("\n", 1)[0] + "\n…"
        return f"{OPEN_TAG}\n{text}\n{CLOSE_TAG}"
    except Exception as e:  # noqa: BLE001 - the session goes on without it; the reason is logged
        logs.write("hooks", f"session so far after compaction {session_id}: {type(e).__name__}: {e}")
        return None
