"""The pages changed most recently, by commit (so hand edits count), newest first."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from dulwich.objects import ObjectID

from wiki_memory.errors import PageError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.records import RecentPage
from wiki_memory.memory.rules import InputError
from wiki_memory.store import is_page_path

if TYPE_CHECKING:
    from wiki_memory.index import PageMeta
    from wiki_memory.store import Store

MAX_RECENT_COMMITS = 5000  # how far back `recent` looks for pages of a rare type
TREE_MODE = 0o040000

Trees = dict[bytes, dict[bytes, tuple[int, bytes]]]


class Recent:
    """The pages changed lately."""

    def __init__(self, context: MemoryContext) -> None:
        self.context = context
        self.project = context.project

    def recent(self, n: int = 10, type: str | None = None) -> list[RecentPage]:
        """The `n` pages changed most recently (of `type`), newest first, each with the
        commit that last changed it."""
        if n < 1:
            raise InputError("`n` is how many pages: 1 or more")
        if not self.context.exists:
            return []
        store = self.context.store()
        head = store.head()
        if head is None:
            return []
        index = self.context.index
        in_step = index if index is not None and index.in_step() else None
        out: list[RecentPage] = []
        seen: set[str] = set()
        for commit, changed in _commits_with_changes(store, head):
            fresh = [p for p in sorted(changed) if p not in seen]
            seen.update(fresh)
            author = commit.author.decode("utf-8", "replace").split(" <", 1)[0]
            subject = commit.message.decode("utf-8", "replace").split("\n", 1)[0]
            for meta in _page_meta(store, fresh, in_step):
                if type and meta.type != type:
                    continue
                out.append(
                    RecentPage(
                        meta.path, meta.title, meta.type, meta.status, meta.tags, meta.updated,
                        commit.id.decode(), author, subject,
                    )
                )  # fmt: skip
                if len(out) >= n:
                    return out
        return out


def _commits_with_changes(store: Store, head: bytes) -> Iterator[tuple[Any, list[str]]]:
    """(commit, files it added or changed against its first parent), newest first."""
    repo = store.repo
    trees: Trees = {}
    for walked, entry in enumerate(repo.get_walker(include=[ObjectID(head)])):
        if walked >= MAX_RECENT_COMMITS:
            return
        commit = entry.commit
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        yield commit, list(_changed_files(repo, parent_tree, commit.tree, trees))


def _changed_files(repo: Any, old: bytes | None, new: bytes, trees: Trees, prefix: str = "") -> Iterable[str]:
    """Files added or changed from tree `old` to tree `new`, descending only into folders
    that differ. Why not dulwich's `tree_changes`: it walks every entry of a changed folder
    through Python objects, a cost per commit that grows with the wiki; this compares two
    dicts."""
    if old == new:
        return
    before = _tree_dict(repo, old, trees) if old else {}
    for name, (mode, sha) in _tree_dict(repo, new, trees).items():
        was = before.get(name)
        if was == (mode, sha):
            continue
        path = prefix + name.decode("utf-8", "surrogateescape")
        if mode == TREE_MODE:
            yield from _changed_files(repo, was[1] if was and was[0] == TREE_MODE else None, sha, trees, path + "/")
        else:
            yield path


def _tree_dict(repo: Any, tree_id: bytes, trees: Trees) -> dict[bytes, tuple[int, bytes]]:
    found = trees.get(tree_id)
    if found is None:
        found = trees[tree_id] = {e.path: (e.mode, e.sha) for e in repo[tree_id].iteritems()}
    return found


def _page_meta(store: Store, paths: list[str], index: Any) -> list[PageMeta]:
    """The front matter of those of `paths` that are pages at HEAD, in order: from the
    index when it is in step (no page parsed), else from the pages themselves."""
    from wiki_memory.index import PageMeta  # deferred: the index, opened on first use

    paths = [p for p in paths if is_page_path(p)]
    if not paths:
        return []
    if index is not None:
        known = index.page_meta(paths)
        return [known[p] for p in paths if p in known]
    out = []
    for path in paths:
        if not store.exists(path):
            continue
        try:
            page = store.read(path)
        except PageError:
            continue
        out.append(PageMeta(path, page.id, page.title, page.type, page.status, page.tags, page.created, page.updated))
    return out
