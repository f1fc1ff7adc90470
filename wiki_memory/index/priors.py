"""What a page is, beside how well it matches: the priors a search applies to the fused
scores before it keeps the best pages.

A how, why or what-to-do question wants the decision, gotcha or procedure, not the session
log that ran into the same words; a question about what happened (`Query.history`) wants the
log. A superseded or archived page ranks below active ones, and a superseded page never
above the page that replaced it (its `superseded_by`, which a result names).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence

from wiki_memory.index.db import Database, Kept
from wiki_memory.index.ranking import Candidate, Fused
from wiki_memory.index.tuning import Tuning

INACTIVE = ("superseded", "archived")
LOG_TYPES = ("session", "handoff")  # what happened in a session, not what to do


class Priors:
    """The page priors of one index, with the superseded pages' replacements kept until the
    index changes."""

    def __init__(self, db: Database, tuning: Tuning):
        self.db = db
        self.tuning = tuning
        self._replaced: Kept[dict[str, str]] = Kept(db, survives_embedding=True)

    def top(self, fused: Fused, k: int, history: bool = False) -> list[Candidate]:
        """The `k` best pages of `fused`, best first (ties by path), after the page priors:
        session and handoff logs lose Tuning.log_penalty unless the query asks what happened
        (`history`), superseded and archived pages Tuning.inactive_penalty, and a superseded
        page never ranks above its replacement.

        Why the logs: a session that ran into a problem uses the same words as the gotcha it
        left, and the gotcha is what a how/why/what-to-do question needs (search_eval tune:
        a log ranked above the durable page for 41% of such queries).
        """
        ordered = sorted(fused.pages, key=lambda c: (-c[0], c[1]))
        found = {c[1]: c for c in ordered}
        adjusted: dict[str, float] = {}
        replaced: dict[str, str] = {}
        # A prior only lowers a score: pages are read best first, a batch at a time, until
        # the k-th score after the priors is above the best score not read. Why: reading the
        # type and status of every candidate (hundreds in a big wiki) cost every search more
        # than the ranking itself.
        read, batch = 0, max(2 * k, 16)
        while read < len(ordered):
            part = [c[1] for c in ordered[read : read + batch]]
            read, batch = read + len(part), batch * 2
            self._adjust(part, found, adjusted, replaced, history)
            if read < len(ordered) and len(adjusted) >= k:
                kth = heapq.nlargest(k, adjusted.values())[-1]
                if kth > ordered[read][0]:
                    break
        scored = [(score, path, found[path][2]) for path, score in adjusted.items()]
        scored.sort(key=lambda c: (-c[0], c[1]))
        return scored[:k]

    def _adjust(
        self,
        paths: list[str],
        found: dict[str, Candidate],
        adjusted: dict[str, float],
        replaced: dict[str, str],
        history: bool,
    ) -> None:
        """Score `paths` after the priors into `adjusted` (with the replacements, found by
        the search, of those superseded), then keep each superseded page below its
        replacement in `replaced`."""
        t = self.tuning
        while paths:
            kinds = self.page_kinds(paths)
            more = []
            for path in paths:
                kind, status = kinds.get(path, ("", "active"))
                score = found[path][0]
                if kind in LOG_TYPES and not history:
                    score -= t.log_penalty
                if status in INACTIVE:
                    score -= t.inactive_penalty
                    successor = self.replacements().get(path)
                    if successor in found:
                        replaced[path] = successor
                        if successor not in adjusted and successor not in paths:
                            more.append(successor)  # scored however low: its page must stay below it
                adjusted[path] = score
            paths = more
        for _ in range(len(replaced)):  # chains (a replacement itself replaced) settle in as many passes
            settled = True
            for path, successor in replaced.items():
                if adjusted[path] >= adjusted[successor]:
                    adjusted[path] = adjusted[successor] - 1e-9
                    settled = False
            if settled:
                break

    def page_kinds(self, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{path: (type, status)} of those of `paths` that are pages."""
        # json_each first, then each page by its key (`path IN (SELECT ...)` scanned the pages).
        rows = self.db.conn.execute(
            "SELECT p.path, p.type, p.status FROM json_each(?) j JOIN pages p ON p.path = j.value", (json.dumps(paths),)
        )
        return {path: (kind, status or "active") for path, kind, status in rows}

    def replacements(self) -> dict[str, str]:
        """{superseded page: the page that replaced it} for every superseded page whose
        `superseded_by` names a page of the index (by path, or by title), kept until the
        index changes."""
        if self._replaced.valid():
            return self._replaced.value
        found: dict[str, str] = {}
        rows = self.db.conn.execute(
            "SELECT path, superseded_by FROM pages WHERE status = 'superseded' AND superseded_by IS NOT NULL"
        ).fetchall()
        for path, named in rows:
            successor = self.page_named(named)
            if successor is not None and successor != path:
                found[path] = successor
        return self._replaced.put(found)

    def page_named(self, name: str) -> str | None:
        """The page a front-matter reference names: a path (with or without `.md`), a title,
        or either as a `[[link]]`."""
        name = name.strip()
        if name.startswith("[[") and name.endswith("]]"):
            name = name[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
        c = self.db.conn
        for candidate in (name, f"{name}.md"):
            if c.execute("SELECT 1 FROM pages WHERE path = ?", (candidate,)).fetchone():
                return candidate
        row = c.execute(
            "SELECT path FROM pages WHERE title = ? COLLATE NOCASE ORDER BY path LIMIT 1", (name,)
        ).fetchone()
        return row[0] if row else None
