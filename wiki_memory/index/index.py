"""The search index of one project: sync from the git store, search by words and meaning."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.config import read_head
from wiki_memory.errors import WikiMemoryError
from wiki_memory.index import schema
from wiki_memory.index.embed import Embedder
from wiki_memory.index.links import Link, Resolver, page_keys, target_keys
from wiki_memory.index.matrix import VectorMatrix
from wiki_memory.index.query import Query, fts_expression, fts_quote, parse_query
from wiki_memory.index.results import PageMeta, SearchResult, SyncStats

if TYPE_CHECKING:
    from wiki_memory.config import Project
    from wiki_memory.store import Store

MODES = ("hybrid", "fts", "vector")
INACTIVE = ("superseded", "archived")
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class Tuning:
    """The knobs of chunking and ranking. Each default was chosen on the first five LoCoMo
    conversations together with the coding-memory set (scripts/eval_locomo.py,
    scripts/eval_coding.py; the figures are in the README)."""

    # Small chunks point at the passage that answers; the snippet then grows around them.
    chunk_words: int = 60
    context_words: int = 150  # the first result: grow each passage with its neighbours to this many words
    other_words: int = 40  # the other results: shorter passages, so that more pages fit a budget
    passages: int = 3  # passages of one page in its snippet at most...
    passage_ratio: float = 0.8  # ...each with at least this share of the best passage's score
    depth: int = 200  # chunks taken from each ranking before fusion (at least)
    rrf_k: int = 20  # reciprocal rank fusion: score = sum(weight / (rrf_k + rank))
    fts_weight: float = 1.0
    # The dense ranking is trusted little when the best word match holds every query word
    # (LoCoMo: bm25 is the stronger ranker) and up to vector_weight_max as it holds fewer
    # (a paraphrase shares few words with its page: meaning must carry it).
    vector_weight: float = 0.15
    vector_weight_max: float = 1.0
    title_weight: float = 3.0  # bm25 column weights: title (and tags), heading, text
    heading_weight: float = 1.5
    text_weight: float = 1.0
    inactive_factor: float = 0.5  # superseded and archived pages rank below active ones
    page_score: str = "rank"  # rank: fuse the pages' ranks; chunk: the best chunk's score; sum2: two best
    fusion: str = "rrf"  # rrf, or convex (a weighted sum of scores scaled to [0, 1])
    vector_prf: float = 0.0  # weight of the query's nearest chunks added to it (0: off)


DEFAULT_TUNING = Tuning()
# In an index of PRUNE_FROM chunks or more, words in more than PRUNE_SHARE of them only
# score matches that a rarer word of the query made (see _without_common_words).
PRUNE_FROM = 5000
PRUNE_SHARE = 0.05
# Chunks embedded inside one search at most, and the time a search or a write spends
# embedding before it returns: a backlog (an import, a pull) or a huge page is caught up
# over several searches or by `reindex`, never one long wait (256 chunks took 20 s on one
# thread here, a 2 MB page would take minutes; what is left is still found by its words).
PENDING_IN_SEARCH = 256
EMBED_INLINE_S = 1.0
# A write of at most this many pages patches the cached vector matrix; more reload it.
MATRIX_PATCH_PAGES = 50
# Where chunk `c` has no vector for the model given as the parameter.
NO_VECTOR = "NOT EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_by_model WHERE v.model = ? AND v.chunk = c.id)"


_background: ThreadPoolExecutor | None = None
_background_lock = threading.Lock()


def _in_background(fn: Callable[..., Any], *args: Any) -> Future:
    """`fn(*args)` on a shared worker thread (two at most, started on first use)."""
    global _background
    with _background_lock:
        if _background is None:
            _background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wiki-memory-query")
    return _background.submit(fn, *args)


def embed_text(title: str, heading: str, text: str) -> str:
    """What the model sees for a chunk: the page title (dates and names live there) first."""
    head = title if not heading or heading == title else f"{title} - {heading}"
    return f"{head}\n{text}" if text else head


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


_RELATIVE = re.compile(r"^(\d+)\s*([dwmyh])$")


def parse_since(since: str | None) -> str | None:
    """`7d`, `2w`, `3m`, `1y`, `12h` or an ISO date/time -> an ISO prefix to compare with."""
    if since is None or not str(since).strip():
        return None
    value = str(since).strip()
    m = _RELATIVE.match(value.lower())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        delta = {
            "h": timedelta(hours=n),
            "d": timedelta(days=n),
            "w": timedelta(weeks=n),
            "m": timedelta(days=30 * n),
            "y": timedelta(days=365 * n),
        }[unit]
        return (datetime.now(timezone.utc) - delta).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise WikiMemoryError(f"--since {value!r}: give a date (2026-11-30), a time, or an age (7d, 2w)") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(timezone.utc)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ") if "T" in value or " " in value else parsed.strftime("%Y-%m-%d")


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value if str(v).strip()]


class Index:
    """A project's search index: SQLite (FTS5 + vectors as blobs) beside its wiki.

    Open it with `Index.open(project)`; `attach(store)` keeps it current with every commit
    the store makes in this process; `sync(store)` catches up with anything else (a pull,
    a `git commit` in the wiki); `search` catches up by itself when the wiki moved.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        project: Project | None = None,
        embedder: Embedder | None = None,
        settings: Any = None,
        tuning: Tuning | None = None,
    ):
        self.path = Path(path)
        self.project = project
        self.settings = settings
        self.embedder = embedder if embedder is not None else Embedder(settings=settings)
        self.tuning = tuning or DEFAULT_TUNING
        self._lock = threading.RLock()
        self._store: Store | None = None
        self._own_store = False
        self._matrix_cache: tuple[Any, ...] | None = None
        self._complete_at: str | None = None  # the generation at which no chunk lacked a vector
        self._inactive_cache: tuple[str | None, bool] | None = None
        self._total_cache: tuple[str | None, int] | None = None
        # Chunk counts of query words at one generation: {word: (count, the cap it was counted to)}.
        self._counts_cache: tuple[str | None, dict[str, tuple[int, int]]] | None = None
        self.matrix_loads = 0  # how many times every vector was read from the file
        self._names: tuple[str | None, Resolver] | None = None  # (generation, every page's names)
        self._carried: dict[str, list[tuple[str, int, bytes]]] = {}  # vectors a full sync keeps, by text hash
        self.rebuilt: str | None = None
        try:
            self.conn = self._open()
        except (sqlite3.Error, schema.IndexCorrupt, OSError) as e:
            raise WikiMemoryError(f"cannot open the search index {self.path}: {e}") from None

    @classmethod
    def open(
        cls, project: Project, *, embedder: Embedder | None = None, settings: Any = None, tuning: Tuning | None = None
    ) -> Index:
        """Open (or create) the index at `project.index_path`; a file of another schema
        version, or a damaged one, is rebuilt from the store on its next sync or search."""
        if settings is None:
            from wiki_memory.config import load_settings

            settings = load_settings()
        return cls(project.index_path, project=project, embedder=embedder, settings=settings, tuning=tuning)

    def _open(self) -> sqlite3.Connection:
        conn, reason = schema.open_db(self.path)
        self.rebuilt = reason
        chunking = f"{self.tuning.chunk_words}"
        row = conn.execute("SELECT value FROM meta WHERE key = 'chunking'").fetchone()
        if row is None:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('chunking', ?)", (chunking,))
        elif row[0] != chunking:
            # Chunks of another size: start over (derived data, rebuilt by the next sync).
            conn.close()
            schema.remove_files(self.path)
            conn, _ = schema.open_db(self.path)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('chunking', ?)", (chunking,))
            self.rebuilt = f"chunk size changed to {chunking} words"
        return conn

    def _reopen_fresh(self, why: str) -> None:
        """The file broke under us: delete it, create it empty; the next sync refills it."""
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        schema.remove_files(self.path)
        self._forget_caches()
        self.conn = self._open()
        self.rebuilt = why

    def _forget_caches(self) -> None:
        self._matrix_cache = None
        self._names = None
        self._complete_at = None
        self._inactive_cache = None
        self._total_cache = None
        self._counts_cache = None

    def close(self) -> None:
        with self._lock:
            self.detach()
            if self._own_store and self._store is not None:
                self._store.close()
            self._store = None
            try:
                self.conn.close()
            except sqlite3.Error:
                pass

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Meta ----------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _bump(self) -> None:
        self.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    @property
    def head(self) -> str | None:
        """The store commit this index reflects (None before the first full sync)."""
        return self._meta("head")

    def stats(self) -> dict[str, object]:
        with self._lock:
            count = lambda sql, *a: self.conn.execute(sql, a).fetchone()[0]  # noqa: E731
            return {
                "path": str(self.path),
                "head": self.head,
                "pages": count("SELECT count(*) FROM pages"),
                "chunks": count("SELECT count(*) FROM chunks"),
                "vectors": count("SELECT count(*) FROM vectors WHERE model = ?", self.embedder.name),
                "pending": self.pending_count(),
                "model": self.embedder.name,
                "links": count("SELECT count(*) FROM links"),
                "unresolved_links": count("SELECT count(*) FROM links WHERE resolved IS NULL"),
            }

    def pending_count(self) -> int:
        """Chunks without a vector for the current model."""
        return self.conn.execute(
            "SELECT (SELECT count(*) FROM chunks) - (SELECT count(*) FROM vectors v INDEXED BY vectors_by_model "
            "JOIN chunks c ON c.id = v.chunk WHERE v.model = ?)",
            (self.embedder.name,),
        ).fetchone()[0]

    # Keeping current -------------------------------------------------------------------

    def attach(self, store: Store) -> Index:
        """Index every commit `store` makes from now on (FTS at once; vectors at once when
        the model is loaded in this process, else pending until the next sync or search)."""
        with self._lock:
            if self._store is not None and self._store is not store:
                self.detach()
            self._store = store
            if self._on_commit not in store.on_commit:
                store.on_commit.append(self._on_commit)
        return self

    def detach(self) -> None:
        store = self._store
        if store is not None and self._on_commit in store.on_commit:
            store.on_commit.remove(self._on_commit)

    def _on_commit(self, commit_id: str, paths: tuple[str, ...]) -> None:
        # Why: the commit has landed; an index problem must not turn it into an error.
        try:
            self._apply_commit(commit_id, paths)
        except Exception as e:  # noqa: BLE001
            print(
                f"wiki-memory: warning: the index missed commit {commit_id[:8]} ({e}); "
                "the next search or `wiki-memory reindex` catches up",
                file=sys.stderr,
            )

    def _apply_commit(self, commit_id: str, paths: tuple[str, ...]) -> None:
        from wiki_memory.store.paths import is_page_path

        store = self._store
        if store is None:
            return
        with self._lock:
            commit = store.repo[commit_id.encode()]
            parents = [p.decode() for p in commit.parents]  # type: ignore[attr-defined]
            changes: dict[str, str | None] = {}
            for path in paths:
                if not is_page_path(path):
                    continue
                blob = store.blob_at(path, commit_id)
                changes[path] = blob.decode() if blob else None
            complete = self._known_complete()
            try:
                self._write(
                    store,
                    changes,
                    stats=SyncStats(),
                    head=commit_id if parents[:1] == [self.head] or not parents else None,
                )
            except sqlite3.DatabaseError as e:
                if not schema.is_damage(e):
                    raise
                self._reopen_fresh(f"unreadable ({e})")
                return
            if self.embedder.loaded:
                self._embed_pending(pages=list(changes), deadline=time.monotonic() + EMBED_INLINE_S)
                if (
                    complete
                    and self.conn.execute(
                        f"SELECT 1 FROM chunks c WHERE c.page IN (SELECT value FROM json_each(?)) AND {NO_VECTOR} "
                        "LIMIT 1",
                        (json.dumps(list(changes)), self.embedder.name),
                    ).fetchone()
                    is None
                ):
                    # Every other chunk had its vector before this commit: all have one now,
                    # and the next search need not count them (15 ms at 10,000 pages).
                    self._complete_at = self._meta("generation")

    def sync(
        self,
        store: Store | None = None,
        progress: Progress | None = None,
        *,
        embed: bool = True,
        full: bool = False,
        keep_vectors: bool = False,
    ) -> SyncStats:
        """Bring the index up to the store's HEAD: only pages whose git blob id changed are
        re-chunked (and their changed chunks re-embedded); deleted pages disappear.

        `full` drops everything first (the file is deleted and made anew). With
        `keep_vectors`, the vectors of chunks whose embedded text is unchanged are carried
        into the new file rather than computed again (after a history rewrite: nothing of
        the old file's text survives, and nothing is embedded twice). With `embed`, chunks
        without a vector are embedded when a model is available (else they stay pending,
        counted in the stats).
        """
        store = store or self._get_store()
        if store is None:
            raise WikiMemoryError("no wiki to index yet; run `wiki-memory init`")
        started = time.perf_counter()
        stats = SyncStats(rebuilt=self.rebuilt)
        with self._lock:
            if full and keep_vectors:
                self._carried = self._vectors_by_hash()
            try:
                stats = self._sync(store, stats, progress, full)
            except sqlite3.DatabaseError as e:
                if not schema.is_damage(e):
                    raise
                self._reopen_fresh(f"unreadable ({e})")
                stats = self._sync(store, SyncStats(rebuilt=self.rebuilt), progress, full)
            finally:
                self._carried = {}
            if embed:
                stats.embedded = self._embed_pending(progress=progress)
            stats.pending = self.pending_count()
            if stats.changed + stats.embedded > 500:
                # A big sync leaves a big write-ahead log: fold it into the file now.
                try:
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.OperationalError:
                    pass  # a reader holds it; SQLite checkpoints later by itself
        stats.seconds = time.perf_counter() - started
        return stats

    def _sync(self, store: Store, stats: SyncStats, progress: Progress | None, full: bool) -> SyncStats:
        if full:
            self._reopen_fresh("full reindex")
            stats.rebuilt = "full reindex"
        head = store.head()
        head_id = head.decode() if head else None
        current = {path: blob.decode() for path, blob in store.page_files()}
        indexed = dict(self.conn.execute("SELECT path, blob FROM pages"))
        changes: dict[str, str | None] = {p: b for p, b in current.items() if indexed.get(p) != b}
        for path in indexed:
            if path not in current:
                changes[path] = None
        stats.added = sum(1 for p, b in changes.items() if b is not None and p not in indexed)
        stats.updated = sum(1 for p, b in changes.items() if b is not None and p in indexed)
        stats.removed = sum(1 for b in changes.values() if b is None)
        stats.unchanged = len(current) - stats.added - stats.updated
        stats.head = head_id
        self._write(store, changes, stats, head=head_id, progress=progress, always_set_head=True)
        return stats

    def _vectors_by_hash(self) -> dict[str, list[tuple[str, int, bytes]]]:
        """Every vector, by the hash of the text it was computed from (none if unreadable)."""
        carried: dict[str, list[tuple[str, int, bytes]]] = {}
        try:
            query = "SELECT c.hash, v.model, v.dim, v.vec FROM chunks c JOIN vectors v ON v.chunk = c.id"
            for h, model, dim, vec in self.conn.execute(query):
                carried.setdefault(h, []).append((model, dim, vec))
        except sqlite3.DatabaseError:
            return {}
        return carried

    def _get_store(self) -> Store | None:
        if self._store is not None:
            return self._store
        if self.project is None or not (self.project.wiki / ".git").is_dir():
            return None
        from wiki_memory.store import Store

        self._store = Store(self.project.wiki)
        self._own_store = True
        return self._store

    def _catch_up(self) -> None:
        """Before a search: if the wiki moved since the last sync, sync (without embedding)."""
        wiki = self._store.root if self._store is not None else (self.project.wiki if self.project else None)
        if wiki is None:
            return
        head = read_head(wiki)
        if head is None or head == self.head:
            return
        store = self._get_store()
        if store is not None:
            self.sync(store, embed=False)

    # Writing pages into the index --------------------------------------------------------

    def _write(
        self,
        store: Store,
        changes: dict[str, str | None],
        stats: SyncStats,
        *,
        head: str | None,
        progress: Progress | None = None,
        always_set_head: bool = False,
    ) -> None:
        """Apply {path: blob id or None} in one transaction (batches of pages for big syncs)."""
        items = sorted(changes.items())
        total = len(items)
        batch = 500
        for start in range(0, max(total, 1), batch):
            part = items[start : start + batch]
            last = start + batch >= total
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                patch = total <= MATRIX_PATCH_PAGES and self._matrix_current()
                names = self._current_names()
                for path, blob in part:
                    if blob is None:
                        self._delete_page(path)
                    else:
                        data = store.repo[blob.encode()].as_raw_string()
                        self._put_page(path, blob, data.decode("utf-8", errors="replace"), stats)
                if last:
                    if changes:
                        resolver = self._resolve_links([path for path, _ in items], names)
                        self._bump()
                        self._names = (self._meta("generation"), resolver)
                        if patch:
                            self._patch_matrix(pages=[path for path, _ in items])
                    if head is not None or always_set_head:
                        self._set_meta("head", head)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                self._forget_caches()  # they may hold what was just rolled back
                raise
            if progress is not None and total:
                progress("index", min(start + batch, total), total)

    def _delete_page(self, path: str) -> None:
        c = self.conn
        c.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE page = ?)", (path,))
        c.execute("DELETE FROM vectors WHERE chunk IN (SELECT id FROM chunks WHERE page = ?)", (path,))
        c.execute("DELETE FROM chunks WHERE page = ?", (path,))
        c.execute("DELETE FROM page_tags WHERE page = ?", (path,))
        c.execute("DELETE FROM links WHERE source = ?", (path,))
        c.execute("DELETE FROM pages WHERE path = ?", (path,))

    def _put_page(self, path: str, blob: str, text: str, stats: SyncStats) -> None:
        from wiki_memory.errors import PageError
        from wiki_memory.pages import Page, chunk_text, parse_page, wiki_links

        try:
            page = parse_page(text, path)
        except PageError as e:
            # A page whose front matter is broken is still findable by its words.
            stats.errors.append(str(e))
            page = Page(path, {}, text, has_front_matter=False)
        c = self.conn
        # Vectors of chunks whose embedded text is unchanged are kept, not recomputed.
        kept: dict[str, list[tuple[str, int, bytes]]] = {}
        for h, model, dim, vec in c.execute(
            "SELECT c.hash, v.model, v.dim, v.vec FROM chunks c JOIN vectors v ON v.chunk = c.id WHERE c.page = ?",
            (path,),
        ):
            kept.setdefault(h, []).append((model, dim, vec))
        self._delete_page(path)
        title = page.title
        tags = list(page.tags)
        c.execute(
            "INSERT INTO pages(path, id, title, type, tags, status, created, updated, blob) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (path, page.id, title, page.type, json.dumps(tags), page.status, page.created, page.updated, blob),
        )
        c.executemany("INSERT OR IGNORE INTO page_tags VALUES (?, ?)", [(path, t) for t in tags])
        fts_title = " ".join([title, *tags])
        for chunk in chunk_text(page.body, title, self.tuning.chunk_words):
            h = _hash(embed_text(title, chunk.heading, chunk.text))
            cur = c.execute(
                "INSERT INTO chunks(page, ordinal, heading, text, hash) VALUES (?, ?, ?, ?, ?)",
                (path, chunk.ordinal, chunk.heading, chunk.text, h),
            )
            chunk_id = cur.lastrowid
            c.execute(
                "INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (?, ?, ?, ?)",
                (chunk_id, fts_title, chunk.heading, chunk.text),
            )
            for model, dim, vec in kept.get(h) or self._carried.get(h) or []:
                c.execute("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", (chunk_id, model, dim, vec))
        try:
            links = wiki_links(page.body)
        except Exception:  # noqa: BLE001 - a Markdown oddity must not stop indexing
            links = []
        c.executemany(
            "INSERT INTO links(source, ordinal, target, heading, alias, key_full, key_tail, key_slug) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (path, i, link.target, link.heading, link.alias, *target_keys(link.target))
                for i, link in enumerate(links)
            ],
        )

    def _resolve_links(self, changed: list[str] | None = None, names: Resolver | None = None) -> Resolver:
        """Point every `[[link]]` at the page it names now; returns every page's names.

        After a few changed pages, only the links they can affect are resolved again: their
        own, those that pointed at them, and those naming them (by path, title or file name).
        Why: resolving every link on each write cost a second at 10,000 pages. `names`, the
        pages' names as they were before this write, is brought up to date for the changed
        pages instead of read again (80 ms at 10,000 pages).
        """
        titles = (
            {}
            if changed is None
            else dict(
                self.conn.execute(
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
            resolver = Resolver(self.conn.execute("SELECT path, title FROM pages"))
        if changed is None or len(changed) > 200:
            rows = self.conn.execute("SELECT rowid, target, resolved FROM links").fetchall()
        else:
            marks = ",".join("?" * len(changed))
            full_names: set[str] = set()
            stems: set[str] = set()
            for path in changed:
                full, tail = page_keys(path, titles.get(path, ""))
                full_names |= full
                stems |= tail
            n_marks, s_marks = ",".join("?" * len(full_names)), ",".join("?" * len(stems))
            rows = self.conn.execute(
                f"SELECT rowid, target, resolved FROM links WHERE source IN ({marks}) OR resolved IN ({marks}) "
                f"OR key_full IN ({n_marks}) OR key_tail IN ({s_marks}) OR key_slug IN ({s_marks})",
                [*changed, *changed, *full_names, *stems, *stems],
            ).fetchall()
        updates = []
        for rowid, target, resolved in rows:
            new = resolver.resolve(target)
            if new != resolved:
                updates.append((new, rowid))
        self.conn.executemany("UPDATE links SET resolved = ? WHERE rowid = ?", updates)
        return resolver

    # Embeddings ---------------------------------------------------------------------------

    def _embed_pending(
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
        rows = self.conn.execute(sql, params).fetchall()
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
            vectors = self.embedder.embed([embed_text(title, heading, text) for _, _, title, heading, text in part])
            dim = int(vectors.shape[1])
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                patch = self._matrix_current()
                names = self._current_names()
                # A chunk replaced while we embedded keeps its own (pending) state.
                self.conn.executemany(
                    "INSERT OR REPLACE INTO vectors SELECT ?, ?, ?, ? WHERE EXISTS "
                    "(SELECT 1 FROM chunks WHERE id = ? AND hash = ?)",
                    [(cid, model, dim, vectors[i].tobytes(), cid, h) for i, (cid, h, *_rest) in enumerate(part)],
                )
                self._bump()
                if names is not None:  # vectors changed, not pages: the names still hold
                    self._names = (self._meta("generation"), names)
                if patch:
                    self._patch_matrix(chunks=[cid for cid, *_rest in part])
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                self._forget_caches()  # they may hold what was just rolled back
                raise
            done += len(part)
            if progress is not None:
                progress("embed", done, len(rows))
        return done

    def _matrix(self) -> VectorMatrix | None:
        """The vectors of the current model with their chunks and pages, cached in memory
        until the index's generation moves (another process's write moves it too); this
        process's own small writes patch it instead (see `_patch_matrix`)."""
        generation = self._meta("generation")
        key = (generation, self.embedder.name)
        if self._matrix_cache is not None and self._matrix_cache[0] == key:
            return self._matrix_cache[1]
        # `+v.model`: read the table in its own (chunk) order; the narrow (model, chunk)
        # index would add a lookup per row (470 ms instead of 240 at 40,000 chunks).
        rows = self.conn.execute(
            "SELECT v.chunk, v.dim, v.vec, c.page FROM vectors v JOIN chunks c ON c.id = v.chunk "
            "WHERE +v.model = ? ORDER BY v.chunk",
            (self.embedder.name,),
        ).fetchall()
        self.matrix_loads += 1
        value = VectorMatrix.from_rows(rows)
        self._matrix_cache = (key, value)
        return value

    def _current_names(self) -> Resolver | None:
        """Every page's names as kept by this process, if no one wrote since (call inside a
        transaction)."""
        names = self._names
        return names[1] if names is not None and names[0] == self._meta("generation") else None

    def _matrix_current(self) -> bool:
        """Is the cached matrix that of the index as it is now (call inside a transaction)?"""
        cached = self._matrix_cache
        return cached is not None and cached[0] == (self._meta("generation"), self.embedder.name)

    def _patch_matrix(self, pages: Sequence[str] = (), chunks: Sequence[int] = ()) -> None:
        """Bring the cached matrix up to this transaction's writes: the rows of `pages`
        (re-chunked or deleted) read again, the vectors of `chunks` (just embedded) added.
        Call it inside the transaction, after its bump, with a matrix current before it.

        Why: reading every vector again after each write took 250 ms at 10,000 pages
        (40,000 chunks), and an agent writes a page, then searches.
        """
        assert self._matrix_cache is not None
        value: VectorMatrix | None = self._matrix_cache[1]
        model = self.embedder.name
        found: dict[int, tuple] = {}
        if pages:
            for row in self.conn.execute(
                "SELECT v.chunk, v.dim, v.vec, c.page FROM chunks c JOIN vectors v ON v.chunk = c.id "
                "AND +v.model = ? WHERE c.page IN (SELECT value FROM json_each(?))",  # by page first
                (model, json.dumps(list(pages))),
            ):
                found[row[0]] = row
        if chunks:
            for row in self.conn.execute(
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
        self._matrix_cache = ((self._meta("generation"), self.embedder.name), value)

    # Search ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 8,
        mode: str = "hybrid",
        type: str | Sequence[str] | None = None,
        tag: str | Sequence[str] | None = None,
        status: str | Sequence[str] | None = None,
        since: str | None = None,
        max_chars: int | None = None,
    ) -> list[SearchResult]:
        """The `k` best pages for `query`, each once with its best passage.

        `mode`: "hybrid" (bm25 and vector rankings fused), "fts" or "vector"; without a model,
        FTS alone. Filters: `type`, `tag` (any of), `status`, `since` (`7d`, `2026-11-01`).
        `max_chars` caps the total length of the snippets: the best context that fits.
        """
        if mode not in MODES:
            raise WikiMemoryError(f"unknown search mode {mode!r} (one of: {', '.join(MODES)})")
        if k < 1:
            return []
        with self._lock:
            try:
                return self._search(query, k, mode, type, tag, status, since, max_chars)
            except sqlite3.DatabaseError as e:
                if not schema.is_damage(e):
                    raise WikiMemoryError(f"the search index is busy or unavailable ({e}); try again") from None
                self._reopen_fresh(f"unreadable ({e})")
                return self._search(query, k, mode, type, tag, status, since, max_chars)

    def _search(
        self, text: str, k: int, mode: str, type_: Any, tag: Any, status: Any, since: str | None, max_chars: int | None
    ) -> list[SearchResult]:
        self._catch_up()
        query = self._without_common_words(parse_query(text))
        where, params = self._filters(type_, tag, status, since)
        depth = max(self.tuning.depth, k * 8)
        rankings: dict[str, list[tuple[int, str, float]]] = {}
        vectors = mode != "fts" and self._vectors_usable() and bool(text.strip())
        # Hybrid: the query is embedded on another thread while FTS5 ranks the words (both
        # release the GIL). Why: at 10,000 pages the two took 24 + 9 ms one after the other,
        # 24-27 ms side by side on 2 cores.
        query_vector = _in_background(self.embedder.embed_query, text) if vectors and mode == "hybrid" else None
        if mode != "vector" or not vectors:
            rankings["fts"] = self._fts(query, where, params, depth)
        vector_weight = self.tuning.vector_weight
        if vectors:
            vector = query_vector.result() if query_vector is not None else self.embedder.embed_query(text)
            rankings["vector"] = self._vector(vector, where, params, depth)
            if "fts" in rankings:
                vector_weight = self._vector_weight(query, rankings["fts"])
        return self._results(self._fuse(rankings, vector_weight), k, max_chars)

    def _vector_weight(self, query: Query, fts: list[tuple[int, str, float]]) -> float:
        """How much to trust meaning for this query: little when the best word match holds
        all the query's words, more as it holds fewer (a paraphrase shares few words with
        its page). Words are compared as the FTS5 tokenizer stems them."""
        t = self.tuning
        if t.vector_weight_max <= t.vector_weight:
            return t.vector_weight
        phrases = [" ".join(p) for p in query.phrases]
        words = [w for w in query.words if not any(w in p for p in query.phrases)]
        if not fts or not (phrases or words):
            return t.vector_weight_max
        row = self.conn.execute("SELECT title, heading, text FROM chunks_fts WHERE rowid = ?", (fts[0][0],)).fetchone()
        chunk, *terms = self._tokens([" ".join(row or ())] + phrases + words)
        present = set(chunk)
        matched = sum(1 for term in terms if term and all(stem in present for stem in term))
        coverage = matched / len(terms)
        return t.vector_weight + (t.vector_weight_max - t.vector_weight) * (1.0 - coverage)

    def _tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text as the FTS5 tokenizer (porter unicode61) indexes it: its terms in order."""
        c = self.conn
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_words USING fts5(x, tokenize='porter unicode61')")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.wm_words_v USING fts5vocab(temp, wm_words, 'instance')")
        c.executemany("INSERT INTO temp.wm_words(rowid, x) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(texts)])
        found: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in c.execute("SELECT term, doc, offset FROM temp.wm_words_v"):
            found.setdefault(doc, []).append((offset, term))
        c.execute("DELETE FROM temp.wm_words")
        return [[term for _, term in sorted(found.get(i + 1, []))] for i in range(len(texts))]

    def _without_common_words(self, query: Query) -> Query:
        """The query less its words found in more than half of all chunks; in a big index,
        its frequent words only score the matches its rarer words make.

        Why: bm25 gives a word in most chunks no weight (FTS5 clamps its negative idf), yet
        OR-ed in it makes nearly every chunk a match to score: the cost grows with the wiki,
        the ranking does not change. A project's own name or a word in every template is one.
        """
        if len(query.words) < 2 and not (query.words and query.phrases):
            return query
        total = self._chunk_total()
        if total < 50:
            return query
        big = total >= PRUNE_FROM
        half = total // 2 + 1
        # Counting stops at the threshold that matters (a word in 20,000 chunks costs 1.7 ms
        # to count, stopping at 5% 0.3 ms): in a big index, past PRUNE_SHARE.
        cap = int(total * PRUNE_SHARE) + 1 if big else half
        df = self._chunk_counts(query.words, cap)
        # Trigger: a big wiki (over PRUNE_FROM chunks) and a query mixing rare and frequent words.
        # Why: rows holding only frequent words rarely reach the top, yet scoring them is
        # most of the cost; they still count toward the score of the rows kept.
        frequent = [w for w in query.words if df[w] >= cap] if big else []
        selective = [w for w in query.words if w not in frequent]
        all_frequent = big and not selective
        if not selective or (not query.phrases and sum(df[w] for w in selective) < 20):
            if frequent:
                # Every word will make matches: count the frequent ones on, to find those in
                # most chunks, which leave (below). Scoring only, they could stay.
                df.update(self._chunk_counts(frequent, half))
            selective, frequent = list(query.words), []
        useless = {w for w, n in df.items() if n * 2 > total}
        selective = [w for w in selective if w not in useless] or list(query.words)
        frequent = [w for w in frequent if w not in useless]
        # Every word frequent: the rows holding the identifiers and all the words that weigh in
        # bm25 (in a quarter of the chunks at most) are ranked first (see _fts). A word in more
        # scores little, and a row lacking it can outrank one that has it by being shorter.
        every_first = tuple(w for w in selective if df[w] * 4 <= total) if all_frequent else ()
        every_first = every_first if len(every_first) + len(query.phrases) > 1 else ()
        if len(selective) == len(query.words) and not every_first:
            return query
        return replace(query, words=tuple(selective), scoring=tuple(frequent), every_first=every_first)

    def _chunk_counts(self, words: Sequence[str], cap: int) -> dict[str, int]:
        """How many chunks hold each word (as FTS5 stems and matches it), counted up to `cap`.

        Kept until the index changes: an agent's queries keep coming back to its project's
        words, and a word in 20,000 chunks costs 1.7 ms to count."""
        generation = self._meta("generation")
        if self._counts_cache is None or self._counts_cache[0] != generation:
            self._counts_cache = (generation, {})
        known = self._counts_cache[1]
        sql = "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
        counts = {}
        for w in words:
            n, counted_to = known.get(w, (0, 0))
            if n >= counted_to and counted_to < cap:  # not counted, or stopped short of `cap`
                n = self.conn.execute(sql, (fts_quote(w), cap)).fetchone()[0]
                known[w] = (n, cap)
            counts[w] = min(n, cap)
        return counts

    def _chunk_total(self) -> int:
        generation = self._meta("generation")
        if self._total_cache is None or self._total_cache[0] != generation:
            self._total_cache = (generation, self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return self._total_cache[1]

    def _vectors_usable(self) -> bool:
        if not self.embedder.available():
            return False
        self._catch_up_vectors(EMBED_INLINE_S)
        return True

    def may_lack_vectors(self) -> bool:
        """False when every chunk is known to have its vector (cheap: kept per change)."""
        with self._lock:
            return not self._known_complete()

    def embed_some(self, seconds: float = EMBED_INLINE_S) -> bool:
        """Embed chunks still without a vector for about `seconds` (one batch at least), if
        the model is loaded in this process; True while some are left. The MCP server calls
        it between tool calls, to work off a backlog (a huge page, an import) while idle."""
        with self._lock:
            return self.embedder.loaded and self._catch_up_vectors(seconds)

    def _known_complete(self) -> bool:
        """Is every chunk known to have its vector at the index's current generation?"""
        return self._complete_at == self._meta("generation")

    def _catch_up_vectors(self, seconds: float) -> bool:
        """Embed pending chunks for about `seconds`; True while some are left."""
        # Counting pending chunks scans the chunks: do it once per change of the index.
        if self._known_complete():
            return False
        pending = self.pending_count()
        if pending:
            pending -= self._embed_pending(limit=PENDING_IN_SEARCH, deadline=time.monotonic() + seconds)
        if pending <= 0:
            self._complete_at = self._meta("generation")
        return pending > 0

    def _has_inactive(self) -> bool:
        generation = self._meta("generation")
        if self._inactive_cache is None or self._inactive_cache[0] != generation:
            found = (
                self.conn.execute(
                    f"SELECT 1 FROM pages WHERE status IN ({', '.join('?' * len(INACTIVE))}) LIMIT 1", INACTIVE
                ).fetchone()
                is not None
            )
            self._inactive_cache = (generation, found)
        return self._inactive_cache[1]

    def _filters(self, type_: Any, tag: Any, status: Any, since: str | None) -> tuple[str, list[Any]]:
        conds: list[str] = []
        params: list[Any] = []
        types = _as_list(type_)
        if types:
            conds.append(f"p.type IN ({', '.join('?' * len(types))})")
            params += types
        tags = _as_list(tag)
        if tags:
            conds.append(f"p.path IN (SELECT page FROM page_tags WHERE tag IN ({', '.join('?' * len(tags))}))")
            params += tags
        statuses = _as_list(status)
        if statuses:
            conds.append(f"p.status IN ({', '.join('?' * len(statuses))})")
            params += statuses
        cutoff = parse_since(since)
        if cutoff:
            conds.append("COALESCE(p.updated, p.created, '') >= ?")
            params.append(cutoff)
        return (" AND ".join(conds) or "1"), params

    def _fts(self, query: Query, where: str, params: list[Any], depth: int) -> list[tuple[int, str, float]]:
        """The `depth` chunks best by bm25, best first.

        A query whose every word is frequent ranks the rows holding all of them first (those
        of `every_first`), and the rows holding any of them only when those are fewer than
        `depth`. Why: bm25 costs FTS5 ~3 us a matching row, and such a query matches a fifth
        of a big wiki. At 10,000 pages (scripts/bench_mcp.py, "redis cache times out under
        load"): 8,000 rows, 23 ms; those with every word, 3.5 ms. The top 8 were the same
        (pages, order, snippets) for all 550 queries compared on the two benchmark wikis.
        """
        if query.every_first:
            rows = self._ranked(fts_expression(query, first=True), where, params, depth)
            if len(rows) >= depth:
                return rows
        return self._ranked(fts_expression(query), where, params, depth)

    def _ranked(
        self, expression: str | None, where: str, params: list[Any], depth: int
    ) -> list[tuple[int, str, float]]:
        if expression is None:
            return []
        t = self.tuning
        if where == "1":
            # No filter: rank inside FTS5 first, join only the rows kept (30% faster).
            sql = (
                "SELECT f.id, c.page, f.s FROM (SELECT rowid AS id, -bm25(chunks_fts, ?, ?, ?) AS s "
                "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?) f "
                "JOIN chunks c ON c.id = f.id ORDER BY f.s DESC"
            )
            return self.conn.execute(
                sql, [t.title_weight, t.heading_weight, t.text_weight, expression, depth]
            ).fetchall()
        sql = (
            f"SELECT f.rowid, c.page, -bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts f "
            f"JOIN chunks c ON c.id = f.rowid JOIN pages p ON p.path = c.page "
            f"WHERE chunks_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?"
        )
        return self.conn.execute(
            sql, [t.title_weight, t.heading_weight, t.text_weight, expression, *params, depth]
        ).fetchall()

    def _vector(self, query: Any, where: str, params: list[Any], depth: int) -> list[tuple[int, str, float]]:
        """The chunks nearest to `query` (the query's unit vector), best first."""
        import numpy as np

        loaded = self._matrix()
        if loaded is None:
            return []
        ids, matrix, pages, alive = loaded.view()

        def similarities(vector: Any) -> Any:
            scores = matrix @ vector
            if alive is not None:  # rows of pages rewritten or deleted since the matrix was read
                scores[~alive] = -np.inf
            return scores

        scores = similarities(query)
        if self.tuning.vector_prf:
            # Pseudo-relevance feedback: move the query toward its three nearest chunks.
            near = np.argpartition(-scores, min(3, len(scores)) - 1)[:3]
            query = query + self.tuning.vector_prf * matrix[near].mean(axis=0)
            scores = similarities(query / np.linalg.norm(query))
        if where != "1":
            allowed = np.fromiter(
                (
                    r[0]
                    for r in self.conn.execute(
                        f"SELECT c.id FROM chunks c JOIN pages p ON p.path = c.page WHERE {where}", params
                    )
                ),
                dtype=np.int64,
            )
            scores = np.where(np.isin(ids, allowed), scores, -np.inf)
        n = min(depth, len(scores))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((ids[top], -scores[top]))]  # ties: by chunk id, whatever the rows' order
        top = top[np.isfinite(scores[top])]
        return list(zip(ids[top].tolist(), [pages[i] for i in top.tolist()], scores[top].tolist(), strict=False))

    def _fuse(
        self, rankings: dict[str, list[tuple[int, str, float]]], vector_weight: float | None = None
    ) -> tuple[list[tuple[str, float, tuple[str, ...]]], dict[int, float], dict[str, list[int]]]:
        """Reciprocal rank fusion at page level.

        Returns (pages as (path, score, retrievers), fused chunk scores, each page's chunks best
        first). A page's rank in each ranking is the rank of its best chunk among distinct pages.
        """
        t = self.tuning
        weights = {"fts": t.fts_weight, "vector": t.vector_weight if vector_weight is None else vector_weight}
        page_score: dict[str, float] = {}
        chunk_score: dict[int, float] = {}
        chunks_of: dict[str, list[int]] = {}
        found_by: dict[str, list[str]] = {}
        convex, rrf_k = t.fusion == "convex", t.rrf_k
        for name, ranking in rankings.items():
            w = weights[name] if len(rankings) > 1 else 1.0
            seen_pages: set[str] = set()  # a page's rank is its best chunk's among distinct pages
            low, span = 0.0, 1.0
            if convex and ranking:
                # Scores scaled to [0, 1] within this ranking (bm25 from 0, cosine from the
                # lowest retrieved), then weighted and added.
                low = 0.0 if name == "fts" else ranking[-1][2]
                span = (ranking[0][2] - low) or 1.0
            for rank, (chunk_id, page, raw) in enumerate(ranking, start=rrf_k + 1):
                add = w * (raw - low) / span if convex else w / rank
                if chunk_id in chunk_score:
                    chunk_score[chunk_id] += add
                else:
                    chunk_score[chunk_id] = add
                    chunks_of.setdefault(page, []).append(chunk_id)
                if page not in seen_pages:
                    seen_pages.add(page)
                    page_score[page] = page_score.get(page, 0.0) + w / (rrf_k + len(seen_pages))
                    found_by.setdefault(page, []).append(name)
        if t.page_score != "rank" or t.fusion == "convex":
            for page, chunk_ids in chunks_of.items():
                chunk_ids.sort(key=lambda c: -chunk_score[c])
                if t.page_score == "sum2" and t.fusion != "convex":
                    page_score[page] = sum(chunk_score[c] for c in chunk_ids[:2])
                else:
                    page_score[page] = chunk_score[chunk_ids[0]]
        # (otherwise each page's chunks are ordered later, for the pages shown only)
        ranked = [(page, score, tuple(found_by[page])) for page, score in page_score.items()]
        return ranked, chunk_score, chunks_of

    def _results(
        self,
        fused: tuple[list[tuple[str, float, tuple[str, ...]]], dict[int, float], dict[str, list[int]]],
        k: int,
        max_chars: int | None,
    ) -> list[SearchResult]:
        ranked, chunk_score, chunks_of = fused
        if not ranked:
            return []
        # Statuses of every candidate (the demotion can reorder them), details of the top k only.
        inactive = (
            {
                row[0]
                for row in self.conn.execute(
                    f"SELECT path FROM pages WHERE status IN ({', '.join('?' * len(INACTIVE))})", INACTIVE
                )
            }
            if self._has_inactive()
            else set()
        )
        scored = []
        for page, score, retrievers in ranked:
            if page in inactive:
                score *= self.tuning.inactive_factor
            scored.append((score, page, retrievers))
        scored.sort(key=lambda r: (-r[0], r[1]))
        scored = scored[:k]
        pages = {}
        rows = self.conn.execute(
            f"SELECT path, id, title, type, tags, status, created, updated FROM pages "
            f"WHERE path IN ({', '.join('?' * len(scored))})",
            [r[1] for r in scored],
        )
        for path, pid, title, ptype, tags, status, created, updated in rows:
            pages[path] = (pid, title, ptype, tuple(json.loads(tags or "[]")), status, created, updated)
        scored = [r for r in scored if r[1] in pages]
        chunks: dict[str, list[tuple]] = {}
        for row in self.conn.execute(
            f"SELECT page, id, ordinal, heading, text FROM chunks WHERE page IN "
            f"({', '.join('?' * len(scored))}) ORDER BY page, ordinal",
            [r[1] for r in scored],
        ):
            chunks.setdefault(row[0], []).append(row[1:])
        results: list[SearchResult] = []
        budget = max_chars
        for rank, (score, page, retrievers) in enumerate(scored):
            pid, title, ptype, tags, status, created, updated = pages[page]
            chunk_ids = sorted(chunks_of[page], key=lambda c: -chunk_score[c])
            want = self.tuning.context_words if rank == 0 else self.tuning.other_words
            heading, ordinal, snippet = self._snippet(chunks[page], chunk_ids, chunk_score, want)
            if budget is not None:
                if budget <= 0:
                    break
                if len(snippet) > budget:
                    if results and budget < 200:
                        break
                    snippet = cut(snippet, budget)
                budget -= len(snippet)
            results.append(
                SearchResult(
                    page,
                    title,
                    ptype,
                    heading,
                    snippet,
                    score,
                    retrievers,
                    tags,
                    status,
                    updated,
                    created,
                    pid,
                    ordinal,
                )
            )
        return results

    def _snippet(
        self, rows: list[tuple], chunk_ids: list[int], chunk_score: dict[int, float], want: int
    ) -> tuple[str, int, str]:
        """(heading, ordinal, text) of a page's best passage: its best chunk, grown with its
        neighbours while shorter than `want` words, then further well-ranked chunks of the page
        (`passages`, each within `passage_ratio` of the best score), joined by an ellipsis.
        `rows` are the page's chunks as (id, ordinal, heading, text).

        The first result gets long passages (`context_words`), the others short ones
        (`other_words`). Why: on LoCoMo a budget of 500 words held only four or five pages,
        and the turn a question needed was often in the sixth page's snippet, or in what the
        second page's padding pushed out; evidence recall within 500 words rose from 0.708 to
        0.758 on the held-out conversations (multi-hop 0.417 -> 0.438).
        """
        t = self.tuning
        by_id = {r[0]: r for r in rows}
        by_ordinal = {r[1]: r for r in rows}
        best = chunk_ids[0]
        _, ordinal, heading, _ = by_id[best]
        used: set[int] = set()
        parts: list[str] = []
        for n, chunk_id in enumerate(chunk_ids[: max(t.passages, 1)]):
            if chunk_id not in by_id or by_id[chunk_id][1] in used:
                continue
            if n and chunk_score[chunk_id] < t.passage_ratio * chunk_score[best]:
                break
            span = self._grow(by_id[chunk_id][1], by_ordinal, used, want)
            used.update(span)
            parts.append("\n\n".join(by_ordinal[o][3] for o in span))
        return heading, ordinal, "\n…\n".join(parts)

    def _grow(self, ordinal: int, by_ordinal: dict[int, tuple], used: set[int], want: int) -> list[int]:
        """The ordinals of a chunk and, while shorter than `want` words, its nearest
        neighbours under the same heading (before and after, alternately)."""
        heading = by_ordinal[ordinal][2]
        span = [ordinal]
        words = len(by_ordinal[ordinal][3].split())
        step = 1
        while words < want and step <= 8:
            grew = False
            for o in (ordinal - step, ordinal + step):
                row = by_ordinal.get(o)
                if row is not None and row[2] == heading and o not in used and words < want:
                    span.append(o)
                    words += len(row[3].split())
                    grew = True
            if not grew:
                break
            step += 1
        return sorted(span)

    # Links -----------------------------------------------------------------------------------

    def links(self, path: str) -> list[Link]:
        """The `[[links]]` of a page, in order, with the path each resolves to (or None)."""
        with self._lock:
            self._catch_up()
            rows = self.conn.execute(
                "SELECT target, resolved, heading, alias FROM links WHERE source = ? ORDER BY ordinal", (path,)
            ).fetchall()
            return [Link(target, resolved, heading, alias) for target, resolved, heading, alias in rows]

    def backlinks(self, path: str) -> list[str]:
        """The pages that link to `path`, sorted."""
        with self._lock:
            self._catch_up()
            rows = self.conn.execute(
                "SELECT DISTINCT source FROM links WHERE resolved = ? AND source != ? ORDER BY source", (path, path)
            ).fetchall()
            return [r[0] for r in rows]

    def has_page(self, path: str) -> bool:
        with self._lock:
            return self.conn.execute("SELECT 1 FROM pages WHERE path = ?", (path,)).fetchone() is not None

    # Pages by name -------------------------------------------------------------------------

    def in_step(self) -> bool:
        """Does the index reflect the wiki's HEAD (no commit made since its last sync)?"""
        wiki = self._store.root if self._store is not None else (self.project.wiki if self.project else None)
        return wiki is not None and self.head is not None and self.head == read_head(wiki)

    def named(self, ref: str) -> list[str]:
        """The pages whose id is `ref` or whose title is `ref` (case-insensitive), sorted."""
        wanted = ref.strip().casefold()
        with self._lock:
            rows = self.conn.execute("SELECT path, id, title FROM pages").fetchall()
        return sorted(
            path for path, page_id, title in rows if page_id == ref.strip() or (title or "").casefold() == wanted
        )

    def page_meta(self, paths: Sequence[str]) -> dict[str, PageMeta]:
        """What the index knows of those of `paths` that are pages (no page is parsed)."""
        found: dict[str, PageMeta] = {}
        with self._lock:
            for start in range(0, len(paths), 500):
                part = list(paths[start : start + 500])
                for path, pid, title, ptype, tags, status, created, updated in self.conn.execute(
                    "SELECT path, id, title, type, tags, status, created, updated FROM pages "
                    f"WHERE path IN ({', '.join('?' * len(part))})",
                    part,
                ):
                    found[path] = PageMeta(
                        path, pid, title, ptype, status or "active", tuple(json.loads(tags or "[]")), created, updated
                    )
        return found


def cut(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters, at a line or word boundary."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[: max(limit, 0)]
    head = text[: limit - 1]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at >= limit // 2:
            head = head[:at]
            break
    return head.rstrip() + "…"
