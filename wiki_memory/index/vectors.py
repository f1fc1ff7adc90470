"""The vectors of an index's chunks: embedding the chunks that have none yet (within a
time budget when someone waits), and the matrix of every vector, kept in memory for search
and patched in place by this process's writes.

A chunk's vector is for the text `embed_text` gives; its `hash` column is `text_hash` of
that text, so a rewritten page keeps the vectors of the chunks whose text did not change.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from wiki_memory.index.db import Database, Kept
from wiki_memory.index.embed import Embedder, EmbeddingFailed, to_blob
from wiki_memory.index.matrix import VectorMatrix
from wiki_memory.index.results import Progress

# Chunks embedded inside one search at most: a backlog (an import, a pull) or a huge page
# is caught up over several searches or by `reindex`, never one long wait (what is left is
# still found by its words).
PENDING_IN_SEARCH = 256
# A page's first chunks get vectors, this many at most; the rest are found by their words.
# Why: a 1.2 MB page (3,000 chunks) kept `watch --once` embedding for over two minutes, and
# a page of that size is a log or a dump, whose meaning its beginning carries.
EMBEDDED_CHUNKS = 64
# Where chunk `c` should have a vector for the model given as the parameter, and has none.
NO_VECTOR = (
    f"c.ordinal < {EMBEDDED_CHUNKS} AND NOT EXISTS "
    "(SELECT 1 FROM vectors v INDEXED BY vectors_by_model WHERE v.model = ? AND v.chunk = c.id)"
)


def embed_text(title: str, heading: str, text: str) -> str:
    """What the model sees for a chunk: the page title (dates and names live there) first."""
    head = title if not heading or heading == title else f"{title} - {heading}"
    return f"{head}\n{text}" if text else head


def text_hash(text: str) -> str:
    """The digest a chunk keeps of its `embed_text`: an equal digest keeps its vector."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class Vectors:
    """The vectors of one index for one model (the embedder's)."""

    def __init__(self, db: Database, embedder: Embedder):
        self.db = db
        self.embedder = embedder
        self.matrix_loads = 0  # how many times every vector was read from the file
        self._matrix: Kept[VectorMatrix | None] = Kept(db)
        self._complete: Kept[bool] = Kept(db)  # kept (True) when no chunk lacks a vector

    def by_text_hash(self) -> dict[str, list[tuple[str, int, bytes]]]:
        """Every vector, by the hash of the text it was computed from (none if unreadable)."""
        carried: dict[str, list[tuple[str, int, bytes]]] = {}
        try:
            query = "SELECT c.hash, v.model, v.dim, v.vec FROM chunks c JOIN vectors v ON v.chunk = c.id"
            for h, model, dim, vec in self.db.conn.execute(query):
                carried.setdefault(h, []).append((model, dim, vec))
        except sqlite3.DatabaseError:
            return {}
        return carried

    def pending_count(self) -> int:
        """Chunks without a vector for the current model (among those that get one)."""
        count: int = self.db.conn.execute(
            f"SELECT (SELECT count(*) FROM chunks WHERE ordinal < {EMBEDDED_CHUNKS}) - (SELECT count(*) FROM vectors v "
            f"INDEXED BY vectors_by_model JOIN chunks c ON c.id = v.chunk WHERE v.model = ? "
            f"AND c.ordinal < {EMBEDDED_CHUNKS})",
            (self.embedder.name,),
        ).fetchone()[0]
        return count

    def other_models(self) -> bool:
        """Do vectors of another model than the current one remain (the model was changed)?"""
        return (
            self.db.conn.execute(
                "SELECT 1 FROM vectors INDEXED BY vectors_by_model WHERE model != ? LIMIT 1", (self.embedder.name,)
            ).fetchone()
            is not None
        )

    def drop_other_models(self) -> int:
        """Delete the vectors of every other model (once the current one has all its own)."""
        with self.db.transaction():
            deleted = self.db.conn.execute("DELETE FROM vectors WHERE model != ?", (self.embedder.name,)).rowcount
            if deleted:
                self.db.bump(embedding_only=True)
        return int(deleted)

    def changing_model(self) -> bool:
        """Is the index amid a change of model: a backlog beyond what a search embeds, and
        vectors of another model? Then search goes on by words while `rebuild` runs."""
        return not self.known_complete() and self.other_models() and self.pending_count() > PENDING_IN_SEARCH

    def known_complete(self) -> bool:
        """Is every chunk known to have its vector at the index's current generation?"""
        return self._complete.get() is True

    def catch_up(self, seconds: float) -> bool:
        """Embed pending chunks (PENDING_IN_SEARCH at most) for about `seconds`, one batch at
        least; True while some are left."""
        # Counting pending chunks scans the chunks: do it once per change of the index.
        if self.known_complete():
            return False
        pending = self.pending_count()
        if pending:
            pending -= self.embed_pending(limit=PENDING_IN_SEARCH, deadline=time.monotonic() + seconds)
        if pending <= 0:
            self._complete.put(True)
        return pending > 0

    def embed_written(self, pages: Sequence[str], seconds: float, complete_before: bool) -> None:
        """Embed the chunks a commit just wrote to `pages` for about `seconds`. `complete_before`:
        every chunk had its vector before that commit (`known_complete`)."""
        self.embed_pending(pages=pages, deadline=time.monotonic() + seconds)
        if (
            complete_before
            and self.db.conn.execute(
                f"SELECT 1 FROM chunks c WHERE c.page IN (SELECT value FROM json_each(?)) AND {NO_VECTOR} LIMIT 1",
                (json.dumps(list(pages)), self.embedder.name),
            ).fetchone()
            is None
        ):
            # Every other chunk had its vector before this commit: all have one now, and the
            # next search need not count them (a count that grows with the wiki).
            self._complete.put(True)

    def embed_pending(
        self,
        limit: int | None = None,
        progress: Progress | None = None,
        pages: Sequence[str] | None = None,
        deadline: float | None = None,
    ) -> int:
        """Embed chunks that have no vector for the current model (of `pages` only, when
        given: what a commit just wrote); returns how many. With a `deadline`
        (time.monotonic()), one batch at a time, stopping once it has passed."""
        if (pages is None and not self.pending_count()) or not self.embedder.available():
            return 0
        model = self.embedder.name
        params: list[Any] = [model]
        sql = (
            f"SELECT c.id, c.hash, p.title, c.heading, c.text FROM chunks c JOIN pages p ON p.path = c.page "
            f"WHERE {NO_VECTOR}"
        )
        if pages is not None:
            sql += " AND c.page IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(pages)))
        sql += " ORDER BY c.id"
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self.db.conn.execute(sql, params).fetchall()
        if not rows:
            return 0
        # Texts of a similar length share a batch: the model pads each batch to its longest
        # text, so in id order short chunks paid for long ones (1.7x the throughput sorted).
        rows.sort(key=lambda r: len(r[2]) + len(r[3]) + len(r[4]))
        done = 0
        step = self.embedder.batch_size if deadline is not None else max(self.embedder.batch_size * 4, 64)
        for start in range(0, len(rows), step):
            if deadline is not None and done and time.monotonic() > deadline:
                break
            part = rows[start : start + step]
            try:
                vectors = self.embedder.embed([embed_text(title, heading, text) for _, _, title, heading, text in part])
            except EmbeddingFailed:  # said once by the embedder; the rest stays pending
                break
            dim = int(vectors.shape[1])
            with self.db.transaction():
                patch = self._matrix.valid()
                # A chunk replaced while we embedded keeps its own (pending) state.
                self.db.conn.executemany(
                    "INSERT OR REPLACE INTO vectors SELECT ?, ?, ?, ? WHERE EXISTS "
                    "(SELECT 1 FROM chunks WHERE id = ? AND hash = ?)",
                    [(cid, model, dim, to_blob(vectors[i]), cid, h) for i, (cid, h, *_rest) in enumerate(part)],
                )
                self.db.bump(embedding_only=True)  # vectors changed, not pages: names still hold
                if patch:
                    self.patch(chunks=[cid for cid, *_rest in part])
            done += len(part)
            if progress is not None:
                progress("embed", done, len(rows))
        return done

    def matrix(self) -> VectorMatrix | None:
        """The vectors of the current model with their chunks and pages, cached in memory
        until the index's generation moves (another process's write moves it too); this
        process's own small writes patch it instead (see `patch`)."""
        if self._matrix.valid():
            return self._matrix.value
        # `+v.model`: read the table in its own (chunk) order; the narrow (model, chunk)
        # index would add a lookup per row (about twice the time of reading the table).
        rows = self.db.conn.execute(
            "SELECT v.chunk, v.dim, v.vec, c.page FROM vectors v JOIN chunks c ON c.id = v.chunk "
            "WHERE +v.model = ? ORDER BY v.chunk",
            (self.embedder.name,),
        ).fetchall()
        self.matrix_loads += 1
        return self._matrix.put(VectorMatrix.from_rows(rows))

    def patch(self, pages: Sequence[str] = (), chunks: Sequence[int] = ()) -> None:
        """Bring the cached matrix up to this transaction's writes: the rows of `pages`
        (re-chunked or deleted) read again, the vectors of `chunks` (just embedded) added.
        Call it inside the transaction, after its bump, with a matrix current before it.

        Why: reading every vector again after each write costs time that grows with the
        wiki, and an agent writes a page, then searches.
        """
        value = self._matrix.value
        model = self.embedder.name
        found: dict[int, tuple[int, int, bytes, str]] = {}
        if pages:
            for row in self.db.conn.execute(
                "SELECT v.chunk, v.dim, v.vec, c.page FROM chunks c JOIN vectors v ON v.chunk = c.id "
                "AND +v.model = ? WHERE c.page IN (SELECT value FROM json_each(?))",  # by page first
                (model, json.dumps(list(pages))),
            ):
                found[row[0]] = row
        if chunks:
            for row in self.db.conn.execute(
                "SELECT v.chunk, v.dim, v.vec, c.page FROM vectors v JOIN chunks c ON c.id = v.chunk "
                "WHERE v.model = ? AND v.chunk IN (SELECT value FROM json_each(?))",
                (model, json.dumps(list(chunks))),
            ):
                found[row[0]] = row
        added = VectorMatrix.from_rows([found[i] for i in sorted(found)], value.dim if value is not None else None)
        if value is None:
            value = added
        else:
            value.drop_pages(pages)
            if added is not None:
                ids, vectors, owners, _ = added.view()
                value.put(ids, vectors, owners)
        self._matrix.put(value)

    def matrix_current(self) -> bool:
        """Is the matrix kept that of the index as it is now (call inside a transaction)?"""
        return self._matrix.valid()
