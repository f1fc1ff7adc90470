"""Building what a share pushes, in the team clone's objects: where each page goes (beside
someone else's page at its path, as a conflict copy), the team's copy of a page and of a
branch's handoff, the commit, its diff, and the clone's `main` fast-forwarded."""

from __future__ import annotations

import time
from collections.abc import Sequence
from io import BytesIO
from typing import Any

from dulwich.objects import Commit
from dulwich.refs import Ref

from wiki_memory.errors import NotFoundError, PageError
from wiki_memory.pages import Page, new_id, now_iso, parse_page
from wiki_memory.store import Author, Store
from wiki_memory.store.reading import oid
from wiki_memory.store.records import commit_message
from wiki_memory.sync.merge import conflict_path


class Placer:
    """Where each shared page goes on the team tier (see the module docstring)."""

    def __init__(self, team: Store, base: bytes | None, others: Sequence[bytes]) -> None:
        self.team = team
        self.base = base
        self.others = others
        self.base_files = dict(team.files(base)) if base else {}
        self._ids: dict[bytes, str | None] = {}

    def _id(self, blob: bytes | None) -> str | None:
        if blob is None:
            return None
        if blob not in self._ids:
            try:
                text = self.team.repo[oid(blob)].as_raw_string().decode("utf-8")
                self._ids[blob] = parse_page(text, "x.md").id or ""
            except (PageError, UnicodeDecodeError, KeyError):
                self._ids[blob] = ""
        return self._ids[blob]

    def _claimed(self, path: str, pid: str | None) -> bool:
        """Another open share branch brings a different page to `path`."""
        here = self.base_files.get(path)
        for tip in self.others:
            blob = self.team.blob_at(path, tip)
            if blob is not None and blob != here and self._id(blob) != pid:
                return True
        return False

    def place(self, page: Page, before: str | None, user: str, taken: set[str]) -> tuple[str, str, str | None]:
        spots = list(dict.fromkeys([p for p in (before, page.path) if p]))
        for spot in spots:
            if self._id(self.base_files.get(spot)) == page.id and page.id:
                return spot, "update", None
        for spot in spots:
            if spot not in self.base_files and spot not in taken and not self._claimed(spot, page.id):
                return spot, "new", None

        day = now_iso()[:10]
        copy = conflict_path(
            page.path, user, day, lambda p: p in self.base_files or p in taken or self._claimed(p, None)
        )
        return copy, "conflict copy", page.path


def team_page(page: Page, team_path: str, me: Author, beside: str | None) -> Page:
    meta = dict(page.meta)
    meta["author"] = f"{me.name} <{me.email}>"
    if beside:
        meta["conflict_of"] = beside
    else:
        meta.pop("conflict_of", None)
    return Page(team_path, meta, page.body, True, page.front_text)


def branch_page(team: Store, base: bytes | None, rel: str, branch: str, handoff: Page, me: Author) -> Page:
    """The team's page for `branch`, holding `handoff`: one page per branch, replaced by
    the next share (its id and `created` kept)."""
    stamp = now_iso()
    existing: Page | None = None
    if base is not None:
        try:
            existing = team.read(rel, base)
        except (NotFoundError, PageError):
            existing = None
    meta: dict[str, Any] = {
        "id": (existing.id if existing else None) or new_id(),
        "title": f"Handoff for branch {branch}",
        "type": "handoff",
        "status": "active",
        "branch": branch,
        "author": f"{me.name} <{me.email}>",
        "shared": stamp,
        "from": handoff.path,
        "created": (existing.created if existing else None) or stamp,
        "updated": stamp,
        "sources": list(handoff.meta.get("sources") or []),
    }
    return Page(rel, meta, handoff.body)


def commit_tree(team: Store, tree: bytes, parents: list[bytes], me: Author, subject: str, body: str) -> bytes:
    """A commit of `tree` on `parents` by `me`, in the team clone's objects (no ref moved)."""
    commit = Commit()
    commit.tree = oid(tree)
    commit.parents = [oid(p) for p in parents]
    commit.author = commit.committer = me.ident()
    now = int(time.time())
    commit.author_time = commit.commit_time = now
    commit.author_timezone = commit.commit_timezone = time.localtime(now).tm_gmtoff
    commit.message = commit_message(subject, None, None, body, trailers_first=[("Shared-By", me.ident().decode())])
    team.repo.object_store.add_object(commit)
    return commit.id


def fast_forward(team: Store, commit: bytes) -> None:
    """Bring the team clone's `main` to what was pushed when that is a fast-forward (else
    the next team sync merges it)."""
    head = team.head()
    if head is not None:
        walker = team.repo.get_walker(include=[oid(commit)], exclude=None)
        if not any(entry.commit.id == head for entry in walker):
            return
    team.advance(commit, reflog="handoff share: fast-forward")


def tree_diff(team: Store, old_tree: bytes | None, new_tree: bytes) -> str:
    out = BytesIO()
    from dulwich.patch import write_tree_diff  # deferred: it loads the email package, for a share's diff only

    write_tree_diff(out, team.repo.object_store, oid(old_tree) if old_tree else None, oid(new_tree))
    return out.getvalue().decode("utf-8", "replace")


def ref_of(team: Store, name: str) -> bytes | None:
    try:
        return bytes(team.repo.refs[Ref(name.encode())])
    except KeyError:
        return None


def id_at(team: Store, tip: bytes, path: str) -> str | None:
    try:
        return team.read(path, tip).id
    except (NotFoundError, PageError, KeyError):
        return None
