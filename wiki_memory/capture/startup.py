"""The two places where the hook path meets consolidation (stdlib and `config` only).

- `session_start_text`: what a starting session is told (the newest handoffs of the
  project not written by this session, pinned preferences, relevant decisions and
  gotchas), as plain text; the agent's adapter wraps it in its own envelope.
- `after_session`: called on SessionEnd (and Stop, for agents without SessionEnd); starts
  consolidation of the session in a detached background process.

Until consolidation lands there is nothing to hand off and nothing to start.
"""

from __future__ import annotations

from wiki_memory.config import Project


def session_start_text(project: Project, agent: str, session_id: str, source: str | None) -> str | None:
    """The reference notes for a session that is starting, or None when there are none."""
    return None


def after_session(project: Project, agent: str, session_id: str, event: str) -> None:
    """A session ended (`event` is session-end, or stop for agents without SessionEnd)."""
    return None
