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
    # A named person the agent acts for (a shared server's token holder): the commit's
    # author, while `agent` still goes in the trailers and the page's sources.
    person: Author | None = None

    @property
    def source(self) -> str | None:
        """`claude-code:2624e4c8`: the page's `sources` entry for what this actor writes."""
        if not self.agent:
            return None
        return f"{self.agent}:{self.session_id[:8]}" if self.session_id else self.agent

    def author(self, wiki: Path) -> Author:
        from wiki_memory.store import Author  # deferred: dulwich; `wiki-memory search` starts without the store

        if self.person is not None:
            return self.person
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
    merged: str | None = None  # the commit made meanwhile that this edit was merged with
    conflict_copy: str | None = None  # where this edit was kept, beside the page changed meanwhile

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
    drift: str | None = None  # "may be stale (src/x.py changed since)" when its anchors drifted

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
    drift: dict[str, str] = field(default_factory=dict)  # path -> "may be stale (...)" for results that drifted


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


@dataclass(frozen=True)
class Marked:
    """A page marked (helpful, wrong, stale, archived, active): the commit that says so."""

    path: str
    verdict: str
    status: str  # the page's status after the mark
    commit: str | None  # None when the page already read so (nothing to commit)
    reason: str | None = None
    helpful: int = 0  # how many times it was marked helpful, this one included

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "verdict": self.verdict,
            "status": self.status,
            "commit": self.commit,
            "reason": self.reason,
            "helpful": self.helpful,
        }


@dataclass(frozen=True)
class Superseded:
    """`old` replaced by `new`, both changed in one commit."""

    old: str
    new: str
    commit: str | None
    reason: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"old": self.old, "new": self.new, "commit": self.commit, "reason": self.reason}


@dataclass(frozen=True)
class ReviewAction:
    """One thing that needs a person or an agent: its kind (drift, expired, duplicate,
    contradiction, wrong-link, lifecycle, flag), the pages, one line and the command
    that resolves it."""

    kind: str
    paths: tuple[str, ...]
    message: str
    command: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "paths": list(self.paths), "message": self.message, "command": self.command}


@dataclass(frozen=True)
class Review:
    """What `review` found, in the order of `ReviewAction.kind`s above."""

    items: tuple[ReviewAction, ...]
    pages: int  # pages looked at
    note: str | None = None  # about the review itself (no index, no model)

    def of_kind(self, kind: str) -> list[ReviewAction]:
        return [i for i in self.items if i.kind == kind]

    def as_dict(self) -> dict[str, object]:
        return {"items": [i.as_dict() for i in self.items], "pages": self.pages, "note": self.note}
