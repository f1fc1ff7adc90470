#!/usr/bin/env python3
"""Benchmark: `sync` of 100 and 1,000 new pages through a local bare remote, each way,
re-index included, beside the git CLI doing the same transfer on identical repositories.

- up: machine A wrote N new pages (in commits of 10) and syncs them to an empty bare remote;
- down, new machine: machine B, a fresh wiki, syncs and receives them (a fast-forward);
- down, merge: machine C, which wrote 10 pages of its own, syncs (a merge commit), then
  pushes the merge back;
- no-op: A syncs again with nothing new (the cost of an automatic sync after each
  consolidation).

Re-index is timed apart (`Index.sync`, incremental by blob id, embedding the new chunks with
the model at WIKI_MEMORY_EMBED_MODEL_PATH) and included in the wall time. Each machine has
indexed what it wrote itself beforehand (untimed), as the CLI and MCP server do when they write.

    python scripts/bench_sync.py                       # 100 and 1,000 pages
    python scripts/bench_sync.py --sizes 100 --runs 3 --json bench-results/sync.json
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
import evalkit

from wiki_memory.config import project_for_store
from wiki_memory.index import Index
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store
from wiki_memory.sync import add_remote
from wiki_memory.sync import run as sync_run

TYPES = ("decision", "gotcha", "procedure", "fact", "note", "preference")
WORDS = [
    "retry",
    "token",
    "refresh",
    "database",
    "migration",
    "cache",
    "worker",
    "queue",
    "build",
    "deploy",
    "test",
    "flaky",
    "login",
    "timeout",
    "config",
    "schema",
    "index",
    "search",
    "commit",
    "branch",
    "release",
    "docker",
    "celery",
    "redis",
    "auth",
]
AGENT = Author.agent("bench")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def realistic_page(i: int, prefix: str = "Page") -> Page:
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(180)]
    body = (
        f"**Context**: {' '.join(words[:60])}.\n\n## Details\n\n{' '.join(words[60:140])}.\n\n"
        f"## Fix\n\n{' '.join(words[140:])}. See [[{prefix} {i // 2}]].\n"
    )
    return Page.new(
        f"{prefix} {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 3) % len(WORDS)]}",
        TYPES[i % len(TYPES)],
        body,
        tags=[WORDS[i % 11], WORDS[i % 5]],
    )


def write_pages(store: Store, count: int, prefix: str = "Page", per_commit: int = 10) -> None:
    pages = [realistic_page(i, prefix) for i in range(count)]
    for start in range(0, count, per_commit):
        store.write_many(pages[start : start + per_commit], AGENT, session_id="bench", agent="bench")


VECTORS = True  # --no-vectors: re-index words (FTS) only, leaving chunks pending embedding


class WordsOnly:
    """The index as sync sees it, indexing words only (`--no-vectors`)."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def sync(self, store: Store, progress: object = None) -> object:
        return self.index.sync(store, embed=False)


def project_of(store: Store, home: Path):
    return project_for_store(store.root, {"WIKI_MEMORY_HOME": str(home)})


def index_now(store: Store, home: Path) -> None:
    """Index what a machine wrote itself, untimed: the CLI and MCP keep the index current
    as they write, so a sync only re-indexes what it brings in."""
    with Index.open(project_of(store, home)) as index:
        index.sync(store, embed=VECTORS)


def timed_sync(store: Store, home: Path) -> dict[str, float | bool]:
    with Index.open(project_of(store, home)) as index:
        t = time.perf_counter()
        report = sync_run.sync(store, index=index if VECTORS else WordsOnly(index), host="bench")
        wall = time.perf_counter() - t
    if report.index_warning:
        print(f"warning: {report.index_warning}", file=sys.stderr)
    reindex_s = report.index.seconds if report.index is not None else 0.0
    return {
        "wall_s": wall,
        "sync_s": wall - reindex_s,
        "reindex_s": reindex_s,
        "reindexed": report.index is not None,
        "chunks_embedded": report.index.embedded if report.index is not None else 0,
        "received": report.received_commits,
        "sent": report.sent_commits,
    }


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def check(*repos: Path) -> None:
    for repo in repos:
        git(repo, "fsck", "--strict")


def bench_once(pages: int, work: Path) -> dict[str, object]:
    work.mkdir(parents=True)
    home = work / "home"
    os.environ["WIKI_MEMORY_HOME"] = str(home)
    remote = work / "remote.git"
    git(work, "init", "-q", "--bare", str(remote))
    a = Store.create(work / "a")
    write_pages(a, pages)
    index_now(a, home)
    add_remote(a, "origin", str(remote))
    # The git CLI on an identical copy of A, to an identical empty remote.
    shutil.copytree(a.root, work / "a-git", symlinks=True)
    git(work, "init", "-q", "--bare", str(work / "remote-git.git"))

    up = timed_sync(a, home)
    t = time.perf_counter()
    git(work / "a-git", "push", "-q", str(work / "remote-git.git"), "main:main")
    git_push = time.perf_counter() - t

    b = Store.create(work / "b")
    add_remote(b, "origin", str(remote))
    down_new = timed_sync(b, home)
    t = time.perf_counter()
    git(work, "clone", "-q", str(work / "remote-git.git"), str(work / "b-git"))
    git_clone = time.perf_counter() - t

    c = Store.create(work / "c")
    write_pages(c, 10, prefix="Local")
    index_now(c, home)
    add_remote(c, "origin", str(remote))
    shutil.copytree(c.root, work / "c-git", symlinks=True)
    down_merge = timed_sync(c, home)
    t = time.perf_counter()
    git(
        work / "c-git",
        "pull",
        "-q",
        "--no-rebase",
        "--allow-unrelated-histories",
        "--no-edit",
        str(work / "remote-git.git"),
        "main",
    )
    git(work / "c-git", "push", "-q", str(work / "remote-git.git"), "main:main")
    git_pull = time.perf_counter() - t

    noop = timed_sync(a, home)  # A receives C's merge...
    noop = timed_sync(a, home)  # ...then nothing is new
    check(remote, a.root, b.root, c.root)
    for store in (a, b, c):
        store.close()
    return {
        "pages": pages,
        "up": up,
        "down_new_machine": down_new,
        "down_merge": down_merge,
        "noop": noop,
        "git_push_s": git_push,
        "git_clone_s": git_clone,
        "git_pull_push_s": git_pull,
    }


def median_of(runs: list[dict[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {"pages": runs[0]["pages"], "runs": len(runs)}
    for key, value in runs[0].items():
        if isinstance(value, dict):
            out[key] = {
                k: (
                    round(statistics.median(r[key][k] for r in runs), 3)  # type: ignore[index]
                    if isinstance(v, float)
                    else v
                )
                for k, v in value.items()
            }
        elif isinstance(value, float):
            out[key] = round(statistics.median(r[key] for r in runs), 3)  # type: ignore[misc]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=1, help="Repeat each size; medians are reported.")
    parser.add_argument(
        "--no-vectors",
        action="store_true",
        help="Re-index words only (no embedding): the sync and FTS cost, without the model's.",
    )
    parser.add_argument("--json", type=Path, help="Also write the results to this JSON file.")
    args = parser.parse_args()
    global VECTORS
    VECTORS = not args.no_vectors
    evalkit.setup_model_env()  # the shared local model, offline, as the tests find it
    if VECTORS:
        from wiki_memory.index import Embedder

        embedder = Embedder()
        print(
            f"embedding model: {embedder.path or embedder.name} "
            f"({'available' if embedder.available() else 'NOT available: re-index is FTS only'})"
        )
    else:
        print("re-index: words (FTS) only, no embedding (--no-vectors)")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        for size in args.sizes:
            runs = [bench_once(size, Path(tmp) / f"{size}-{r}") for r in range(args.runs)]
            results.append(median_of(runs))
    print(f"{'pages':>6}  {'sync':<26} {'wall':>8} {'of which re-index':>18} {'git CLI':>9}")
    for r in results:
        rows = (
            ("up (push to empty remote)", r["up"], r["git_push_s"], "push"),
            ("down (new machine)", r["down_new_machine"], r["git_clone_s"], "clone"),
            ("down (merge, then push)", r["down_merge"], r["git_pull_push_s"], "pull+push"),
            ("no-op (nothing new)", r["noop"], None, ""),
        )
        for label, row, git_s, git_label in rows:
            reindexed = f"{row['reindex_s']:>8.2f} s" if row["reindexed"] else "       n/a"  # type: ignore[index]
            git_text = f"{git_s:>6.2f} s ({git_label})" if git_s is not None else ""
            print(f"{r['pages']:>6}  {label:<26} {row['wall_s']:>6.2f} s {reindexed:>18} {git_text}")  # type: ignore[index]
    for r in results:
        row = r["down_new_machine"]
        if row["chunks_embedded"]:  # type: ignore[index]
            print(
                f"{r['pages']} pages, new machine: {row['chunks_embedded']} chunks embedded, "  # type: ignore[index]
                f"{1000 * row['reindex_s'] / row['chunks_embedded']:.0f} ms per chunk"
            )  # type: ignore[index]
    if not all(r["up"]["reindexed"] for r in results):  # type: ignore[index]
        print("re-index: n/a = wiki_memory.index is not installed in this checkout")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"benchmark": "sync", "vectors": VECTORS, "results": results}, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
