"""Sessions and their handoffs: what the next session is handed, handoffs written on
purpose, and consolidating finished sessions, each consolidation followed, in this order,
by distilling the sessions, the automatic sync and the refresh of exported instructions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from wiki_memory.capture.journal import journal_file
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.distilling import Distilling
from wiki_memory.memory.instructions_export import refresh_exports
from wiki_memory.memory.records import Actor, Written
from wiki_memory.memory.rules import InputError, Scrubber, utf8
from wiki_memory.memory.syncing import Syncing

if TYPE_CHECKING:
    from wiki_memory.consolidate.explain import Explanation
    from wiki_memory.consolidate.handoff import HandoffView
    from wiki_memory.consolidate.run import Outcome
    from wiki_memory.store import Store


class Sessions:
    """Handoffs and consolidation (see the module docstring)."""

    def __init__(self, context: MemoryContext, distilling: Distilling, syncing: Syncing) -> None:
        self.context = context
        self.project = context.project
        self.distilling = distilling
        self.syncing = syncing

    def handoff(self, session_id: str | None = None, *, refresh: bool = True) -> HandoffView | None:
        """Exactly what a session starting now would be handed (`session_id`: as that
        session would see it, its own handoff left out); None when there is nothing.
        A context left stale by a write made elsewhere is rebuilt first, unless `refresh`
        is False (then the view says it is `stale`: a rebuild costs ~1 s at 10,000 pages)."""
        from wiki_memory.consolidate import (  # deferred: the consolidator, not loaded with Memory
            context,
            context_build,
        )
        from wiki_memory.consolidate.handoff import (
            handoff_for_next_session,  # deferred: the consolidator, not loaded with Memory
        )

        if refresh and self.context.exists and context.is_stale(self.project, context.load(self.project)):
            context_build.refresh(self.project, self.context.store(), self.context.index)
        return handoff_for_next_session(self.project, session_id=session_id)

    def handoff_explain(self, session_id: str | None = None) -> Explanation:
        """The handoffs a session starting now is handed (as `handoff`), item by item, each
        with the recorded events it came from (journal lines, transcript records, call ids);
        the items left out because a later session finished them; the sessions that did no
        work (named in a line only)."""
        from wiki_memory.consolidate import context  # deferred: the consolidator, not loaded with Memory
        from wiki_memory.consolidate.explain import (  # deferred: the consolidator, not loaded with Memory
            Explanation,
            evidence_meta,
            explain_pages,
        )
        from wiki_memory.consolidate.extract import (
            summarize,  # deferred: the consolidator, not loaded with Memory
        )
        from wiki_memory.consolidate.render import (  # deferred: the consolidator, not loaded with Memory
            content_from_summary,
            handoff_body,
            handoff_page_path,
        )
        from wiki_memory.consolidate.session_sources import (
            load_session,  # deferred: the consolidator, not loaded with Memory
        )

        view = self.handoff(session_id)
        if view is None:
            return Explanation(())
        entries = {str(h.get("path")): h for h in (context.load(self.project) or {}).get("handoffs") or []}
        pages: list[tuple[str, Any, str]] = []
        # Sessions summarised on the spot (not consolidated yet): summarised again here.
        for pending in view.pending:
            path = journal_file(self.project.journal_dir, pending)
            if not path.exists():
                continue
            summary = summarize(load_session(path))
            content = content_from_summary(summary)
            meta = {
                "agent": summary.session.agent,
                "session_id": summary.session.session_id,
                "evidence": evidence_meta(summary, content.goal),
            }
            pages.append((handoff_page_path(summary.session), meta, handoff_body(content, None)))
        inline = {p for p, _, _ in pages}
        store = self.context.store() if self.context.exists else None
        for handed in view.handoffs:
            if handed in inline or store is None or not store.exists(handed):
                continue
            page = store.read(handed)
            pages.append((handed, page.meta, page.body))
        order = {p: n for n, p in enumerate(view.handoffs)}
        pages.sort(key=lambda p: order.get(p[0], len(order)))
        closed = {p: list(e.get("closed") or []) for p, e in entries.items()}
        quiet = [p for p, e in entries.items() if e.get("work") is False]

        def journal_of(sid: str) -> str | None:
            path = journal_file(self.project.journal_dir, sid)
            return str(path) if path.exists() else None

        return Explanation(tuple(explain_pages(pages, closed, quiet, journal_of)))

    def handoff_write(
        self,
        summary: str,
        done: Sequence[str] = (),
        failed: Sequence[str] = (),
        next_steps: Sequence[str] = (),
        open_questions: Sequence[str] = (),
        files: Sequence[str] = (),
        *,
        actor: Actor = Actor(),  # noqa: B008 - a frozen dataclass: one shared default is safe
    ) -> Written:
        """A handoff written on purpose (one commit); it goes before the automatic one of
        the same session or moment."""
        from wiki_memory.consolidate.handoff import (
            write_explicit_handoff,  # deferred: the consolidator, not loaded with Memory
        )

        if not (summary or "").strip():
            raise InputError("a handoff needs a summary (what was being done and where it stands)")
        utf8("summary", summary)
        for item in (*done, *failed, *next_steps, *open_questions, *files):
            utf8("item", str(item))
        scrub = Scrubber()
        summary = scrub(summary)
        done, failed, next_steps = scrub.all(done), scrub.all(failed), scrub.all(next_steps)
        open_questions, files = scrub.all(open_questions), scrub.all(files)
        store = self.context.store(create=True)
        with store.lock:
            result = write_explicit_handoff(
                self.project,
                store,
                summary=summary,
                done=tuple(done),
                failed=tuple(failed),
                next_steps=tuple(next_steps),
                open_questions=tuple(open_questions),
                files=tuple(files),
                agent=actor.agent,
                session_id=actor.session_id,
                index=self.context.index,
                author=actor.person,
            )
        if result.commit:
            self.syncing.auto_sync()
        return Written.of(result, "handoff_write", redacted=scrub.found)

    def consolidate(self, session_id: str, *, llm: bool | None = None, force: bool = False) -> Outcome:
        """Turn a finished session's journal (and transcript) into its session and handoff
        pages (one commit); again changes nothing until the journal grows."""
        from wiki_memory.consolidate.run import (
            consolidate_session,  # deferred: the consolidator, not loaded with Memory
        )

        outcome = consolidate_session(
            self.project, session_id, store=self._writable, index=lambda: self.context.index, llm=llm, force=force
        )
        self._after_consolidation([outcome], llm)
        return outcome

    def consolidate_pending(
        self, *, settle: float | None = None, llm: bool | None = None, exclude: Iterable[str] = ()
    ) -> list[Outcome]:
        """Consolidate every journal left unconsolidated (a killed process, a crash)."""
        from wiki_memory.consolidate.run import (
            consolidate_pending,  # deferred: the consolidator, not loaded with Memory
        )

        outcomes = consolidate_pending(
            self.project,
            store=self._writable,
            index=lambda: self.context.index,
            settle=settle,
            llm=llm,
            exclude=exclude,
        )
        self._after_consolidation(outcomes, llm)
        return outcomes

    def _after_consolidation(self, outcomes: Sequence[Outcome], llm: bool | None) -> None:
        """What follows every consolidation, in order: the sessions distilled into durable
        pages, then, when either committed something, the automatic sync and the refresh
        of the `[export] targets` blocks (`memory.instructions`)."""
        distilled = self.distilling.distill_sessions(outcomes, llm)
        if any(o.commit for o in outcomes) or distilled:
            self.syncing.auto_sync()
            refresh_exports(self.context)

    def _writable(self) -> Store:
        return self.context.store(create=True)
