#!/usr/bin/env python3
"""Benchmark: what per-person tokens cost a team's MCP HTTP server.

- `Tokens.admit` in this process, with `--tokens` tokens in the file: a person's token, and
  an unknown one (the gate's work on every request);
- warm calls over streamable HTTP through the SDK's own client, p50/p95 of `recent` (the
  cheapest tool, so the gate's share shows) and of `write` (one commit each), against two
  real `wiki-memory serve --http` on 127.0.0.1 side by side: one open (a home with no
  tokens), one with `--tokens` tokens called with a person's read-write token (the grant
  checked on each call, the person as author). Each has a home and a project of its own,
  alike, and the calls alternate between them, so both grow the same and share the
  machine's load.

    python scripts/bench_team_server.py                    # 100 tokens, 200 calls each
    python scripts/bench_team_server.py --tokens 1000 --calls 500
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ANNOUNCE = re.compile(r"serving MCP at (http://\S+)/mcp")
LABELS = ("open", "tokens")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.2f} ms, p95 {percentile(values, 0.95):.2f} ms"


def admit_cost(env: dict[str, str], tokens: int, runs: int) -> tuple[dict[str, float], str]:
    """Microseconds per `Tokens.admit` with `tokens` tokens; returns them and one token."""
    from wiki_memory.memory.access import Tokens

    store = Tokens(env)
    secret = ""
    for i in range(tokens):
        _, made = store.create(f"person{i}", None, write=True)
        secret = secret or made
    out = {}
    for label, header in (("person", f"Bearer {secret}"), ("unknown", "Bearer wmt_not-a-token")):
        store.admit(header)
        start = time.perf_counter()
        for _ in range(runs):
            store.admit(header)
        out[label] = (time.perf_counter() - start) / runs * 1e6
    return out, secret


def serve(repo: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "wiki-memory"), "serve", "--http", "--port", "0"],
        cwd=repo,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = ANNOUNCE.search(line)
        if found:
            return process, found.group(1)
    raise SystemExit(f"the server did not start: {process.stderr.read()}")


async def calls(servers: dict[str, tuple[str, str | None]], n: int) -> dict[str, dict[str, list[float]]]:
    """Warm calls to each server in turn: `n` of `recent`, then `n // 4` of `write`."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    times: dict[str, dict[str, list[float]]] = {label: {"recent": [], "write": []} for label in servers}
    async with AsyncExitStack() as stack:
        clients: dict[str, Any] = {}
        for label, (base, token) in servers.items():
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            http = httpx2.AsyncClient(headers=headers, timeout=60)
            clients[label] = await stack.enter_async_context(
                Client(streamable_http_client(base + "/mcp", http_client=http))
            )
            await clients[label].call_tool("recent", {"n": 5})  # warm: the store opened

        async def timed(label: str, tool: str, arguments: dict[str, Any]) -> None:
            start = time.perf_counter()
            result = await clients[label].call_tool(tool, arguments)
            times[label][tool].append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result.content

        for _ in range(n):
            for label in servers:
                await timed(label, "recent", {"n": 5})
        for i in range(max(1, n // 4)):
            for label in servers:
                await timed(label, "write", {"title": f"Note {i}", "type": "note", "body": f"Body {i}."})
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    import anyio

    from wiki_memory.config import resolve_project
    from wiki_memory.mcp.scope import SESSION_ENV
    from wiki_memory.memory.access import Tokens

    with tempfile.TemporaryDirectory(prefix="bench-team-server-") as tmp:
        processes: list[subprocess.Popen[str]] = []
        servers: dict[str, tuple[str, str | None]] = {}
        results: dict[str, Any] = {}
        try:
            for label in LABELS:
                base = Path(tmp) / label
                repo = base / "code"
                repo.mkdir(parents=True)
                subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
                # Without an enclosing agent's session, which an HTTP server would not stamp anyway.
                outer = {k: v for k, v in os.environ.items() if k not in SESSION_ENV}
                env = {**outer, "WIKI_MEMORY_HOME": str(base / "home"), "WIKI_MEMORY_RECALL": "words"}
                token = None
                if label == "tokens":
                    results["admit_us"], _ = admit_cost(env, args.tokens, 5000)
                    _, token = Tokens(env).create(
                        "bench", [resolve_project(repo, env)], write=True, email="bench@example.com"
                    )
                process, url = serve(repo, env)
                processes.append(process)
                servers[label] = (url, token)
            results.update(anyio.run(calls, servers, args.calls))
            # The token's writes were committed as its person, not as the agent.
            wiki = resolve_project(
                Path(tmp) / "tokens" / "code", {"WIKI_MEMORY_HOME": str(Path(tmp) / "tokens" / "home")}
            )
            author = subprocess.run(
                ["git", "log", "-1", "--format=%an <%ae>"], cwd=wiki.wiki, capture_output=True, text=True, check=True
            ).stdout.strip()
            assert author == "bench <bench@example.com>", author
        finally:
            for process in processes:
                process.terminate()
                process.wait()

    admit = results["admit_us"]
    print(
        f"Tokens.admit with {args.tokens} tokens: "
        f"a person's {admit['person']:.1f} us, unknown {admit['unknown']:.1f} us"
    )
    for label in LABELS:
        times = results[label]
        print(f"{label:>6}: recent {summary(times['recent'])}; write {summary(times['write'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
