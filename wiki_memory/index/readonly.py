"""The index file as a process that does not own it reads it: the hook's recall, its moments
table and the warm helper. The schema version lives here, once (`schema`, which makes and
rebuilds the file, imports it), and every read-only connection is opened here, so that none
reads the columns of another version: a file of another version (an index not yet rebuilt
after an upgrade) is refused with `IndexSchemaMismatch`, and the caller answers nothing.

Standard library only, and the C module `_sqlite3` rather than the `sqlite3` package (which
imports `datetime` for adapters a hook never uses): the hook path imports this module.
"""

from __future__ import annotations

import _sqlite3
import os

from wiki_memory.errors import WikiMemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

# Bump on any change to the tables or to what goes in them (chunking, embedded text):
# an index of another version is deleted and rebuilt from the store.
# 7: vectors as float16 (VECTOR_DTYPE), FTS5 contentless (no query reads its columns back).
SCHEMA_VERSION = "7"


class IndexSchemaMismatch(WikiMemoryError):
    """The index file is of another schema version than this code reads."""


def connect(path: os.PathLike[str] | str, busy_ms: int) -> sqlite3.Connection | None:
    """A read-only connection to the index at `path`, waiting at most `busy_ms` on a writer's
    lock; None when there is no index file (never creates one). Raises `IndexSchemaMismatch`
    when the file is of another schema version, `_sqlite3.Error` when it cannot be read."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    conn = _sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=busy_ms / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except _sqlite3.Error:
        conn.close()
        raise
    if not row or row[0] != SCHEMA_VERSION:
        conn.close()
        raise IndexSchemaMismatch(
            f"the search index {path} is of schema version {row[0] if row else '?'}, this wiki-memory reads "
            f"{SCHEMA_VERSION}: nothing recalled until it is rebuilt (the next search or `wiki-memory reindex`)"
        )
    return conn


def generation(conn: sqlite3.Connection) -> str | None:
    """The index's generation: it moves with every write to the file (pages or vectors)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return str(row[0]) if row else None


def pages_of_types(conn: sqlite3.Connection, types: Sequence[str]) -> list[tuple[str, str, str, str, str]]:
    """(path, title, type, status, blob) of every page of one of `types`."""
    marks = ", ".join("?" * len(types))
    return conn.execute(
        f"SELECT path, title, type, status, blob FROM pages WHERE type IN ({marks})", tuple(types)
    ).fetchall()


def chunk_texts(conn: sqlite3.Connection, paths: Sequence[str]) -> list[tuple[str, str | None, str]]:
    """(page, heading, text) of every chunk of `paths`, page by page in their order."""
    out: list[tuple[str, str | None, str]] = []
    for start in range(0, len(paths), 500):
        part = list(paths[start : start + 500])
        out += conn.execute(
            f"SELECT page, heading, text FROM chunks WHERE page IN ({', '.join('?' * len(part))}) "
            "ORDER BY page, ordinal",
            part,
        ).fetchall()
    return out


def vectors_of(conn: sqlite3.Connection, model: str) -> list[tuple[str, bytes, int, str, str | None]]:
    """(page, vector blob, chunk id, page type, page status) of every chunk vector of `model`,
    in chunk order."""
    return conn.execute(
        "SELECT c.page, v.vec, c.id, p.type, p.status FROM vectors v JOIN chunks c ON c.id = v.chunk "
        "JOIN pages p ON p.path = c.page WHERE +v.model = ? ORDER BY v.chunk",
        (model,),
    ).fetchall()
