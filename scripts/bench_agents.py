"""Benchmark: what wiki-memory costs a whole headless session of OpenCode and of Gemini CLI.

Each run is one real session (the CLIs the end-to-end tests install from npm, in
`.agent-clis/`) against a fake model on 127.0.0.1 that answers with a shell call, then
text: once with nothing installed, once with `wiki-memory install` done (OpenCode's plugin,
Gemini CLI's hooks; no MCP entry, whose server start-up would be the MCP benchmark's), each
in a fresh HOME and project, the two interleaved. It prints the median and spread of the
session's wall time, with and without.

    python scripts/bench_agents.py                  # 5 runs of each
    python scripts/bench_agents.py --runs 10 --agents opencode --json bench-results/agents.json

Needs npm (for the CLIs, as the tests do). Run it on a quiet machine: a session takes
several seconds, and its spread is large next to a hook's tens of milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "helpers"))


def session(agent: str, clis: Any, root: Path, with_memory: bool) -> float:
    """Seconds of one headless session of `agent` in a fresh HOME and project under `root`."""
    import os

    from agent_clis import run_gemini, run_opencode, write_gemini_settings
    from fake_models import FakeAnthropic, FakeGemini, bash, text

    from wiki_memory.install import Context, install, this_executable

    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {"WIKI_MEMORY_HOME": str(root / "wm-home")}
    if with_memory:
        install([agent], Context(home=home, command=this_executable(), mcp=False, env={**os.environ, **env}))
    script = [bash("echo measured"), text("Done.")]
    started = time.monotonic()
    if agent == "opencode":
        with FakeAnthropic(script) as model:
            result = run_opencode(clis, ["Say", "hello"], cwd=project, home=home, base_url=model.url, env=env)
    else:
        write_gemini_settings(home, trusted=[project])
        with FakeGemini(script) as model:
            args = ["--yolo", "-m", "gemini-2.5-pro", "-p", "Say hello"]
            result = run_gemini(clis, args, cwd=project, home=home, base_url=model.url, env=env)
    elapsed = time.monotonic() - started
    if result.returncode != 0 or "Done." not in result.stdout:
        raise SystemExit(f"{agent} session failed: {result.stderr[-1500:]}")
    return elapsed


def summary(times: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(times), 2),
        "min_s": round(min(times), 2),
        "max_s": round(max(times), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--agents", nargs="+", default=["opencode", "gemini"], choices=["opencode", "gemini"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    from agent_clis import ensure_agent_clis

    clis = ensure_agent_clis()
    results: dict[str, Any] = {"versions": dict(clis.versions), "runs": args.runs, "agents": {}}
    for agent in args.agents:
        times: dict[str, list[float]] = {"without": [], "with": []}
        for n in range(args.runs):
            for label in ("without", "with") if n % 2 == 0 else ("with", "without"):
                # ignore_cleanup_errors: the background consolidation may still be writing.
                with tempfile.TemporaryDirectory(prefix=f"bench-{agent}-", ignore_cleanup_errors=True) as tmp:
                    times[label].append(session(agent, clis, Path(tmp), label == "with"))
        results["agents"][agent] = {label: summary(values) for label, values in times.items()}
        for label in ("without", "with"):
            s = results["agents"][agent][label]
            print(
                f"{agent:9} {label:7} wiki-memory: median {s['median_s']:5.2f} s  "
                f"(min {s['min_s']:.2f}, max {s['max_s']:.2f}, {args.runs} runs)"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
