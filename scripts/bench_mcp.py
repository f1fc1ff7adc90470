#!/usr/bin/env python3
"""Benchmark: the MCP server as an agent meets it, over stdio, in a store of 10,000 pages.

- start-up: from spawning `wiki-memory serve` to the first tool result (a `read`, and
  separately a first `search`, which also opens the index and loads the embedding model);
- warm calls in one session: p50/p95 of `search` and of `write` (one commit each).

The store and its index are built first (the index with embeddings, as a project that has
been in use has them); `--reuse DIR` keeps and reuses them between runs.

    python scripts/bench_mcp.py                          # 10,000 pages, 5 start-ups, 50 calls
    python scripts/bench_mcp.py --pages 1000 --json bench-results/mcp.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

TARGET_FIRST_RESULT_S = 1.5
TARGET_SEARCH_P50_MS = 40.0

COMPONENTS = ("auth service", "billing worker", "celery queue", "redis cache", "postgres migrations", "login page",
              "deploy pipeline", "docker build", "search index", "webhook handler", "rate limiter", "CSV import",
              "email sender", "feature flags", "GraphQL gateway", "S3 uploads", "cron scheduler", "audit log")
PROBLEMS = ("times out under load", "fails one run in ten", "leaks connections", "returns stale data",
            "hangs on the build server", "double-charges on retry", "loses messages on restart",
            "breaks on daylight saving", "is slow on large tenants", "rejects valid tokens")
FIXES = ("refresh the token before the retry", "pin the client library", "set a statement timeout",
         "use a fresh connection per job", "disable eager mode in CI", "make the handler idempotent",
         "batch the writes", "add an index on tenant_id", "raise the pool size to 20", "retry with jitter")
TYPES = ("gotcha", "decision", "procedure", "fact", "note", "preference")


def page_text(i: int, rng: random.Random) -> tuple[str, str, str, list[str]]:
    component, problem, fix = rng.choice(COMPONENTS), rng.choice(PROBLEMS), rng.choice(FIXES)
    title = f"{component.capitalize()} {problem} ({i})"
    body = (f"**Symptom**: the {component} {problem}; seen in ticket OPS-{1000 + i}.\n\n"
            f"## Cause\n\nAfter the {rng.choice(COMPONENTS)} change, the {component} kept state between "
            f"requests. {' '.join(rng.choice(PROBLEMS) for _ in range(6))}.\n\n"
            f"## Fix\n\nWe {fix}. Checked with `make test` and a load test of 200 requests per second. "
            f"See [[{rng.choice(COMPONENTS).capitalize()} {rng.choice(PROBLEMS)} ({max(0, i - 7)})]].\n")
    return title, TYPES[i % len(TYPES)], body, [component.split()[0], "perf" if i % 3 else "ci"]


def build(base: Path, pages: int) -> Path:
    """A code repository whose project has `pages` pages and a full index; returns the repository."""
    from wiki_memory.cli import write_project_file
    from wiki_memory.config import resolve_project
    from wiki_memory.index import Index
    from wiki_memory.pages import Page, render_page
    from wiki_memory.store import Author, Store

    repo = base / "code"
    marker = base / "built.json"
    if marker.exists() and json.loads(marker.read_text()).get("pages") == pages:
        return repo
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    project = resolve_project(repo)
    store = Store.create(project.wiki)
    write_project_file(project)
    rng = random.Random(7)
    changes: dict[str, bytes | None] = {}
    for i in range(pages):
        title, page_type, body, tags = page_text(i, rng)
        page = Page.new(title, page_type, body, tags=tags)
        changes[page.path] = render_page(page).encode()
    t = time.perf_counter()
    store.commit(changes, f"bench: {pages} pages", Author.agent("bench"))
    print(f"  store: {pages:,} pages committed in {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    with Index.open(project) as index:
        stats = index.sync(store)
    print(f"  index: built in {time.perf_counter() - t:.1f} s ({stats.embedded:,} chunks embedded)", flush=True)
    marker.write_text(json.dumps({"pages": pages}))
    return repo


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def serve_params(repo: Path):
    from mcp import StdioServerParameters

    script = Path(sys.executable).parent / "wiki-memory"
    command = [str(script), "serve"] if script.exists() else [sys.executable, "-m", "wiki_memory", "serve"]
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(repo), env=dict(os.environ))


async def first_result(repo: Path, tool: str, arguments: dict) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the first tool result), from the spawn."""
    from mcp import Client

    t0 = time.perf_counter()
    async with Client(serve_params(repo)) as client:
        ready = time.perf_counter() - t0
        result = await client.call_tool(tool, arguments)
        done = time.perf_counter() - t0
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.content[0].text}")
    return ready, done


async def warm_calls(repo: Path, calls: int, rng: random.Random) -> dict[str, list[float]]:
    """`calls` searches, then as many reads, then as many writes, in one session."""
    from mcp import Client

    timings: dict[str, list[float]] = {"search": [], "write": [], "read": []}
    paths: list[str] = []
    async with Client(serve_params(repo)) as client:
        await client.call_tool("search", {"query": "warm up"})  # the model loads here
        for _ in range(calls):
            query = f"{rng.choice(COMPONENTS)} {rng.choice(PROBLEMS)}"
            t = time.perf_counter()
            result = await client.call_tool("search", {"query": query})
            timings["search"].append(time.perf_counter() - t)
            assert not result.is_error and result.structured_content["results"], result.content[0].text
            paths.append(result.structured_content["results"][0]["path"])
        for path in paths:
            t = time.perf_counter()
            result = await client.call_tool("read", {"page": path})
            timings["read"].append(time.perf_counter() - t)
            assert not result.is_error, result.content[0].text
        for i in range(calls):
            t = time.perf_counter()
            result = await client.call_tool("write", {"title": f"Bench note {i} {rng.random():.6f}", "type": "note",
                                                       "body": f"Found while looking at {paths[i]}.",
                                                       "tags": ["bench"]})
            timings["write"].append(time.perf_counter() - t)
            assert not result.is_error, result.content[0].text
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="start-ups to time for each first call")
    parser.add_argument("--calls", type=int, default=50, help="warm search/write calls to time")
    parser.add_argument("--reuse", type=Path, help="build the store here once and reuse it")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    if not os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH"):
        # A local copy of the model beside the checkout (or a folder of checkouts), as the tests find it.
        here = Path(__file__).resolve().parent.parent
        for parent in here.parents:
            model = parent / "shared" / "models" / "all-MiniLM-L6-v2"
            if model.is_dir():
                os.environ["WIKI_MEMORY_EMBED_MODEL_PATH"] = str(model)
                break
    base = args.reuse or Path(tempfile.mkdtemp(prefix="wm-bench-mcp-"))
    base.mkdir(parents=True, exist_ok=True)
    os.environ["WIKI_MEMORY_HOME"] = str(base / "home")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for var in ("CLAUDE_PROJECT_DIR", "WIKI_MEMORY_STORE", "WIKI_MEMORY_PROJECT"):
        os.environ.pop(var, None)
    print(f"building a store of {args.pages:,} pages in {base} ...", flush=True)
    repo = build(base, args.pages)

    rng = random.Random(11)
    starts: dict[str, list[tuple[float, float]]] = {"read": [], "search": []}
    first_page = None
    for run in range(args.runs):
        for tool in ("read", "search"):
            if tool == "read":
                if first_page is None:
                    from wiki_memory.config import resolve_project
                    from wiki_memory.store import Store

                    first_page = next(p for p, _ in Store(resolve_project(repo).wiki).page_files())
                arguments = {"page": first_page}
            else:
                arguments = {"query": f"{rng.choice(COMPONENTS)} {rng.choice(PROBLEMS)}"}
            starts[tool].append(anyio.run(first_result, repo, tool, arguments))
    timings = anyio.run(warm_calls, repo, args.calls, rng)

    figures = {
        "pages": args.pages,
        "first_read_s": statistics.median(t for _, t in starts["read"]),
        "first_search_s": statistics.median(t for _, t in starts["search"]),
        "initialize_s": statistics.median(r for r, _ in starts["read"] + starts["search"]),
        **{f"{tool}_p50_ms": 1000 * statistics.median(v) for tool, v in timings.items()},
        **{f"{tool}_p95_ms": 1000 * percentile(v, 0.95) for tool, v in timings.items()},
        "runs": args.runs, "calls": args.calls,
    }
    print(f"\nwiki-memory serve over stdio, {args.pages:,} pages (median of {args.runs} start-ups, "
          f"{args.calls} warm calls each):")
    rows = [
        ("spawn -> initialize answered", figures["initialize_s"] * 1000, None),
        ("spawn -> first result (read)", figures["first_read_s"] * 1000, TARGET_FIRST_RESULT_S * 1000),
        ("spawn -> first result (search, model load included)", figures["first_search_s"] * 1000, None),
        ("search p50 (warm)", figures["search_p50_ms"], TARGET_SEARCH_P50_MS),
        ("search p95 (warm)", figures["search_p95_ms"], None),
        ("read p50 (warm)", figures["read_p50_ms"], None),
        ("write p50 (one commit, its chunks embedded)", figures["write_p50_ms"], None),
        ("write p95", figures["write_p95_ms"], None),
    ]
    for name, value, target in rows:
        verdict = "" if target is None else ("  ok" if value <= target else f"  over the {target:.0f} ms target")
        print(f"  {name:<52} {value:8.1f} ms{verdict}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
