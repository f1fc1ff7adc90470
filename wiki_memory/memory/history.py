"""Browsing memory as history: what happened in the project lately (commits by agents and by
people), one commit with its diff, one page's changes with theirs, and the link graph.

The web viewer's reads; any front end may call them. Nothing here writes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wiki_memory.errors import NotFoundError
from wiki_memory.memory.commits import CommitLog
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.rules import InputError
from wiki_memory.store.paths import normalize_path
from wiki_memory.store.records import parse_trailers

if TYPE_CHECKING:
    from wiki_memory.index import Index
    from wiki_memory.store import CommitInfo, Store

MAX_DIFF_LINES = 400  # of one file in one commit; the rest is counted, not shown
MAX_ACTIVITY_WALK = 2000  # commits looked at to fill one page of a filtered timeline
PATHS_SHOWN = 8  # of one commit in the timeline
MAX_DIFFS = 2000  # diffs kept between requests

DiffText = tuple[tuple[str, ...], int, bool]  # (diff lines, lines cut, not text)


@dataclass(frozen=True)
class Activity:
    """One commit in the project's timeline: who (an agent with its session, or a person),
    when, what it says and which files it touched."""

    commit: str
    time: str  # ISO 8601, UTC
    author: str
    email: str
    agent: str | None
    session: str | None
    subject: str
    paths: tuple[str, ...]  # the first PATHS_SHOWN files it added, changed or removed
    more: int  # how many more files it touched
    kind: str  # "session", "handoff" (consolidation), "agent" (an agent's write) or "person"

    @property
    def short(self) -> str:
        return self.commit[:8]

    @property
    def who(self) -> str:
        return self.agent or self.author


@dataclass(frozen=True)
class FileDiff:
    """The change one commit made to one file: unified diff lines (`+`, `-`, ` `, `@@`)."""

    path: str
    old_path: str | None  # the file's path before the commit (None: it was created)
    change: str  # "added", "modified", "deleted" or "moved"
    lines: tuple[str, ...]
    cut: int = 0  # diff lines left out (over MAX_DIFF_LINES)
    binary: bool = False

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))


@dataclass(frozen=True)
class CommitView:
    """One commit: what it says, and the diff of each file it changed (the first `limit`)."""

    info: CommitInfo
    parent: str | None
    files: list[FileDiff]
    more_files: int = 0


@dataclass(frozen=True)
class PageChange:
    info: CommitInfo
    diff: FileDiff


@dataclass(frozen=True)
class PageHistory:
    """One page's commits, newest first, following its renames, each with its diff."""

    path: str
    changes: list[PageChange]
    more: bool = False  # older commits exist beyond these


@dataclass(frozen=True)
class Links:
    """The link graph of a wiki: who links to whom, each page's degree, best-linked first."""

    out: dict[str, set[str]]
    neighbours: dict[str, set[str]]
    degree: dict[str, int]
    ranked: list[str]

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Links:
        out: dict[str, set[str]] = {}
        neighbours: dict[str, set[str]] = {}
        degree: dict[str, int] = {}
        for source, target in pairs:
            out.setdefault(source, set()).add(target)
            degree[source] = degree.get(source, 0) + 1
            degree[target] = degree.get(target, 0) + 1
            neighbours.setdefault(source, set()).add(target)
            neighbours.setdefault(target, set()).add(source)
        return cls(out, neighbours, degree, sorted(degree, key=lambda p: (-degree[p], p)))


@dataclass(frozen=True)
class GraphNode:
    path: str
    title: str
    type: str
    status: str
    degree: int  # links in and out


@dataclass(frozen=True)
class Graph:
    """The pages and the links between them: all of a small wiki, the best-linked pages of a
    big one, or the neighbourhood of one page (`around`)."""

    nodes: list[GraphNode]
    edges: list[tuple[str, str]]
    around: str | None = None
    linked_pages: int = 0  # pages with at least one link, in the whole wiki
    cut: bool = False  # nodes left out to stay readable
    missing: list[str] = field(default_factory=list)


class Browsing:
    """The operations that read the wiki's history and shape (see the module docstring)."""

    def __init__(self, context: MemoryContext, reading: Reading) -> None:
        self.context = context
        self.reading = reading
        self._commit_log: CommitLog | None = None
        self._diffs: dict[tuple[bytes | None, bytes | None], DiffText] | None = None  # by (blob before, blob after)
        self._links: tuple[str | None, Links] | None = None  # (the index's head, the link graph then)

    def commit_log(self) -> CommitLog:
        """The kept record of what each commit changed (see `commits.py`), for this store."""
        store = self.context.store()
        if self._commit_log is None or self._commit_log.repo is not store.repo:
            self._commit_log = CommitLog(store.repo)
        return self._commit_log

    def warm_history(self, seconds: float = 0.2) -> bool:
        """Work out what older commits changed for about `seconds`, so that history is
        ready when asked for; True while some are left."""
        if not self.context.exists:
            return False
        head = self.context.store().head()
        return head is not None and self.commit_log().warm(head.decode(), seconds)

    def activity(self, n: int = 50, who: str | None = None) -> list[Activity]:
        """The `n` newest commits (of `who`, an agent or a person's name, when given),
        newest first."""
        if n < 1:
            raise InputError("`n` is how many commits: 1 or more")
        if not self.context.exists:
            return []
        head = self.context.store().head()
        if head is None:
            return []
        wanted = (who or "").strip().casefold()
        log = self.commit_log()
        out: list[Activity] = []
        for walked, header in enumerate(log.walk(head.decode())):
            if walked >= MAX_ACTIVITY_WALK or len(out) >= n:
                break
            trailers = parse_trailers(header.message)
            agent = trailers.get("Agent") or (header.author if header.email.endswith("@wiki-memory") else None)
            if wanted and wanted not in (header.author.casefold(), (agent or "").casefold()):
                continue
            paths = sorted(log.changes(header.id)[0])
            subject = header.message.split("\n", 1)[0]
            shown, more = tuple(paths[:PATHS_SHOWN]), max(0, len(paths) - PATHS_SHOWN)
            author = (header.author, header.email, agent, trailers.get("Session-Id"))
            out.append(Activity(header.id, header.time, *author, subject, shown, more, _kind(paths, agent)))
        return out

    def commit(self, rev: str, limit: int = 50) -> CommitView:
        """A commit (a full or short id, `HEAD~2`) with the diff of the first `limit` files it
        changed (against its first parent)."""
        log = self.commit_log()
        header = log.header(self.reading.resolve_rev(rev))
        changed = sorted(log.changes(header.id)[0].items())
        files = [self._file_diff(path, path, old, new) for path, (old, new) in changed[:limit]]
        parent = header.parents[0] if header.parents else None
        return CommitView(header.info(), parent, files, max(0, len(changed) - limit))

    def page_history(self, ref: str, n: int = 30) -> PageHistory:
        """One page's commits, newest first, following its renames, each with the diff it
        made to the page; a deleted page is found by its path."""
        if n < 1:
            raise InputError("`n` is how many commits: 1 or more")
        store = self.context.store()
        head = store.head()
        path = self._history_path(ref)
        if head is None:
            return PageHistory(path, [])
        found = self.commit_log().page_changes(head.decode(), path, n + 1)
        changes = [
            PageChange(header.info(), self._file_diff(current, before, old, new))
            for header, current, before, old, new in found[:n]
        ]
        return PageHistory(path, changes, len(found) > n)

    def _file_diff(self, path: str, old_path: str | None, old: bytes | None, new: bytes | None) -> FileDiff:
        """The change to one file between two blobs; the diff text is kept, since the same
        two blobs always diff the same way."""
        if self._diffs is None or len(self._diffs) > MAX_DIFFS:
            self._diffs = {}
        text = self._diffs.get((old, new))
        if text is None:
            text = self._diffs[(old, new)] = _diff_text(self.context.store(), old, new)
        return _file_diff(path, old_path, old, new, text)

    def _history_path(self, ref: str) -> str:
        try:
            return self.reading.find(ref)
        except NotFoundError:
            # A deleted page keeps its history: look its path up in the log.
            path = normalize_path(ref if ref.strip().endswith(".md") else ref.strip() + ".md")
            head = self.context.store().head()
            if head is None or not self.commit_log().page_changes(head.decode(), path, 1):
                raise
            return path

    def graph(self, around: str | None = None, limit: int = 300) -> Graph:
        """The link graph: every linked page of a small wiki (and the unlinked ones while
        they fit), the `limit` best-linked pages of a big one, or the pages within two
        links of `around`."""
        if limit < 1:
            raise InputError("`limit` is how many pages: 1 or more")
        if not self.context.exists:
            return Graph([], [])
        index = self.context.require_index()
        links = self._link_graph(index)
        centre = self.reading.find(around) if around and around.strip() else None
        if centre is not None:
            chosen = _neighbourhood(centre, links.neighbours, limit)
            cut = len(chosen) >= limit
        else:
            chosen = links.ranked[:limit]
            cut = len(links.ranked) > limit
            if len(chosen) < limit:  # room for pages without links (a small wiki)
                taken = set(chosen)
                for meta in index.pages_where(path_glob="*", limit=2 * limit):
                    if len(chosen) >= limit:
                        cut = True
                        break
                    if meta.path not in taken:
                        chosen.append(meta.path)
        metas = index.page_meta(chosen)
        degree = links.degree
        nodes = [
            GraphNode(p, metas[p].title, metas[p].type, metas[p].status, degree.get(p, 0)) for p in chosen if p in metas
        ]
        kept = {node.path for node in nodes}
        edges = [(s, t) for s in kept for t in sorted(links.out.get(s, ())) if t in kept]
        return Graph(nodes, edges, centre, len(degree), cut, [p for p in chosen if p not in metas])

    def _link_graph(self, index: Index) -> Links:
        """Every link between pages, with each page's degree; kept until the index moves."""
        if not index.in_step():
            index.sync(self.context.store(), embed=False)
        if self._links is not None and index.head is not None and self._links[0] == index.head:
            return self._links[1]
        links = Links.of(index.link_pairs())
        self._links = (index.head, links)
        return links


def _neighbourhood(centre: str, neighbours: dict[str, set[str]], limit: int) -> list[str]:
    """`centre`, then the pages one link away, then two (breadth first), up to `limit`."""
    chosen = [centre]
    seen = {centre}
    frontier = [centre]
    for _ in range(2):
        following: list[str] = []
        for page in frontier:
            for other in sorted(neighbours.get(page, ())):
                if other in seen:
                    continue
                if len(chosen) >= limit:
                    return chosen
                seen.add(other)
                chosen.append(other)
                following.append(other)
        frontier = following
    return chosen


def _kind(paths: Iterable[str], agent: str | None) -> str:
    paths = list(paths)
    if any(p.startswith("handoffs/") for p in paths):
        return "handoff"
    if any(p.startswith("sessions/") for p in paths):
        return "session"
    return "agent" if agent else "person"


def _file_diff(path: str, old_path: str | None, old: bytes | None, new: bytes | None, text: DiffText) -> FileDiff:
    """The change to one file between two blobs (None: absent), with its diff text."""
    if old is None:
        change, old_path = "added", None
    elif new is None:
        change = "deleted"
    elif old_path is not None and old_path != path:
        change = "moved"
    else:
        change = "modified"
    lines, cut, binary = text
    return FileDiff(path, old_path, change, lines, cut, binary)


def _diff_text(store: Store, old: bytes | None, new: bytes | None) -> DiffText:
    """The unified diff lines between two blobs (None: absent), without the file header."""
    texts = []
    for blob in (old, new):
        data = store.repo[blob].as_raw_string() if blob is not None else b""
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            return (), 0, True
    lines = list(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), n=3, lineterm=""))[2:]
    return tuple(lines[:MAX_DIFF_LINES]), max(0, len(lines) - MAX_DIFF_LINES), False
