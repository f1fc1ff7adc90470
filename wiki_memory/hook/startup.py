"""Where the hook process meets consolidation (standard library and our light modules only).

- `session_start_text`: what a starting session is told (the newest handoffs of the
  project not written by this session, pinned preferences, relevant decisions and
  gotchas), as plain text; the agent's adapter wraps it in its own envelope. It reads a
  small file that consolidation keeps beside the wiki (no git), summarises on the spot
  any session that ended without being consolidated, and starts the pending work in the
  background when there is some.
- `with_branch_handoff`: that text and, after it, the handoff a teammate attached to the
  code branch checked out (`handoff share`), once.
- `after_session`: on SessionEnd, starts consolidation of the session in a detached
  background process.

Neither raises: a failure is logged and the agent carries on.
"""

from __future__ import annotations

from wiki_memory import logs
from wiki_memory.config import Project

TEAM_BUDGET = 1500  # characters of SessionStart the team tier's block may take


def session_start_text(project: Project, agent: str, session_id: str, source: str | None) -> str | None:
    """The reference notes for a session that is starting, or None when there are none."""
    try:
        from wiki_memory.consolidate import context, state
        from wiki_memory.consolidate.handoff import handoff_for_next_session
        from wiki_memory.hook import background

        background.start_snapshot(project, session_id)  # the repository's state at start, off the hot path
        view = handoff_for_next_session(project, session_id=session_id, agent=agent, source=source)
        block = team_block(project, view.text if view is not None else None)
        if block and view is not None and view.text and len(view.text) + len(block) + 2 > context.BUDGET:
            # A full personal text would leave the team nothing: it gives up the block's room.
            room = context.BUDGET - len(block) - 2
            view = (
                handoff_for_next_session(project, session_id=session_id, agent=agent, source=source, budget=room)
                or view
            )
        # Even a journal with nothing in it is consolidated (as empty), so that later starts skip it.
        waiting = state.pending_journals(project, settle=state.settle_seconds(), exclude=(session_id,))
        if waiting or (view is not None and view.stale) or (view is None and context.is_stale(project, None)):
            background.start_pending(project)
        if view is not None:
            from wiki_memory.pages import usage

            usage.record(project, "handed", [*view.handoffs, *view.shown], agent=agent)
        return with_team(view.text if view is not None else None, block)
    except Exception as e:  # noqa: BLE001 - the agent starts anyway; the reason is in the log
        logs.write("hooks", f"session start {agent} {session_id}: {type(e).__name__}: {e}")
        return None


def with_branch_handoff(project: Project, text: str | None) -> str | None:
    """`text` and, after it, the handoff a teammate shared for the code branch checked out
    (`handoff share`), once; a team tier not joined costs a stat."""
    if not project.has_team():
        return text
    try:
        from wiki_memory.consolidate.branch_handoff import handed
        from wiki_memory.consolidate.context import BUDGET

        block = handed(project, budget=BUDGET - len(text or "") - 2)
    except Exception as e:  # noqa: BLE001 - the project's own handoff is handed anyway
        logs.write("hooks", f"session start: branch handoff: {type(e).__name__}: {e}")
        return text
    if block is None:
        return text
    return f"{text}\n\n{block}" if text else block


def after_session(project: Project, agent: str, session_id: str) -> None:
    """A session ended: consolidate it in the background."""
    try:
        from wiki_memory.consolidate.handoff import journal_exists
        from wiki_memory.hook import background

        if session_id and journal_exists(project, session_id):
            background.start_session(project, session_id)
    except Exception as e:  # noqa: BLE001 - the agent is leaving; the reason is in the log
        logs.write("hooks", f"after session {agent} {session_id}: {type(e).__name__}: {e}")


def team_block(project: Project, text: str | None) -> str | None:
    """The block SessionStart adds for a joined team (its procedures, and the team gotchas
    and decisions that bear on the work the handoff `text` names, each with its author), or
    None: always None, after one stat, when no team is joined."""
    if not project.has_team():  # before any import: without a team, one stat
        return None
    try:
        from wiki_memory.consolidate import context
        from wiki_memory.recall import tier

        block, _ = tier.start_block(project.team(), context.terms(text or ""), TEAM_BUDGET, tier.recall_mode())
    except Exception as e:  # noqa: BLE001 - the session starts with the personal text
        logs.write("hooks", f"session start team block: {type(e).__name__}: {e}")
        return None
    return block


def with_team(text: str | None, block: str | None) -> str | None:
    """The SessionStart text with the team's block inside the same fence."""
    from wiki_memory.consolidate import context

    if not block:
        return text
    if text is None:
        return f"{context.OPEN_TAG_NO_HANDOFF}\n{block}\n{context.CLOSE_TAG}"
    head, tag, tail = text.rpartition(context.CLOSE_TAG)
    return f"{head.rstrip()}\n\n{block}\n{tag}{tail}" if tag else f"{text}\n\n{block}"
