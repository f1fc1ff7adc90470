"""Benchmark: the wall time of one hook call, as an agent pays it.

Each run starts a fresh `wiki-memory hook claude-code EVENT` process, feeds it a payload on
stdin and waits for it to exit: PostToolUse with a realistic Bash payload (a test run's
few KB of output), PostToolUse with a 1 MB output, and SessionStart; beside them, in the
same run and interleaved, a bare `python -c pass` (the floor any Python hook pays).

    python scripts/bench_hooks.py              # 50 runs of each
    python scripts/bench_hooks.py --runs 100 --json bench-results/hooks.json

The hook's bytecode is compiled first and the processes run without
PYTHONDONTWRITEBYTECODE, as on a user's machine. Target: PostToolUse p50 <= 60 ms and
p95 <= 100 ms on a 2-core machine.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def realistic_output() -> str:
    lines = [
        f"tests/test_module_{i // 20}.py::test_case_{i} PASSED{' ' * 10}[{i * 100 // 400:3d}%]" for i in range(400)
    ]
    return "============ test session starts ============\n" + "\n".join(lines) + "\n==== 400 passed in 12.3s ===="


def payloads(cwd: Path) -> dict[str, tuple[str, bytes]]:
    base = {
        "session_id": "bench-session",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
    }
    tool = {
        **base,
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01",
        "tool_input": {"command": "python -m pytest -q tests/", "description": "Run the tests"},
        "tool_response": {"stdout": realistic_output(), "stderr": "", "interrupted": False, "isImage": False},
        "duration_ms": 12345,
    }
    big = {**tool, "tool_response": {**tool["tool_response"], "stdout": ("x" * 99 + "\n") * 10_486}}  # 1 MB
    start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
    return {
        "PostToolUse": ("PostToolUse", json.dumps(tool).encode()),
        "PostToolUse 1 MB": ("PostToolUse", json.dumps(big).encode()),
        "SessionStart": ("SessionStart", json.dumps(start).encode()),
    }


def hook_command() -> list[str]:
    exe = Path(sys.executable).parent / "wiki-memory"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "wiki_memory"]


def time_once(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr.decode()[-500:]}")
    return elapsed * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="runs of each case (default 50)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = parser.parse_args()

    compileall.compile_dir(str(REPO / "wiki_memory"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    try:
        cwd = work / "project"
        cwd.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["WIKI_MEMORY_HOME"] = str(work / "home")
        cases: dict[str, tuple[list[str], bytes]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], b""),
            # The standard library the hook path imports (config's pathlib, re and collections;
            # json): the floor under any hook built on `config`.
            "stdlib floor": ([sys.executable, "-c", "import collections, json, pathlib, re"], b""),
        }
        for name, (event, payload) in payloads(cwd).items():
            cases[name] = ([*hook_command(), "hook", "claude-code", event], payload)
        for argv, stdin in cases.values():  # warm the page cache and the journal directory
            time_once(argv, stdin, env)
        timings: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):  # interleaved, so machine load falls on every case alike
            for name, (argv, stdin) in cases.items():
                timings[name].append(time_once(argv, stdin, env))
        journal = next((work / "home").rglob("bench-session.jsonl"))
        lines = journal.read_text().splitlines()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    floor = statistics.median(timings["python -c pass"])
    rows = []
    for name, values in timings.items():
        rows.append(
            {
                "case": name,
                "runs": len(values),
                "p50_ms": round(statistics.median(values), 1),
                "p95_ms": round(percentile(values, 95), 1),
                "max_ms": round(max(values), 1),
                "p50_vs_python": round(statistics.median(values) / floor, 2),
            }
        )
    print(f"{'case':<18} {'runs':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p50 / python':>13}")
    for row in rows:
        print(
            f"{row['case']:<18} {row['runs']:>5} {row['p50_ms']:>8.1f} {row['p95_ms']:>8.1f} {row['max_ms']:>8.1f}"
            f" {row['p50_vs_python']:>12.2f}x"
        )
    tool = next(r for r in rows if r["case"] == "PostToolUse")
    verdict = "met" if tool["p50_ms"] <= 60 and tool["p95_ms"] <= 100 else "NOT met"
    print(
        f"target PostToolUse p50 <= 60 ms and p95 <= 100 ms: {verdict}; "
        f"{len(lines)} journal lines written, largest {max(len(line) for line in lines):,} bytes"
    )
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "target_met": verdict == "met",
                    "python": sys.version.split()[0],
                    "cpus": os.cpu_count(),
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
