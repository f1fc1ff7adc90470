"""The two places where the hook path meets consolidation (stdlib and `config` only).

- `session_start_text`: what a starting session is told (the newest handoffs of the
  project not written by this session, pinned preferences, relevant decisions and
  gotchas), as plain text; the agent's adapter wraps it in its own envelope. It reads a
  small file that consolidation keeps beside the wiki (no git), summarises on the spot
  any session that ended without being consolidated, and starts `consolidate --pending`
  in the background when there is work left.
- `after_session`: called on SessionEnd (and Stop, for agents without SessionEnd); starts
  consolidation of the session in a detached background process (debounced for Stop).

Neither raises: a failure is logged and the agent carries on.
"""

from __future__ import annotations

from wiki_memory.config import Project, load_settings

STOP_DEBOUNCE_SECONDS = 30.0


def session_start_text(project: Project, agent: str, session_id: str, source: str | None) -> str | None:
    """The reference notes for a session that is starting, or None when there are none."""
    try:
        from wiki_memory.consolidate.handoff import handoff_for_next_session

        view = handoff_for_next_session(
            project, session_id=session_id, agent=agent, source=source, background_work=True
        )
        return view.text if view is not None else None
    except Exception as e:  # noqa: BLE001 - the agent starts anyway; the reason is in the log
        from wiki_memory.consolidate.background import log

        log(f"session start {agent} {session_id}: {type(e).__name__}: {e}")
        return None


def after_session(project: Project, agent: str, session_id: str, event: str) -> None:
    """A session ended (`event` is session-end, or stop for agents without SessionEnd)."""
    try:
        from wiki_memory.consolidate import background
        from wiki_memory.consolidate.handoff import journal_exists

        if not session_id or not journal_exists(project, session_id):
            return
        if event == "session-end":
            background.start_session(project, session_id)
        elif event == "stop":
            try:
                delay = float(load_settings().get("consolidate", "stop_debounce_seconds", STOP_DEBOUNCE_SECONDS))
            except (TypeError, ValueError):
                delay = STOP_DEBOUNCE_SECONDS
            background.start_debounced(project, session_id, max(0.5, delay))
    except Exception as e:  # noqa: BLE001
        from wiki_memory.consolidate.background import log

        log(f"after session {agent} {session_id} ({event}): {type(e).__name__}: {e}")
