"""Search, the one memory operation a cold front end may need without the rest of the
memory layer: it imports neither the git store nor numpy, and asks the warm helper (which
holds the model and the vectors) for a search by meaning before loading the model here.

`Searching.at(dir).search(...)` is what `wiki-memory search` runs; `Memory` has it too (a
part of it, given the memory's context and team tier).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from wiki_memory.config import home, load_settings
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.records import SearchReport
from wiki_memory.memory.rules import InputError, check_query
from wiki_memory.memory.team import Teams
from wiki_memory.pages import HIDDEN, usage
from wiki_memory.recall import tier

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from wiki_memory.config import Project
    from wiki_memory.index import SearchResult

# Seconds a search waits for the helper's answer before searching here: a helper busy with
# a slice of embedding (half a second at most) still answers first.
HELPER_TIMEOUT = 3.0


class Searching:
    """Search (see the module)."""

    def __init__(self, context: MemoryContext, teams: Teams) -> None:
        self.context = context
        self.project = context.project
        self.teams = teams

    @classmethod
    def of(cls, project: Project) -> Searching:
        """Search alone, for the project (its team tier searched the same way)."""
        context = MemoryContext(project)
        return cls(context, Teams(context, cls.of))

    @classmethod
    def at(cls, directory: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Searching:
        """Search alone, for the project of `directory` (default: the working directory)."""
        return cls.of(MemoryContext.at(directory, env).project)

    @property
    def exists(self) -> bool:
        return self.context.exists

    @property
    def wiki(self) -> Path:
        return self.context.wiki

    def close(self) -> None:
        self.teams.close()
        self.context.close()

    def search(
        self,
        query: str,
        k: int = 8,
        mode: str = "hybrid",
        type: str | Sequence[str] | None = None,
        tag: str | Sequence[str] | None = None,
        status: str | Sequence[str] | None = None,
        since: str | None = None,
        max_chars: int | None = None,
    ) -> SearchReport:
        """The `k` best pages for `query` by words and meaning, each with its best passage.

        Wrong, superseded and archived pages are left out unless `status` asks for them
        (`status="any"`: every status); a result whose anchored code drifted carries a note."""

        query = check_query(query)
        statuses = [status] if isinstance(status, str) else list(status or [])
        not_status = sorted(HIDDEN) if not statuses else None
        if "any" in statuses:
            statuses, not_status = [], None
        if k < 1:
            raise InputError("`k` is how many pages: 1 or more")
        if max_chars is not None and max_chars < 1:
            raise InputError("`max_chars` is a budget of characters: 1 or more")
        joined = self.teams.joined
        again = {"mode": mode, "type": type, "tag": tag, "status": status, "since": since, "max_chars": max_chars}
        exists = self.context.exists
        if not exists and not joined:
            return SearchReport(query, [], "this project has no memory yet")
        asked: dict[str, Any] = {
            "k": k,
            "mode": mode,
            "type": type,
            "tag": tag,
            "status": statuses or None,
            "since": since,
            "max_chars": max_chars,
            "not_status": not_status,
        }
        if not exists:
            return self._with_team(SearchReport(query, []), k, again)
        note = None
        warm = self._warm_search(query, asked) if mode != "fts" else None
        if warm is not None:
            results, anchors = warm
        else:
            index = self.context.require_index()
            results = index.search(query, **asked)
            anchors = None
            if index.embedder.error and mode != "fts":
                note = f"searched by words only: no embedding model ({index.embedder.error[:160]})"
            elif index.reranker.error:
                note = f"in the fused order: the reranker failed ({index.reranker.error[:160]})"
        usage.record(self.project, "found", [r.path for r in results])
        report = SearchReport(query, results, note, self.drift_notes([r.path for r in results], anchors))
        return self._with_team(report, k, again) if joined else report

    def _with_team(self, report: SearchReport, k: int, again: dict[str, Any]) -> SearchReport:
        """The personal results and the team tier's (`team:<path>`, with author and
        review), ranked together by score (both fuse ranks the same way), `k` in all."""
        team = self.teams.team()
        found = team.search(report.query, k, **again)
        known = tier.read(team.project, [r.path for r in found.results])
        shared = []
        for r in found.results:
            prov = known.get(r.path)
            shared.append(
                replace(
                    r,
                    path=tier.named(r.path),
                    tier="team",
                    author=prov.author if prov else None,
                    reviewed=prov.reviewed if prov else None,
                )
            )
        results = sorted([*report.results, *shared], key=lambda r: -r.score)[:k]
        drift = {**report.drift, **{tier.named(p): n for p, n in found.drift.items()}}
        return SearchReport(report.query, results, report.note or found.note, drift)

    def _warm_search(self, query: str, asked: dict[str, Any]) -> tuple[list[SearchResult], dict[str, str]] | None:
        """The results of the warm helper (the same `Index.search`, with the model and the
        vectors already in memory) and the results' anchors (for their drift notes), or
        None: no helper, another model, an error. A search without a helper starts one for
        the next (unless recall by meaning is off)."""
        loaded = self.context.open_index
        if loaded is not None and loaded.embedder.loaded:
            return None  # the model is loaded here already (a long-lived process: MCP, viewer)
        from wiki_memory.recall import meaning  # deferred: not on the path of a cold `wiki-memory search` (benchmarked)
        from wiki_memory.recall import (
            settings as recall_settings,
        )  # deferred: not on the path of a cold `wiki-memory search` (benchmarked)

        try:
            if not recall_settings.load().meaning:
                return None
            from wiki_memory.index.embed import Embedder  # deferred: the index, opened on first use

            model = Embedder(settings=load_settings()).name
        except Exception:  # noqa: BLE001 - a broken config.toml: the search here says so
            return None
        where = str(home())
        request = {"op": "search", "project": self.project.fields(), "model": model, "query": query, **asked}
        answer = meaning.ask(where, request, timeout=HELPER_TIMEOUT)
        if answer is None:
            if not os.path.exists(meaning.socket_path()):
                meaning.ensure_started(where, preload=str(self.project.index_path))
            return None
        from wiki_memory.index.results import SearchResult  # deferred: the index, opened on first use

        try:
            anchors = {str(k): str(v) for k, v in (answer.get("anchors") or {}).items()}
            results = [
                SearchResult(**{**r, "retrievers": tuple(r["retrievers"]), "tags": tuple(r["tags"])})
                for r in answer["results"]
            ]
            return results, anchors
        except (KeyError, TypeError, AttributeError):
            return None

    def drift_notes(self, paths: Sequence[str], anchors: dict[str, str] | None = None) -> dict[str, str]:
        """path -> "may be stale (src/x.py changed since)" for those of `paths` whose anchored
        code files changed since (from the index's anchors, or `anchors` when the warm
        helper sent them: no page is parsed, and then no index is opened here)."""
        from wiki_memory.pages.drift import (
            drift_note,
            drifted,
        )  # deferred: not on the path of a cold `wiki-memory search` (benchmarked)

        if self.project.root is None or not paths:
            return {}
        if anchors is None:
            index = self.context.index
            if index is None:
                return {}
            anchors = index.anchors_of(list(paths))
        notes: dict[str, str] = {}
        for path, anchors_json in anchors.items():
            note = drift_note(drifted(self.project.root, anchors_json))
            if note:
                notes[path] = note
        return notes
