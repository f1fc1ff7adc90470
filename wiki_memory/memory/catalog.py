"""What a home and a project hold, as users of other memory tools look for it first: every
project with its code path, pages, last session and size; a project's sessions; and pruning
old session pages out of the tree (their history kept; handoffs and distilled pages stay)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import PageError, WikiMemoryError
from wiki_memory.memory.instructions import after_bulk_commit
from wiki_memory.memory.memory import Memory
from wiki_memory.memory.projects import known_projects
from wiki_memory.memory.records import Actor
from wiki_memory.pages import parse_page

if TYPE_CHECKING:
    from wiki_memory.store import Store


@dataclass(frozen=True)
class ProjectSummary:
    """One project of the home, as `wiki-memory projects` lists it."""

    id: str
    name: str
    root: str | None
    wiki: str
    pages: int
    sessions: int
    last_session: str | None  # when the newest session page's session ended (or started)
    size: int  # bytes on disk: the wiki, its index and journals

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SessionRow:
    """A session page: which agent, which session, when, where the page is."""

    path: str
    title: str
    agent: str
    session_id: str
    started: str | None
    ended: str | None
    handoff: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _folder_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def project_summaries(env: Mapping[str, str] | None = None) -> list[ProjectSummary]:
    """Every project of the home that has a wiki, by name."""
    out = []
    for project in known_projects(env):
        with Memory(project) as memory:
            store = memory.store()
            files = [path for path, _blob in store.page_files()]
            rows = session_rows(memory)
        last = max((r.ended or r.started or "" for r in rows), default="") or None
        size = _folder_size(project.home) + (
            0 if project.wiki.is_relative_to(project.home) else _folder_size(project.wiki)
        )
        out.append(
            ProjectSummary(
                project.id,
                project.name,
                str(project.root) if project.root else None,
                str(project.wiki),
                len(files),
                len(rows),
                last,
                size,
            )
        )
    return out


def session_rows(memory: Memory) -> list[SessionRow]:
    """The project's session pages, newest first."""
    if not memory.exists:
        return []
    store = memory.store()
    rows = []
    for path, page in _session_pages(store):
        meta = page.meta
        rows.append(
            SessionRow(
                path,
                page.title,
                str(meta.get("agent") or ""),
                str(meta.get("session_id") or ""),
                _text(meta.get("started")) or page.created,
                _text(meta.get("ended")),
                _text(meta.get("handoff")),
            )
        )
    rows.sort(key=lambda r: (r.ended or r.started or "", r.path), reverse=True)
    return rows


def _text(value: Any) -> str | None:
    return str(value) if value else None


def _session_pages(store: Store) -> list[tuple[str, Any]]:
    out = []
    for path, blob in store.page_files():
        if not path.startswith("sessions/"):
            continue
        try:
            page = parse_page(store.repo[blob].as_raw_string().decode("utf-8", "replace"), path)
        except PageError:
            continue
        if page.type == "session":
            out.append((path, page))
    return out


@dataclass(frozen=True)
class Pruned:
    """What pruning removed (or, on a dry run, would): the session pages, the commit."""

    paths: tuple[str, ...]
    commit: str | None
    cutoff: str
    dry_run: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"paths": list(self.paths), "commit": self.commit, "cutoff": self.cutoff, "dry_run": self.dry_run}


def parse_age(text: str) -> timedelta:
    """`90d`, `12w`, `6m` (30 days each) or `1y` as a span of time."""
    raw = text.strip().lower()
    units = {"d": 1, "w": 7, "m": 30, "y": 365}
    if len(raw) < 2 or raw[-1] not in units or not raw[:-1].isdigit():
        raise WikiMemoryError(f"{text!r}: give an age like 90d, 12w, 6m or 1y")
    return timedelta(days=int(raw[:-1]) * units[raw[-1]])


def prune_sessions(
    memory: Memory, older_than: timedelta, *, dry_run: bool = False, now: datetime | None = None
) -> Pruned:
    """Take session pages whose session ended before `older_than` ago out of the tree, in
    one commit (they stay in the history: `git log --all -- sessions/`). Handoffs, distilled
    and every other page are untouched (a link to a pruned page reads it from history)."""
    cutoff = ((now or datetime.now(timezone.utc)) - older_than).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not memory.exists:
        return Pruned((), None, cutoff, dry_run)
    store = memory.store()
    with store.lock:
        rows = session_rows(memory)
        old = tuple(sorted(r.path for r in rows if (r.ended or r.started or "9999") < cutoff))
        commit = None
        if old and not dry_run:
            commit = store.commit(
                dict.fromkeys(old),
                f"prune: {len(old)} session pages older than {cutoff[:10]}",
                Actor().author(memory.wiki),
                body="They stay in the history; handoffs and distilled pages are untouched.",
            )
    if commit:
        after_bulk_commit(memory)
    return Pruned(old, commit, cutoff, dry_run)
