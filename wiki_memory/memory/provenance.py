"""Who brought each team page, and whether someone else let it in: worked out from the team
repository's git history after each sync, for the hook path to read (`recall.tier`).

- A page's **author** is its front-matter key `author` ("Name <email>", set by `share`)
  when it has one, else the git author of the commit that added it to the team tier.
- A page is **reviewed** when the commit that added it reached the team's `main` through a
  merge made by someone other than its author: a merge commit whose merged side (the
  commits its other parents bring that its first parent lacks) holds that commit. The
  merger is the merge commit's author: the same person as its committer for a merge done
  with the git CLI, and the person who pressed the button for a merge done on a git host
  (which records itself as the committer). Merges made by `wiki-memory sync` (subject
  `sync: merge ...`) join two members' copies of `main`: they review nothing.
- A page committed on `main` directly (or merged by its own author) is not reviewed; it is
  still searched and shown, labelled so, and handed over only under `[team] recall = "all"`.

The SessionStart context of the team tier (its newest durable pages, each with a line,
its words, its author and review) is written beside it (`recall.tier.CONTEXT_FILE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dulwich.diff_tree import tree_changes
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Commit, ObjectID, Tree

from wiki_memory.config import Project, replace_file
from wiki_memory.errors import PageError
from wiki_memory.recall import tier

if TYPE_CHECKING:
    from wiki_memory.index import Index
    from wiki_memory.store import Store

SYNC_MERGE = b"sync: merge "
_AUTHOR_KEY = re.compile(rb"^author:[ \t]*['\"]?(.+?)['\"]?[ \t]*$", re.M)
_EMAIL = re.compile(r"<([^<>]+)>")
CONTEXT_PAGES = 200
CONTEXT_TYPES = frozenset({"gotcha", "procedure", "decision", "fact", "preference", "note"})


def _email(ident: str | None) -> str:
    """The email of "Name <email>" (lower case), else the whole text."""
    if not ident:
        return ""
    found = _EMAIL.search(ident)
    return (found.group(1) if found else ident).strip().lower()


def _is_page(path: bytes) -> bool:
    return path.endswith(b".md") and not path.startswith(b".")


def _pages_of(repo: Any, tree_id: bytes, prefix: bytes = b"") -> Iterable[bytes]:
    tree = repo[tree_id]
    assert isinstance(tree, Tree)
    for entry in tree.iteritems():
        path = prefix + entry.path
        if entry.mode & 0o170000 == 0o040000:
            yield from _pages_of(repo, entry.sha, path + b"/")
        elif _is_page(path):
            yield path


def _has(repo: Any, tree_id: bytes, path: bytes) -> bool:
    try:
        tree_lookup_path(repo.__getitem__, ObjectID(tree_id), path)
    except KeyError:
        return False
    return True


def added_by(repo: Any, head: bytes) -> tuple[dict[bytes, bytes], dict[bytes, Commit]]:
    """page path -> the commit that first added it (of the history of `head`), and each
    commit of that history by its id."""
    commits: dict[bytes, Commit] = {}
    first: dict[bytes, bytes] = {}
    for entry in repo.get_walker(include=[ObjectID(head)], reverse=True):
        commit = entry.commit
        commits[commit.id] = commit
        if not commit.parents:
            added = list(_pages_of(repo, commit.tree))
        else:
            base = repo[commit.parents[0]].tree
            added = [
                c.new.path
                for c in tree_changes(repo.object_store, base, commit.tree)
                if c.type == "add" and c.new is not None and c.new.path and _is_page(c.new.path)
            ]
            if len(commit.parents) > 1:
                # Added on a merged side: the side's own commit added it (found there).
                others = [repo[p].tree for p in commit.parents[1:]]
                added = [p for p in added if not any(_has(repo, t, p) for t in others)]
        for path in added:
            first.setdefault(path, commit.id)
    return first, commits


def merged_by(repo: Any, commits: dict[bytes, Commit]) -> dict[bytes, list[str]]:
    """commit id -> the authors of the merges (not sync's) that brought it onto `main`."""
    merged: dict[bytes, list[str]] = {}
    for commit in commits.values():
        if len(commit.parents) < 2 or commit.message.startswith(SYNC_MERGE):
            continue
        merger = commit.author.decode("utf-8", "replace")
        side = repo.get_walker(include=list(commit.parents[1:]), exclude=[commit.parents[0]])
        for entry in side:
            merged.setdefault(entry.commit.id, []).append(merger)
    return merged


def _front_matter_author(data: bytes) -> str | None:
    if not data.startswith(b"---"):
        return None
    end = data.find(b"\n---", 3)
    found = _AUTHOR_KEY.search(data[: end if end > 0 else 4096])
    return found.group(1).decode("utf-8", "replace").strip() if found else None


def work_out(
    store: Store, arrived: dict[str, int] | None = None, declared: dict[str, str | None] | None = None
) -> tuple[str | None, dict[str, tier.Provenance]]:
    """(the head read, path -> provenance) for every page of the team wiki; `arrived`, when
    given, receives each page's arrival on the team tier (the adding commit's time).
    `declared` (blob id -> its front-matter author, from the last time) spares reading the
    blobs already read; it is left holding those of the pages now."""
    head = store.head()
    if head is None:
        return None, {}
    repo = store.repo
    first, commits = added_by(repo, head)
    merges = merged_by(repo, commits)
    rows: dict[str, tier.Provenance] = {}
    before = dict(declared or {})
    now: dict[str, str | None] = {}
    for path, blob in store.page_files(head):
        raw = path.encode()
        added = first.get(raw)
        commit = commits.get(added) if added else None
        key = blob.decode()
        if key in before:
            author = before[key]
        else:
            author = _front_matter_author(repo[blob].as_raw_string())
        now[key] = author
        if author is None and commit is not None:
            author = commit.author.decode("utf-8", "replace")
        reviewers = [m for m in merges.get(added, []) if _email(m) != _email(author)] if added else []
        rows[path] = tier.Provenance(author, bool(reviewers), reviewers[0] if reviewers else None)
        if arrived is not None and commit is not None:
            arrived[path] = int(commit.commit_time)
    if declared is not None:
        declared.clear()
        declared.update(now)
    return head.decode(), rows


def refresh(team: Project, store: Store, index: Index | None) -> dict[str, tier.Provenance]:
    """Work the provenance out again and write it, with the team's SessionStart context
    (nothing to do, and {} returned, when the team wiki has not moved since)."""
    now = store.head()
    if now is not None and tier.head_of(team) == now.decode() and (team.home / tier.CONTEXT_FILE).exists():
        return {}
    arrived: dict[str, int] = {}
    declared = tier.declared_of(team)
    head, rows = work_out(store, arrived, declared)
    tier.write(team, head, rows, declared)
    write_context(team, store, index, rows, arrived)
    return rows


def write_context(
    team: Project, store: Store, index: Index | None, rows: dict[str, tier.Provenance], arrived: dict[str, int]
) -> None:
    """The team's durable pages SessionStart chooses from: the `CONTEXT_PAGES` that arrived
    last on the team tier (a page written by hand may have no `updated`), each with its first
    line, its words, its status, author and review."""
    from wiki_memory.consolidate.context import terms  # deferred: the consolidator, not loaded with Memory
    from wiki_memory.consolidate.context_build import (
        _line,  # deferred: the consolidator, not loaded with Memory
    )

    meta = index.page_meta(sorted(rows)) if index is not None else {}
    durable = [m for m in meta.values() if m.type in CONTEXT_TYPES]
    durable.sort(key=lambda m: (arrived.get(m.path, 0), m.updated or ""), reverse=True)
    pages: list[dict[str, Any]] = []
    for order, m in enumerate(durable[:CONTEXT_PAGES]):
        try:
            page = store.read(m.path)
        except (PageError, KeyError):
            continue
        prov = rows.get(m.path) or tier.Provenance(None, False)
        pages.append(
            {
                "path": m.path,
                "title": m.title,
                "type": m.type,
                "status": m.status,
                "reason": page.meta.get("status_reason"),
                "line": _line(page.body, 240),
                "terms": terms(m.title, page.body),
                "author": prov.author,
                "reviewed": prov.reviewed,
                "reviewer": prov.reviewer,
                "order": CONTEXT_PAGES - order,
            }
        )
    replace_file(team.home / tier.CONTEXT_FILE, json.dumps({"version": 1, "pages": pages}) + "\n")
