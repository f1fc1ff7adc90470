"""Writing the store's pages into the index: by git blob id on a sync, by commit as this
process makes them; each page's row, tags, chunks and links, and the links resolved again
where a change can move them.

What a write leaves kept in memory stays current: every page's names (for resolving
links) are updated for the pages written instead of read again, and the vector matrix is
patched for a small write (MATRIX_PATCH_PAGES pages at most).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from typing import TYPE_CHECKING

from wiki_memory.errors import PageError
from wiki_memory.index.db import Database, Kept
from wiki_memory.index.links import Resolver, page_keys, target_keys
from wiki_memory.index.results import Progress, SyncStats
from wiki_memory.index.vectors import Vectors, embed_text, text_hash
from wiki_memory.pages import Page, chunk_text, parse_page, wiki_links
from wiki_memory.pages.anchors import anchors_json, parse_anchors
from wiki_memory.pages.lifecycle_fields import expires_on
from wiki_memory.pages.size import DEFAULT_KB, head

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiki_memory.store import Store

# A write of at most this many pages patches the cached vector matrix; more reload it.
MATRIX_PATCH_PAGES = 50
BATCH_PAGES = 500  # pages written in one transaction of a big sync


class Writer:
    """Writes pages into one index (`db`), chunked `chunk_words` words at most, keeping
    `vectors`' matrix in step."""

    def __init__(self, db: Database, chunk_words: int, vectors: Vectors, max_bytes: int = DEFAULT_KB * 1024):
        self.db = db
        self.chunk_words = chunk_words
        self.max_bytes = max_bytes  # of a page's body indexed (`[pages] large_kb`)
        self.vectors = vectors
        self.names: Kept[Resolver] = Kept(db, survives_embedding=True)  # every page's names
        self.names_loads = 0  # how many times every page's names were read from the file
        # Vectors a full rebuild carries over from the file it replaces, by the hash of their text.
        self.carried: dict[str, list[tuple[str, int, bytes]]] = {}

    def sync(self, store: Store, stats: SyncStats, progress: Progress | None = None) -> SyncStats:
        """Bring the index to the store's HEAD: write the pages whose blob id changed, remove
        those gone, and count what changed in `stats`."""
        head = store.head()
        head_id = head.decode() if head else None
        current = {path: blob.decode() for path, blob in store.page_files()}
        indexed = dict(self.db.conn.execute("SELECT path, blob FROM pages"))
        changes: dict[str, str | None] = {p: b for p, b in current.items() if indexed.get(p) != b}
        for path in indexed:
            if path not in current:
                changes[path] = None
        stats.added = sum(1 for p, b in changes.items() if b is not None and p not in indexed)
        stats.updated = sum(1 for p, b in changes.items() if b is not None and p in indexed)
        stats.removed = sum(1 for b in changes.values() if b is None)
        stats.unchanged = len(current) - stats.added - stats.updated
        stats.head = head_id
        self.write(store, changes, stats, head=head_id, progress=progress, always_set_head=True)
        return stats

    def apply_commit(self, store: Store, commit_id: str, paths: tuple[str, ...]) -> list[str]:
        """Write the pages among `paths` as commit `commit_id` left them; the index's head
        moves to the commit when it follows that head. Returns the pages written."""
        from wiki_memory.store.paths import is_page_path  # deferred: the store package loads dulwich

        commit = store.repo[commit_id.encode()]
        parents = [p.decode() for p in commit.parents]  # type: ignore[attr-defined]
        changes: dict[str, str | None] = {}
        for path in paths:
            if not is_page_path(path):
                continue
            blob = store.blob_at(path, commit_id)
            changes[path] = blob.decode() if blob else None
        head = commit_id if parents[:1] == [self.db.head] or not parents else None
        self.write(store, changes, SyncStats(), head=head)
        return list(changes)

    def write(
        self,
        store: Store,
        changes: dict[str, str | None],
        stats: SyncStats,
        *,
        head: str | None,
        progress: Progress | None = None,
        always_set_head: bool = False,
    ) -> None:
        """Apply {path: blob id or None} in one transaction (batches of pages for big syncs),
        then resolve the links the change can affect and move the generation; `head` (or
        None with `always_set_head`) becomes the commit the index reflects."""
        items = sorted(changes.items())
        total = len(items)
        for start in range(0, max(total, 1), BATCH_PAGES):
            part = items[start : start + BATCH_PAGES]
            last = start + BATCH_PAGES >= total
            with self.db.transaction() as conn:
                for path, blob in part:
                    if blob is None:
                        delete_page(conn, path)
                    else:
                        data = store.repo[blob.encode()].as_raw_string()
                        text = data.decode("utf-8", errors="replace")
                        put_page(conn, path, blob, text, stats, self.chunk_words, self.carried, self.max_bytes)
                if last:
                    if changes:
                        self._written([path for path, _ in items])
                    if head is not None or always_set_head:
                        self.db.set_meta("head", head)
            if progress is not None and total:
                progress("index", min(start + BATCH_PAGES, total), total)

    def _written(self, pages: list[str]) -> None:
        """After the pages are written, in their transaction: resolve links, move the
        generation, and bring what is kept in memory up to it."""
        patch = len(pages) <= MATRIX_PATCH_PAGES and self.vectors.matrix_current()
        names = self.names.get()  # as they were before this write, if no one wrote since
        if names is None:
            self.names_loads += 1  # resolve_links reads them all
        resolver = resolve_links(self.db.conn, pages, names)
        self.db.bump()
        self.names.put(resolver)
        if patch:
            self.vectors.patch(pages=pages)


def fts_title(title: str, tags: list[str]) -> str:
    """What the FTS5 `title` column holds: the title, then the tags."""
    return " ".join([title, *tags])


def delete_page(c: sqlite3.Connection, path: str) -> None:
    """Remove a page and all that was derived from it (chunks, vectors, tags, links)."""
    # The FTS5 table is contentless: its rows go by the values they were made of (`fts_title`
    # of the page row as it is, and each chunk's heading and text).
    row = c.execute("SELECT title, tags FROM pages WHERE path = ?", (path,)).fetchone()
    if row is not None:
        title = fts_title(row[0], json.loads(row[1] or "[]"))
        c.executemany(
            "INSERT INTO chunks_fts(chunks_fts, rowid, title, heading, text) VALUES ('delete', ?, ?, ?, ?)",
            [
                (cid, title, heading, text)
                for cid, heading, text in c.execute(
                    "SELECT id, heading, text FROM chunks WHERE page = ?", (path,)
                ).fetchall()
            ],
        )
    c.execute("DELETE FROM vectors WHERE chunk IN (SELECT id FROM chunks WHERE page = ?)", (path,))
    c.execute("DELETE FROM chunks WHERE page = ?", (path,))
    c.execute("DELETE FROM page_tags WHERE page = ?", (path,))
    c.execute("DELETE FROM links WHERE source = ?", (path,))
    c.execute("DELETE FROM pages WHERE path = ?", (path,))


def put_page(
    c: sqlite3.Connection,
    path: str,
    blob: str,
    text: str,
    stats: SyncStats,
    chunk_words: int,
    carried: Mapping[str, list[tuple[str, int, bytes]]] | None = None,
    max_bytes: int = DEFAULT_KB * 1024,
) -> None:
    """(Re)write a page from its text (git blob `blob`): its row, tags, chunks (FTS5 too) and
    links, keeping the vectors of chunks whose embedded text is unchanged (here, or among
    the `carried` vectors of a rebuilt file); the links are left unresolved (see
    `resolve_links`). Broken front matter is noted in `stats`."""

    try:
        page = parse_page(text, path)
    except PageError as e:
        # A page whose front matter is broken is still findable by its words.
        stats.errors.append(str(e))
        page = Page(path, {}, text, has_front_matter=False)
    body, cut = head(page.body, max_bytes)
    if cut:  # a page far larger than any written through wiki-memory: its head is indexed
        stats.cut.append(f"{path}: only the first {max_bytes // 1024:,} KB of its body are indexed")
        page = replace(page, body=body)
    # Vectors of chunks whose embedded text is unchanged are kept, not recomputed.
    kept: dict[str, list[tuple[str, int, bytes]]] = {}
    for h, model, dim, vec in c.execute(
        "SELECT c.hash, v.model, v.dim, v.vec FROM chunks c JOIN vectors v ON v.chunk = c.id WHERE c.page = ?",
        (path,),
    ):
        kept.setdefault(h, []).append((model, dim, vec))
    delete_page(c, path)
    title = page.title
    tags = list(page.tags)
    successor = page.meta.get("superseded_by")
    c.execute(
        "INSERT INTO pages(path, id, title, type, tags, status, created, updated, blob, superseded_by, anchors, "
        "expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *(path, page.id, title, page.type, json.dumps(tags), page.status, page.created, page.updated, blob),
            str(successor) if successor else None,
            anchors_json(parse_anchors(page.meta.get("anchors"))),
            expires_on(page.meta.get("expires")),
        ),
    )
    c.executemany("INSERT OR IGNORE INTO page_tags VALUES (?, ?)", [(path, t) for t in tags])
    words_title = fts_title(title, tags)
    for chunk in chunk_text(page.body, title, chunk_words):
        h = text_hash(embed_text(title, chunk.heading, chunk.text))
        cur = c.execute(
            "INSERT INTO chunks(page, ordinal, heading, text, hash) VALUES (?, ?, ?, ?, ?)",
            (path, chunk.ordinal, chunk.heading, chunk.text, h),
        )
        chunk_id = cur.lastrowid
        c.execute(
            "INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (?, ?, ?, ?)",
            (chunk_id, words_title, chunk.heading, chunk.text),
        )
        for model, dim, vec in kept.get(h) or (carried or {}).get(h) or ():
            c.execute("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", (chunk_id, model, dim, vec))
    try:
        links = wiki_links(page.body)
    except Exception:  # noqa: BLE001 - a Markdown oddity must not stop indexing
        links = []
    c.executemany(
        "INSERT INTO links(source, ordinal, target, heading, alias, key_full, key_tail, key_slug) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(path, i, link.target, link.heading, link.alias, *target_keys(link.target)) for i, link in enumerate(links)],
    )


def resolve_links(
    conn: sqlite3.Connection, changed: list[str] | None = None, names: Resolver | None = None
) -> Resolver:
    """Point every `[[link]]` at the page it names now (of the links `changed` pages can
    affect, or all of them); returns every page's names.

    After a few changed pages, only the links they can affect are resolved again: their
    own, those that pointed at them, and those naming them (by path, title or file name).
    Why: resolving every link on each write made every write pay for the whole wiki.
    `names`, the pages' names as they were before this write, is brought up to date for
    the changed pages instead of read again, for the same reason.
    """
    titles = (
        {}
        if changed is None
        else dict(
            conn.execute(
                "SELECT path, title FROM pages WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(changed),),
            )
        )
    )
    if names is not None and changed is not None:
        for path in changed:
            names.remove(path)
            if path in titles:
                names.add(path, titles[path])
        resolver = names
    else:
        resolver = Resolver(conn.execute("SELECT path, title FROM pages"))
    if changed is None or len(changed) > 200:
        rows = conn.execute("SELECT rowid, target, resolved FROM links").fetchall()
    else:
        marks = ",".join("?" * len(changed))
        full_names: set[str] = set()
        stems: set[str] = set()
        for path in changed:
            full, tail = page_keys(path, titles.get(path, ""))
            full_names |= full
            stems |= tail
        n_marks, s_marks = ",".join("?" * len(full_names)), ",".join("?" * len(stems))
        rows = conn.execute(
            f"SELECT rowid, target, resolved FROM links WHERE source IN ({marks}) OR resolved IN ({marks}) "
            f"OR key_full IN ({n_marks}) OR key_tail IN ({s_marks}) OR key_slug IN ({s_marks})",
            [*changed, *changed, *full_names, *stems, *stems],
        ).fetchall()
    updates = []
    for rowid, target, resolved in rows:
        new = resolver.resolve(target)
        if new != resolved:
            updates.append((new, rowid))
    conn.executemany("UPDATE links SET resolved = ? WHERE rowid = ?", updates)
    return resolver
