#!/usr/bin/env python3
"""Benchmark: the wall time of writing one page (one fresh commit) into wikis of 1,000 and
10,000 pages, through the store API and through the CLI, beside `git add && git commit` by
the git CLI on an identical copy of the repository, in the same run.

    python scripts/bench_store.py                 # 1,000 and 10,000 pages, 20 writes each
    python scripts/bench_store.py --sizes 1000 --runs 50 --json bench-results/store.json
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

from wiki_memory.pages import Page, render_page
from wiki_memory.store import Author, Store

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


def realistic_page(i: int) -> Page:
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(180)]
    body = (
        f"**Context**: {' '.join(words[:60])}.\n\n## Details\n\n{' '.join(words[60:140])}.\n\n"
        f"## Fix\n\n{' '.join(words[140:])}. See [[Page {i // 2}]].\n"
    )
    return Page.new(
        f"Page {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 3) % len(WORDS)]}",
        TYPES[i % len(TYPES)],
        body,
        tags=[WORDS[i % 11], WORDS[i % 5]],
    )


def build_wiki(root: Path, pages: int) -> Store:
    store = Store.create(root)
    changes = {}
    for i in range(pages):
        page = realistic_page(i)
        changes[page.path] = render_page(page).encode()
    store.commit(changes, f"bench: {pages} pages", Author.agent("bench"))
    return store


def p50(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def bench_size(pages: int, runs: int, work: Path) -> dict[str, object]:
    wiki = work / f"wiki-{pages}"
    t0 = time.perf_counter()
    build_wiki(wiki, pages)
    build_s = time.perf_counter() - t0
    git_copy = work / f"git-{pages}"
    shutil.copytree(wiki, git_copy, symlinks=True)
    cli_copy = work / f"cli-{pages}"
    shutil.copytree(wiki, cli_copy, symlinks=True)

    # Store API, one long-lived Store (an MCP server or a consolidator), and a fresh Store per write.
    store = Store(wiki)
    author = Author.agent("bench")
    api, api_cold = [], []
    for r in range(runs):
        page = Page.new(f"Bench api page {r}", "note", "A new memory " * 40)
        t = time.perf_counter()
        store.write(page, author, session_id="bench", agent="bench")
        api.append(time.perf_counter() - t)
        page = Page.new(f"Bench cold page {r}", "note", "A new memory " * 40)
        t = time.perf_counter()
        Store(wiki).write(page, author, session_id="bench", agent="bench")
        api_cold.append(time.perf_counter() - t)

    # The CLI: a whole `wiki-memory write` process (it also commits any pending hand edit first).
    exe = shutil.which("wiki-memory") or str(Path(sys.executable).parent / "wiki-memory")
    # Its own WIKI_MEMORY_HOME: the CLI keeps a project folder (the index) there, not in yours.
    env = {**os.environ, "WIKI_MEMORY_STORE": str(cli_copy), "WIKI_MEMORY_HOME": str(cli_copy.parent / "home")}
    cli = []
    for r in range(runs):
        t = time.perf_counter()
        subprocess.run(
            [exe, "write", "-t", f"Bench cli page {r}", "--body", "A new memory " * 40],
            env=env,
            check=True,
            capture_output=True,
        )
        cli.append(time.perf_counter() - t)

    # git CLI: the same file content, `git add <file> && git commit`.
    git_times = []
    text = render_page(Page.new("Bench git page", "note", "A new memory " * 40))
    git_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    for r in range(runs):
        rel = f"notes/bench-git-page-{r}.md"
        t = time.perf_counter()
        (git_copy / rel).write_text(text.replace("Bench git page", f"Bench git page {r}"))
        subprocess.run(["git", "add", rel], cwd=git_copy, env=git_env, check=True)
        subprocess.run(["git", "commit", "-q", "-m", f"remember: {rel}"], cwd=git_copy, env=git_env, check=True)
        git_times.append(time.perf_counter() - t)

    subprocess.run(["git", "fsck", "--strict"], cwd=wiki, check=True, capture_output=True)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=wiki, check=True, capture_output=True, text=True)
    assert status.stdout == "", status.stdout
    ms = lambda v: round(v * 1000, 2)  # noqa: E731
    return {
        "pages": pages,
        "runs": runs,
        "build_s": round(build_s, 2),
        "api_p50_ms": ms(p50(api)),
        "api_p95_ms": ms(p95(api)),
        "api_fresh_store_p50_ms": ms(p50(api_cold)),
        "cli_p50_ms": ms(p50(cli)),
        "cli_p95_ms": ms(p95(cli)),
        "git_cli_p50_ms": ms(p50(git_times)),
        "git_cli_p95_ms": ms(p95(git_times)),
        "ratio_api_to_git": round(p50(api) / p50(git_times), 2),
        "ratio_fresh_api_to_git": round(p50(api_cold) / p50(git_times), 2),
        "ratio_cli_to_git": round(p50(cli) / p50(git_times), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", type=Path, help="Also write the results to this JSON file.")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        for size in args.sizes:
            results.append(bench_size(size, args.runs, Path(tmp)))
    header = (
        f"{'pages':>7} {'api p50':>9} {'api p95':>9} {'fresh api':>10} {'cli p50':>9} {'git p50':>9} "
        f"{'api/git':>8} {'fresh/git':>10} {'cli/git':>8}"
    )
    print(header)
    for r in results:
        print(
            f"{r['pages']:>7} {r['api_p50_ms']:>7.1f}ms {r['api_p95_ms']:>7.1f}ms "
            f"{r['api_fresh_store_p50_ms']:>8.1f}ms "
            f"{r['cli_p50_ms']:>7.1f}ms {r['git_cli_p50_ms']:>7.1f}ms {r['ratio_api_to_git']:>8.2f} "
            f"{r['ratio_fresh_api_to_git']:>10.2f} {r['ratio_cli_to_git']:>8.2f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"benchmark": "store_write", "results": results}, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
