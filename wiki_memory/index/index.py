"""The search index of one project: sync from the git store, search by words and meaning.

`Index` is the one entry point; the work is done by its parts, each usable on its own:
`db.Database` (the SQLite file, its meta and generation), `writer.Writer` (pages from the
store into the index), `vectors.Vectors` (embedding, the vector matrix), `searcher.Searcher`
(a search's rankings, fusion, reranking and results, with `ranking.Ranker`, `priors.Priors`
and `snippets`), and the row reads `page_reads` and `page_lifecycle`.

It is the one public face of the index, so every question the memory layer asks of it
(search, links, the lifecycle's rows, page metadata) is a short method here that hands the
work to a part; the sync's locking, disk-full and catch-up rules, which span the parts, are
the only logic of its own.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.config import load_settings, read_head
from wiki_memory.errors import DiskFullError, WikiMemoryError, is_disk_full
from wiki_memory.index import page_lifecycle, page_reads, rebuild, schema
from wiki_memory.index.db import Database
from wiki_memory.index.embed import Embedder
from wiki_memory.index.links import Link
from wiki_memory.index.priors import Priors
from wiki_memory.index.query import Filter
from wiki_memory.index.ranking import Ranker
from wiki_memory.index.rerank import Reranker
from wiki_memory.index.results import PageMeta, Progress, SearchResult, SyncStats
from wiki_memory.index.searcher import Searcher
from wiki_memory.index.tuning import DEFAULT_TUNING, Tuning
from wiki_memory.index.vectors import Vectors
from wiki_memory.index.writer import Writer
from wiki_memory.pages.size import limit_bytes

if TYPE_CHECKING:
    from wiki_memory.config import Project
    from wiki_memory.store import Store

MODES = ("hybrid", "fts", "vector")


# The time a search or a write spends embedding before it returns (one batch at least):
# a backlog (an import, a pull) or a huge page is caught up over several searches or by
# `reindex`, never one long wait (a 2 MB page would take minutes).
EMBED_INLINE_S = 1.0


def _disk_full(error: BaseException, path: Path) -> bool:
    """Is this failure a full disk? SQLite says "database or disk is full", or only "disk
    I/O error" when it cannot grow its shared-memory file: then the free space decides."""
    if is_disk_full(error) or "disk is full" in str(error).lower():
        return True
    try:
        return "i/o error" in str(error).lower() and shutil.disk_usage(path.parent).free < 1024 * 1024
    except OSError:
        return False


class Index:
    """A project's search index: SQLite (FTS5 + vectors as blobs) beside its wiki.

    Open it with `Index.open(project)`; `attach(store)` keeps it current with every commit
    the store makes in this process; `sync(store)` catches up with anything else (a pull,
    a `git commit` in the wiki); `search` catches up by itself when the wiki moved.

    Its parts are public for tests and tools: `db`, `writer`, `vectors`, `ranker` and
    `priors`. One lock serialises the calls of every thread; the parts take none of their own.
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
        try:
            self.db = Database(self.path, self.tuning.chunk_words)
        except (*schema.DAMAGE, sqlite3.Error, OSError) as e:
            if not _disk_full(e, self.path):
                raise WikiMemoryError(f"cannot open the search index {self.path}: {e}") from None
            # A full disk: SQLite cannot make the files a writer needs, but the index as it
            # stands still answers searches (read only; the next writer catches it up).
            db = Database.read_only(self.path, self.tuning.chunk_words)
            if db is None:
                raise DiskFullError(f"cannot open the search index {self.path}: the disk is full ({e})") from None
            self.db = db
        self.vectors = Vectors(self.db, self.embedder)
        self.reranker = Reranker(settings)
        self.rebuilder: Any = None  # the process making a changed model's vectors (`start_rebuild`)

        self.writer = Writer(self.db, self.tuning.chunk_words, self.vectors, limit_bytes(settings))
        self.ranker = Ranker(self.db, self.tuning)
        self.priors = Priors(self.db, self.tuning)
        self.searcher = Searcher(
            self.db, self.embedder, self.vectors, self.ranker, self.priors, self.reranker, self.tuning
        )

    @classmethod
    def open(
        cls, project: Project, *, embedder: Embedder | None = None, settings: Any = None, tuning: Tuning | None = None
    ) -> Index:
        """Open (or create) the index at `project.index_path`; a file of another schema
        version, or a damaged one, is rebuilt from the store on its next sync or search."""
        if settings is None:
            settings = load_settings()
        return cls(project.index_path, project=project, embedder=embedder, settings=settings, tuning=tuning)

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection (a new one after the file was rebuilt)."""
        return self.db.conn

    @property
    def rebuilt(self) -> str | None:
        """Why the index file was rebuilt, if it was (it is refilled by the next sync)."""
        return self.db.rebuilt

    def close(self) -> None:
        """Detach, close the store opened here (if any) and the file."""
        with self._lock:
            self.detach()
            if self._own_store and self._store is not None:
                self._store.close()
            self._store = None
            self.db.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def head(self) -> str | None:
        """The store commit this index reflects (None before the first full sync)."""
        return self.db.head

    def generation(self) -> str | None:
        """The index's generation once it has caught up with the wiki: it moves with every
        write to the index (pages or vectors), so a value worked out from the index may be
        kept while it stays."""
        with self._lock:
            self._catch_up()
            return self.db.generation()

    def stats(self) -> dict[str, object]:
        """What the index holds: pages, chunks, vectors (and pending ones), links."""
        with self._lock:
            return {
                "path": str(self.path),
                "head": self.head,
                **page_reads.counts(self.conn, self.embedder.name, self.pending_count()),
            }

    def pending_count(self) -> int:
        """Chunks without a vector for the current model."""
        return self.vectors.pending_count()

    @property
    def matrix_loads(self) -> int:
        """How many times every vector was read from the file (not patched in memory)."""
        return self.vectors.matrix_loads

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
        """Stop indexing the attached store's commits."""
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
        store = self._store
        if store is None:
            return
        with self._lock:
            complete = self.vectors.known_complete()
            try:
                written = self.writer.apply_commit(store, commit_id, paths)
            except schema.DAMAGE as e:
                if not schema.is_damage(e):
                    raise
                self.db.reopen_fresh(f"unreadable ({e})")
                return
            if self.embedder.loaded:
                self.vectors.embed_written(written, EMBED_INLINE_S, complete)

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
                self.writer.carried = self.vectors.by_text_hash()
            try:
                stats = self._sync(store, stats, progress, full)
            except schema.DAMAGE as e:
                if not schema.is_damage(e):
                    raise self._unavailable(e) from None
                self.db.reopen_fresh(f"unreadable ({e})")
                stats = self._sync(store, SyncStats(rebuilt=self.rebuilt), progress, full)
            finally:
                self.writer.carried = {}
            if embed:
                stats.embedded = self.vectors.embed_pending(progress=progress)
            stats.pending = self.pending_count()
            if embed and not stats.pending and self.embedder.available() and self.vectors.other_models():
                self.vectors.drop_other_models()  # a changed model's vectors are all made
            if stats.changed + stats.embedded > 500:
                # A big sync leaves a big write-ahead log: fold it into the file now.
                try:
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.OperationalError:
                    pass  # a reader holds it; SQLite checkpoints later by itself
        stats.seconds = time.perf_counter() - started
        return stats

    def _unavailable(self, error: BaseException) -> WikiMemoryError:
        """The one line for an SQLite error that is not damage: a full disk says so (it
        read as "busy"), anything else is passing trouble."""
        if self.db.read_only_reason or _disk_full(error, self.path):
            return DiskFullError(f"the disk is full: the search index cannot be written ({error}); free some space")
        return WikiMemoryError(f"the search index is busy or unavailable ({error}); try again")

    def _sync(self, store: Store, stats: SyncStats, progress: Progress | None, full: bool) -> SyncStats:
        if full:
            self.db.reopen_fresh("full reindex")
            stats.rebuilt = "full reindex"
        return self.writer.sync(store, stats, progress)

    def _get_store(self) -> Store | None:
        if self._store is not None:
            return self._store
        if self.project is None or not (self.project.wiki / ".git").is_dir():
            return None
        from wiki_memory.store import Store  # deferred: dulwich, which the helper and rebuild processes never need

        self._store = Store(self.project.wiki)
        self._own_store = True
        return self._store

    def _wiki(self) -> Path | None:
        """The wiki folder: the attached store's, else the project's."""
        return self._store.root if self._store is not None else (self.project.wiki if self.project else None)

    def _catch_up(self) -> None:
        """Before a search: if the wiki moved since the last sync, sync (without embedding)."""
        wiki = self._wiki()
        if wiki is None:
            return
        head = read_head(wiki)
        if head is None or head == self.head:
            return
        store = self._get_store()
        if store is not None:
            self.sync(store, embed=False)

    # Search ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 8,
        mode: str = "hybrid",
        type: Filter = None,
        tag: Filter = None,
        status: Filter = None,
        since: str | None = None,
        max_chars: int | None = None,
        not_status: Filter = None,
        rerank: bool = True,
    ) -> list[SearchResult]:
        """The `k` best pages for `query`, each once with its best passage.

        `mode`: "hybrid" (bm25 and vector rankings fused), "fts" or "vector"; without a model,
        FTS alone. Filters: `type`, `tag` (any of), `status` (any of), `not_status` (none
        of), `since` (`7d`, `2026-11-01`).
        `max_chars` caps the total length of the snippets: the best context that fits.
        With a reranker configured (see rerank.py), it orders the fused top candidates
        (`rerank=False`: the fused order).
        """
        if mode not in MODES:
            raise WikiMemoryError(f"unknown search mode {mode!r} (one of: {', '.join(MODES)})")
        if k < 1:
            return []
        with self._lock:
            try:
                return self._search(query, k, mode, type, tag, status, since, max_chars, not_status, rerank)
            except schema.DAMAGE as e:
                if not schema.is_damage(e):
                    raise self._unavailable(e) from None
                self.db.reopen_fresh(f"unreadable ({e})")
                return self._search(query, k, mode, type, tag, status, since, max_chars, not_status, rerank)

    def _search(self, text: str, k: int, mode: str, *filters_and_options: Any) -> list[SearchResult]:
        """Catch up with the wiki, then the searcher's answer (by meaning too when the vectors
        are usable); the arguments are `search`'s, in its order."""
        self._catch_up()
        vectors = mode != "fts" and self._vectors_usable() and bool(text.strip())
        return self.searcher.search(text, k, mode, *filters_and_options, vectors=vectors)

    def _vectors_usable(self) -> bool:
        if not self.embedder.available():
            return False
        if self.vectors.changing_model():
            # The model changed: its vectors are made in the background, and until most
            # chunks have theirs this search goes on by words (a few vectors of the new
            # model would rank only their pages by meaning).
            self.start_rebuild()
            return False
        self.vectors.catch_up(EMBED_INLINE_S)
        return True

    def start_rebuild(self) -> None:
        """Start making the vectors of the current model in a process of its own (once per
        index in this process; the rebuild's lock keeps it to one per index)."""
        if self.rebuilder is None:
            self.rebuilder = rebuild.start(self.path)

    def may_lack_vectors(self) -> bool:
        """False when every chunk is known to have its vector (cheap: kept per change)."""
        with self._lock:
            return not self.vectors.known_complete()

    def embed_some(self, seconds: float = EMBED_INLINE_S) -> bool:
        """Embed chunks still without a vector for about `seconds` (one batch at least), if
        the model is loaded in this process; True while some are left. The MCP server calls
        it between tool calls, to work off a backlog (a huge page, an import) while idle."""
        with self._lock:
            return self.embedder.loaded and self.vectors.catch_up(seconds)

    # Links -----------------------------------------------------------------------------------

    def links(self, path: str) -> list[Link]:
        """The `[[links]]` of a page, in order, with the path each resolves to (or None)."""
        with self._lock:
            self._catch_up()
            return page_reads.links_of(self.conn, path)

    def backlinks(self, path: str) -> list[str]:
        """The pages that link to `path`, sorted."""
        with self._lock:
            self._catch_up()
            return page_reads.backlinks(self.conn, path)

    def has_page(self, path: str) -> bool:
        """Is `path` a page of the index?"""
        with self._lock:
            return self.conn.execute("SELECT 1 FROM pages WHERE path = ?", (path,)).fetchone() is not None

    # Pages by name -------------------------------------------------------------------------

    def in_step(self) -> bool:
        """Does the index reflect the wiki's HEAD (no commit made since its last sync)?"""
        wiki = self._wiki()
        return wiki is not None and self.head is not None and self.head == read_head(wiki)

    def named(self, ref: str) -> list[str]:
        """The pages whose id is `ref` or whose title is `ref` (case-insensitive), sorted."""
        with self._lock:
            return page_reads.named(self.conn, ref)

    # The lifecycle ----------------------------------------------------------------------

    def lifecycle_rows(self, types: Sequence[str] | None = None) -> list[page_lifecycle.LifecycleRow]:
        """Every page's status, successor, anchors and expiry (of `types`, when given)."""
        with self._lock:
            self._catch_up()
            return page_lifecycle.rows(self.conn, types)

    def links_into(self, statuses: Sequence[str]) -> list[tuple[str, str, str]]:
        """(source, target, target's status): links from other pages to pages of `statuses`."""
        with self._lock:
            self._catch_up()
            return page_lifecycle.links_into(self.conn, statuses)

    def anchors_of(self, paths: Sequence[str]) -> dict[str, str]:
        """path -> its anchors as JSON (`pages.anchors.anchors_json`), for pages that have some."""
        with self._lock:
            return page_lifecycle.anchors_of(self.conn, paths)

    def first_vectors(self, paths: Sequence[str]) -> dict[str, Any]:
        """path -> its first chunk's vector for this index's model (pages that have one)."""
        with self._lock:
            return page_lifecycle.first_vectors(self.conn, self.embedder.name, paths)

    def first_texts(self, paths: Sequence[str]) -> dict[str, str]:
        """path -> its first chunk's text."""
        with self._lock:
            return page_lifecycle.first_texts(self.conn, paths)

    def page_meta(self, paths: Sequence[str]) -> dict[str, PageMeta]:
        """What the index knows of those of `paths` that are pages (no page is parsed)."""
        with self._lock:
            return page_reads.meta_of(self.conn, paths)

    # Browsing the whole wiki (the web viewer's graph and review) -------------------------

    def link_pairs(self) -> list[tuple[str, str]]:
        """Every link from one page to another that exists: (source, target), each pair once."""
        with self._lock:
            self._catch_up()
            return page_reads.link_pairs(self.conn)

    def pages_where(
        self,
        *,
        statuses: Sequence[str] = (),
        without_id: bool = False,
        path_glob: str | None = None,
        limit: int | None = None,
    ) -> list[PageMeta]:
        """Pages whose status is one of `statuses`, or that have no id (written by hand, or
        whose front matter did not parse), or whose path matches `path_glob` (SQLite GLOB),
        sorted by path; the first `limit` of them when given."""
        if not (statuses or without_id or path_glob):
            return []
        with self._lock:
            self._catch_up()
            return page_reads.pages_where(self.conn, statuses, without_id, path_glob, limit)
