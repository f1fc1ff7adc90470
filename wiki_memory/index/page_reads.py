"""Reads of the index's page and link rows, without parsing a page: a page's links and
backlinks, pages by id or title, what the index knows of pages by path, the link pairs of the
whole wiki, pages by status, missing id or path glob. Each takes the index's connection; the
lock and the catch-up are `Index`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from wiki_memory.index.links import Link
from wiki_memory.index.results import PageMeta

_META = "SELECT path, id, title, type, tags, status, created, updated FROM pages"


def links_of(conn: sqlite3.Connection, path: str) -> list[Link]:
    """The `[[links]]` of a page, in order, with the path each resolves to (or None)."""
    rows = conn.execute(
        "SELECT target, resolved, heading, alias FROM links WHERE source = ? ORDER BY ordinal", (path,)
    ).fetchall()
    return [Link(target, resolved, heading, alias) for target, resolved, heading, alias in rows]


def backlinks(conn: sqlite3.Connection, path: str) -> list[str]:
    """The pages that link to `path`, sorted."""
    rows = conn.execute(
        "SELECT DISTINCT source FROM links WHERE resolved = ? AND source != ? ORDER BY source", (path, path)
    ).fetchall()
    return [r[0] for r in rows]


def named(conn: sqlite3.Connection, ref: str) -> list[str]:
    """The pages whose id is `ref` or whose title is `ref` (case-insensitive), sorted."""
    wanted = ref.strip().casefold()
    rows = conn.execute("SELECT path, id, title FROM pages").fetchall()
    return sorted(path for path, page_id, title in rows if page_id == ref.strip() or (title or "").casefold() == wanted)


def meta_of(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, PageMeta]:
    """What the index knows of those of `paths` that are pages."""
    found: dict[str, PageMeta] = {}
    for start in range(0, len(paths), 500):
        part = list(paths[start : start + 500])
        for row in conn.execute(f"{_META} WHERE path IN ({', '.join('?' * len(part))})", part):
            found[row[0]] = _page_meta(row)
    return found


def link_pairs(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every link from one page to another that exists: (source, target), each pair once."""
    rows = conn.execute(
        "SELECT DISTINCT source, resolved FROM links WHERE resolved IS NOT NULL AND resolved != source"
    ).fetchall()
    return [(source, target) for source, target in rows]


def pages_where(
    conn: sqlite3.Connection, statuses: Sequence[str], without_id: bool, path_glob: str | None, limit: int | None
) -> list[PageMeta]:
    """Pages whose status is one of `statuses`, or that have no id, or whose path matches
    `path_glob` (SQLite GLOB), sorted by path; the first `limit` of them when given."""
    clauses: list[str] = []
    params: list[str] = []
    if statuses:
        clauses.append(f"status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
    if without_id:
        clauses.append("(id IS NULL OR id = '')")
    if path_glob:
        clauses.append("path GLOB ?")
        params.append(path_glob)
    if not clauses:
        return []
    sql = f"{_META} WHERE {' OR '.join(clauses)} ORDER BY path" + (f" LIMIT {int(limit)}" if limit else "")
    return [_page_meta(row) for row in conn.execute(sql, params).fetchall()]


def counts(conn: sqlite3.Connection, model: str, pending: int) -> dict[str, object]:
    """What the index holds, in the order `Index.stats` shows it: pages, chunks, vectors of
    `model` (and the `pending` chunks without one), links and unresolved links."""
    count = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    return {
        "pages": count("SELECT count(*) FROM pages"),
        "chunks": count("SELECT count(*) FROM chunks"),
        "vectors": count("SELECT count(*) FROM vectors WHERE model = ?", model),
        "pending": pending,
        "model": model,
        "links": count("SELECT count(*) FROM links"),
        "unresolved_links": count("SELECT count(*) FROM links WHERE resolved IS NULL"),
    }


def _page_meta(row: Sequence[Any]) -> PageMeta:
    path, pid, title, ptype, tags, status, created, updated = row
    return PageMeta(path, pid, title, ptype, status or "active", tuple(json.loads(tags or "[]")), created, updated)
