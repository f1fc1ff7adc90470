"""What the memory operations take and give back: who acts, and what came of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiki_memory.index import Link, SearchResult
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, CommitInfo, WriteResult


@dataclass(frozen=True)
class Actor:
    """Who makes a change: an agent with its session (`Agent:` and `Session-Id:` trailers,
    `claude-code:2624e4c8` in the page's sources), or, with no agent, the person (their git
    identity)."""

    agent: str | None = None
    session_id: str | None = None

    @property
    def source(self) -> str | None:
        """`claude-code:2624e4c8`: the page's `sources` entry for what this actor writes."""
        if not self.agent:
            return None
        return f"{self.agent}:{self.session_id[:8]}" if self.session_id else self.agent

    def author(self, wiki: Path) -> Author:
        from wiki_memory.store import Author

        return Author.agent(self.agent) if self.agent else Author.person(wiki)


@dataclass(frozen=True)
class Written:
    """A page written or edited: where, which commit (None when it already read so)."""

    path: str
    commit: str | None
    created: bool
    page: Page
    operation: str = "write"  # write, or the edit operation applied
    replaced: int | None = None  # how many occurrences find_replace replaced
    redacted: tuple[str, ...] = ()  # the kinds of secret taken out before the commit

    @classmethod
    def of(
        cls, result: WriteResult, operation: str = "write", replaced: int | None = None, redacted: Sequence[str] = ()
    ) -> Written:
        return cls(result.path, result.commit, result.created, result.page, operation, replaced, tuple(redacted))

    @property
    def changed(self) -> bool:
        return self.commit is not None

    @property
    def id(self) -> str | None:
        return self.page.id

    @property
    def title(self) -> str:
        return self.page.title


@dataclass(frozen=True)
class Deleted:
    path: str
    commit: str


@dataclass(frozen=True)
class PageView:
    """A page as read: at HEAD (with its links, backlinks and a note when a person has an
    uncommitted edit of it) or at a revision (`rev`, a commit id)."""

    page: Page
    rev: str | None = None
    links: list[Link] = field(default_factory=list)
    backlinks: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def path(self) -> str:
        return self.page.path


@dataclass(frozen=True)
class LinksView:
    path: str
    links: list[Link]
    backlinks: list[str]


@dataclass(frozen=True)
class RecentPage:
    """A page among the most recently changed, with the commit that last changed it."""

    path: str
    title: str
    type: str
    status: str
    tags: tuple[str, ...]
    updated: str | None
    commit: str
    author: str
    subject: str


@dataclass(frozen=True)
class History:
    """Commits of the whole wiki (`path` None) or of one page, newest first."""

    path: str | None
    commits: list[CommitInfo]


@dataclass(frozen=True)
class SearchReport:
    """A search's pages, and a note about the search itself (words only: no model)."""

    query: str
    results: list[SearchResult]
    note: str | None = None


@dataclass(frozen=True)
class PageRow:
    """One page as `list` shows it."""

    path: str
    type: str
    title: str
    tags: tuple[str, ...]
    status: str
    updated: str | None
    id: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "type": self.type,
            "title": self.title,
            "tags": list(self.tags),
            "status": self.status,
            "updated": self.updated,
            "id": self.id,
        }
