"""The index's SQLite file: one per project, derived from the git store, rebuilt rather
than migrated.

Tables: `pages` (one row per page, with the git blob id it was indexed from, its
anchors as JSON and its lifecycle: status, superseded_by, expires), `page_tags`,
`chunks` (search-sized pieces of a page), `chunks_fts` (FTS5 over title, heading and text;
porter + unicode61; rowid = chunk id; contentless: the text lives in `chunks` alone, and a
row is deleted by handing FTS5 the values it was made of), `vectors` (one float16 blob per
chunk and model, read into float32),
`links` (`[[...]]` links with their resolved path) and `meta` (schema version, the store
commit the index reflects, a generation counter that moves whenever vectors change).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

# The schema version has one owner, the module every reader opens the file through.
from wiki_memory.index.readonly import SCHEMA_VERSION

# Indexes added to files of this version in place when missing (creating one is quick even in
# a big wiki; rebuilding the file instead would embed every chunk again).
ADDED_INDEXES = (
    # Which chunks lack a vector: a scan of this narrow index instead of one lookup per chunk
    # in the wide vectors table (twenty times faster in a big wiki, and it runs after every
    # write).
    "CREATE INDEX IF NOT EXISTS vectors_by_model ON vectors(model, chunk)",
)

# Columns added to files of this version in place when missing: (table, column, declaration,
# what makes the next sync fill it). Why in place: a rebuilt file embeds every chunk again.
ADDED_COLUMNS = (
    # The superseded pages are read again from the store on the next search's sync (their
    # chunks keep their vectors); forgetting the head makes that sync happen.
    (
        "pages",
        "superseded_by",
        "TEXT",
        ("UPDATE pages SET blob = '' WHERE status = 'superseded'", "DELETE FROM meta WHERE key = 'head'"),
    ),
    # The code files a page is about (pages.anchors), as JSON. Nothing to refill: no page
    # had anchors before the column existed, and a page written since fills its own row.
    ("pages", "anchors", "TEXT", ()),
    # The date after which a page needs a look (`expires`, YYYY-MM-DD). Nothing to refill:
    # the key came with the lifecycle, and a page written since fills its own row
    # (`reindex --full` reads a hand-written one from before).
    ("pages", "expires", "TEXT", ()),
)

DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages(
    path TEXT PRIMARY KEY,
    id TEXT,
    title TEXT NOT NULL,
    type TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    created TEXT,
    updated TEXT,
    blob TEXT NOT NULL,
    superseded_by TEXT,
    anchors TEXT,
    expires TEXT
);
CREATE INDEX pages_type ON pages(type);
CREATE INDEX pages_updated ON pages(updated);
CREATE TABLE page_tags(page TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY(page, tag)) WITHOUT ROWID;
CREATE INDEX page_tags_tag ON page_tags(tag);
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    page TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    hash TEXT NOT NULL,
    UNIQUE(page, ordinal)
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(title, heading, text, content='', tokenize='porter unicode61');
CREATE TABLE vectors(
    chunk INTEGER NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY(chunk, model)
) WITHOUT ROWID;
CREATE INDEX vectors_by_model ON vectors(model, chunk);
CREATE TABLE links(
    source TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    target TEXT NOT NULL,
    heading TEXT,
    alias TEXT,
    resolved TEXT,
    -- The names a target can answer to (see links.target_keys): a changed page re-resolves
    -- only the links that name it.
    key_full TEXT,
    key_tail TEXT,
    key_slug TEXT
);
CREATE INDEX links_source ON links(source);
CREATE INDEX links_resolved ON links(resolved);
CREATE INDEX links_key_full ON links(key_full);
CREATE INDEX links_key_tail ON links(key_tail);
CREATE INDEX links_key_slug ON links(key_slug);
"""


class IndexCorrupt(Exception):
    """The file is not a usable index: rebuild it."""


#: What reading a damaged file can raise: SQLite's errors, and text that is not UTF-8 any
#: more (a flipped byte in a table or column name fails inside a PRAGMA).
DAMAGE = (sqlite3.DatabaseError, IndexCorrupt, UnicodeDecodeError)


def is_damage(error: BaseException) -> bool:
    """True when an SQLite error means the file is damaged (rebuild it), False when it is
    passing trouble such as another process holding the lock (never delete for that)."""
    if isinstance(error, (IndexCorrupt, UnicodeDecodeError)):
        return True
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    message = str(error).lower()
    if "could not decode" in message:
        return True  # text that is not UTF-8 in the file (Python's sqlite3 says so this way too)
    if any(
        word in message
        for word in (
            "locked",
            "busy",
            "readonly",
            "read-only",
            "disk i/o",
            "unable to open",
            "out of memory",
            "interrupted",
        )
    ):
        return False
    return (
        not isinstance(error, sqlite3.OperationalError)
        or "no such" in message
        or "malformed" in message
        or "not a database" in message
    )


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def _check(conn: sqlite3.Connection) -> str | None:
    """The schema version of an existing index, None for an empty file; raises on damage."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not tables:
        return None
    if "meta" not in tables:
        raise IndexCorrupt("no meta table")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return row[0] if row else ""


def remove_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def open_db(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """A connection to the index at `path`, created or rebuilt as needed.

    Returns (connection, why it was rebuilt or None). A file of another schema version, or
    one SQLite cannot read, is deleted and created afresh: the index is derived data.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    reason: str | None = None
    if path.is_dir() and not path.is_symlink():
        # Not ours to delete (someone's folder of that name), and SQLite can never open it.
        aside = path.with_name(f"{path.name}.not-a-file-{time.time_ns()}")
        os.rename(path, aside)
        reason = f"it was a directory (moved aside to {aside.name})"
    for attempt in range(2):
        conn = None
        try:
            conn = _connect(path)
            conn.execute("PRAGMA journal_mode = WAL")
            version = _check(conn)
            if version == SCHEMA_VERSION:
                for sql in ADDED_INDEXES:
                    conn.execute(sql)
                _add_columns(conn)
                return conn, reason
            if version is None:
                _create(conn)
                return conn, reason
            reason = f"schema version {version or '?'} is not {SCHEMA_VERSION}"
        except DAMAGE as e:
            if not is_damage(e):
                if conn is not None:
                    conn.close()
                raise
            reason = f"unreadable ({e})"
        if conn is not None:
            conn.close()
        if attempt == 1:
            break
        remove_files(path)
    raise IndexCorrupt(f"{path}: cannot create the index ({reason})")


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add the ADDED_COLUMNS a file lacks, in one transaction with what refills them."""
    for table, column, declaration, refill in ADDED_COLUMNS:
        if any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})")):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have added it between our check and the lock.
            if not any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})")):
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
                for sql in refill:
                    conn.execute(sql)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created it between our check and the lock.
        if _check(conn) is None:
            # Statement by statement: executescript would commit the transaction.
            for statement in DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            # The generation starts from the clock, so a rebuilt file never repeats an old one
            # (a process caching by generation would otherwise trust stale state).
            conn.execute(
                "INSERT INTO meta VALUES ('schema', ?), ('generation', ?)",
                (SCHEMA_VERSION, str(time.time_ns() // 1000)),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
