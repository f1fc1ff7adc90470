#!/usr/bin/env python3
"""Benchmark: the MCP server as an agent meets it, over stdio, in a store of 10,000 pages.

- start-up: from spawning `wiki-memory serve` to the first tool result, as an agent meets it
  (initialize, `tools/list`, the call): a `read`, and separately a first `search`, which
  also opens the index and loads the embedding model;
- warm calls in one session: p50/p95 of `search` and of `write` (one commit each);
- the same searches as bare JSON-RPC lines on a server's stdin (its latency on the wire,
  without the SDK client's own checks), and through `Index.search` in this process.

The store and its index are built first (every chunk with a vector, as in a project that has
been in use; the vectors are random unless `--embed-all`, see `random_vectors`); `--reuse
DIR` keeps and reuses them between runs. The server loads the real model for its queries.

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
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

TARGET_FIRST_RESULT_S = 1.5
TARGET_SEARCH_P50_MS = 40.0

COMPONENTS = (
    "auth service",
    "billing worker",
    "celery queue",
    "redis cache",
    "postgres migrations",
    "login page",
    "deploy pipeline",
    "docker build",
    "search index",
    "webhook handler",
    "rate limiter",
    "CSV import",
    "email sender",
    "feature flags",
    "GraphQL gateway",
    "S3 uploads",
    "cron scheduler",
    "audit log",
)
PROBLEMS = (
    "times out under load",
    "fails one run in ten",
    "leaks connections",
    "returns stale data",
    "hangs on the build server",
    "double-charges on retry",
    "loses messages on restart",
    "breaks on daylight saving",
    "is slow on large tenants",
    "rejects valid tokens",
)
FIXES = (
    "refresh the token before the retry",
    "pin the client library",
    "set a statement timeout",
    "use a fresh connection per job",
    "disable eager mode in CI",
    "make the handler idempotent",
    "batch the writes",
    "add an index on tenant_id",
    "raise the pool size to 20",
    "retry with jitter",
)
IDENTIFIERS = (
    "ERR_CONN_RESET",
    "CELERY_TASK_ALWAYS_EAGER",
    "src/auth/jwt.py",
    "max_overflow",
    "acks_late",
    "worker_max_tasks_per_child",
    "OperationalError",
    "Retry-After",
    "presign_upload",
    "statement_timeout",
)
TYPES = ("gotcha", "decision", "procedure", "fact", "note", "preference")
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


class Prose:
    """Filler prose over a large made-up vocabulary with Zipf word frequencies, as real text
    has: it decides how long FTS posting lists are, and so what a search costs."""

    def __init__(self, size: int = 20_000, seed: int = 3):
        rng = random.Random(seed)
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
        self.words = sorted(words)
        self.weights = [1.0 / (rank + 1) for rank in range(size)]

    def sentence(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choices(self.words, self.weights, k=n)).capitalize() + "."


def page_text(i: int, rng: random.Random, prose: Prose) -> tuple[str, str, str, list[str]]:
    component, problem, fix = rng.choice(COMPONENTS), rng.choice(PROBLEMS), rng.choice(FIXES)
    title = f"{component.capitalize()} {problem} ({i})"
    ident = f" `{rng.choice(IDENTIFIERS)}`" if i % 4 == 0 else ""
    body = (
        f"**Symptom**: the {component} {problem}; seen in ticket OPS-{1000 + i}.{ident} "
        f"{prose.sentence(rng, 25)}\n\n## Cause\n\n{prose.sentence(rng, 40)} {prose.sentence(rng, 40)}\n\n"
        f"## Fix\n\nWe {fix}. {prose.sentence(rng, 30)} See [[{rng.choice(COMPONENTS).capitalize()} "
        f"{rng.choice(PROBLEMS)} ({max(0, i - 7)})]].\n"
    )
    return title, TYPES[i % len(TYPES)], body, [component.split()[0], "perf" if i % 3 else "ci"]


def query(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(IDENTIFIERS)
    return f"{rng.choice(COMPONENTS)} {rng.choice(PROBLEMS)}"


def random_vectors(name: str, dim: int = 384) -> Any:
    """An embedder that stands in for the model while the benchmark's index is built: unit
    vectors seeded by each text, of the model's name and size. Search latency does not depend
    on their values, and embedding 30,000 chunks for real takes an hour on a shared 2-core
    machine (`--embed-all` does it). The server itself loads the real model for queries."""
    import hashlib

    import numpy as np

    from wiki_memory.index import Embedder

    class RandomVectors(Embedder):
        loaded = True  # type: ignore[assignment]

        def available(self) -> bool:
            return True

        def embed(self, texts: Any) -> Any:
            out = np.empty((len(texts), dim), dtype=np.float32)
            for i, text in enumerate(texts):
                seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:8], "little")
                out[i] = np.random.default_rng(seed).standard_normal(dim)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    embedder = RandomVectors(name=name)
    embedder.dim = dim
    return embedder


def build(base: Path, pages: int, embed_all: bool = False) -> Path:
    """A code repository whose project has `pages` pages and a full index; returns the repository."""
    from wiki_memory.config import resolve_project
    from wiki_memory.index import DEFAULT_MODEL, Index
    from wiki_memory.memory import write_project_file
    from wiki_memory.pages import Page, render_page
    from wiki_memory.store import Author, Store

    repo = base / "code"
    marker = base / "built.json"
    wanted = {"pages": pages, "corpus": 2, "embed_all": embed_all}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return repo
    if base.exists():
        for old in (base / "code", base / "home"):
            if old.exists():
                import shutil

                shutil.rmtree(old)
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    project = resolve_project(repo)
    store = Store.create(project.wiki)
    write_project_file(project)
    rng = random.Random(7)
    prose = Prose()
    changes: dict[str, bytes | None] = {}
    for i in range(pages):
        title, page_type, body, tags = page_text(i, rng, prose)
        page = Page.new(title, page_type, body, tags=tags)
        changes[page.path] = render_page(page).encode()
    t = time.perf_counter()
    store.commit(changes, f"bench: {pages} pages", Author.agent("bench"))
    print(f"  store: {pages:,} pages committed in {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    embedder = None if embed_all else random_vectors(os.environ.get("WIKI_MEMORY_EMBED_MODEL") or DEFAULT_MODEL)
    with Index.open(project, embedder=embedder) as index:
        stats = index.sync(store)
    what = "embedded" if embed_all else "given random vectors (see random_vectors)"
    print(f"  index: built in {time.perf_counter() - t:.1f} s ({stats.embedded:,} chunks {what})", flush=True)
    marker.write_text(json.dumps(wanted))
    return repo


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def serve_params(repo: Path):
    from mcp import StdioServerParameters

    script = Path(sys.executable).parent / "wiki-memory"
    command = [str(script), "serve"] if script.exists() else [sys.executable, "-m", "wiki_memory", "serve"]
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(repo), env=dict(os.environ))


async def first_result(repo: Path, tool: str, arguments: dict) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the first tool result), from the spawn,
    as an agent meets a server: initialize, `tools/list`, then the call.

    The measuring client pays its own one-time costs before the clock starts (see
    `client_import_cost`): they are this Python client's, not the server's start-up."""
    from mcp import Client

    t0 = time.perf_counter()
    async with Client(serve_params(repo)) as client:
        ready = time.perf_counter() - t0
        await client.list_tools()
        result = await client.call_tool(tool, arguments)
        done = time.perf_counter() - t0
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.content[0].text}")
    return ready, done


async def warm_calls(repo: Path, searches: list[str]) -> dict[str, list[float]]:
    """The `searches`, then as many reads, then as many writes, in one session."""
    from mcp import Client

    timings: dict[str, list[float]] = {"search": [], "write": [], "read": []}
    paths: list[str] = []
    run_id = f"{time.time():.0f}-{os.getpid()}"
    async with Client(serve_params(repo)) as client:
        await client.call_tool("search", {"query": "warm up"})  # the model loads here
        for text in searches:
            t = time.perf_counter()
            result = await client.call_tool("search", {"query": text})
            timings["search"].append(time.perf_counter() - t)
            assert not result.is_error and result.structured_content["results"], result.content[0].text
            paths.append(result.structured_content["results"][0]["path"])
        for path in paths:
            t = time.perf_counter()
            result = await client.call_tool("read", {"page": path})
            timings["read"].append(time.perf_counter() - t)
            assert not result.is_error, result.content[0].text
        for i in range(len(searches)):
            t = time.perf_counter()
            # A title of this run only: rewriting a page exactly as it is commits nothing.
            result = await client.call_tool(
                "write",
                {
                    "title": f"Bench note {run_id} {i}",
                    "type": "note",
                    "body": f"Found while looking at {paths[i]}.",
                    "tags": ["bench"],
                },
            )
            timings["write"].append(time.perf_counter() - t)
            assert not result.is_error and result.structured_content["commit"], result.content[0].text
    return timings


def wire_searches(repo: Path, searches: list[str]) -> list[float]:
    """The `searches` as bare JSON-RPC lines on the server's stdin, each timed from the
    request written to its answer read: the server's own latency, as any client meets it
    before its own work. The SDK's Python client, used everywhere else here, also checks
    every structured result against the tool's output schema with jsonschema (~3 ms a
    search here); agents do that in their own runtimes (Claude Code with ajv), or not at all."""
    from mcp_types import LATEST_PROTOCOL_VERSION

    params = serve_params(repo)
    proc = subprocess.Popen(
        [params.command, *params.args],
        cwd=params.cwd,
        env=params.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    ids = iter(range(1, 1_000_000))

    def ask(method: str, params: dict) -> dict:
        request_id = next(ids)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:  # skip notifications (logs, progress) until the answer
            message = json.loads(proc.stdout.readline() or "null")
            if message is None:
                raise SystemExit(f"the server closed its output during {method}")
            if message.get("id") == request_id:
                if "error" in message or message["result"].get("isError"):
                    raise SystemExit(f"{method} failed: {message}")
                return message["result"]

    timings = []
    try:
        ask(
            "initialize",
            {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench-wire", "version": "0"},
            },
        )
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        ask("tools/call", {"name": "search", "arguments": {"query": "warm up"}})  # the model loads here
        for text in searches:
            t = time.perf_counter()
            result = ask("tools/call", {"name": "search", "arguments": {"query": text}})
            timings.append(time.perf_counter() - t)
            assert result["structuredContent"]["results"], result
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return timings


def client_import_cost() -> float:
    """Pay, in this process, what the SDK's client pays lazily on the first structured
    result it validates (importing jsonschema, loading its meta-schemas), and return what
    that took. An agent that has been running paid it long ago (Claude Code, in Node,
    never does); left in, it would be counted as the server's start-up."""
    t = time.perf_counter()
    from jsonschema.validators import validator_for

    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    validator_for(schema).check_schema(schema)
    return time.perf_counter() - t


def sdk_import_floor(runs: int) -> float:
    """Median wall time of a bare `python -c "import mcp.server.mcpserver"` in this run: the
    part of the start-up that is the SDK's import alone, under the same machine load."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def in_process_search(repo: Path, searches: list[str]) -> list[float]:
    """The same searches through `Index.search` in this process: the index's own share."""
    from wiki_memory.config import resolve_project
    from wiki_memory.index import Index

    timings = []
    with Index.open(resolve_project(repo)) as index:
        index.search("warm up")
        for text in searches:
            t = time.perf_counter()
            index.search(text, k=8)
            timings.append(time.perf_counter() - t)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="start-ups to time for each first call")
    parser.add_argument("--calls", type=int, default=50, help="warm search/write calls to time")
    parser.add_argument("--reuse", type=Path, help="build the store here once and reuse it")
    parser.add_argument(
        "--embed-all", action="store_true", help="embed every chunk with the real model while building (an hour here)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    evalkit.setup_model_env()  # the shared local model, offline, as the tests find it
    base = args.reuse or Path(tempfile.mkdtemp(prefix="wm-bench-mcp-"))
    base.mkdir(parents=True, exist_ok=True)
    os.environ["WIKI_MEMORY_HOME"] = str(base / "home")
    for var in ("CLAUDE_PROJECT_DIR", "WIKI_MEMORY_STORE", "WIKI_MEMORY_PROJECT"):
        os.environ.pop(var, None)
    print(f"building a store of {args.pages:,} pages in {base} ...", flush=True)
    repo = build(base, args.pages, args.embed_all)

    client_cost = client_import_cost()
    rng = random.Random(11)
    starts: dict[str, list[tuple[float, float]]] = {"read": [], "search": []}
    first_page = None
    for _run in range(args.runs):
        for tool in ("read", "search"):
            if tool == "read":
                if first_page is None:
                    from wiki_memory.config import resolve_project
                    from wiki_memory.store import Store

                    first_page = next(p for p, _ in Store(resolve_project(repo).wiki).page_files())
                arguments = {"page": first_page}
            else:
                arguments = {"query": query(rng)}
            starts[tool].append(anyio.run(first_result, repo, tool, arguments))
    floor = sdk_import_floor(args.runs)
    searches = [query(rng) for _ in range(args.calls)]  # the same queries for the three clients
    timings = anyio.run(warm_calls, repo, searches)
    timings["wire_search"] = wire_searches(repo, searches)
    timings["index_search"] = in_process_search(repo, searches)

    figures = {
        "pages": args.pages,
        "first_read_s": statistics.median(t for _, t in starts["read"]),
        "first_search_s": statistics.median(t for _, t in starts["search"]),
        "initialize_s": statistics.median(r for r, _ in starts["read"] + starts["search"]),
        "sdk_import_s": floor,
        "client_jsonschema_import_s": client_cost,
        **{f"{tool}_p50_ms": 1000 * statistics.median(v) for tool, v in timings.items()},
        **{f"{tool}_p95_ms": 1000 * percentile(v, 0.95) for tool, v in timings.items()},
        "runs": args.runs,
        "calls": args.calls,
    }
    figures["load_average"] = round(os.getloadavg()[0], 2)
    print(
        f"\nwiki-memory serve over stdio, {args.pages:,} pages (median of {args.runs} start-ups, "
        f"{args.calls} warm calls each; load average {figures['load_average']} on {os.cpu_count()} CPUs):"
    )
    rows = [
        ("python -c 'import mcp.server.mcpserver' (SDK alone)", figures["sdk_import_s"] * 1000, None),
        (
            "(this client's jsonschema set-up, paid before the clock)",
            figures["client_jsonschema_import_s"] * 1000,
            None,
        ),
        ("spawn -> initialize answered", figures["initialize_s"] * 1000, None),
        ("spawn -> tools/list -> first result (read)", figures["first_read_s"] * 1000, TARGET_FIRST_RESULT_S * 1000),
        ("spawn -> first result (search, model load included)", figures["first_search_s"] * 1000, None),
        ("search p50 (warm, the SDK's Python client)", figures["search_p50_ms"], None),
        ("search p95", figures["search_p95_ms"], None),
        (
            "search p50 on the wire (request written -> answer read)",
            figures["wire_search_p50_ms"],
            TARGET_SEARCH_P50_MS,
        ),
        ("search p95 on the wire", figures["wire_search_p95_ms"], None),
        ("  of which Index.search in process, p50", figures["index_search_p50_ms"], None),
        ("  so the server's MCP layer adds, p50", figures["wire_search_p50_ms"] - figures["index_search_p50_ms"], None),
        (
            "  and the SDK client's own work (its schema check), p50",
            figures["search_p50_ms"] - figures["wire_search_p50_ms"],
            None,
        ),
        ("read p50 (warm)", figures["read_p50_ms"], None),
        ("write p50 (one commit, its chunks embedded)", figures["write_p50_ms"], None),
        ("write p95", figures["write_p95_ms"], None),
    ]
    for name, value, target in rows:
        verdict = "" if target is None else ("  ok" if value <= target else f"  over the {target:.0f} ms target")
        print(f"  {name:<56} {value:8.1f} ms{verdict}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
