"""What a page is, beside how well it matches: the priors a search applies to the fused
scores before it keeps the best pages. A superseded or archived page ranks below active ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from wiki_memory.index.db import Database
from wiki_memory.index.ranking import Candidate, Fused
from wiki_memory.index.tuning import Tuning

INACTIVE = ("superseded", "archived")


class Priors:
    """The page priors of one index."""

    def __init__(self, db: Database, tuning: Tuning):
        self.db = db
        self.tuning = tuning

    def top(self, fused: Fused, k: int) -> list[Candidate]:
        """The `k` best pages of `fused`, best first (ties by path), superseded and archived
        pages demoted by Tuning.inactive_factor."""
        if not fused.pages:
            return []
        meta = self.page_kinds([c[1] for c in fused.pages])  # the demotion can reorder them all
        factor = self.tuning.inactive_factor
        scored = [
            (score * factor if meta.get(path, ("", "active"))[1] in INACTIVE else score, path, by)
            for score, path, by in fused.pages
        ]
        scored.sort(key=lambda c: (-c[0], c[1]))
        return scored[:k]

    def page_kinds(self, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{path: (type, status)} of those of `paths` that are pages."""
        rows = self.db.conn.execute(
            "SELECT path, type, status FROM pages WHERE path IN (SELECT value FROM json_each(?))", (json.dumps(paths),)
        )
        return {path: (kind, status or "active") for path, kind, status in rows}
