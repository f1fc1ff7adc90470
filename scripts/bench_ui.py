#!/usr/bin/env python3
"""Benchmark: the web viewer's views in a wiki of 10,000 pages, timed inside the server.

The wiki is bench_mcp.py's (10,000 pages, every chunk with a vector), with a history on top:
agents' and a person's edits, one page edited 60 times, retitles, verdicts, handoffs,
broken pages and sync conflict copies (about 500 commits). Each view is requested through
the whole app (the gate, routing, the memory operation on the project's thread, the
template), and timed from the request's arrival to its last byte, as the server sees it.
Targets: every view <= 150 ms p95; search <= 100 ms p50. The history is worked out once per
process (the viewer does it between requests from its start); what a fresh process pays
before that is printed too.

Building the wiki takes minutes: `--reuse DIR` builds it there once and reuses it.

    python scripts/bench_ui.py --reuse /tmp/wm-bench-ui
    python scripts/bench_ui.py --reuse /tmp/wm-bench-ui --runs 50 --json bench-results/ui.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp
import evalkit

TARGET_P95_MS = 150.0
TARGET_SEARCH_P50_MS = 100.0
PORT = 8766
TOKEN = "bench-" + "t" * 32
AGENTS = ("claude-code", "codex", "gemini")
HOT = 60  # edits of one page, for a deep history


def add_history(repo: Path, base: Path) -> str:
    """About 500 commits on top of the pages, as months of use leave them (once per DIR);
    the path of the page edited HOT times."""
    from wiki_memory.config import resolve_project
    from wiki_memory.index import DEFAULT_MODEL, Index
    from wiki_memory.memory import Actor, Memory

    marker = base / "ui-history.json"
    if marker.exists():
        done = json.loads(marker.read_text())
        if done.get("hot_edits") == HOT:
            return str(done["hot"])
    t = time.perf_counter()
    rng = random.Random(11)
    with Memory.at(repo) as memory:
        paths = sorted(p for p, _ in memory.store().page_files())
        hot = paths.pop(0)  # (never moved: it keeps its path)

        def agent() -> Actor:
            return Actor(rng.choice(AGENTS), f"{rng.getrandbits(32):08x}-bench")

        for i in range(300):
            text = f"Seen again in run {i}: {bench_mcp.query(rng)}."
            memory.edit(rng.choice(paths), "append", text=text, actor=agent())
        for i in range(HOT):
            actor = agent() if i % 3 else Actor()
            memory.edit(hot, "append", text=f"Note {i} on this page.", actor=actor)
        for i in range(40):
            source = memory.page_source(rng.choice(paths))
            memory.save_text(source.path, source.text + f"\nA person's note {i}.\n", base=source.blob)
        for i in range(20):
            path = rng.choice(paths)
            written = memory.move(path, title=f"{memory.read(path).page.title} (renamed {i})")
            paths[paths.index(path)] = written.path
        for i in range(30):
            memory.edit(rng.choice(paths), "set_status", status=("stale", "wrong", "archived")[i % 3])
        for i in range(10):
            memory.handoff_write(f"Bench session {i}: {bench_mcp.query(rng)}", done=["Looked into it."], actor=agent())
        wiki = memory.wiki
        for i in range(5):
            (wiki / "notes" / f"broken-{i}.md").write_text(f"---\ntitle: Broken {i}\ntags: [x\n---\n# Broken {i}\n")
        for i in range(3):
            source = rng.choice(paths)
            copy = source.removesuffix(".md") + f".conflict-laptop-2026-11-{10 + i}.md"
            (wiki / copy).write_text(memory.page_text(source))
        memory.commit_hand_edits()
        store = memory.store()
        project = resolve_project(repo)
    # The chunks these commits added get vectors too (random ones, as bench_mcp's build gives).
    embedder = bench_mcp.random_vectors(os.environ.get("WIKI_MEMORY_EMBED_MODEL") or DEFAULT_MODEL)
    with Index.open(project, embedder=embedder) as index:
        index.sync(store)
    store.close()
    marker.write_text(json.dumps({"hot_edits": HOT, "hot": hot}))
    print(f"  history: added in {time.perf_counter() - t:.0f} s", flush=True)
    return hot


class Timed:
    """ASGI wrapper: how long the app took for the last request, to its last byte, and the
    CPU time the process spent meanwhile (on a shared machine, what the request costs
    whatever else runs; requests go one at a time, and nothing else runs in the process)."""

    def __init__(self, app: Any):
        self.app = app
        self.last = 0.0
        self.cpu = 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        started, cpu = time.perf_counter(), time.process_time()

        async def timed(message: Any) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.last = time.perf_counter() - started
                self.cpu = time.process_time() - cpu
            await send(message)

        await self.app(scope, receive, timed)


def machine() -> str:
    """The load, and how much of the last minute tasks waited on the disk (Linux PSI): the
    views read git objects, so a busy disk shows in their slowest requests."""
    line = f"load {os.getloadavg()[0]:.1f}"
    try:
        with open("/proc/pressure/io", encoding="ascii") as f:
            some = f.readline().split()[2].split("=")[1]
        line += f", I/O pressure {some}% (avg60)"
    except (OSError, IndexError):
        pass
    return line


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cold_history(repo: Path, hot: str) -> dict[str, float]:
    """What a fresh process pays before its history is worked out: a page's history with
    nothing kept yet, and the whole history worked out (the viewer does it between requests
    from its start)."""
    from wiki_memory.config import resolve_project
    from wiki_memory.memory import Memory

    project = resolve_project(repo)
    out = {}
    with Memory(project) as memory:
        memory.store()
        t = time.perf_counter()
        memory.page_history(hot, 30)
        out["first_history_of_a_busy_page_s"] = time.perf_counter() - t
    with Memory(project) as memory:
        memory.store()
        t = time.perf_counter()
        memory.page_history(sorted(p for p, _ in memory.store().page_files())[-1], 30)
        out["first_history_of_an_old_page_s"] = time.perf_counter() - t
    with Memory(project) as memory:
        memory.store()
        t = time.perf_counter()
        while memory.warm_history(0.2):
            pass
        out["whole_history_worked_out_s"] = time.perf_counter() - t
    return out


def cold_review(repo: Path) -> dict[str, float]:
    """The lifecycle's review (`Memory.review()`, half of `/review`) the first time, and again:
    what it reads from the index alone is kept until the index changes, so `/review` pays
    the first figure once after each write."""
    from wiki_memory.config import resolve_project
    from wiki_memory.memory import Memory

    with Memory(resolve_project(repo)) as memory:
        memory.store()
        memory.require_index()
        t = time.perf_counter()
        memory.review()
        first = time.perf_counter() - t
        t = time.perf_counter()
        memory.review()
        return {"first_review_s": first, "review_again_s": time.perf_counter() - t}


def measure(repo: Path, hot: str, runs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    from starlette.testclient import TestClient

    from wiki_memory.config import resolve_project
    from wiki_memory.memory import Memory
    from wiki_memory.ui.app import Viewer, build_app

    rng = random.Random(5)
    project = resolve_project(repo)
    with Memory(project) as memory:
        paths = sorted(p for p, _ in memory.store().page_files())
        commits = [c.commit for c in memory.activity(200)]
    viewer = Viewer(project, token=TOKEN, port=PORT)
    app = Timed(build_app(viewer))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    views: dict[str, Callable[[], str]] = {
        "home": lambda: "/",
        "home, one agent": lambda: "/?who=codex",
        "search": lambda: "/search?q=" + quote(bench_mcp.query(rng)),
        "search, type and tag": lambda: f"/search?q={quote(bench_mcp.query(rng))}&type=decision&tag=perf",
        "page": lambda: "/page/" + quote(rng.choice(paths)),
        "edit form": lambda: "/edit/" + quote(rng.choice(paths)),
        "history": lambda: "/history/" + quote(rng.choice(paths)),
        "history, 60 commits": lambda: "/history/" + quote(hot),
        "commit": lambda: "/commit/" + rng.choice(commits[:150]),
        "handoff": lambda: "/handoff",
        "review": lambda: "/review",
        "graph": lambda: "/graph",
        "graph around a page": lambda: "/graph?around=" + quote(rng.choice(paths)),
    }
    timings: dict[str, list[float]] = {name: [] for name in views}
    cpu: dict[str, list[float]] = {name: [] for name in views}
    base_url = f"http://127.0.0.1:{PORT}{viewer.base}"  # the viewer lives under its secret path
    with TestClient(app, base_url=base_url, headers=headers, follow_redirects=False) as client:
        # As the viewer does from its start: the history worked out between requests. The
        # figures below are a viewer that has been up that long.
        workspace = viewer.workspaces.get(project)
        while workspace.call(lambda memory: memory.warm_history(1.0)):
            pass
        for name, url in views.items():  # warm: the index opened, the model and matrix loaded
            response = client.get(url())
            if response.status_code != 200:
                raise SystemExit(f"{name}: {response.status_code} {response.text[:300]}")
        for _ in range(runs):
            for name, url in views.items():
                response = client.get(url())
                if response.status_code != 200:
                    raise SystemExit(f"{name}: {response.status_code} {response.text[:300]}")
                timings[name].append(app.last * 1000)
                cpu[name].append(app.cpu * 1000)
    return timings, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30, help="requests per view")
    parser.add_argument("--reuse", type=Path, help="build the wiki here once and reuse it")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    evalkit.setup_model_env()
    base = args.reuse or Path(tempfile.mkdtemp(prefix="wm-bench-ui-"))
    base.mkdir(parents=True, exist_ok=True)
    os.environ["WIKI_MEMORY_HOME"] = str(base / "home")
    for var in ("WIKI_MEMORY_STORE", "WIKI_MEMORY_PROJECT"):
        os.environ.pop(var, None)
    repo = bench_mcp.build(base, args.pages)
    hot = add_history(repo, base)
    load = os.getloadavg()[0]
    started = machine()
    cold = {**cold_history(repo, hot), **cold_review(repo)}
    timings, cpu = measure(repo, hot, args.runs)
    rows = []
    print(f"Web viewer, {args.pages:,} pages, {args.runs} requests a view, server-side ({started} at the start)")
    print(f"{'view':<24} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8} {'cpu p95':>8}")
    for name, values in timings.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        c50, c95 = percentile(cpu[name], 0.5), percentile(cpu[name], 0.95)
        rows.append({"view": name, "p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "max_ms": round(max(values), 1),
                     "cpu_p50_ms": round(c50, 1), "cpu_p95_ms": round(c95, 1)})  # fmt: skip
        print(f"{name:<24} {p50:>8.1f} {p95:>8.1f} {max(values):>8.1f} {c50:>8.1f} {c95:>8.1f}")
    worst = max(rows, key=lambda r: r["p95_ms"])
    search = next(r for r in rows if r["view"] == "search")
    met = worst["p95_ms"] <= TARGET_P95_MS and search["p50_ms"] <= TARGET_SEARCH_P50_MS
    print(
        f"targets: every view p95 <= {TARGET_P95_MS:.0f} ms (worst: {worst['view']}, {worst['p95_ms']} ms); "
        f"search p50 <= {TARGET_SEARCH_P50_MS:.0f} ms ({search['p50_ms']} ms): {'met' if met else 'NOT met'}"
    )
    for name, seconds in cold.items():
        print(f"cold: {name.replace('_', ' ')}: {seconds:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"pages": args.pages, "runs": args.runs, "load": round(load, 2), "views": rows, "met": met}
        payload["cold"] = {k: round(v, 2) for k, v in cold.items()}
        args.json.write_text(json.dumps(payload, indent=2))
    print(f"at the end: {machine()}")


if __name__ == "__main__":
    main()
