"""Writing what a session distilled: before any new page, the page it duplicates is looked
for and updated instead; the commit says which, and why.

A candidate (see `consolidate.distill`) goes to:
1. the page of the same key: a gotcha of the same error signature, the procedure of the
   same purpose, the statement of the same words;
2. else a page of its type close enough in words and meaning (`distill.dedup`; the model is
   loaded only when words alone cannot decide);
3. else a new page, unless the candidate may only update (a failure alone, a known error
   hit again). A trap-shaped failure hit again whose error the session page of another
   session records too makes a gotcha page of its own, with every occurrence.

A decision that turns down everything an earlier distilled decision chose ("Postgres, not
SQLite" after "go with SQLite") supersedes it, in a commit of its own quoting the user.
All distilled pages of a session land in one commit by the session's agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiki_memory.config import load_settings
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.reading import existing_page
from wiki_memory.memory.records import Actor
from wiki_memory.memory.status_changes import StatusChanges
from wiki_memory.memory.status_review import FLAGS_FILE, append_flags
from wiki_memory.pages import HIDDEN, Page, path_for
from wiki_memory.pages.drift import record

if TYPE_CHECKING:
    from wiki_memory.consolidate.distill import Candidate
    from wiki_memory.consolidate.extract import Summary
    from wiki_memory.consolidate.run import Outcome

MAX_NEAR = 5  # nearest pages of the type weighed per candidate
MAX_RECUR_LOOKUPS = 8  # failures per session looked up in other sessions' pages


@dataclass(frozen=True)
class DistilledPage:
    path: str
    action: str  # created | updated | unchanged
    why: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "action": self.action, "why": self.why}


@dataclass(frozen=True)
class DistillReport:
    """What distilling a session wrote: pages with why, supersedes, what was refused."""

    session: str
    pages: tuple[DistilledPage, ...] = ()
    commit: str | None = None
    superseded: tuple[tuple[str, str], ...] = ()
    refused: tuple[str, ...] = ()
    mode: str = "evidence"  # evidence | llm:<backend> | evidence (llm failed: ...)
    tokens: int = 0
    flags: tuple[tuple[str, ...], ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "pages": [p.as_dict() for p in self.pages],
            "commit": self.commit,
            "superseded": [list(s) for s in self.superseded],
            "refused": list(self.refused),
            "mode": self.mode,
            "tokens": self.tokens,
            "flags": [list(f) for f in self.flags],
        }


def distill_enabled() -> bool:
    """`[distill] enabled` (default true): distillation after each consolidation and import."""
    return load_settings().distill.enabled


class Distilling:
    """Distilling sessions into durable pages (see the module docstring)."""

    def __init__(self, context: MemoryContext, status: StatusChanges) -> None:
        self.context = context
        self.project = context.project
        self.status = status

    def distill_sessions(self, outcomes: Sequence[Outcome], llm: bool | None) -> bool:
        """Distil each session just consolidated (`[distill] enabled`); True when it
        committed something. Never raises (the session's pages are committed whatever
        happens here, and the log says what went wrong)."""
        from wiki_memory.consolidate.state import log  # deferred: the consolidator, not loaded with Memory

        committed = False
        if not distill_enabled():
            return False
        for outcome in outcomes:
            if outcome.summary is None:
                continue
            try:
                committed = bool(self.distill(outcome.summary, llm=llm).commit) or committed
            except Exception as e:  # noqa: BLE001 - distillation must never undo a consolidation
                log(f"session {outcome.session_id}: distillation failed ({type(e).__name__}: {e})")
        return committed

    def distill(self, summary: Summary, *, llm: bool | None = None) -> DistillReport:
        """Distil a summarised session into pages (see the module docstring)."""
        from wiki_memory.consolidate.distill import (
            distill as find,  # deferred: the consolidator, not loaded with Memory
        )
        from wiki_memory.consolidate.distill.llm import (
            distill_with_llm,  # deferred: the consolidator, not loaded with Memory
        )
        from wiki_memory.consolidate.state import log  # deferred: the consolidator, not loaded with Memory

        session = summary.session
        root = str(self.project.root) if self.project.root else None
        found = find(summary, root)
        candidates = list(found.candidates)
        # The project's instruction file the agent was handed: its sections, as an import makes them.
        from wiki_memory.memory.instructions_given import (
            given_instructions,  # deferred: the consolidator, not loaded with Memory
        )

        candidates += given_instructions(found.evidence)
        actor = Actor(session.agent or "wiki-memory", session.session_id)
        mode, tokens, flags = "evidence", 0, []
        if llm is not False:
            nearest = self._nearest_pages(candidates, summary)
            outcome = distill_with_llm(self.project, summary, candidates, nearest, llm=llm)
            if outcome is not None:
                candidates, mode, tokens, flags = outcome.candidates, outcome.mode, outcome.tokens, outcome.flags
        if not candidates:
            return DistillReport(session.session_id, refused=found.refused, mode=mode, tokens=tokens)
        store = self.context.store(create=True)
        with store.lock:
            candidates = self._recurring(candidates, session.session_id)
            planned = self._plan(candidates)
            changed = [(page, action, why) for page, action, why in planned if action != "unchanged"]
            commit = None
            if changed:
                body = "\n".join(f"- {action} {page.path} ({why})" for page, action, why in changed)
                results = store.write_many(
                    [p for p, _, _ in changed],
                    actor.author(self.context.wiki),
                    session_id=session.session_id,
                    agent=session.agent,
                    message=f"distill: {session.agent} session {session.short_id}",
                    body=body,
                )
                commit = next((r.commit for r in results if r.commit), None)
        superseded = self._reversals([c for c in candidates if c.type == "decision"], planned, actor)
        self._flag(flags, mode)
        if commit and not superseded:
            self.status.refresh_context()
        pages = tuple(DistilledPage(p.path, a, w) for p, a, w in planned)
        log(
            f"session {session.session_id}: distilled ({mode}{f', {tokens} tokens' if tokens else ''}): "
            + (", ".join(f"{d.action} {d.path}" for d in pages) or "nothing")
        )
        flagged = tuple(paths for paths, _ in flags)
        return DistillReport(session.session_id, pages, commit, superseded, found.refused, mode, tokens, flagged)

    # Where each candidate goes ---------------------------------------------------------------

    def _plan(self, candidates: list[Candidate]) -> list[tuple[Page, str, str]]:
        """(page as it will be written, created|updated|unchanged, why) per candidate that
        has a page to go to; candidates for one page merge in turn."""
        from wiki_memory.consolidate.distill import (
            pages as render,  # deferred: the consolidator, not loaded with Memory
        )

        planned: dict[str, tuple[Page, str, str]] = {}
        for candidate in candidates:
            anchors = self._record_anchors(candidate.anchors)
            target = self._duplicate_of(candidate, planned)
            if target is not None:
                path, why = target
                if path not in planned:
                    # A person's uncommitted edit of the page first, as theirs: merged into, never over.
                    self.context.store().commit_pending(paths=[path])
                base = planned[path][0] if path in planned else self.context.store().read(path)
                page = render.merged(base, candidate, anchors)
                action = planned[path][1] if path in planned else "updated"
                if path not in planned and page == base:
                    action = "unchanged"
                planned[path] = (page, action, why if path not in planned else planned[path][2])
            elif candidate.create:
                page = render.new_page(candidate, anchors)
                self.context.store().commit_pending(paths=[page.path])
                if self.context.store().exists(page.path):
                    continue  # a page of that name says something else: never overwritten
                planned[page.path] = (page, "created", candidate.reason)
        return list(planned.values())

    def _recurring(self, candidates: list[Candidate], session_id: str) -> list[Candidate]:
        """Known failures hit again with no page: a trap-shaped one whose error the session
        pages of `RECUR_SESSIONS` sessions (this one included) record becomes a gotcha page
        of its own, with each occurrence."""
        from wiki_memory.consolidate.distill.gotchas import (  # deferred: the consolidator, not loaded with Memory
            RECUR_SESSIONS,
            promote,
        )

        out: list[Candidate] = []
        looked = 0
        for candidate in candidates:
            if candidate.kind == "gotcha-hit" and candidate.facts.get("recurs") and looked < MAX_RECUR_LOOKUPS:
                looked += 1  # (an index search each: a session of many failures stays quick)
                earlier = self._earlier_occurrences(str(candidate.key), session_id)
                if len(earlier) + 1 >= RECUR_SESSIONS:
                    candidate = promote(candidate, [*earlier, dict(candidate.facts["occurrence"])])
            out.append(candidate)
        return out

    def _earlier_occurrences(self, sig: str, session_id: str) -> list[dict[str, Any]]:
        """The other sessions whose page records a failure with this error signature."""
        from wiki_memory.consolidate.distill.signature import (
            signature,  # deferred: the consolidator, not loaded with Memory
        )
        from wiki_memory.consolidate.session import (
            short_id,  # deferred: the consolidator, not loaded with Memory
        )

        index = self.context.index
        if index is None or not sig:
            return []
        try:
            results = index.search(sig, k=MAX_NEAR * 2, mode="fts", type="session")
        except WikiMemoryError:
            return []
        found: dict[str, dict[str, Any]] = {}
        for result in results:
            page = existing_page(self.context.store(), result.path)
            other = str(page.meta.get("session_id") or "") if page is not None else ""
            if page is None or not other or other == session_id or other in found:
                continue
            if any(sig in signature(line) for line in page.body.splitlines() if len(line) < 2000):
                agent = str(page.meta.get("agent") or "")
                day = str(page.meta.get("started") or page.meta.get("created") or "")[:10]
                found[other] = {"date": day, "by": agent, "session": f"{agent}:{short_id(other)}",
                                "fixed": False, "files": []}  # fmt: skip
        return sorted(found.values(), key=lambda o: str(o["date"]))

    def _record_anchors(self, files: tuple[str, ...]) -> list[Any]:
        if not files or self.project.root is None:
            return []

        return record(self.project.root, files)

    def _duplicate_of(self, candidate: Candidate, planned: dict[str, Any]) -> tuple[str, str] | None:
        """(path, why) of the page this candidate duplicates, or None."""
        update = candidate.facts.get("update")
        if (
            candidate.kind == "proposal"
            and isinstance(update, str)
            and existing_page(self.context.store(), update) is not None
        ):
            return update, "an addition the model proposed"
        if candidate.kind == "instructions":
            return self._same_section(candidate, planned)
        same = self._same_key(candidate, planned)
        if same is not None:
            return same
        if candidate.kind in ("gotcha-hit", "procedure", "proposal", "fact"):
            # These match on their key only: a near page is not the same procedure, and the
            # model was shown the closest pages and chose a new page over an addition.
            return None
        return self._near(candidate)

    def _same_section(self, candidate: Candidate, planned: dict[str, Any]) -> tuple[str, str] | None:
        """The page already made from the same section of the same instruction file (by an
        earlier session, or by `import instructions`)."""
        store = self.context.store()
        f = candidate.facts
        names = {str(f["from"]), str(f["from"]).rsplit("/", 1)[-1]}
        options = [path_for(candidate.title, candidate.type)] + self._by_words(candidate.type, candidate.title, 3)
        for path in dict.fromkeys(options):
            page = planned[path][0] if path in planned else existing_page(store, path)
            if page is None or page.type != candidate.type or page.status in HIDDEN:
                continue
            for entry in page.meta.get("imported") or []:
                if isinstance(entry, dict) and entry.get("section") == f["section"] and entry.get("from") in names:
                    return path, "the same section of the same file"
        return None

    def _same_key(self, candidate: Candidate, planned: dict[str, Any]) -> tuple[str, str] | None:
        store = self.context.store()
        key_field = {"gotcha": "signature", "procedure": "purpose", "fact": "manifest"}.get(candidate.type, "statement")
        if candidate.type == "fact" and candidate.facts.get("environment"):
            key_field = "environment"
        key_value = candidate.facts.get(key_field) if key_field != "statement" else candidate.facts.get("statement")
        conventional = path_for(candidate.title, candidate.type)
        options = [conventional] + self._by_words(candidate.type, f"{candidate.title} {candidate.key}", 3)
        for path in dict.fromkeys(options):
            page = planned[path][0] if path in planned else existing_page(store, path)
            if page is None or page.type != candidate.type or page.status in HIDDEN:
                continue
            if key_field == "statement":
                from wiki_memory.consolidate.distill.statements import (
                    content_words,  # deferred: the consolidator, not loaded with Memory
                )

                if " ".join(content_words(str(page.meta.get("statement") or ""))) == candidate.key:
                    return path, "duplicate: the same words"
            elif str(page.meta.get(key_field) or "") == str(key_value):
                return path, f"duplicate: the same {_KEY_NAMES[key_field]}"
        return None

    def _by_words(self, page_type: str, text: str, k: int) -> list[str]:
        return list(self._titles_by_words(page_type, text, k))

    def _titles_by_words(self, page_type: str, text: str, k: int) -> dict[str, str]:
        """path -> title of the `k` pages of the type that share most words with `text`."""
        index = self.context.index
        if index is None or not text.strip():
            return {}
        try:
            results = index.search(text, k=k, mode="fts", type=page_type, not_status=sorted(HIDDEN))
        except WikiMemoryError:
            return {}
        return {r.path: r.title for r in results}

    def _near(self, candidate: Candidate) -> tuple[str, str] | None:
        """A page of the candidate's type close enough in words and meaning (`dedup`)."""
        from wiki_memory.consolidate.distill import dedup  # deferred: the consolidator, not loaded with Memory

        index = self.context.index
        titles = self._titles_by_words(candidate.type, candidate.text(), MAX_NEAR)
        if index is None or not titles:
            return None
        paths = list(titles)
        texts = {p: f"{titles[p]}\n{text}" for p, text in index.first_texts(paths).items()}
        mine = candidate.text()
        negated = list(candidate.facts.get("negated") or [])
        pairs = {p: dedup.pair(mine, texts.get(p, ""), None, negated) for p in paths}
        for path, pair in pairs.items():
            if dedup.same_page(pair):
                return path, f"duplicate: words {pair.words:.2f}"
        undecided = [p for p, pair in pairs.items() if dedup.needs_meaning(pair)]
        if not undecided or not index.embedder.available():
            return None
        vectors = index.first_vectors(undecided)
        missing = [p for p in undecided if p not in vectors]
        if missing:  # not embedded yet (written by a process without the model): embed them now
            vectors.update(zip(missing, index.embedder.embed([texts.get(p, "") for p in missing]), strict=True))
        mine_vector = index.embedder.embed_query(mine)
        for path in undecided:
            cosine = float(vectors[path] @ mine_vector)
            pair = dedup.pair(mine, texts.get(path, ""), cosine, negated)
            if dedup.same_page(pair):
                return path, f"duplicate: words {pair.words:.2f}, meaning {cosine:.2f}"
        return None

    def _nearest_pages(self, candidates: list[Candidate], summary: Summary) -> list[tuple[str, str]]:
        """(path, opening text) of the existing pages closest to the session, for an LLM."""
        index = self.context.index
        if index is None:
            return []
        query = " ".join([summary.goal[:300], *(c.title for c in candidates)])
        titles: dict[str, str] = {}
        for page_type in ("decision", "gotcha", "procedure", "preference", "fact"):
            titles |= self._titles_by_words(page_type, query, 2)
        texts = index.first_texts(list(titles))
        return [(p, f"{title}: {texts.get(p, '')}") for p, title in titles.items()]

    # Reversals and flags ----------------------------------------------------------------------

    def _reversals(
        self, decisions: list[Candidate], planned: list[tuple[Page, str, str]], actor: Actor
    ) -> tuple[tuple[str, str], ...]:
        """Earlier distilled decisions a new one turns down, superseded by it."""
        from wiki_memory.consolidate.distill import dedup  # deferred: the consolidator, not loaded with Memory

        out: list[tuple[str, str]] = []
        written = {page.meta.get("statement"): page.path for page, _, _ in planned}
        for candidate in decisions:
            negated = list(candidate.facts.get("negated") or [])
            new_path = written.get(candidate.facts.get("statement"))
            if not negated or new_path is None:
                continue
            for path in self._by_words("decision", " ".join(negated), 8):
                if path == new_path:
                    continue
                old = existing_page(self.context.store(), path)
                if old is None or old.status in HIDDEN or not old.meta.get("distilled"):
                    continue
                old_names = [str(n) for n in old.meta.get("names") or []]
                if dedup.reverses(negated, candidate.facts.get("names") or [], old_names):
                    reason = f'the user said "{candidate.facts["statement"]}" in {candidate.source}'
                    self.status.supersede(path, new_path, reason=reason, actor=actor)
                    out.append((path, new_path))
        return tuple(out)

    def _flag(self, flags: Any, mode: str) -> None:
        rows = [{"paths": list(paths), "note": note, "by": mode} for paths, note in flags]
        if rows:
            append_flags(self.project.home / FLAGS_FILE, rows)


_KEY_NAMES = {"signature": "signature", "purpose": "purpose", "manifest": "file", "environment": "page"}
