"""Benchmark: what recording the code repository's state costs.

1. The SessionStart hook in a git repository, as an agent pays it: a fresh
   `wiki-memory hook claude-code SessionStart` process per run, each a new session (so each
   starts the background snapshot), interleaved with the same hook under
   `WIKI_MEMORY_REPO_STATE=0` (no snapshot). Target: SessionStart p95 <= 150 ms.
2. The snapshot and the comparison themselves (in the background, off the hot path), on a
   repository of `--files` tracked files with `--dirty` of them changed.

    python scripts/bench_repostate.py --runs 40 --files 2000 --dirty 200
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def make_repo(root: Path, files: int, dirty: int) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for n in range(files):
        path = root / f"src/pkg{n % 40}/mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@e", "commit", "-q", "-m", "start")
    for n in range(dirty):
        (root / f"src/pkg{n % 40}/mod{n}.py").write_text(f"VALUE = {n} + 1\n")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--dirty", type=int, default=200)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-repostate-"))
    repo = work / "repo"
    make_repo(repo, args.files, args.dirty)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["WIKI_MEMORY_HOME"] = str(work / "home")
    env["WIKI_MEMORY_RECALL"] = "off"
    command = [sys.executable, "-m", "wiki_memory", "hook", "claude-code", "SessionStart"]
    times: dict[str, list[float]] = {"with snapshot": [], "WIKI_MEMORY_REPO_STATE=0": []}
    for run in range(args.runs + 2):
        for label, extra in (("with snapshot", {}), ("WIKI_MEMORY_REPO_STATE=0", {"WIKI_MEMORY_REPO_STATE": "0"})):
            payload = {
                "session_id": str(uuid.uuid4()),
                "cwd": str(repo),
                "hook_event_name": "SessionStart",
                "source": "startup",
                "transcript_path": "",
            }
            started = time.perf_counter()
            subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, env={**env, **extra})
            if run >= 2:  # two warm-up rounds
                times[label].append((time.perf_counter() - started) * 1000)
    from wiki_memory.consolidate import repostate

    snaps, compares = [], []
    before = repostate.snapshot(repo)
    assert before is not None
    (repo / "src/pkg1/mod1.py").write_text("changed\n")
    for _ in range(10):
        started = time.perf_counter()
        after = repostate.snapshot(repo)
        snaps.append((time.perf_counter() - started) * 1000)
        assert after is not None
        started = time.perf_counter()
        changed = repostate.changed_files(repo, before, after)
        compares.append((time.perf_counter() - started) * 1000)
    assert changed == ["src/pkg1/mod1.py"], changed
    figures = {
        label: {"p50_ms": round(statistics.median(v), 1), "p95_ms": round(percentile(v, 0.95), 1)}
        for label, v in times.items()
    }
    figures["snapshot"] = {"p50_ms": round(statistics.median(snaps), 1), "files": args.files, "dirty": args.dirty}
    figures["compare"] = {"p50_ms": round(statistics.median(compares), 1)}
    for label, f in figures.items():
        print(f"{label:<28} {f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
