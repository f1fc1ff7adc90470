"""The handoff, as the rest of wiki-memory asks for it.

- `handoff_for_next_session`: what a session starting now is told (exactly the SessionStart
  text): the newest handoffs of the project not written by the asking session, sessions
  that ended but are not consolidated yet (summarised on the spot), preferences, and the
  decisions and gotchas that relate to them. Standard library only on the default path.
- `write_explicit_handoff`: a handoff written on purpose by a person or an agent (`wiki-memory
  handoff write`, the MCP `handoff_write` tool); it takes precedence over the automatic
  handoff of the same session or moment.
"""

from __future__ import annotations

import re
import time
from collections import namedtuple
from pathlib import Path

from wiki_memory.capture.journal import journal_file
from wiki_memory.capture.observation import utc_now
from wiki_memory.config import Project
from wiki_memory.consolidate import context, state
from wiki_memory.errors import WikiMemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Sequence
    from typing import Any

# SessionStart summarises at most this much unconsolidated journal on the spot.
INLINE_MAX_BYTES = 4 * 1024 * 1024
INLINE_MAX_SESSIONS = 3
INLINE_TIME_BUDGET = 0.06
# ... and reads its transcript too when it is this small (Codex's hooks carry no exit codes).
INLINE_MAX_TRANSCRIPT_BYTES = 1024 * 1024


class HandoffView(
    namedtuple("HandoffView", "text handoffs pending stale waiting shown", defaults=((), False, False, ()))
):
    """What a session starting now would be handed.

    `text`: exactly what SessionStart gives the agent (None when memory has nothing to
    say); `handoffs`: the handoff pages it draws on, newest first; `pending`: sessions
    summarised on the spot, not consolidated yet; `stale`: the wiki moved on since the
    context was built; `waiting`: journals wait to be consolidated (`stale` or `waiting`:
    there is background work to start); `shown`: the other pages it hands out
    (preferences, procedures, decisions, gotchas).
    (A named tuple, not a dataclass: `dataclasses` costs the hook path a fifth of its start.)
    """

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "handoffs": list(self.handoffs),
            "pending": list(self.pending),
            "stale": self.stale,
            "chars": len(self.text),
        }


def _inline_entries(project: Project, pending: list[Path], session_id: str | None) -> list[dict[str, Any]]:
    """Sessions that ended but were not consolidated yet, summarised from their journals."""
    if not pending:
        return []  # the common case: nothing more to import
    from wiki_memory.consolidate.closing import did_work  # deferred: an unconsolidated session only
    from wiki_memory.consolidate.extract import clean, summarize  # deferred: an unconsolidated session only
    from wiki_memory.consolidate.render import (  # deferred: an unconsolidated session only
        content_from_summary,
        handoff_body,
        handoff_page_path,
        handoff_text,
        session_page_path,
    )
    from wiki_memory.consolidate.session import stamp_ms, time_key  # deferred: an unconsolidated session only
    from wiki_memory.consolidate.session_sources import (  # deferred: an unconsolidated session only
        current_branch,
        load_session,
    )

    started = time.monotonic()
    entries: list[dict[str, Any]] = []
    for path in pending:
        if len(entries) >= INLINE_MAX_SESSIONS or time.monotonic() - started > INLINE_TIME_BUDGET:
            break
        try:
            if path.stat().st_size > INLINE_MAX_BYTES:
                continue
            session = load_session(path, max_transcript_bytes=INLINE_MAX_TRANSCRIPT_BYTES)
        except OSError:
            continue
        if session_id and session.session_id == session_id:
            continue
        summary = summarize(session)
        if not summary.substantive:
            continue
        branch = session.branch or current_branch(session.cwd)
        meta: dict[str, Any] = {
            "agent": session.agent,
            "session_id": session.session_id,
            "ended": stamp_ms(session.end),
            "session_page": session_page_path(session),
            "handoff_kind": "automatic",
        }
        if branch:
            meta["branch"] = branch
        if not session.ended:
            meta["in_progress"] = True
        handoff_path = handoff_page_path(session)
        body = handoff_body(content_from_summary(summary), session_page_path(session))
        entries.append(
            {
                "path": handoff_path,
                "kind": "automatic",
                "session_id": session.session_id,
                "agent": session.agent,
                "ended": meta["ended"],
                "ended_ts": time_key(session.end),
                "text": handoff_text(meta, body, handoff_path),
                "compact": handoff_text(meta, body, handoff_path, compact=True),
                "terms": context.terms(summary.goal, " ".join(summary.open), " ".join(summary.files)),
                "related": None,
                "work": did_work(summary),
                "goal": clean(summary.goal, 200),
            }
        )
    return entries


def handoff_for_next_session(
    project: Project,
    *,
    session_id: str | None = None,
    agent: str | None = None,
    source: str | None = None,
    budget: int = context.BUDGET,
) -> HandoffView | None:
    """What a session starting now would be handed, or None when memory has nothing to say."""
    view = next_session_view(project, session_id=session_id, agent=agent, source=source, budget=budget)
    return view if view.text is not None else None


def next_session_view(
    project: Project,
    *,
    session_id: str | None = None,
    agent: str | None = None,
    source: str | None = None,
    budget: int = context.BUDGET,
) -> HandoffView:
    """What a session starting now would be handed (its `text` None when memory has nothing
    to say), from the context file beside the wiki and the journals not consolidated yet.

    `source` (startup | resume | clear | compact) changes nothing: a session is never
    handed its own handoff, so a resumed session sees other sessions' handoffs only.
    A stale context is used as it is: rebuilding it needs the store (`Memory.handoff`
    rebuilds it first; the SessionStart hook starts the rebuild in the background).
    """
    ctx = context.load(project)
    stale = context.is_stale(project, ctx)
    waiting = state.pending_journals(
        project, settle=state.settle_seconds(), exclude=(session_id,) if session_id else ()
    )
    inline = _inline_entries(project, waiting, session_id)
    shown: list[str] = []
    root = str(project.root) if project.root else None
    text, paths = context.compose(ctx, inline, session_id=session_id, budget=budget, root=root, shown=shown)
    pending = tuple(str(e["session_id"]) for e in inline if e["path"] in paths)
    return HandoffView(text, tuple(paths), pending, stale, bool(waiting), tuple(shown))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "person"


def write_explicit_handoff(
    project: Project,
    store: Any,
    *,
    summary: str,
    done: Sequence[str] = (),
    failed: Sequence[str] = (),
    next_steps: Sequence[str] = (),
    open_questions: Sequence[str] = (),
    files: Sequence[str] = (),
    agent: str | None = None,
    session_id: str | None = None,
    index: Any = None,
    author: Any = None,
) -> Any:
    """Write a handoff page from a person or an agent (one commit); returns the WriteResult.
    `index` (the project's search index, if open) finds the decisions and gotchas it relates to;
    `author` (a store `Author`), when given, is the commit's author whatever the agent.

    One explicit handoff per session: writing again in the same session updates it. It is
    offered ahead of the automatic handoff of the same session, and of any automatic
    handoff within ten minutes of it. What it says is redacted, its title included.
    """
    from wiki_memory.capture.redact import (  # deferred: redaction's patterns compile on import
        redact_with_config as redact,
    )
    from wiki_memory.consolidate.context_build import refresh  # deferred: a handoff written on purpose only
    from wiki_memory.consolidate.extract import clean  # deferred: a handoff written on purpose only
    from wiki_memory.consolidate.render import (  # deferred: a handoff written on purpose only
        explicit_body,
        title_words,
    )
    from wiki_memory.consolidate.session import short_id  # deferred: a handoff written on purpose only
    from wiki_memory.pages import (  # deferred: the page model loads PyYAML
        Page,
        now_iso,
    )
    from wiki_memory.store import Author  # deferred: the store loads dulwich

    summary = (summary or "").strip()
    if not summary:
        raise WikiMemoryError("a handoff needs a summary (what was being done and where it stands)")
    if len(summary) > 20000:
        raise WikiMemoryError("the summary is over 20,000 characters; a handoff should be far shorter")
    summary = redact(summary)
    lists = [
        _items(values, name, redact)
        for values, name in ((done, "done"), (failed, "failed"), (next_steps, "next steps"),
                             (open_questions, "open questions"), (files, "files"))
    ]  # fmt: skip
    now = now_iso()
    author = author or (Author.agent(agent) if agent else Author.person(store.root))
    who = agent or author.name
    name = f"{_slug(who)}-{short_id(session_id)}" if session_id else f"{now[11:19].replace(':', '')}-{_slug(who)}"
    path = f"handoffs/{now[:4]}/{now[5:7]}/{now[:10]}-{name}-explicit.md"
    page = Page.new(
        f"Handoff {now[:10]} {who}: {title_words(clean(summary, 200))}",
        "handoff",
        explicit_body(summary, *lists),
        tags=[agent or "person", "explicit"],
        sources=[f"{agent}:{short_id(session_id)}"] if agent and session_id else [],
        path=path,
        extra=_explicit_meta(project, agent, who, session_id),
        date=now,
    )
    result = store.write(
        page, author, session_id=session_id, agent=agent, message=f"handoff: {path.removesuffix('.md')}"
    )
    refresh(project, store, index)
    return result


def _items(values: Sequence[str], name: str, redact: Any) -> list[str]:
    """One list of a handoff (done, failed, ...), each item on one line and redacted."""

    if isinstance(values, str):
        values = [values]
    out = [redact(" ".join(str(v).split())) for v in values if str(v).strip()]
    if len(out) > 50 or any(len(v) > 2000 for v in out):
        raise WikiMemoryError(f"too much in {name}: at most 50 items of 2,000 characters")
    return out


def _explicit_meta(project: Project, agent: str | None, who: str, session_id: str | None) -> dict[str, Any]:
    from wiki_memory.consolidate.session_sources import current_branch  # deferred: a handoff written on purpose only

    # Milliseconds: two handoffs written in the same second still have an order.
    meta: dict[str, Any] = {"handoff_kind": "explicit", "ended": utc_now()}
    if agent:
        meta["agent"] = agent
    else:
        meta["author"] = who
    if session_id:
        meta["session_id"] = session_id
    branch = current_branch(str(project.root)) if project.root else None
    if branch:
        meta["branch"] = branch
    return meta


def journal_exists(project: Project, session_id: str) -> bool:

    return Path(journal_file(project.journal_dir, session_id)).exists()
