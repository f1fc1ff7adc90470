#!/usr/bin/env python3
"""Benchmark: sharing with the team tier, at N personal pages.

- review's list of pages worth sharing (`Memory.share_candidates`): the first call (every
  page's `sources` read) and later calls (counts kept by blob id);
- one `share` (plan: fetch, build, diff, secrets check; then push) of one page through a
  bare team repository over file://;
- what the branch handoff adds to SessionStart (`consolidate.branch_handoff.handed`, in
  process): no team tier joined (a stat), a team tier with no handoff for the branch, and
  one with a handoff already handed.

    python scripts/bench_share.py                     # 1,000 and 10,000 pages
    python scripts/bench_share.py --sizes 1000 --runs 5 --json bench-results/share.json
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
from pathlib import Path


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _median_ms(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(size: int, runs: int, base: Path) -> dict[str, float]:
    os.environ["WIKI_MEMORY_HOME"] = str(base / "home")
    os.environ.setdefault("GIT_AUTHOR_NAME", "Bench")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "bench@example.com")
    from wiki_memory.consolidate import branch_handoff
    from wiki_memory.memory import Memory
    from wiki_memory.pages import Page
    from wiki_memory.store import Author

    bare, code = base / "team.git", base / "code"
    _git(base, "init", "-q", "--bare", "-b", "main", str(bare))
    code.mkdir()
    _git(code, "init", "-q", "-b", "feature/x")
    _git(code, "remote", "add", "origin", "https://git.example.com/acme/bench.git")
    memory = Memory.at(code)
    store = memory.store(create=True)
    pages = [
        Page.new(f"Gotcha {i} about the build", "gotcha", f"Body {i}.", sources=[f"claude-code:s{i}", f"codex:t{i}"])
        for i in range(size)
    ]
    for start in range(0, size, 1000):
        store.write_many(pages[start : start + 1000], Author.agent("claude-code"))
    memory.require_index().lifecycle_rows()  # indexed, as a wiki written through memory is
    no_team = branch_handoff.handed(memory.project, record=False)
    assert no_team is None
    off = _median_ms(lambda: branch_handoff.handed(memory.project, record=False), 2000)
    _git(base, "clone", "-q", str(bare), str(memory.project.team().wiki))

    start = time.perf_counter()
    found = memory.share_candidates()
    cold = (time.perf_counter() - start) * 1000
    assert len(found) == size
    warm = _median_ms(memory.share_candidates, runs)
    counter = iter(range(size))

    def share_one() -> None:
        path = pages[next(counter)].path
        memory.share_push(memory.share_plan([path]))

    share = _median_ms(share_one, runs)
    empty = _median_ms(lambda: branch_handoff.handed(memory.project, record=False), 2000)
    memory.handoff_write("Bench handoff", next_steps=["Go on"])
    memory.handoff_share()
    seen = _median_ms(lambda: branch_handoff.handed(memory.project), 2000)
    memory.close()
    return {
        "pages": size,
        "candidates_first_ms": round(cold, 1),
        "candidates_again_ms": round(warm, 1),
        "share_one_page_ms": round(share, 1),
        "session_start_no_team_us": round(off * 1000, 1),
        "session_start_team_no_handoff_us": round(empty * 1000, 1),
        "session_start_team_handoff_seen_us": round(seen * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-share-") as tmp:
            # Each size in a process of its own: a fresh home and no caches carried over.
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(size), str(args.runs), tmp],
                check=True,
                capture_output=True,
                text=True,
            )
            results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(json.dumps(results[-1]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        print(json.dumps(bench(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))))
    else:
        main()
