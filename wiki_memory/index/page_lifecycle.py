"""What the index knows of every page's lifecycle, read without parsing a page: status,
successor, anchors, expiry; the links that point at pages no longer handed out; and each
page's first vector, for duplicate checks. The memory layer's `review` and the distiller's
duplicate check read these (through `Index`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wiki_memory.index.embed import VECTOR_DTYPE


@dataclass(frozen=True)
class LifecycleRow:
    """One page as the lifecycle sees it."""

    path: str
    title: str
    type: str
    status: str
    superseded_by: str | None
    anchors: str | None  # the JSON of `pages.anchors.anchors_json`
    expires: str | None  # YYYY-MM-DD
    updated: str | None


def rows(conn: sqlite3.Connection, types: Sequence[str] | None = None) -> list[LifecycleRow]:
    """Every page (of `types`, when given), by path."""
    sql = "SELECT path, title, type, status, superseded_by, anchors, expires, updated FROM pages"
    params: list[str] = []
    if types:
        sql += f" WHERE type IN ({', '.join('?' * len(types))})"
        params = list(types)
    return [
        LifecycleRow(path, title, ptype, status or "active", successor, anchors, expires, updated)
        for path, title, ptype, status, successor, anchors, expires, updated in conn.execute(
            sql + " ORDER BY path", params
        )
    ]


def links_into(conn: sqlite3.Connection, statuses: Sequence[str]) -> list[tuple[str, str, str]]:
    """(source, target, target status) for each link from a page not of `statuses` to a page
    of `statuses` (an active page still pointing at a wrong one)."""
    marks = ", ".join("?" * len(statuses))
    sql = (
        "SELECT DISTINCT l.source, l.resolved, t.status FROM links l "
        "JOIN pages t ON t.path = l.resolved JOIN pages s ON s.path = l.source "
        f"WHERE t.status IN ({marks}) AND s.status NOT IN ({marks}) AND l.source != l.resolved "
        "ORDER BY l.source, l.resolved"
    )
    return [(s, t, st) for s, t, st in conn.execute(sql, [*statuses, *statuses])]


def first_vectors(conn: sqlite3.Connection, model: str, paths: Sequence[str]) -> dict[str, Any]:
    """path -> the vector (float32 array) of the page's first chunk, for pages that have one."""
    import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

    found: dict[str, Any] = {}
    for start in range(0, len(paths), 500):
        part = list(paths[start : start + 500])
        # CROSS JOIN: chunks first, by (page, ordinal). Left to itself SQLite walked every
        # vector of the model for each batch (0.3 s a batch at 40,000 chunks).
        sql = (
            "SELECT c.page, v.vec FROM chunks c CROSS JOIN vectors v ON v.chunk = c.id AND v.model = ? "
            f"WHERE c.ordinal = 0 AND c.page IN ({', '.join('?' * len(part))})"
        )
        for page, vec in conn.execute(sql, [model, *part]):
            found[page] = np.frombuffer(vec, dtype=VECTOR_DTYPE).astype(np.float32)
    return found


def first_texts(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """path -> the text of the page's first chunk (its opening words)."""
    return _by_path(conn, "SELECT page, text FROM chunks WHERE ordinal = 0 AND page IN ({})", paths)


def anchors_of(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """path -> its anchors' JSON, for those of `paths` that have anchors."""
    return _by_path(conn, "SELECT path, anchors FROM pages WHERE anchors IS NOT NULL AND path IN ({})", paths)


def _by_path(conn: sqlite3.Connection, sql: str, paths: Sequence[str]) -> dict[str, str]:
    """{path: value} of a two-column query whose `IN ({})` takes the paths, 500 at a time."""
    found: dict[str, str] = {}
    for start in range(0, len(paths), 500):
        part = list(paths[start : start + 500])
        found.update(dict(conn.execute(sql.format(", ".join("?" * len(part))), part)))
    return found
