"""Reading memory: finding a page by path, title or id, reading it (now or at a revision),
its links, the list of pages, the history, diffs, search and the state of the project."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from wiki_memory.config import load_settings
from wiki_memory.errors import NotFoundError, PageError, PathError
from wiki_memory.memory.context import MemoryContext, project_paths
from wiki_memory.memory.page_problems import PageProblems
from wiki_memory.memory.records import History, LinksView, PageRow, PageView
from wiki_memory.memory.rules import InputError, check_ref, utf8
from wiki_memory.memory.team import Teams
from wiki_memory.pages import Page, render_page, usage
from wiki_memory.pages.drift import drift_note, drifted
from wiki_memory.pages.size import head, limit_bytes
from wiki_memory.recall import tier
from wiki_memory.store import page_type_counts
from wiki_memory.store.paths import normalize_path
from wiki_memory.store.reading import one_match

PENDING_NOTE = (
    "a person has edited this page and not committed it yet; this is the committed text "
    "(their edit becomes memory at the next write)"
)


class Reading:
    """The operations that read."""

    def __init__(self, context: MemoryContext, teams: Teams, problems: PageProblems) -> None:
        self.context = context
        self.project = context.project
        self.teams = teams
        self.problems = problems

    def find(self, ref: str, rev: str | None = None) -> str:
        """The path of the page `ref` names: a path, a title or an id (at `rev`, a commit id
        from `resolve_rev`, or now)."""
        ref = check_ref(ref)
        store = self.context.store()
        if rev is None:
            found = self._find_by_index(ref)
            if found is not None:
                return found
        return store.find(ref, rev)

    def _find_by_index(self, ref: str) -> str | None:
        """A page found without `Store.find`'s scan, when the index is in step with the wiki.

        Why: `Store.find` parses every page to match a title or an id it cannot derive a
        path from (seconds in a big wiki), and so for every name that matches nothing; the
        index has every page's title and id in one table. The order is the store's: a path,
        a title's conventional path, then a title or id. None means "ask the store" (a
        refused path, a file not committed yet, an index never built or unavailable).
        """
        store = self.context.store()
        index = self.context.index
        if index is None or index.head is None:
            return None  # never built: building it is a search's or reindex's job, not a lookup's
        if not index.in_step():
            # Commits made outside wiki-memory (`git pull`, `git commit`): catching up with a
            # few changed pages costs far less than the store's scan of every page.
            index.sync(store, embed=False)
            if not index.in_step():
                return None
        candidates = []
        for candidate in (ref, ref + ".md"):
            try:
                candidates.append(normalize_path(candidate))
            except PathError:
                continue
        if not candidates or any((store.root / c).is_file() and not store.exists(c) for c in candidates):
            return None  # refused (`../x.md`), or written by hand and not committed: the store says so
        for path in candidates:
            if store.exists(path):
                return path
        found = store.find_by_slug(ref)
        if found is not None:
            return found
        matches = index.named(ref)
        titles = {path: meta.title for path, meta in index.page_meta(matches).items()} if len(matches) > 1 else {}
        return one_match(ref, matches, titles)

    def current(self, ref: str) -> tuple[str, Page]:
        """The path of the page `ref` names and the page as the person sees it: their
        uncommitted edit of it committed first, as theirs (called under the store's lock,
        before changing the page)."""
        store = self.context.store()
        path = self.find(ref)
        store.commit_pending(paths=[path])
        return path, store.read(path)

    def resolve_rev(self, rev: str) -> str:
        """The commit id a revision names (`HEAD~2`, a short id)."""
        utf8("rev", rev)
        return self.context.store().resolve_rev(rev.strip())

    def read(self, ref: str, rev: str | None = None) -> PageView:
        """A page now (with its links and backlinks) or as it was at `rev`; `team:<path>`
        reads a page of the team tier."""
        team_ref = self.teams.team_ref(ref)
        if team_ref is not None:
            target = self.teams.team()
            view: PageView = target.read(team_ref, rev)
            said = tier.label(tier.read(target.project, [view.path]).get(view.path))
            # Shown under its team name, so that every front end links and reads it back there.
            page = replace(view.page, path=tier.named(view.path))
            return replace(view, page=page, note=f"{said}; {view.note}" if view.note else said)
        store = self.context.store()
        rev = rev.strip() if rev and rev.strip() else None
        commit = self.resolve_rev(rev) if rev else None
        path = self.find(ref, commit)
        page = store.read(path, commit)
        if commit is not None:
            return PageView(page, commit)

        note = PENDING_NOTE if store.pending([path]) else None
        links, backlinks = self._links_of(path)
        drift = drift_note(drifted(self.project.root, page.meta.get("anchors"))) if self.project.root else None
        usage.record(self.project, "read", [path])
        return PageView(page, None, links, backlinks, note, drift)

    def shown_body(self, page: Page) -> tuple[str, int | None]:
        """What a viewer renders of a page's body: all of it, or (for a page over `[pages]
        large_kb`, which arrived by sync or by hand) its head and the body's whole size in
        bytes, to say so. The file is not changed."""
        shown, cut = head(page.body, limit_bytes(load_settings()))
        return shown, (len(page.body.encode("utf-8", "surrogatepass")) if cut else None)

    def raw_bytes(self, ref: str, rev: str | None = None) -> tuple[str, bytes]:
        """A page's file as committed (at `rev`), byte for byte: (path, bytes)."""
        commit = self.resolve_rev(rev) if rev else None
        path = self.find(ref, commit)
        return path, self.context.store().read_bytes(path, commit)

    def page_text(self, ref: str) -> str:
        """A page's file text: front matter and body."""
        return render_page(self.context.store().read(self.find(ref)))

    def _links_of(self, path: str) -> tuple[list[Any], list[str]]:
        index = self.context.index
        if index is None:
            return [], []
        return index.links(path), index.backlinks(path)

    def links(self, ref: str) -> LinksView:
        """A page's `[[links]]` (resolved to paths, None when no such page exists yet) and
        the pages linking to it."""
        path = self.find(ref)
        links, backlinks = self._links_of(path)
        return LinksView(path, links, backlinks)

    def list_pages(
        self, type: str | None = None, tag: str | None = None, status: str | None = None
    ) -> tuple[list[PageRow], list[str]]:
        """Pages (path, type, title, ...) with those filters, and the pages that do not parse."""
        errors: list[str] = []
        rows = []
        for page in self.context.store().pages(errors=errors):
            if (type and page.type != type) or (tag and tag not in page.tags) or (status and page.status != status):
                continue
            rows.append(PageRow(page.path, page.type, page.title, page.tags, page.status, page.updated, page.id))
        return rows, errors

    def history(self, ref: str | None = None, n: int | None = 20) -> History:
        """The git log of the wiki, or of one page following its renames (a deleted page by
        its path)."""
        if n is not None and n < 1:
            raise InputError("`n` is how many commits: 1 or more")
        if not self.context.exists:
            return History(None, [])
        path = self.find_in_history(ref) if ref is not None and ref.strip() else None
        return History(path, self.context.store().log(path, n))

    def find_in_history(self, ref: str) -> str:
        """The path of the page `ref` names (a path, title or id), or of a deleted page by
        its path: a deleted page keeps its history, and the log knows its path."""
        try:
            return self.find(ref)
        except NotFoundError:
            path = normalize_path(ref if ref.strip().endswith(".md") else ref.strip() + ".md")
            if not self.context.store().log(path, 1):
                raise
            return path

    def diff_args(self, args: Sequence[str]) -> tuple[list[str], str | None]:
        """(revisions, page) from `diff`'s arguments: revisions first, then maybe a page."""
        store = self.context.store()
        revs: list[str] = []
        page: str | None = None
        for i, arg in enumerate(args):
            try:
                store.resolve_rev(arg)
                revs.append(arg)
                continue
            except NotFoundError:
                if i != len(args) - 1:
                    raise
            try:
                page = self.find(arg)
            except NotFoundError:
                raise NotFoundError(f"{arg!r} is neither a revision nor a page") from None
        if len(revs) > 2:
            raise InputError("give at most two revisions")
        return revs, page

    def diff(self, revs: Sequence[str] = (), page: str | None = None) -> str:
        """A unified diff: no revision = uncommitted hand edits; one = since it; two = between."""
        return self.context.store().diff(revs[0] if revs else None, revs[1] if len(revs) > 1 else None, page)

    def status(self) -> dict[str, Any]:
        """The project, its wiki, pages by type, the last commit, pending hand edits and how
        far the search index is (never loads the embedding model)."""
        info: dict[str, Any] = {**project_paths(self.project), "exists": self.context.exists}
        if not self.context.exists:
            return info
        store = self.context.store()
        counts = page_type_counts(store)
        last = store.log(None, 1)
        info["pages"] = sum(counts.values())
        info["pages_by_type"] = counts
        info["last_commit"] = last[0].as_dict() if last else None
        info["pending_edits"] = sorted(store.pending())
        info["index"] = self._index_info()  # (the path is in `path --json`)
        # From the index, when it is in step (status never brings it up to date itself).
        items = self.problems.review_items() if info["index"].get("current") else []
        info["broken_pages"] = [{"path": i.path, "error": i.detail} for i in items if i.kind == "broken"]
        info["conflict_copies"] = [{"path": i.path, "page": i.other} for i in items if i.kind == "conflict"]
        return info

    def _index_info(self) -> dict[str, Any]:
        if not self.project.index_path.exists():
            return {"chunks": 0, "without_vectors": 0, "current": False}
        try:
            index = self.context.require_index()
            stats = index.stats()
        except Exception as e:  # noqa: BLE001 - the index is derived: status still reports the wiki
            return {"error": str(e)}
        return {"chunks": stats["chunks"], "without_vectors": stats["pending"], "current": index.in_step()}


def existing_page(store: Any, path: str) -> Page | None:
    """The page at `path`, or None (none there, or its front matter is broken: a write
    replaces it, and its text stays in history)."""
    if not store.exists(path):
        return None
    try:
        page: Page = store.read(path)
    except PageError:
        return None
    return page
