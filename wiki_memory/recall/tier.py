"""The team tier as the hook path sees it (standard library only).

A project that joined a team has a second wiki, `Project.team()`, with its own index. Its
pages are named `team:<path>` wherever they are handed over or recorded (recall, the
session's record of what it was handed, SessionStart), so that a team page and a personal
page at the same path never pass for one another. Who wrote each team page and whether it
was reviewed (merged into the team's `main` by someone other than its author) is worked out
from the team repository's history by the memory layer after each sync, and kept in a
small SQLite file beside the team index (`provenance.sqlite`), which recall reads here
for the few pages it is about to hand over.

`[team] recall` in `config.toml` decides which team pages recall and SessionStart hand:
"reviewed" (the default) only reviewed ones, "all" every active one. A page marked wrong
is never handed, whatever the setting.
"""

from __future__ import annotations

import _sqlite3
import json
import os
from collections import namedtuple

from wiki_memory import config
from wiki_memory.config.settings import TeamSettings
from wiki_memory.pages.fence import inline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from wiki_memory.config import Project

PREFIX = "team:"
PROVENANCE_FILE = "provenance.sqlite"
CONTEXT_FILE = "team-context.json"
RECALL_MODES = ("reviewed", "all")
DEFAULT_RECALL = TeamSettings.recall
BUSY_MS = 100


class Provenance(namedtuple("Provenance", "author reviewed reviewer", defaults=(None,))):
    """Who brought a team page (`author`: "Name <email>"), whether someone else merged it
    into the team's main (`reviewed`), and who (`reviewer`)."""

    __slots__ = ()


def is_team(path: str) -> bool:
    return path.startswith(PREFIX)


def named(path: str) -> str:
    """A team page's path as it is handed over and recorded: `team:<path>`."""
    return path if path.startswith(PREFIX) else PREFIX + path


def bare(path: str) -> str:
    """A team page's path inside the team wiki."""
    return path[len(PREFIX) :] if path.startswith(PREFIX) else path


def recall_mode(env: Mapping[str, str] | None = None) -> str:
    """`[team] recall`: "reviewed" (default) or "all"; an unknown value is the default."""

    try:
        value = config.load_settings(env).team.recall
    except Exception:  # noqa: BLE001 - a broken config.toml: the safer default
        return DEFAULT_RECALL
    return value if value in RECALL_MODES else DEFAULT_RECALL


def provenance_path(team: Project) -> str:
    return os.path.join(os.fspath(team.home), PROVENANCE_FILE)


def read(team: Project, paths: Iterable[str]) -> dict[str, Provenance]:
    """path (in the team wiki) -> its provenance, for those of `paths` it is known for."""
    wanted = [bare(p) for p in paths]
    path = provenance_path(team)
    if not wanted or not os.path.isfile(path):
        return {}
    try:
        conn = _sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_MS / 1000, isolation_level=None)
    except _sqlite3.Error:
        return {}
    try:
        found: dict[str, Provenance] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for p, author, reviewed, reviewer in conn.execute(
                f"SELECT path, author, reviewed, reviewer FROM pages WHERE path IN ({marks})", part
            ):
                found[p] = Provenance(author, bool(reviewed), reviewer)
        return found
    except _sqlite3.Error:
        return {}
    finally:
        conn.close()


def write(
    team: Project, head: str | None, rows: Mapping[str, Provenance], declared: Mapping[str, str | None] | None = None
) -> None:
    """Replace the provenance file whole (a new file renamed over the old: a hook reading it
    sees the old one or the new one, never half of either). `declared`: the front-matter
    author of each page blob (by id), kept so that the next refresh reads only new blobs."""
    target = provenance_path(team)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    conn = _sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.execute("CREATE TABLE pages (path TEXT PRIMARY KEY, author TEXT, reviewed INTEGER, reviewer TEXT)")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("CREATE TABLE blobs (blob TEXT PRIMARY KEY, declared TEXT)")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?)",
            [(p, v.author, int(bool(v.reviewed)), v.reviewer) for p, v in rows.items()],
        )
        conn.executemany("INSERT INTO blobs VALUES (?, ?)", list((declared or {}).items()))
        conn.execute("INSERT INTO meta VALUES ('head', ?)", (head or "",))
        conn.execute("COMMIT")
    finally:
        conn.close()
    os.replace(tmp, target)


def select(team: Project, sql: str) -> list[tuple[Any, ...]] | None:
    """The rows of one query on the provenance file, read-only; None when there is no file or
    it cannot be read (a file written before a table existed, a file being replaced)."""
    path = provenance_path(team)
    if not os.path.isfile(path):
        return None
    try:
        conn = _sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_MS / 1000, isolation_level=None)
        try:
            return list(conn.execute(sql))
        finally:
            conn.close()
    except _sqlite3.Error:
        return None


def declared_of(team: Project) -> dict[str, str | None]:
    """blob id -> the front-matter author it declares (None: none), as last written."""
    # No file, or one written before the table existed: every blob is read again.
    return {str(b): d for b, d in select(team, "SELECT blob, declared FROM blobs") or ()}


def head_of(team: Project) -> str | None:
    """The team wiki's commit the provenance file was worked out from."""
    rows = select(team, "SELECT value FROM meta WHERE key = 'head'")
    return str(rows[0][0]) if rows and rows[0][0] else None


def withheld(prov: Provenance | None, mode: str) -> str | None:
    """Why a team page is not handed over under `[team] recall = mode`, or None."""
    if mode == "all":
        return None
    if prov is None:
        return "team page not reviewed yet (its history is still to be read: `wiki-memory sync`)"
    if not prov.reviewed:
        return "team page not reviewed (it reached the team's main without a merge by someone else)"
    return None


def label(prov: Provenance | None) -> str:
    """How a team page is labelled where it is handed over."""
    who = prov.author if prov is not None and prov.author else "unknown author"
    if prov is not None and prov.reviewed and prov.reviewer:
        return f"team page by {who}, merged by {prov.reviewer}"
    if prov is not None and not prov.reviewed:
        return f"team page by {who}, not reviewed"
    return f"team page by {who}"


def load_context(team: Project) -> dict[str, Any] | None:
    """The team's SessionStart context (see `memory.team`), or None."""

    try:
        with open(os.path.join(os.fspath(team.home), CONTEXT_FILE), "rb") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def start_block(
    team: Project, terms: Sequence[str], budget: int, mode: str, limit: int = 5
) -> tuple[str | None, list[str]]:
    """The block SessionStart adds for a joined team: the team's procedures and the team
    gotchas and decisions that share the most words with the work at hand (`terms`, the
    handoff's), else its newest; wrong pages never, unreviewed ones only under "all". Each
    line names the page (`team:<path>`) and its author. (text or None, the paths named)."""

    ctx = load_context(team)
    if not ctx:
        return None, []
    entries = [e for e in ctx.get("pages") or [] if isinstance(e, dict)]
    entries = [e for e in entries if e.get("status") in (None, "active", "stale")]
    if mode != "all":
        entries = [e for e in entries if e.get("reviewed")]
    words = set(terms)
    procedures = [e for e in entries if e.get("type") == "procedure"][:limit]
    others = [e for e in entries if e.get("type") != "procedure"]
    scored = sorted(others, key=lambda e: (-len(words & set(e.get("terms") or ())), -float(e.get("order") or 0)))
    if words:
        related = [e for e in scored if len(words & set(e.get("terms") or ())) >= 2]
    else:
        related = scored
    chosen = procedures + related[: max(0, limit - len(procedures))]
    if not chosen:
        return None, []
    lines = ["Team pages (from the team tier, written by teammates) that may bear on this work:"]
    used = len(lines[0]) + 1
    paths = []
    for e in chosen:
        prov = Provenance(e.get("author"), bool(e.get("reviewed")), e.get("reviewer"))
        line = (
            f"- [{inline(e.get('type', 'note'), 40)}] {inline(e.get('title'), 200)} "
            f"({inline(named(str(e.get('path'))), 300)}; {inline(label(prov), 200)})"
        )
        if e.get("line"):
            line += f": {inline(e['line'], 300)}"
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        paths.append(named(str(e.get("path"))))
        used += len(line) + 1
    if not paths:
        return None, []
    return "\n".join(lines), paths
