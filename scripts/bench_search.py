#!/usr/bin/env python3
"""Benchmark: indexing and searching generated wikis of 1,000 and 10,000 realistic pages.

Printed per size: indexing throughput (FTS only; embedding), a no-op sync, warm query
latency p50/p95 for fts, vector and hybrid (query embedding included), the wall time of a
cold `wiki-memory search` process (fts and hybrid), index size and peak memory.

Embedding 10,000 pages takes many minutes on a shared 2-core machine, so by default the
embedding throughput is measured on the 1,000-page wiki and the larger wiki's vectors are
copies of real vectors of the smaller one (search latency does not depend on their values);
`--embed-all` embeds every page for real.

    python scripts/bench_search.py
    python scripts/bench_search.py --sizes 1000 --queries 100 --json /tmp/bench-search.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

COMPONENTS = (
    "auth service",
    "billing worker",
    "search indexer",
    "API gateway",
    "admin dashboard",
    "mobile client",
    "export pipeline",
    "notification queue",
    "payment webhook",
    "session store",
    "CDN config",
    "report scheduler",
    "image resizer",
    "feature flag client",
    "audit log",
    "rate limiter",
)
PROBLEMS = (
    "times out under load",
    "leaks memory after a deploy",
    "returns stale data",
    "fails one run in ten",
    "double-processes messages",
    "rejects valid tokens",
    "blocks the event loop",
    "drops requests on restart",
    "logs secrets in plain text",
    "ignores the retry budget",
    "deadlocks on concurrent writes",
    "uses the wrong timezone",
)
CAUSES = (
    "the connection pool is shared across forks",
    "a cache key omits the tenant id",
    "the retry runs before the token refresh",
    "a migration locked the table",
    "the health probe starts too early",
    "eager mode hides the broker",
    "the client reuses a closed socket",
    "the lock is taken in the wrong order",
    "a default timeout of zero means forever",
    "the serializer drops timezone info",
)
ACTIONS = (
    "Set an explicit timeout",
    "Move the refresh before the retry",
    "Add the tenant id to the key",
    "Recycle workers after 200 tasks",
    "Split the migration in two releases",
    "Use a startup probe",
    "Create the pool after the fork",
    "Take the locks in id order",
    "Store UTC and render local time",
    "Batch the lookups with a loader",
)
IDENTS = (
    "ERR_CONN_RESET",
    "CELERY_TASK_ALWAYS_EAGER",
    "src/auth/jwt.py",
    "max_overflow",
    "pool_size",
    "worker_max_tasks_per_child",
    "startupProbe",
    "acks_late",
    "select_related",
    "traces_sample_rate",
    "Retry-After",
    "OperationalError",
    "StaleElementReferenceException",
    "presign_upload",
    "incr_with_ttl",
)
FILLER = (
    "We saw this first in staging and then in production during the evening peak.",
    "The dashboards showed the error rate climbing slowly before the alert fired.",
    "Nobody noticed for two days because the nightly job swallowed the exception.",
    "A quick workaround was to restart the pods, which only hid the problem.",
    "The fix was reviewed by the on-call engineer and rolled out behind a flag.",
    "Tests now cover the failure mode with a deterministic fake clock.",
    "The incident review asked for a runbook entry and a regression test.",
    "Customers reported it through support before our monitoring caught it.",
)
TYPES = ("gotcha", "decision", "procedure", "fact", "note", "preference")
QUERIES = (
    "tests hang on the build server",
    "ERR_CONN_RESET",
    "auth service rejects valid tokens",
    "why do workers use so much memory",
    "src/auth/jwt.py",
    "how do we roll out a schema change",
    "billing worker double-processes messages",
    "pool_size max_overflow",
    "timezone bug in reports",
    "what to do when the rate limiter blocks requests",
    "startup probe kills pods",
    "cache returns data from another tenant",
    "retry before refresh",
    "deadlock on concurrent writes",
    "notification queue drops requests",
    "who reviewed the fix",
)


SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "vo",
    "zi",
    "pre",
    "con",
    "ex",
    "ber",
    "dal",
    "fin",
    "gor",
    "hul",
    "jen",
    "kor",
    "lum",
    "mar",
    "nis",
    "ost",
    "pel",
    "quin",
    "ras",
    "sel",
    "tor",
    "ul",
    "vin",
    "wes",
)


def vocabulary(size: int, seed: int = 11) -> list[str]:
    """Made-up content words: a real wiki's vocabulary is large, and its word frequencies
    fall off as Zipf's law says (the weights below), which sets FTS posting-list lengths."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCAB = vocabulary(20000)
ZIPF = [1 / (r + 1) ** 1.07 for r in range(len(VOCAB))]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(VOCAB, weights=ZIPF, k=words)).capitalize() + "."


def generate(n: int, seed: int = 7):
    from wiki_memory.pages import Page

    rng = random.Random(seed)
    pages = []
    for i in range(n):
        comp, prob = rng.choice(COMPONENTS), rng.choice(PROBLEMS)
        title = f"{comp.capitalize()} {prob} ({i})"
        paras = [
            f"**Symptom**: the {comp} {prob}. {rng.choice(FILLER)} {rng.choice(FILLER)}",
            f"## Cause\n\nIt turned out that {rng.choice(CAUSES)}. `{rng.choice(IDENTS)}` was involved, and "
            f"{rng.choice(CAUSES)} made it worse. {rng.choice(FILLER)}",
            f"## Fix\n\n{rng.choice(ACTIONS)}. {rng.choice(ACTIONS)} as well. {rng.choice(FILLER)} "
            f"See [[{rng.choice(COMPONENTS).capitalize()} {rng.choice(PROBLEMS)} ({rng.randrange(n)})]].",
        ]
        paras[0] += " " + prose(rng, rng.randint(15, 40))
        if rng.random() < 0.5:
            paras.append(
                "## Notes\n\n"
                + " ".join(rng.choice(FILLER) for _ in range(rng.randint(1, 4)))
                + " "
                + " ".join(prose(rng, rng.randint(8, 20)) for _ in range(rng.randint(2, 8)))
            )
        pages.append(
            Page.new(title, TYPES[i % len(TYPES)], "\n\n".join(paras), tags=[comp.split()[0].lower(), prob.split()[0]])
        )
    return pages


def queries(count: int, seed: int = 5) -> list[str]:
    """The fixed phrasings above, then known-item queries: one common word of the prose and
    one to three specific ones (ranks 200-5,000), as a person recalls a page."""
    rng = random.Random(seed)
    out = list(QUERIES)
    while len(out) < count:
        words = rng.choices(VOCAB[:200], weights=ZIPF[:200], k=1) + rng.sample(VOCAB[200:5000], rng.randint(1, 3))
        out.append(" ".join(words))
    return out[:count]


def build_wiki(root: Path, n: int):
    from wiki_memory.pages import render_page
    from wiki_memory.store import Author, Store

    store = Store.create(root)
    store.commit({p.path: render_page(p).encode() for p in generate(n)}, f"bench: {n} pages", Author.agent("bench"))
    return store


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def copy_vectors(index, source_rows: list[tuple[int, bytes]], model: str) -> None:
    """Give every chunk a vector taken from a real corpus (for latency at sizes not embedded)."""
    ids = [r[0] for r in index.conn.execute("SELECT id FROM chunks")]
    rng = random.Random(3)
    index.conn.execute("BEGIN")
    index.conn.executemany(
        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
        [(cid, model, source_rows[0][0], rng.choice(source_rows)[1]) for cid in ids],
    )
    index.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
    index.conn.execute("COMMIT")


def bench_size(n: int, work: Path, args, embedder, vector_source: list | None) -> tuple[dict, list | None]:
    from wiki_memory.config import project_for_store
    from wiki_memory.index import Index
    from wiki_memory.index.embed import to_blob

    home = work / f"home-{n}"
    env = {**os.environ, "WIKI_MEMORY_HOME": str(home)}
    os.environ["WIKI_MEMORY_HOME"] = str(home)
    wiki = work / f"wiki-{n}"
    t = time.perf_counter()
    store = build_wiki(wiki, n)
    build_s = time.perf_counter() - t
    project = project_for_store(wiki)
    index = Index.open(project, embedder=embedder)
    t = time.perf_counter()
    index.sync(store, embed=False)
    fts_s = time.perf_counter() - t
    chunks = index.stats()["chunks"]
    t = time.perf_counter()
    noop = index.sync(store, embed=False)
    noop_s = time.perf_counter() - t
    assert noop.changed == 0
    embed_s = None
    if vector_source is None and n > args.embed_limit and not args.embed_all:
        import numpy as np

        rows = np.random.default_rng(1).standard_normal((1000, 384)).astype(np.float32)
        vector_source = ("random unit vectors", [(384, to_blob(r / np.linalg.norm(r))) for r in rows])
    if vector_source is None or args.embed_all:
        t = time.perf_counter()
        embedded = index.sync(store).embedded
        embed_s = time.perf_counter() - t
        vector_source = (
            f"copied from the {n:,}-page wiki",
            index.conn.execute("SELECT dim, vec FROM vectors").fetchall(),
        )
        kind = "embedded"
    else:
        embedded = 0
        kind = vector_source[0]
        copy_vectors(index, vector_source[1], embedder.name)
    embedder.available()
    latencies: dict[str, list[float]] = {}
    for mode in ("fts", "vector", "hybrid"):
        index.search(QUERIES[0], mode=mode)  # warm: matrix loaded, model loaded
        times = []
        for q in queries(args.queries):
            t = time.perf_counter()
            index.search(q, k=8, mode=mode)
            times.append((time.perf_counter() - t) * 1000)
        latencies[mode] = times
    index.close()
    store.close()

    # The CLI's own peak memory: VmHWM, which starts afresh at exec (ru_maxrss would carry
    # over the forking parent's).
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('MAXRSS ' + next(l.split()[1] for l in "
        "open('/proc/self/status') if l.startswith('VmHWM')) + '\\n'))\n"
        "sys.argv = ['wiki-memory'] + sys.argv[1:]\nfrom wiki_memory.entry import main\nmain()\n"
    )
    cli_rss = {}
    for mode in ("fts", "hybrid"):
        out = subprocess.run(
            [sys.executable, "-c", probe, "search", "auth service rejects valid tokens", "--mode", mode],
            env={**env, "WIKI_MEMORY_STORE": str(wiki)},
            capture_output=True,
            text=True,
        )
        cli_rss[mode] = next(
            (int(line.split()[1]) / 1024 for line in out.stderr.splitlines() if line.startswith("MAXRSS")), float("nan")
        )
    cold: dict[str, float] = {}
    exe = Path(sys.executable).with_name("wiki-memory")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "wiki_memory"]
    for mode in ("fts", "hybrid"):
        walls = []
        for _ in range(args.cold_runs):
            t = time.perf_counter()
            out = subprocess.run(
                command + ["search", "auth service rejects valid tokens", "--mode", mode, "--json"],
                env={**env, "WIKI_MEMORY_STORE": str(wiki)},
                capture_output=True,
                text=True,
            )
            walls.append((time.perf_counter() - t) * 1000)
            if out.returncode != 0 or not json.loads(out.stdout):
                raise SystemExit(f"cold search failed: {out.stderr}")
        cold[mode] = statistics.median(walls)
    size_mb = sum(os.path.getsize(f) for f in home.rglob("index.sqlite")) / 1e6
    wal_mb = sum(os.path.getsize(f) for f in home.rglob("index.sqlite-wal")) / 1e6
    row = {
        "pages": n,
        "chunks": chunks,
        "build_wiki_s": round(build_s, 2),
        "fts_index_s": round(fts_s, 2),
        "fts_pages_per_s": round(n / fts_s, 1),
        "embed_s": round(embed_s, 2) if embed_s else None,
        "embedded_chunks": embedded,
        "embed_chunks_per_s": round(embedded / embed_s, 1) if embed_s else None,
        "embed_pages_per_s": round(n / embed_s, 1) if embed_s else None,
        "noop_sync_ms": round(noop_s * 1000, 1),
        **{f"{m}_p50_ms": round(pct(v, 50), 2) for m, v in latencies.items()},
        **{f"{m}_p95_ms": round(pct(v, 95), 2) for m, v in latencies.items()},
        "cold_cli_fts_ms": round(cold["fts"], 1),
        "cold_cli_hybrid_ms": round(cold["hybrid"], 1),
        "index_mb": round(size_mb, 1),
        "wal_mb": round(wal_mb, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cli_fts_peak_rss_mb": round(cli_rss["fts"], 1),
        "cli_hybrid_peak_rss_mb": round(cli_rss["hybrid"], 1),
        "vectors": kind,
    }
    return row, vector_source


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--queries", type=int, default=100, help="warm queries per mode")
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--embed-all", action="store_true", help="embed every size for real (slow)")
    ap.add_argument(
        "--embed-limit",
        type=int,
        default=2000,
        help="a wiki larger than this, run without a smaller one, gets random unit vectors",
    )
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    evalkit.setup_model_env()
    from wiki_memory.index import Embedder

    embedder = Embedder()
    if not embedder.available():
        raise SystemExit(f"no embedding model: {embedder.error}")
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="wm-bench-search-"))
    rows = []
    source = None
    try:
        for n in sorted(sizes):
            row, source = bench_size(n, work, args, embedder, source)
            rows.append(row)
            print(f"  {n} pages done", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"Search benchmark (model {embedder.name}; machine shared, figures vary with load)")
    labels = [
        ("chunks", "chunks"),
        ("fts_pages_per_s", "index FTS only (pages/s)"),
        ("embed_chunks_per_s", "embed (chunks/s)"),
        ("embed_pages_per_s", "index with embeddings (pages/s)"),
        ("noop_sync_ms", "no-op sync (ms)"),
        ("fts_p50_ms", "warm fts p50 (ms)"),
        ("fts_p95_ms", "warm fts p95 (ms)"),
        ("vector_p50_ms", "warm vector p50 (ms)"),
        ("vector_p95_ms", "warm vector p95 (ms)"),
        ("hybrid_p50_ms", "warm hybrid p50 (ms)"),
        ("hybrid_p95_ms", "warm hybrid p95 (ms)"),
        ("cold_cli_fts_ms", "cold CLI search, fts (ms)"),
        ("cold_cli_hybrid_ms", "cold CLI search, hybrid (ms)"),
        ("index_mb", "index size (MB)"),
        ("wal_mb", "write-ahead log (MB)"),
        ("peak_rss_mb", "peak memory, bench process (MB)"),
        ("cli_fts_peak_rss_mb", "peak memory, CLI fts (MB)"),
        ("cli_hybrid_peak_rss_mb", "peak memory, CLI hybrid (MB)"),
        ("vectors", "vectors"),
    ]
    print(f"{'':<34}" + "".join(f"{r['pages']:>18,}" for r in rows))
    for key, label in labels:
        print(f"{label:<34}" + "".join(f"{r[key] if r[key] is not None else '-'!s:>18}" for r in rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"sizes": rows}, indent=2))
        print(f"results: {args.json}")


if __name__ == "__main__":
    main()
