"""What a person should look at: pages whose front matter does not parse, copies that a sync
left where both sides changed the same lines, pages marked stale or wrong; and whether the
code files a page is anchored to changed since it was written.

Read from the search index (one query each) rather than by parsing every page: at 10,000
pages a scan costs seconds, and the index already holds each page's status and id (a page
whose front matter did not parse is indexed without one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wiki_memory.errors import PageError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.pages import parse_page
from wiki_memory.pages.anchors import parse_anchors
from wiki_memory.pages.drift import git_index

if TYPE_CHECKING:
    from wiki_memory.pages import Page

#: What the review lists, in the order it lists them.
KINDS = ("broken", "conflict", "wrong", "stale")
MARKED = ("wrong", "stale")  # statuses someone gave a page that call for a second look

# `notes/x.conflict-laptop-2026-11-30.md` (then `-2`, `-3`): sync.merge.conflict_path's names.
_CONFLICT = re.compile(r"^(?P<page>.+)\.conflict-(?P<host>[a-z0-9-]+?)-(?P<date>\d{4}-\d{2}-\d{2})(?:-\d+)?\.md$")


@dataclass(frozen=True)
class ReviewItem:
    """A page to look at: why (`kind`, one of KINDS) and the detail (the parse error; the page
    a conflict copy belongs to; ...)."""

    kind: str
    path: str
    title: str
    status: str
    detail: str = ""
    other: str | None = None  # a conflict copy's page


@dataclass(frozen=True)
class AnchorState:
    """One code file a page is about, and whether it changed since the page was written:
    `current`, `drifted` (its content differs from the recorded blob), `missing` (no such
    file now), `unrecorded` (no blob was recorded) or `unknown` (no code repository)."""

    path: str
    blob: str | None
    state: str


class PageProblems:
    """The pages to look at (see the module docstring)."""

    def __init__(self, context: MemoryContext) -> None:
        self.context = context
        self.project = context.project

    def review_items(self) -> list[ReviewItem]:
        """Pages with broken front matter, sync conflict copies, and pages marked wrong or
        stale, in that order."""
        if not self.context.exists:
            return []
        index = self.context.index
        if index is None:
            return self._review_by_scan()
        store = self.context.store()
        items: list[ReviewItem] = []
        for meta in index.pages_where(without_id=True):
            try:
                store.read(meta.path)
            except PageError as e:
                error = _error_line(e, meta.path)
                items.append(ReviewItem("broken", meta.path, _file_title(meta.path), meta.status, error))
        for meta in index.pages_where(path_glob="*.conflict-*.md"):
            match = _CONFLICT.match(meta.path)
            if match is None:
                continue
            page = match.group("page") + ".md"
            if match.group("host") == "edit":
                detail = f"an editor's version of {page}, which changed while it was open ({match.group('date')})"
            else:
                detail = f"{match.group('host')}'s version of {page}, kept by a sync on {match.group('date')}"
            items.append(ReviewItem("conflict", meta.path, meta.title, meta.status, detail, page))
        marked = index.pages_where(statuses=MARKED)
        marked.sort(key=lambda m: (MARKED.index(m.status), m.path))
        items += [ReviewItem(m.status, m.path, m.title, m.status, f"marked {m.status}") for m in marked]
        return items

    def _review_by_scan(self) -> list[ReviewItem]:
        """The same without the index (it could not be opened): every page parsed."""
        items: list[ReviewItem] = []
        marked: list[ReviewItem] = []
        store = self.context.store()
        for path, blob in store.page_files():
            text = store.repo[blob].as_raw_string().decode("utf-8", "replace")
            try:
                page = parse_page(text, path)
            except PageError as e:
                items.append(ReviewItem("broken", path, _file_title(path), "active", _error_line(e, path)))
                continue
            match = _CONFLICT.match(path)
            if match is not None:
                other = match.group("page") + ".md"
                items.append(ReviewItem("conflict", path, page.title, page.status, f"a version of {other}", other))
            elif page.status in MARKED:
                marked.append(ReviewItem(page.status, path, page.title, page.status, f"marked {page.status}"))
        marked.sort(key=lambda i: (MARKED.index(i.status), i.path))
        items.sort(key=lambda i: (KINDS.index(i.kind), i.path))
        return items + marked

    def anchor_states(self, page: Page) -> list[AnchorState]:
        """The page's anchors, each compared with the file in the code repository now, as
        the rest of the product does it (`pages.drift`: the git index and a stat; a file is
        hashed only when its stat no longer vouches for its index entry)."""
        anchors = parse_anchors(page.meta.get("anchors"))
        root = self.project.root
        if root is None:
            return [AnchorState(a.path, a.blob, "unknown") for a in anchors]
        index = git_index(root)
        out = []
        for anchor in anchors:
            current = index.current_blob(anchor.path)
            if current is None:
                state = "missing"
            elif anchor.blob is None:
                state = "unrecorded"
            else:
                state = "current" if current == anchor.blob else "drifted"
            out.append(AnchorState(anchor.path, anchor.blob, state))
        return out


def _file_title(path: str) -> str:
    """A broken page's name: its file name (its front matter, title included, did not parse)."""
    return path.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")


def _error_line(error: PageError, path: str) -> str:
    """The parse error without the path it starts with (the item names the page)."""
    return str(error).removeprefix(f"{path}: ")
