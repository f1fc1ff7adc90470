"""Sessions and their handoffs: what the next session is handed, handoffs written on
purpose, consolidating finished sessions, and keeping the search index caught up."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.records import Actor, Written
from wiki_memory.memory.rules import InputError, Scrubber, utf8
from wiki_memory.memory.sharing import Sharing

if TYPE_CHECKING:
    from wiki_memory.consolidate.explain import Explanation
    from wiki_memory.consolidate.handoff import HandoffView
    from wiki_memory.consolidate.run import Outcome
    from wiki_memory.index import SyncStats

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class Sessions(Sharing):
    def handoff(self, session_id: str | None = None, *, refresh: bool = True) -> HandoffView | None:
        """Exactly what a session starting now would be handed (`session_id`: as that
        session would see it, its own handoff left out); None when there is nothing.
        A context left stale by a write made elsewhere is rebuilt first, unless `refresh`
        is False (then the view says it is `stale`: a rebuild costs ~1 s at 10,000 pages)."""
        from wiki_memory.consolidate import context, context_build
        from wiki_memory.consolidate.handoff import handoff_for_next_session

        if refresh and self.exists and context.is_stale(self.project, context.load(self.project)):
            context_build.refresh(self.project, self.store(), self.index)
        return handoff_for_next_session(self.project, session_id=session_id)

    def handoff_explain(self, session_id: str | None = None) -> Explanation:
        """The handoffs a session starting now is handed (as `handoff`), item by item, each
        with the recorded events it came from (journal lines, transcript records, call ids);
        the items left out because a later session finished them; the sessions that did no
        work (named in a line only)."""
        from wiki_memory.capture.journal import journal_file
        from wiki_memory.consolidate import context
        from wiki_memory.consolidate.explain import Explanation, evidence_meta, explain_pages
        from wiki_memory.consolidate.extract import summarize
        from wiki_memory.consolidate.render import content_from_summary, handoff_body, handoff_page_path
        from wiki_memory.consolidate.session_sources import load_session

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
        store = self.store() if self.exists else None
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
        from wiki_memory.consolidate.handoff import write_explicit_handoff

        if not (summary or "").strip():
            raise InputError("a handoff needs a summary (what was being done and where it stands)")
        utf8("summary", summary)
        for item in (*done, *failed, *next_steps, *open_questions, *files):
            utf8("item", str(item))
        scrub = Scrubber()
        summary = scrub(summary)
        done, failed, next_steps = scrub.all(done), scrub.all(failed), scrub.all(next_steps)
        open_questions, files = scrub.all(open_questions), scrub.all(files)
        store = self.store(create=True)
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
                index=self.index,
                author=actor.person,
            )
        if result.commit:
            self.auto_sync()
        return Written.of(result, "handoff_write", redacted=scrub.found)

    def consolidate(self, session_id: str, *, llm: bool | None = None, force: bool = False) -> Outcome:
        """Turn a finished session's journal (and transcript) into its session and handoff
        pages (one commit); again changes nothing until the journal grows."""
        from wiki_memory.consolidate.run import consolidate_session

        outcome = consolidate_session(
            self.project, session_id, store=self._writable, index=lambda: self.index, llm=llm, force=force
        )
        distilled = self._after_consolidation([outcome], llm)
        if outcome.commit or distilled:
            self.auto_sync()
            self._refresh_exports()
        return outcome

    def consolidate_pending(
        self, *, settle: float | None = None, llm: bool | None = None, exclude: Iterable[str] = ()
    ) -> list[Outcome]:
        """Consolidate every journal left unconsolidated (a killed process, a crash)."""
        from wiki_memory.consolidate.run import consolidate_pending

        outcomes = consolidate_pending(
            self.project, store=self._writable, index=lambda: self.index, settle=settle, llm=llm, exclude=exclude
        )
        distilled = self._after_consolidation(outcomes, llm)
        if any(o.commit for o in outcomes) or distilled:
            self.auto_sync()
            self._refresh_exports()
        return outcomes

    def _after_consolidation(self, outcomes: Sequence[Outcome], llm: bool | None) -> bool:
        """What runs on the sessions just consolidated (the memory's distillation); True when
        it committed something."""
        return False

    def _refresh_exports(self) -> None:
        """The `[export] targets` blocks brought up to date (`memory.instructions`)."""
        from wiki_memory.memory.instructions import refresh_exports

        refresh_exports(self)  # type: ignore[arg-type]  # a Sessions is the Memory it is part of

    def _writable(self) -> Any:
        return self.store(create=True)

    def auto_sync(self) -> None:
        """Sync with the remote after a consolidation when `[sync] auto = true`; never
        raises (failures go to logs/sync.log and are retried next time)."""
        from wiki_memory.capture.redact import find
        from wiki_memory.sync import maybe_auto_sync

        try:
            self.finish_interrupted_forget()
        except Exception:  # noqa: BLE001 - never fails the caller; the sync below refuses and logs it
            pass
        self._after_sync(maybe_auto_sync(self.project, self.store(), self.index, find=find))

    def reindex(self, *, full: bool = False, embed: bool = True, progress: Progress | None = None) -> SyncStats:
        """Bring the search index up to date with the wiki (only changed pages are redone;
        `full`: rebuild it), embedding on every core: someone waits for it."""
        index = self.require_index()
        index.embedder.for_bulk()
        stats = index.sync(self.store(), progress=progress, embed=embed, full=full)
        from wiki_memory.recall import moment_table

        moment_table.table(self.project)  # the shell hooks' table, so that no command pays for it
        return stats

    def warm(self) -> None:
        """Open what the first call will need (the MCP server, while its client connects):
        the store, the index, and the index brought up to the wiki's HEAD (words only)."""
        if not self.exists:
            return
        store = self.store()
        index = self.index
        if index is not None and not index.in_step():
            index.sync(store, embed=False)

    def may_lack_vectors(self) -> bool:
        """Some chunks may still lack their vector, and the model is loaded in this process."""
        if not self.index_is_open:
            return False
        index = self.index
        return index is not None and index.embedder.loaded and index.may_lack_vectors()

    def embed_some(self, seconds: float) -> bool:
        """Embed chunks still without a vector for about `seconds` (the MCP server, between
        calls); True while some are left."""
        index = self.index if self.index_is_open else None
        return index is not None and index.embed_some(seconds)
