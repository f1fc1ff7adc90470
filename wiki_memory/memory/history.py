"""Browsing memory as history: what happened in the project lately (commits by agents and by
people), one commit with its diff, one page's changes with theirs, and the link graph.

The web viewer's reads; any front end may call them. Nothing here writes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import NotFoundError
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.recent import _changed_files
from wiki_memory.memory.rules import InputError

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from wiki_memory.store import CommitInfo, Store

MAX_DIFF_LINES = 400  # of one file in one commit; the rest is counted, not shown
MAX_ACTIVITY_WALK = 2000  # commits looked at to fill one page of a filtered timeline
PATHS_SHOWN = 8  # of one commit in the timeline


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


class Browsing(Reading):
    """The operations that read the wiki's history and shape (see the module docstring)."""

    def activity(self, n: int = 50, who: str | None = None) -> list[Activity]:
        """The `n` newest commits (of `who`, an agent or a person's name, when given),
        newest first."""
        if n < 1:
            raise InputError("`n` is how many commits: 1 or more")
        if not self.exists:
            return []
        store = self.store()
        head = store.head()
        if head is None:
            return []
        from dulwich.objects import ObjectID

        wanted = (who or "").strip().casefold()
        out: list[Activity] = []
        trees: dict[bytes, Any] = {}
        repo = store.repo
        for walked, entry in enumerate(repo.get_walker(include=[ObjectID(head)])):
            if walked >= MAX_ACTIVITY_WALK or len(out) >= n:
                break
            item = _activity(store, entry.commit, trees)
            if wanted and wanted not in (item.author.casefold(), (item.agent or "").casefold()):
                continue
            out.append(item)
        return out

    def commit(self, rev: str, limit: int = 50) -> CommitView:
        """A commit (a full or short id, `HEAD~2`) with the diff of the first `limit` files it
        changed."""
        store = self.store()
        commit = _commit(store, self.resolve_rev(rev).encode())
        parent = commit.parents[0] if commit.parents else None
        parent_tree = _commit(store, parent).tree if parent is not None else None
        changed = store.changed_files(parent_tree, commit.tree)
        files = [_file_diff(store, path, path, old, new) for path, old, new in changed[:limit]]
        info = store.commit_info(commit, with_paths=False)
        return CommitView(info, parent.decode() if parent else None, files, max(0, len(changed) - limit))

    def page_history(self, ref: str, n: int = 30) -> PageHistory:
        """One page's commits, newest first, following its renames, each with the diff it
        made to the page; a deleted page is found by its path."""
        if n < 1:
            raise InputError("`n` is how many commits: 1 or more")
        store = self.store()
        path = self._history_path(ref)
        found = store.page_log(path, n + 1)
        changes = []
        for info, current, before in found[:n]:
            commit = _commit(store, info.id.encode())
            new = store.tree_entry(commit.tree, current)
            old = None
            if before is not None and commit.parents:
                old = store.tree_entry(_commit(store, commit.parents[0]).tree, before)
            diff = _file_diff(store, current, before, old[1] if old else None, new[1] if new else None)
            changes.append(PageChange(info, diff))
        return PageHistory(path, changes, len(found) > n)

    def _history_path(self, ref: str) -> str:
        from wiki_memory.store.paths import normalize_path

        try:
            return self.find(ref)
        except NotFoundError:
            # A deleted page keeps its history: look its path up in the log.
            path = normalize_path(ref if ref.strip().endswith(".md") else ref.strip() + ".md")
            if not self.store().page_log(path, 1):
                raise
            return path

    def graph(self, around: str | None = None, limit: int = 300) -> Graph:
        """The link graph: every linked page of a small wiki (and the unlinked ones while
        they fit), the `limit` best-linked pages of a big one, or the pages within two
        links of `around`."""
        if limit < 1:
            raise InputError("`limit` is how many pages: 1 or more")
        if not self.exists:
            return Graph([], [])
        index = self.require_index()
        pairs = index.link_pairs()
        degree: dict[str, int] = {}
        neighbours: dict[str, set[str]] = {}
        for source, target in pairs:
            degree[source] = degree.get(source, 0) + 1
            degree[target] = degree.get(target, 0) + 1
            neighbours.setdefault(source, set()).add(target)
            neighbours.setdefault(target, set()).add(source)
        centre = self.find(around) if around and around.strip() else None
        if centre is not None:
            chosen = _neighbourhood(centre, neighbours, limit)
            cut = len(chosen) >= limit
        else:
            ranked = sorted(degree, key=lambda p: (-degree[p], p))
            chosen = ranked[:limit]
            cut = len(ranked) > limit
            if len(chosen) < limit:  # room for pages without links (a small wiki)
                taken = set(chosen)
                for meta in index.pages_where(path_glob="*"):
                    if len(chosen) >= limit:
                        cut = True
                        break
                    if meta.path not in taken:
                        chosen.append(meta.path)
        metas = index.page_meta(chosen)
        nodes = [
            GraphNode(p, metas[p].title, metas[p].type, metas[p].status, degree.get(p, 0)) for p in chosen if p in metas
        ]
        kept = {node.path for node in nodes}
        edges = [(s, t) for s, t in pairs if s in kept and t in kept]
        return Graph(nodes, edges, centre, len(degree), cut, [p for p in chosen if p not in metas])


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


def _commit(store: Store, commit_id: bytes) -> Commit:
    from dulwich.objects import Commit, ObjectID

    obj = store.repo[ObjectID(commit_id)]
    if not isinstance(obj, Commit):
        raise NotFoundError(f"{commit_id.decode()} is not a commit")
    return obj


def _activity(store: Store, commit: Commit, trees: dict[bytes, Any]) -> Activity:
    from wiki_memory.store.records import parse_trailers

    repo = store.repo
    parent_tree = _commit(store, commit.parents[0]).tree if commit.parents else None
    paths: list[str] = []
    more = 0
    for path in _changed_files(repo, parent_tree, commit.tree, trees, deleted=True):
        if len(paths) < PATHS_SHOWN:
            paths.append(path)
        else:
            more += 1
    author = commit.author.decode("utf-8", "replace")
    name, _, email = author.partition(" <")
    message = commit.message.decode("utf-8", "replace")
    trailers = parse_trailers(message)
    agent = trailers.get("Agent") or (name if email.endswith("@wiki-memory>") else None)
    when = datetime.fromtimestamp(commit.author_time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Activity(
        commit.id.decode(), when, name, email.rstrip(">"), agent, trailers.get("Session-Id"),
        message.split("\n", 1)[0], tuple(paths), more, _kind(paths, agent),
    )  # fmt: skip


def _kind(paths: Iterable[str], agent: str | None) -> str:
    paths = list(paths)
    if any(p.startswith("handoffs/") for p in paths):
        return "handoff"
    if any(p.startswith("sessions/") for p in paths):
        return "session"
    return "agent" if agent else "person"


def _file_diff(store: Store, path: str, old_path: str | None, old: bytes | None, new: bytes | None) -> FileDiff:
    """The unified diff of one file between two blobs (None: absent)."""
    if old is None:
        change, old_path = "added", None
    elif new is None:
        change = "deleted"
    elif old_path is not None and old_path != path:
        change = "moved"
    else:
        change = "modified"
    texts = []
    for blob in (old, new):
        data = store.repo[blob].as_raw_string() if blob is not None else b""
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            return FileDiff(path, old_path, change, (), binary=True)
    lines = list(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), n=3, lineterm=""))[2:]
    cut = max(0, len(lines) - MAX_DIFF_LINES)
    return FileDiff(path, old_path, change, tuple(lines[:MAX_DIFF_LINES]), cut)
