"""The warm helper: one process per user, whatever the home or temporary directory, that
keeps the embedding model loaded and answers, over a Unix socket, how close a prompt's
meaning is to the pages a hook found by words. Each request names its project or index, so
one helper serves every wiki-memory home of the user (~220 MB: the model and its libraries).

    python -m wiki_memory.recall.helper [--home ~/.local/share/wiki-memory] [--idle 600] [--preload INDEX]

Why a process of its own: importing fastembed and loading the model costs 1-2 s, far more
than a hook may take, while a loaded model embeds a prompt in a few milliseconds. The hook
asks it first and, when it is not there, not ready or slow, decides by words alone and
starts it for the next prompt (`meaning.ensure_started`).

It never outlives its use and never multiplies:

- one per user: its socket and lock live in the user's private folder (`meaning.socket_path`,
  the same for every home and `$TMPDIR`); it holds an exclusive `flock` on the lock for its
  whole life, and a second one started meanwhile finds the lock taken and exits at once;
- it exits after `--idle` seconds without a request (10 minutes by default), when its
  socket file is removed or replaced (its folder deleted, or a newer helper took over), or
  when asked to (`{"op": "stop"}`);
- it is started detached (its own session, no terminal, no pipes to the hook).

Each index's vectors are read once and kept until the index's generation moves.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import socket
import sqlite3
import sys
import time
from typing import Any

from wiki_memory import logs
from wiki_memory.config import Project, load_settings
from wiki_memory.errors import WikiMemoryError
from wiki_memory.index import Index, readonly
from wiki_memory.index.embed import VECTOR_DTYPE, Embedder, EmbeddingFailed, from_blobs
from wiki_memory.index.rerank import Reranker
from wiki_memory.pages.status import handed_out
from wiki_memory.recall import find, meaning, run
from wiki_memory.recall.settings import FIELDS, RecallSettings

NEAREST = 10  # pages meaning alone may bring to a recall, at most
CHECK_EVERY = 1.0  # seconds between checks of the idle clock and the socket file
MAX_REQUEST = 256 * 1024
EMBED_SLICE = 0.5  # seconds of embedding pending chunks between two requests, at most


class Vectors:
    """One index's chunk vectors (for the helper's model), by page, reloaded when the index's
    generation moves."""

    def __init__(self, path: str, model: str) -> None:
        self.path, self.model = path, model
        self.generation: str | None = None
        self.matrix: Any = None
        self.rows: dict[str, list[int]] = {}
        self.chunks: list[int] = []  # the chunk id of each row
        self.pages: list[str] = []  # the page of each row
        self.open: Any = None  # whether each row's page may be handed at all (type, status)
        self.embedded_at: str | None = None  # the generation at which no chunk lacked its vector

    def current(self, kept: sqlite3.Connection | None = None) -> Vectors:
        """These vectors, read again if the index moved on (`kept`: an open connection to
        the index to ask, left open; else one is opened for the question)."""
        conn = kept or readonly.connect(self.path, 1000)
        if conn is None:
            return self  # no index (yet): no vectors
        try:
            generation = readonly.generation(conn)
            if generation == self.generation and self.matrix is not None:
                return self
            import numpy as np  # deferred: numpy: recall/ stays light at the top

            found = readonly.vectors_of(conn, self.model)
        finally:
            if conn is not kept:
                conn.close()
        rows: dict[str, list[int]] = {}
        for n, (page, *_) in enumerate(found):
            rows.setdefault(page, []).append(n)
        self.matrix = (
            from_blobs([row[1] for row in found], len(found[0][1]) // np.dtype(VECTOR_DTYPE).itemsize)
            if found
            else np.zeros((0, 0), np.float32)
        )
        self.chunks = [row[2] for row in found]
        self.pages = [row[0] for row in found]
        self.open = np.array([t not in find.LOG_TYPES and handed_out(s or "active") for *_, t, s in found], dtype=bool)
        self.rows, self.generation = rows, generation
        return self

    def nearest(self, query: Any, floor: float, limit: int = NEAREST) -> dict[str, tuple[float, int]]:
        """The pages recall may hand (not logs, not wrong, superseded or archived) with a chunk
        at least `floor` close to `query` (a unit vector): page -> (that closeness, the chunk's
        id), the `limit` closest pages."""
        if self.matrix is None or not len(self.matrix) or self.matrix.shape[1] != query.shape[0]:
            return {}
        import numpy as np  # deferred: as in current()

        sims = self.matrix @ query
        close = (sims >= floor) & self.open
        out: dict[str, tuple[float, int]] = {}
        for row in np.flatnonzero(close)[np.argsort(-sims[close], kind="stable")]:
            page = self.pages[row]
            if page not in out:
                out[page] = (round(float(sims[row]), 4), self.chunks[row])
                if len(out) >= limit:
                    break
        return out

    def similarities(self, query: Any, pages: list[str]) -> dict[str, float]:
        """The best cosine between `query` (a unit vector) and each page's chunks."""
        out: dict[str, float] = {}
        if self.matrix is None or not len(self.matrix) or self.matrix.shape[1] != query.shape[0]:
            return out
        wanted = [p for p in pages if p in self.rows]
        if not wanted:
            return out
        index = [i for p in wanted for i in self.rows[p]]
        sims = self.matrix[index] @ query
        at = 0
        for p in wanted:
            n = len(self.rows[p])
            out[p] = round(float(sims[at : at + n].max()), 4)
            at += n
        return out


class Helper:
    """The server: the model, the indexes' vectors and connections it keeps, its idle clock.
    `home` is where its log goes (the home whose hook started it); it serves every home."""

    def __init__(self, home: str | None, idle: float) -> None:
        self.home, self.idle = home, idle
        self.sock_path = meaning.socket_path()
        self.indexes: dict[str, Vectors] = {}
        self.connections: dict[str, tuple[int, sqlite3.Connection]] = {}
        self.searchers: dict[str, tuple[int, Any]] = {}  # index -> (its inode, an open Index)
        self.embedder: Any = None
        self.reranker: Any = None  # `[search] rerank`, when recall may use it (`rerank_recall`)
        self.last = time.monotonic()
        self.inode: int | None = None

    def load_model(self) -> bool:
        try:
            settings = load_settings()
        except WikiMemoryError as e:  # a broken config.toml: the default model meanwhile
            log(self.home, str(e))
            settings = None
        # The provider and model of `[index]` in the home that started it: the vectors it
        # reads and makes are those the CLI searches (an embeddings server, when configured:
        # the helper, not the hook, waits on it).
        embedder = Embedder(settings=settings)
        try:
            if not embedder.available():
                raise EmbeddingFailed(embedder.error or "no model")
            embedder.embed_query("warm up")
        except EmbeddingFailed as e:
            log(self.home, f"no embedding model ({e}); exiting")
            return False
        self.embedder = embedder

        # The hook waits on the helper a quarter of a second at most: a slow reranker costs
        # the prompt its recall, never the agent its time.
        reranker = Reranker(settings)
        self.reranker = reranker if reranker.enabled and reranker.for_recall else None
        # What a hook's first request needs, loaded now rather than while it waits.

        return True

    def connection(self, path: str) -> sqlite3.Connection | None:
        """A read-only connection to an index, kept between requests (its stemming tables
        too), opened again when the file was replaced (a rebuilt index)."""

        try:
            inode = os.stat(path).st_ino
        except OSError:
            return None
        kept = self.connections.get(path)
        if kept is not None and kept[0] == inode:
            return kept[1]
        if kept is not None:
            kept[1].close()
        conn = find.connect(path)
        if conn is not None:
            self.connections[path] = (inode, conn)
        return conn

    def vectors(self, path: str) -> Vectors:
        found = self.indexes.get(path)
        if found is None:
            found = self.indexes[path] = Vectors(path, self.embedder.name)
        # The request's own connection answers whether the index moved: no connection (and
        # schema read) of its own per request.
        return found.current(self.connection(path))

    def catch_up(self, seconds: float = EMBED_SLICE) -> None:
        """Chunks written without their vector (a page from the CLI, the viewer, a hand edit:
        processes without the model) get one here, where the model is loaded, a slice at a
        time between requests: a fresh page is found by meaning too, with no reindex."""
        for path, kept in list(self.indexes.items()):
            conn = self.connection(path)
            if conn is None:
                continue
            generation = None
            try:
                generation = readonly.generation(conn)
                if kept.embedded_at is not None and kept.embedded_at == generation:
                    continue

                with Index(path, embedder=self.embedder) as index:
                    left = index.embed_some(seconds)
                    if not left:
                        kept.embedded_at = index.db.generation()
            except Exception as e:  # noqa: BLE001 - a busy or broken index: tried again later
                log(self.home, f"embedding pending chunks of {path}: {type(e).__name__}: {e}")
                kept.embedded_at = generation

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "stop":
            return {"ok": True, "stopping": True}
        if request.get("op") == "ping":
            return {"ok": True, "pid": os.getpid()}
        if request.get("op") == "recall":
            return {"ok": True, "results": self.recall(request)}
        if request.get("op") == "search":
            return self.search(request)
        index, text, pages = request.get("index"), request.get("text"), request.get("pages")
        if not isinstance(index, str) or not isinstance(text, str) or not isinstance(pages, list):
            return {"ok": False, "error": "bad request"}
        if not os.path.isfile(index):
            return {"ok": False, "error": "no such index"}
        query = self.embedder.embed_query(text[:2000])
        vectors = self.vectors(index)
        answer: dict[str, Any] = {"ok": True, "sims": vectors.similarities(query, [str(p) for p in pages])}
        near = request.get("near")
        if isinstance(near, (int, float)) and not isinstance(near, bool):
            answer["near"] = vectors.nearest(query, float(near))
        return answer

    def search(self, request: dict[str, Any]) -> dict[str, Any]:
        """A search of `wiki-memory search` (or another front end): `Index.search` on an
        index kept open here, with the model loaded and the vectors in memory. Refused when
        the caller's settings name another model, or when the model fails (the caller then
        searches by itself, and says why)."""

        if request.get("model") != self.embedder.name:
            return {"ok": False, "error": f"the helper embeds with {self.embedder.name}"}
        project = Project.from_fields(request["project"])
        path = str(project.index_path)
        inode = os.stat(path).st_ino
        kept = self.searchers.get(path)
        if kept is not None and kept[0] != inode:  # the file was rebuilt: open the new one
            kept[1].close()
            kept = None
        if kept is None:
            kept = self.searchers[path] = (inode, Index.open(project, embedder=self.embedder))
        asked: dict[str, Any] = {
            k: request.get(k) for k in ("k", "mode", "type", "tag", "status", "since", "max_chars", "not_status")
        }
        results = kept[1].search(str(request["query"]), **asked)
        if self.embedder.error:
            return {"ok": False, "error": self.embedder.error}
        # The results' anchors too: the caller notes their drift without opening the index.
        anchors = kept[1].anchors_of([r.path for r in results])
        return {"ok": True, "results": [r.as_dict() for r in results], "anchors": anchors}

    def recall(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        """A hook's whole recall (see `meaning.recall`), as `recall.run` does it in a hook,
        with the closeness in meaning computed here."""

        project = Project.from_fields(request["project"])
        settings = RecallSettings(**{k: v for k, v in (request.get("settings") or {}).items() if k in FIELDS})
        exclude = set(request.get("exclude") or ())
        prompt = request.get("prompt")
        if isinstance(prompt, str):
            embedded: list[Any] = []

            def query() -> Any:
                if not embedded:
                    embedded.append(self.embedder.embed_query(prompt[:2000]))
                return embedded[0]

            def one(tier: Project, ex: Any) -> Any:
                """The recall on one tier (the personal wiki or the team's), by its own index."""
                index = str(tier.index_path)
                return run.for_prompt(
                    tier,
                    prompt,
                    settings=settings,
                    exclude=ex,
                    similarities=lambda pages: self.vectors(index).similarities(query(), list(pages)),
                    nearby=lambda floor: self.vectors(index).nearest(query(), floor),
                    conn=self.connection(index),
                    rerank=self.reranker.scores if self.reranker is not None else None,
                )

            results = [run.both_tiers(project, one, exclude, settings)]
        else:
            results = []
            cwd = request.get("cwd")
            for file in request.get("files") or ():

                def on_file(tier: Project, ex: Any, file: Any = file) -> Any:
                    conn = self.connection(str(tier.index_path))
                    return run.for_file(tier, str(file), cwd=cwd, settings=settings, exclude=ex, conn=conn)

                results.append(run.both_tiers(project, on_file, exclude, settings))
                exclude |= set(results[-1].pages)
        return [{"trigger": r.trigger, "subject": r.subject, "text": r.text, "pages": list(r.pages)} for r in results]

    def serve(self, preload: list[str]) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(self.sock_path)
        except FileNotFoundError:
            pass
        server.bind(self.sock_path)
        os.chmod(self.sock_path, 0o600)
        self.inode = os.stat(self.sock_path).st_ino
        server.listen(16)
        server.settimeout(CHECK_EVERY)
        self.last = time.monotonic()  # the idle clock starts once it can answer
        for path in preload:
            try:
                self.vectors(path)
            except (sqlite3.Error, OSError, readonly.IndexSchemaMismatch) as e:
                log(self.home, f"preload {path}: {e}")
        # What is loaded by now (the model, its libraries, the vectors) lives as long as the
        # helper: out of the collector's sight, so that a collection during a request walks
        # only what requests made.
        gc.collect()
        gc.freeze()
        try:
            while self.alive():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    self.catch_up()
                    continue
                self.last = time.monotonic()
                if self.handle(conn):
                    break
                self.catch_up()
        finally:
            server.close()
            self.remove_socket()
            for _, index in self.searchers.values():
                index.close()

    def handle(self, conn: socket.socket) -> bool:
        """Answer one request; True when it asked the helper to stop."""
        stop = False
        with conn:
            conn.settimeout(2.0)
            try:
                data = b""
                while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                request = json.loads(data or b"{}")
                reply = self.answer(request if isinstance(request, dict) else {})
                stop = bool(reply.get("stopping"))
            except Exception as e:  # noqa: BLE001 - one bad request must not end the helper
                reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                pass
        return stop

    def alive(self) -> bool:
        if time.monotonic() - self.last > self.idle:
            log(self.home, f"idle for {self.idle:.0f} s")
            return False
        try:
            return os.stat(self.sock_path).st_ino == self.inode
        except OSError:
            return False

    def remove_socket(self) -> None:
        try:
            if os.stat(self.sock_path).st_ino == self.inode:
                os.unlink(self.sock_path)
        except OSError:
            pass


def log(home: str | None, message: str) -> None:
    """One line in the home's `logs/recall-helper.log` (without a home, in the helper's own
    folder); never raises, never makes a home anew."""
    logs.write("recall-helper", f"pid {os.getpid()} {message}", root=home or os.path.dirname(meaning.socket_path()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wiki_memory.recall.helper", description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", help="the home whose log it writes to (it serves every home)")
    parser.add_argument("--idle", type=float, default=meaning.IDLE, help="seconds without a request before it exits")
    parser.add_argument("--preload", action="append", default=[], help="an index whose vectors to read at once")
    args = parser.parse_args(argv)
    if meaning.private_folder() is None:
        log(args.home, f"{os.path.dirname(meaning.socket_path())} is not this user's alone (mode 0700); exiting")
        return 1
    fd = os.open(meaning.lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        import fcntl  # deferred: POSIX only (no fcntl on Windows)

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another helper serves this user
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        helper = Helper(args.home, args.idle)
        if not helper.load_model():
            return 1
        log(args.home, "started")
        helper.serve(args.preload)
        log(args.home, "exiting")
        return 0
    finally:
        os.close(fd)  # releases the lock


if __name__ == "__main__":
    sys.exit(main())
