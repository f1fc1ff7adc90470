"""What search and sync hand back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

Progress = Callable[[str, int, int], None]  # (stage, done, total) of a long sync


@dataclass(frozen=True)
class PageMeta:
    """A page's front matter as the index holds it."""

    path: str
    id: str | None
    title: str
    type: str
    status: str
    tags: tuple[str, ...]
    created: str | None
    updated: str | None


@dataclass(frozen=True)
class SearchResult:
    """One page found by a search, with the passage that matched best."""

    path: str
    title: str
    type: str
    heading: str  # the heading above the best passage ("" before any heading)
    snippet: str  # the best passage (with its neighbours when they help), cut to the budget
    score: float  # higher is better; comparable within one search only
    retrievers: tuple[str, ...]  # which rankings found it: "fts", "vector"
    tags: tuple[str, ...] = ()
    status: str = "active"
    updated: str | None = None
    created: str | None = None
    id: str | None = None
    chunk: int = 0  # the ordinal of the best chunk in the page
    superseded_by: str | None = None  # the page that replaced this one (a superseded page's)
    # How close the page is to the query, on scales that mean the same in every search (for a
    # relevance floor): the cosine similarity of its best chunk (None: meaning not searched),
    # and the share of the query's words its best word match holds (None: words not
    # searched; 0.0: the word ranking did not find it).
    similarity: float | None = None
    coverage: float | None = None
    # With a reranker: its score of the page's passage against the query, and where the fused
    # order had put the page (1 = first); None: not reranked (off, failed, or past its top).
    rerank: float | None = None
    fused_rank: int | None = None
    # The tier the page is on ("personal", or "team": its path is then `team:<path>`), and
    # for a team page who wrote it and whether someone else merged it (`recall.tier`).
    tier: str = "personal"
    author: str | None = None
    reviewed: bool | None = None

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["retrievers"] = list(self.retrievers)
        data["tags"] = list(self.tags)
        data["score"] = round(self.score, 6)
        for key in ("similarity", "coverage", "rerank"):
            value = data[key]
            data[key] = None if value is None else round(float(value), 4)
        return data


@dataclass
class SyncStats:
    """What a sync did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0  # chunks embedded by this sync
    pending: int = 0  # chunks still without a vector (no model, or left for later)
    errors: list[str] = field(default_factory=list)  # pages indexed as plain text (broken front matter)
    cut: list[str] = field(default_factory=list)  # pages so large that only their head is indexed
    seconds: float = 0.0
    head: str | None = None
    rebuilt: str | None = None  # why the index file was rebuilt, if it was

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        return data
