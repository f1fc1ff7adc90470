"""Consolidating a session: journal (+ transcript) -> session page + handoff page, one commit.

Idempotent: a session is consolidated once per state of its journal. The state file
(`<home>/consolidate/<session>.json`) records the journal's size as read and carries the
journal's modification time, so running again is a no-op (no commit, same pages) until the
journal grows, and then the same two pages are updated in place. A consolidation killed
half-way left no state: `consolidate --pending` finishes it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wiki_memory.capture import journal
from wiki_memory.config import Project, load_settings, replace_file
from wiki_memory.consolidate import context
from wiki_memory.consolidate.closing import closing_meta
from wiki_memory.consolidate.explain import evidence_meta
from wiki_memory.consolidate.extract import Summary, summarize
from wiki_memory.consolidate.render import (
    content_from_summary,
    handoff_body,
    handoff_page_path,
    session_body,
    session_page_path,
    title_words,
)
from wiki_memory.consolidate.session import Session, iso, key_candidates, stamp_ms, time_key
from wiki_memory.consolidate.session_sources import load_session
from wiki_memory.consolidate.state import log, pending_journals, settle_seconds, state_dir
from wiki_memory.errors import NotFoundError, WikiMemoryError

StoreOpener = Callable[[], Any]  # the project's store (the wiki is created on the first call)
IndexOpener = Callable[[], Any]  # the project's search index, or None

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Outcome:
    """What consolidating one session did."""

    session_id: str
    status: str  # committed | unchanged | already | empty | busy
    commit: str | None = None
    pages: tuple[str, ...] = ()
    handoff: str | None = None
    mode: str = "extractive"  # extractive | llm:<provider>:<model> | extractive (llm failed: ...)
    message: str = ""
    # The session's summary when it was consolidated now (for distillation); not part of the record.
    summary: Summary | None = field(default=None, compare=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "status": self.status,
            "commit": self.commit,
            "pages": list(self.pages),
            "handoff": self.handoff,
            "mode": self.mode,
            "message": self.message,
        }


def _state_path(project: Project, journal_path: Path) -> Path:
    return state_dir(project) / (journal_path.stem + ".json")


def read_state(project: Project, journal_path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_state_path(project, journal_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_state(project: Project, journal_path: Path, state: dict[str, Any], journal_mtime: float) -> None:
    path = _state_path(project, journal_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps(state, indent=1))
    # The journal's time as read: a line appended since makes the journal newer than this.
    os.utime(path, (journal_mtime, journal_mtime))


class _SessionLock:
    """One consolidation of a session at a time (SessionEnd's and SessionStart's --pending)."""

    def __init__(self, path: Path, wait: bool):
        self.path, self.wait = path, wait
        self.fd: int | None = None

    def __enter__(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is None:
            return True
        deadline = time.monotonic() + 300
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                if not self.wait or time.monotonic() > deadline:
                    return False
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock


def stamp(value: str | None) -> str:
    seconds = time_key(value)
    return iso(seconds) if seconds else (value or "")


# The front-matter keys `build_pages` sets on session and handoff pages. The store keeps keys
# only the page as it stands has (a person's own key survives a re-consolidation); these are
# the consolidator's, so one it no longer sets is dropped: `in_progress` on a handoff written
# after the session's Stop, once its SessionEnd is consolidated.
OWNED_KEYS = frozenset(
    {
        "agent",
        "session_id",
        "model",
        "branch",
        "cwd",
        "started",
        "ended",
        "handoff",
        "transcript",
        "handoff_kind",
        "session_page",
        "consolidation",
        "in_progress",
        "work",
        "finished",
        "evidence",
    }
)


def build_pages(
    summary: Summary, llm_result: Any = None, *, mode: str = "extractive", with_handoff: bool = True
) -> list[Any]:
    """The session page and the handoff page (and proposed pages) for a summary; with
    `with_handoff` False (an import), the session page alone."""
    from wiki_memory.pages import Page  # deferred: the page model loads PyYAML

    s = summary.session
    session_path = session_page_path(s)
    handoff_path = handoff_page_path(s)
    source = f"{s.agent}:{s.short_id}"
    goal_words = llm_result.title if llm_result is not None and llm_result.title else title_words(summary.goal)
    session_meta: dict[str, Any] = {"agent": s.agent, "session_id": s.session_id}
    for key, value in (
        ("model", s.model),
        ("branch", s.branch),
        ("cwd", s.cwd),
        ("started", stamp(s.start)),
        ("ended", stamp(s.end)),
        ("handoff", handoff_path if with_handoff else None),
        ("transcript", s.transcript_path),
    ):
        if value:
            session_meta[key] = value
    content = llm_result.content if llm_result is not None else content_from_summary(summary)
    proposals = []
    if llm_result is not None:
        for p in llm_result.proposals:
            page = Page.new(
                p.title,
                p.type,
                f"{p.body}\n\nSource: [[{session_path}]]",
                tags=list(p.tags) + ["llm-proposed"],
                sources=[source],
            )
            proposals.append(page)
        if proposals:
            content = replace(content, related=tuple(content.related) + tuple(p.path for p in proposals))
    session_page = Page.new(
        f"Session {s.date} {s.agent} {s.key}: {goal_words}",
        "session",
        session_body(summary, handoff_path if with_handoff else None, llm_result.summary if llm_result else None),
        tags=[s.agent],
        sources=[source],
        path=session_path,
        extra=session_meta,
        date=stamp(s.start) or None,
    )
    if not with_handoff:
        return [session_page]
    handoff_meta: dict[str, Any] = {
        "agent": s.agent,
        "session_id": s.session_id,
        "ended": stamp_ms(s.end),
        "handoff_kind": "automatic",
        "session_page": session_path,
        "consolidation": mode,
    }
    if s.branch:
        handoff_meta["branch"] = s.branch
    if not s.ended:
        handoff_meta["in_progress"] = True

    handoff_meta.update(closing_meta(summary))

    evidence = evidence_meta(summary, content.goal)
    if evidence:
        handoff_meta["evidence"] = evidence
    handoff_page = Page.new(
        f"Handoff {s.date} {s.agent} {s.key}: {goal_words}",
        "handoff",
        handoff_body(content, session_path, s.transcript_path),
        tags=[s.agent],
        sources=[source],
        path=handoff_path,
        extra=handoff_meta,
        date=stamp(s.end) or None,
    )
    return [session_page, handoff_page, *proposals]


def unique_key(store: Any, session: Session) -> str:
    """The key naming the session's pages: its short id, unless another session's pages
    already have that name (then a longer one)."""

    keys = key_candidates(session.session_id)
    for key in keys:
        session.page_key = key
        path = session_page_path(session)
        if not store.exists(path):
            return key
        try:
            owner = store.read(path).meta.get("session_id")
        except WikiMemoryError:
            continue
        if owner in (None, session.session_id):
            return key
    return keys[-1]


def _use_llm(llm: bool | None) -> Any:
    from wiki_memory.consolidate.llm import llm_config  # deferred: the LLM client only when one is configured

    if llm is False:
        return None
    try:
        config = llm_config(load_settings())
    except WikiMemoryError as e:
        if llm:
            raise
        log(f"LLM consolidation is misconfigured ({e}); writing extractive pages")
        return None
    if llm is True and config is None:
        raise WikiMemoryError("--llm needs a provider: set [consolidate] provider and model in config.toml")
    return config


def consolidate_session(
    project: Project,
    session_id: str,
    *,
    store: StoreOpener,
    index: IndexOpener | None = None,
    llm: bool | None = None,
    force: bool = False,
    wait: bool = True,
) -> Outcome:
    """Consolidate one session of the project (see the module docstring). `store()` gives
    the project's store (creating the wiki on first call: a session with nothing to
    consolidate never creates one); `index()` its search index, if any."""
    path = journal.journal_file(project.journal_dir, session_id)
    if not path.exists():
        raise NotFoundError(f"no journal for session {session_id} in {project.journal_dir}")
    return _consolidate_journal(project, path, store, index, llm=llm, force=force, wait=wait)


def _consolidate_journal(
    project: Project,
    path: Path,
    store: StoreOpener,
    index: IndexOpener | None,
    *,
    llm: bool | None,
    force: bool,
    wait: bool,
) -> Outcome:
    with _SessionLock(state_dir(project) / (path.stem + ".lock"), wait) as held:
        if not held:
            return Outcome(path.stem, "busy", message="another process is consolidating this session")
        st = path.stat()
        state = read_state(project, path)
        if state and state.get("size") == st.st_size and not force:
            return Outcome(
                str(state.get("session_id") or path.stem),
                "already",
                state.get("commit"),
                tuple(state.get("pages") or ()),
                state.get("handoff"),
                str(state.get("mode") or ""),
                "already consolidated as the journal stands",
            )
        session = load_session(path)
        from wiki_memory.consolidate.repostate import (  # deferred: git and subprocess: not for the hook path
            changed_since_start,
            ignored_changes,
        )

        compared = changed_since_start(project, session.session_id, time_key(session.end))
        session.repo_ignored = ignored_changes(project, session)
        if compared is not None and project.root is not None:
            changed, still_dirty = compared
            session.repo_changed = tuple(os.path.join(str(project.root), p) for p in changed)
            if still_dirty is not None:
                session.repo_uncommitted = tuple(os.path.join(str(project.root), p) for p in still_dirty)
        summary = summarize(session)
        base = {
            "session_id": session.session_id,
            "agent": session.agent,
            "journal": path.name,
            "size": st.st_size,
            "time": iso(time.time()),
        }
        if not summary.substantive:
            _write_state(project, path, {**base, "pages": [], "status": "empty"}, st.st_mtime)
            log(f"session {session.session_id}: nothing substantive (no prompt, no command or edit); no pages")
            return Outcome(session.session_id, "empty", message="nothing substantive: no pages written")
        outcome = _commit_pages(project, summary, store(), index() if index else None, _worded(summary, llm))
        _write_state(
            project,
            path,
            {**base, "pages": list(outcome.pages), "handoff": outcome.handoff, "commit": outcome.commit,
             "mode": outcome.mode, "status": outcome.status},
            st.st_mtime,
        )  # fmt: skip
        return replace(outcome, summary=summary)


def _worded(summary: Summary, llm: bool | None) -> tuple[Any, str]:
    """(the LLM's wording or None, the mode that says which) for a session's pages."""
    config = _use_llm(llm)
    if config is None:
        return None, "extractive"
    from wiki_memory.consolidate.llm import LLMError  # deferred: the LLM client only when one is configured
    from wiki_memory.consolidate.llm import (  # deferred: the LLM client only when one is configured
        consolidate as llm_consolidate,
    )

    try:
        return llm_consolidate(config, summary), f"llm:{config.label}"
    except LLMError as e:
        log(
            f"session {summary.session.session_id}: LLM consolidation with {config.label} failed ({e}); "
            "wrote the extractive pages instead"
        )
        return None, "extractive (llm failed)"


def _commit_pages(project: Project, summary: Summary, store: Any, index: Any, worded: tuple[Any, str]) -> Outcome:
    """Write a session's pages in one commit and refresh the SessionStart context."""

    session = summary.session
    result, mode = worded
    session.page_key = unique_key(store, session)
    pages = build_pages(summary, result, mode=mode)
    # Proposed pages never overwrite memory that exists (a person's or an earlier session's).
    pages = pages[:2] + [p for p in pages[2:] if not store.exists(p.path)]
    results = store.write_many(
        pages,
        _author(session.agent),
        session_id=session.session_id,
        agent=session.agent,
        message=f"consolidate: {session.agent} session {session.short_id}",
        owns=OWNED_KEYS,
    )
    commit = next((r.commit for r in results if r.commit), None)
    from wiki_memory.consolidate import context_build  # deferred: it reads pages (PyYAML); SessionStart loads run.py

    context_build.refresh(project, store, index)
    paths = tuple(r.path for r in results)
    log(
        f"session {session.session_id}: {'committed ' + commit[:8] if commit else 'unchanged'} "
        f"({mode}): {', '.join(paths)}"
    )
    return Outcome(session.session_id, "committed" if commit else "unchanged", commit, paths, paths[1], mode)


def _author(agent: str) -> Any:
    from wiki_memory.store import Author  # deferred: the store loads dulwich

    return Author.agent(agent or "wiki-memory")


def consolidate_pending(
    project: Project,
    *,
    store: StoreOpener,
    index: IndexOpener | None = None,
    settle: float | None = None,
    llm: bool | None = None,
    exclude: Iterable[str] = (),
) -> list[Outcome]:
    """Consolidate every journal left unconsolidated (a killed process, a crash), then
    rebuild the SessionStart context if the wiki moved without a consolidation."""

    if settle is None:
        settle = settle_seconds()
    outcomes = []
    for path in pending_journals(project, settle=settle, exclude=tuple(exclude)):
        try:
            outcomes.append(_consolidate_journal(project, path, store, index, llm=llm, force=False, wait=False))
        except WikiMemoryError as e:
            log(f"pending {path.name}: {e}")
            outcomes.append(Outcome(path.stem, "error", message=str(e)))
    # The wiki moved without a consolidation (a hand edit, an MCP write, a pull): the
    # SessionStart context is rebuilt here, in the background, not on the hook path.
    if context.is_stale(project, context.load(project)):
        from wiki_memory.consolidate import (
            context_build,  # deferred: it reads pages (PyYAML); SessionStart loads run.py
        )

        context_build.refresh(project, store(), index() if index else None)
    return outcomes
