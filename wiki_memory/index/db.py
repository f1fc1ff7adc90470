"""The index's SQLite file as the other parts use it: one connection, the `meta` values
(the store commit reflected, the generation), transactions, and values kept in memory
while the generation stays.

The generation moves with every write to the file, by this process or another, so a
value read from the index and kept with its generation (`Kept`) is known stale the moment
anyone writes. A file rebuilt starts from a new generation (schema.py), never an old one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar, cast
from urllib.parse import quote

from wiki_memory.index import schema

T = TypeVar("T")


class Database:
    """The open index file. `conn` changes when the file is rebuilt: read it each time."""

    def __init__(self, path: Path, chunk_words: int):
        self.path = path
        self.chunking = str(chunk_words)
        self.rebuilt: str | None = None  # why the file was rebuilt when opened, if it was
        self.read_only_reason: str | None = None  # opened read only (a full disk)
        self._kept: list[Kept] = []
        self.conn = self._open()

    @classmethod
    def read_only(cls, path: Path, chunk_words: int) -> Database | None:
        """The index as it stands, opened without writing anything (no journal, no shared
        memory): for a full disk. None when there is no usable index to read."""

        if not path.is_file():
            return None
        try:
            conn = sqlite3.connect(
                f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True, check_same_thread=False, isolation_level=None
            )
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            chunking = conn.execute("SELECT value FROM meta WHERE key = 'chunking'").fetchone()
        except sqlite3.Error:
            return None
        if not version or version[0] != schema.SCHEMA_VERSION or not chunking or chunking[0] != str(chunk_words):
            conn.close()
            return None
        db = cls.__new__(cls)
        db.path, db.chunking, db.rebuilt, db._kept, db.conn = path, str(chunk_words), None, [], conn
        db.read_only_reason = "the disk is full"
        return db

    def _open(self) -> sqlite3.Connection:
        conn, reason = schema.open_db(self.path)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'chunking'").fetchone()
        except schema.DAMAGE as e:
            conn.close()
            if not schema.is_damage(e):
                raise
            schema.remove_files(self.path)
            conn, _ = schema.open_db(self.path)
            reason, row = f"unreadable ({e})", None
        self.rebuilt = reason
        if row is None:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('chunking', ?)", (self.chunking,))
        elif row[0] != self.chunking:
            # Chunks of another size: start over (derived data, rebuilt by the next sync).
            conn.close()
            schema.remove_files(self.path)
            conn, _ = schema.open_db(self.path)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('chunking', ?)", (self.chunking,))
            self.rebuilt = f"chunk size changed to {self.chunking} words"
        return conn

    def reopen_fresh(self, why: str) -> None:
        """The file broke under us (or a full reindex): delete it, create it empty; the next
        sync refills it."""
        self.close()
        schema.remove_files(self.path)
        self.forget()
        self.conn = self._open()
        self.rebuilt = why

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def forget(self) -> None:
        """Drop every value kept from the file (they may hold what a rollback undid)."""
        for kept in self._kept:
            kept.forget()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (BEGIN IMMEDIATE); rolled back on any error,
        and then every kept value is forgotten."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            # Trigger: a Ctrl-C can land after COMMIT went through, or SQLite has rolled back.
            # Why: a ROLLBACK then fails, and its error replaced the KeyboardInterrupt: the
            # watcher took a Ctrl-C for an index problem and ran on.
            if self.conn.in_transaction:
                try:
                    self.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            self.forget()
            raise

    # Meta ------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def head(self) -> str | None:
        """The store commit the index reflects (None before the first full sync)."""
        return self.meta("head")

    def generation(self) -> str | None:
        return self.meta("generation")

    def bump(self, *, embedding_only: bool = False) -> None:
        """Move the generation (inside the write's transaction). `embedding_only`: the write
        added vectors and nothing else, so the values kept with `survives_embedding` stay."""
        before = self.generation() if embedding_only else None
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        if embedding_only:
            after = self.generation()
            for kept in self._kept:
                if kept.survives_embedding:
                    kept.moved(before, after)


class Kept(Generic[T]):
    """A value read from the index, valid while the generation it was read at stays.

    `survives_embedding`: the value does not depend on vectors (page names, word counts),
    so a write that only adds vectors keeps it.
    """

    def __init__(self, db: Database, *, survives_embedding: bool = False):
        self._db = db
        self.survives_embedding = survives_embedding
        self._at: str | None = None
        self._value: T | None = None
        db._kept.append(self)

    def valid(self) -> bool:
        """Is the value kept that of the index as it is now?"""
        return self._at is not None and self._at == self._db.generation()

    @property
    def value(self) -> T:
        """The value kept (check `valid` first)."""
        return cast(T, self._value)

    def get(self) -> T | None:
        """The value, or None when it is stale or was never read."""
        return self.value if self.valid() else None

    def put(self, value: T) -> T:
        """Keep `value` as read at the current generation."""
        self._at = self._db.generation()
        self._value = value
        return value

    def forget(self) -> None:
        self._at = None
        self._value = None

    def moved(self, before: str | None, after: str | None) -> None:
        """The generation moved from `before` to `after` by a write this value survives."""
        if self._at is not None and self._at == before:
            self._at = after
