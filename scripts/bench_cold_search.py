#!/usr/bin/env python3
"""Benchmark: a cold `wiki-memory search` process, side by side with `python -c pass`.

Builds a generated wiki of N pages (scripts/bench_search.py's generator), indexes it (FTS;
every chunk gets a random unit vector of the model's size, stored as this tree stores
vectors), starts the warm helper when this tree's search asks it (`memory.searching`), then
times, interleaved run by run: `python -c pass`, `wiki-memory search --mode fts` and
`wiki-memory search` (hybrid). Also the index's size on disk and the time to index the
wiki by words. Run it against another tree with PYTHONPATH to compare:

    python scripts/bench_cold_search.py --pages 10000 --runs 15
    PYTHONPATH=/tmp/old python /tmp/old/scripts/bench_cold_search.py --pages 10000   # a copy of it there
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUERY = "auth service rejects valid tokens"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--hybrid-runs", type=int, default=None, help="cold hybrid runs (default: --runs)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import numpy as np
    from bench_search import build_wiki

    import wiki_memory
    from wiki_memory.config import project_for_store
    from wiki_memory.index import Embedder, Index
    from wiki_memory.index import embed as embed_module

    work = Path(tempfile.mkdtemp(prefix="wm-bench-cold-"))
    runtime = tempfile.mkdtemp(prefix="wm-", dir="/tmp")
    home = work / "home"
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},  # cached bytecode, as installed
        "WIKI_MEMORY_HOME": str(home),
        "WIKI_MEMORY_RUNTIME_DIR": runtime,
        "WIKI_MEMORY_RECALL": "on",
        "WIKI_MEMORY_STORE": str(work / "wiki"),
    }
    os.environ.update({k: env[k] for k in ("WIKI_MEMORY_HOME", "WIKI_MEMORY_RUNTIME_DIR")})
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(wiki_memory.__file__).parent)], env=env)
    helper = None
    try:
        store = build_wiki(work / "wiki", args.pages)
        embedder = Embedder()
        index = Index.open(project_for_store(work / "wiki"), embedder=embedder)
        t = time.perf_counter()
        index.sync(store, embed=False)
        index_s = time.perf_counter() - t
        ids = [r[0] for r in index.conn.execute("SELECT id FROM chunks")]
        rng = np.random.default_rng(1)
        pack = getattr(embed_module, "to_blob", lambda v: v.astype(np.float32).tobytes())
        index.conn.execute("BEGIN")
        for start in range(0, len(ids), 5000):
            part = ids[start : start + 5000]
            vectors = rng.standard_normal((len(part), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            index.conn.executemany(
                "INSERT INTO vectors VALUES (?, ?, ?, ?)",
                [(cid, embedder.name, 384, pack(vectors[i])) for i, cid in enumerate(part)],
            )
        index.conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        index.conn.execute("COMMIT")
        index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size_mb = os.path.getsize(index.path) / 1e6
        index_path = str(index.path)
        index.close()
        store.close()

        warm = Path(wiki_memory.__file__).parent.joinpath("memory", "searching.py").exists()
        if warm:  # this tree's search asks the helper: have it up, as a session's hooks would
            helper = subprocess.Popen(
                [sys.executable, "-m", "wiki_memory.recall.helper", "--home", str(home), "--preload", index_path],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            from wiki_memory.recall import meaning

            deadline = time.time() + 300
            while not meaning.running(str(home)) and time.time() < deadline:
                time.sleep(0.5)
        cli = [sys.executable, "-m", "wiki_memory", "search", QUERY, "--json"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "search --mode fts": [*cli, "--mode", "fts"],
            "search (hybrid)": cli,
        }
        for command in commands.values():  # warm the page cache and the helper's matrix
            subprocess.run(command, env=env, capture_output=True)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        hybrid_runs = args.hybrid_runs or args.runs
        for run in range(args.runs):
            for name, command in commands.items():
                if name == "search (hybrid)" and run >= hybrid_runs:
                    continue
                t = time.perf_counter()
                out = subprocess.run(command, env=env, capture_output=True, text=True)
                walls[name].append((time.perf_counter() - t) * 1000)
                if out.returncode != 0 or (name != "python -c pass" and not json.loads(out.stdout)):
                    raise SystemExit(f"{name} failed: {out.stderr}")
        p50 = {name: round(statistics.median(v), 1) for name, v in walls.items()}
        bare = p50["python -c pass"]
        row = {
            "tree": str(Path(wiki_memory.__file__).parent.parent),
            "pages": args.pages,
            "chunks": len(ids),
            "index_mb": round(size_mb, 1),
            "fts_index_s": round(index_s, 1),
            "helper": warm,
            **{f"{name} p50 ms": v for name, v in p50.items()},
            "fts / bare": round(p50["search --mode fts"] / bare, 1),
            "load": os.getloadavg()[0],
        }
        print(json.dumps(row, indent=1))
        if args.json:
            args.json.write_text(json.dumps(row, indent=1))
    finally:
        if helper is not None:
            from wiki_memory.recall import meaning

            meaning.stop(str(home))
            helper.wait(timeout=60)
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
