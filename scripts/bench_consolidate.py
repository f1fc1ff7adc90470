#!/usr/bin/env python3
"""Benchmark: consolidation and the SessionStart handoff.

1. Extractive consolidation of sessions of 50, 500 and 5,000 events (a realistic mix of
   prompts, commands that fail and pass, edits, reads, plan updates and answers, with the
   user stating a preference and a decision and one failure per turn fixed by an edit, so
   that distillation has procedures, gotchas and statements to write): wall time in
   process and as the `wiki-memory consolidate --session` process a SessionEnd hook starts,
   with peak memory (Python allocations in process; the process's max RSS); the same
   without distillation; and a second session whose statement is a paraphrase of a page
   that exists, so that the duplicate check loads the embedding model.
2. SessionStart in wikis of 1,000 and 10,000 pages: `session_start_text` in process (what
   the hook runner calls) and the whole `wiki-memory hook codex SessionStart` process (what
   Codex runs: interpreter, imports, journal line, handoff, envelope), p50/p95, beside
   `python -c pass`; with a session left unconsolidated (summarised on the spot); and the
   background work that keeps it fast (rebuilding the context file, cold and warm).

    python scripts/bench_consolidate.py
    python scripts/bench_consolidate.py --events 50 500 --pages 1000 --runs 50 --json bench-results/consolidate.json
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
import tracemalloc
from pathlib import Path
from typing import Any

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


def p50(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def session_events(project, session_id: str, events: int, start_hour: int = 8, paraphrase: bool = False) -> Path:
    """A journal of `events` observations shaped like a real working session (`paraphrase`:
    its preference in other words than the default session's)."""
    from wiki_memory.capture import journal
    from wiki_memory.capture.observation import Observation, PlanItem

    cwd = str(project.root)
    items = []
    clock = time.mktime((2026, 11, 30, start_hour, 0, 0, 0, 0, 0))

    def obs(kind: str, **kw) -> None:
        nonlocal clock
        clock += 2
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(clock))
        items.append(Observation(kind=kind, agent="claude-code", session_id=session_id, time=stamp, cwd=cwd, **kw))

    obs("session-start", meta={"source": "startup", "model": "claude-opus-4-8"})
    n = 1
    turn = 0
    statements = [PARAPHRASE if paraphrase else PREFERENCE, DECISION]
    while len(items) < events - 2:
        w = WORDS[turn % len(WORDS)]
        obs(
            "prompt",
            text=f"Turn {turn}: fix the {w} handling in the {WORDS[(turn * 3) % len(WORDS)]} module, "
            "and make the tests pass. " + " ".join(WORDS[:20]) + (f". {statements[turn]}" if turn < 2 else ""),
        )
        n = fixed_failure(obs, cwd, w, n)
        for k in range(12):
            n += 1
            kind = k % 6
            if kind == 0:
                obs(
                    "tool",
                    tool="Read",
                    input=f"{cwd}/src/{w}/mod_{k}.py",
                    output="x = 1\n" * 40,
                    meta={"tool_use_id": f"t{n}"},
                )
            elif kind == 1:
                obs(
                    "tool",
                    tool="Bash",
                    input=f"pytest tests/test_{w}.py -x",
                    error=k % 4 == 1,
                    output="E   AssertionError: expected 200, got 401\n" * 3 + "1 failed"
                    if k % 4 == 1
                    else "12 passed",
                    meta={"tool_use_id": f"t{n}"},
                )
            elif kind == 2:
                path = f"{cwd}/src/{w}/mod_{k}.py"
                obs("tool", tool="Edit", input=path, output="ok", files=(path,), meta={"tool_use_id": f"t{n}"})
            elif kind == 3:
                obs(
                    "tool",
                    tool="TodoWrite",
                    input="3 plan items",
                    output="ok",
                    meta={"tool_use_id": f"t{n}"},
                    plan=(
                        PlanItem(f"Fix {w}", "completed"),
                        PlanItem(f"Test {w}", "in_progress"),
                        PlanItem(f"Document {w}", "pending"),
                    ),
                )
            elif kind == 4:
                obs("tool", tool="Grep", input=f"{w} in src", output="src/a.py:1\n" * 10, meta={"tool_use_id": f"t{n}"})
            else:
                obs(
                    "tool",
                    tool="Bash",
                    input=f"make lint-{turn % 7}",
                    error=turn % 5 == 0,
                    output="ruff: F401 unused import" if turn % 5 == 0 else "ok",
                    meta={"tool_use_id": f"t{n}"},
                )
            if len(items) >= events - 2:
                break
        obs("stop", text=f"Fixed the {w} handling. Next steps:\n- Document {w}\n\nShould I also refactor the cache?")
        turn += 1
    obs("session-end", meta={"reason": "prompt_input_exit"})
    path = journal.append(project.journal_dir, items[:events])
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


#: What the user states in the first two turns (the paraphrase: in a later session).
PREFERENCE = "From now on, always run the tests with uv before committing."
PARAPHRASE = "Always run the suite with uv before you commit."
DECISION = "Let's go with Postgres for the orders database."


def fixed_failure(obs: Any, cwd: str, word: str, n: int) -> int:
    """A failure fixed by an edit (a gotcha per turn), and the suite passing (a procedure);
    returns the last tool call number used."""
    obs("tool", tool="Bash", input="uv run pytest -q", error=True, meta={"tool_use_id": f"t{n + 1}"},
        output=f"E   KeyError: '{word.upper()}_URL'\n1 failed in 0.3s")  # fmt: skip
    path = f"{cwd}/src/{word}/settings.py"
    obs("tool", tool="Edit", input=path, output="ok", files=(path,), meta={"tool_use_id": f"t{n + 2}"})
    obs("tool", tool="Bash", input="uv run pytest -q", output="42 passed in 1.2s", meta={"tool_use_id": f"t{n + 3}"})
    return n + 3


def consolidate_session(project: Any, session_id: str, **options: Any) -> Any:
    """What the SessionEnd hook's background process does, in this process."""
    from wiki_memory.memory import Memory

    with Memory(project) as memory:
        return memory.consolidate(session_id, **options)


def open_store(project: Any) -> Any:
    from wiki_memory.memory import Memory

    return Memory(project).store(create=True)


def bench_consolidation(sizes: list[int], work: Path) -> list[dict[str, object]]:
    from wiki_memory.config import resolve_project
    from wiki_memory.hook.background import project_arg

    # Warm up: import the store, the page model and YAML once, as a long-lived process would have.
    warm = work / "code-warmup"
    warm.mkdir()
    warm_project = resolve_project(warm)
    session_events(warm_project, "bench-warmup", 20)
    consolidate_session(warm_project, "bench-warmup", llm=False)
    rows = []
    for events in sizes:
        code = work / f"code-{events}"
        code.mkdir()
        project = resolve_project(code)
        sid_a, sid_b, sid_c = f"bench-a-{events}", f"bench-b-{events}", f"bench-c-{events}"
        session_events(project, sid_a, events)
        session_events(project, sid_b, events, start_hour=12)
        session_events(project, sid_c, events, start_hour=16)
        size = (project.journal_dir / f"{sid_a}.jsonl").stat().st_size
        # In process (the wiki exists already for a fair comparison: create it first).
        open_store(project).close()
        t = time.perf_counter()
        outcome = consolidate_session(project, sid_a, llm=False)
        wall = time.perf_counter() - t
        assert outcome.status == "committed", outcome
        # Peak Python memory on an identical session (tracemalloc slows the run, so apart).
        tracemalloc.start()
        consolidate_session(project, sid_c, llm=False)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # As the background process a SessionEnd hook starts.
        t = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "wiki_memory.hook.worker", project_arg(project), "session", sid_b]
        )
        _, status, usage = os.wait4(process.pid, 0)
        process_wall = time.perf_counter() - t
        assert status == 0
        kinds = ("gotchas", "procedures", "preferences", "decisions")
        distilled = len([p for p in project.wiki.rglob("*.md") if p.parts[-2] in kinds])
        # The same session without distillation, in a project of its own.
        plain = work / f"plain-{events}"
        plain.mkdir()
        plain_project = resolve_project(plain)
        session_events(plain_project, f"bench-plain-{events}", events)
        open_store(plain_project).close()
        config = Path(os.environ["WIKI_MEMORY_HOME"]) / "config.toml"
        config.write_text("[distill]\nenabled = false\n")
        t = time.perf_counter()
        consolidate_session(plain_project, f"bench-plain-{events}", llm=False)
        without = time.perf_counter() - t
        config.unlink()
        # A later session whose statement paraphrases a page that exists: the model is loaded.
        sid_e = f"bench-e-{events}"
        session_events(project, sid_e, events, start_hour=20, paraphrase=True)
        t = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "wiki_memory.hook.worker", project_arg(project), "session", sid_e]
        )
        _, status, _usage = os.wait4(process.pid, 0)
        near_wall = time.perf_counter() - t
        assert status == 0
        rows.append(
            {
                "events": events,
                "journal_kb": round(size / 1024),
                "in_process_s": round(wall, 3),
                "peak_python_mb": round(peak / 2**20, 1),
                "process_s": round(process_wall, 3),
                "process_max_rss_mb": round(usage.ru_maxrss / 1024, 1),
                "distilled_pages": distilled,
                "without_distillation_s": round(without, 3),
                "process_near_duplicate_s": round(near_wall, 3),
            }
        )
    return rows


def build_wiki(project, pages: int) -> None:
    """A wiki of `pages` pages: decisions, gotchas, preferences, notes, sessions and handoffs."""
    from wiki_memory.pages import Page, render_page
    from wiki_memory.store import Author

    store = open_store(project)
    changes = {}
    kinds = ("decision", "gotcha", "note", "fact", "procedure", "session", "session", "handoff")
    for i in range(pages):
        kind = kinds[i % len(kinds)] if i % 50 else "preference"
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(150)]
        body = f"**Context**: {' '.join(words[:60])}.\n\n## Details\n\n{' '.join(words[60:])}.\n"
        day = 1 + i % 28
        page = Page.new(
            f"Page {i}: {words[0]} {words[1]}",
            kind,
            body,
            tags=[words[2]],
            date=f"2026-{1 + i % 11:02d}-{day:02d}T10:00:00Z",
            extra={"session_id": f"old-{i}", "agent": "codex", "ended": f"2026-{1 + i % 11:02d}-{day:02d}T10:00:00Z"}
            if kind == "handoff"
            else None,
        )
        changes[page.path] = render_page(page).encode()
    store.commit(changes, f"bench: {pages} pages", Author.agent("bench"))
    store.close()


def bench_session_start(page_counts: list[int], runs: int, work: Path) -> list[dict[str, object]]:
    from wiki_memory.config import resolve_project
    from wiki_memory.consolidate import context, context_build
    from wiki_memory.hook import startup

    rows = []
    for pages in page_counts:
        code = work / f"start-{pages}"
        code.mkdir()
        project = resolve_project(code)
        build_wiki(project, pages)
        session_events(project, f"bench-start-{pages}", 500)
        consolidate_session(project, f"bench-start-{pages}", llm=False)
        store = open_store(project)
        cold_cache = project.home / context.CACHE_FILE
        cold_cache.unlink()
        t = time.perf_counter()
        context_build.refresh(project, store)
        refresh_cold = time.perf_counter() - t
        t = time.perf_counter()
        context_build.refresh(project, store)
        refresh_warm = time.perf_counter() - t
        store.close()
        in_process = []
        text = None
        for _ in range(runs):
            t = time.perf_counter()
            text = startup.session_start_text(project, "codex", "bench-new-session", "startup")
            in_process.append(time.perf_counter() - t)
        assert text and "Goal: Turn 0" in text, text
        # What Codex runs at start: the real hook entry point, a fresh process, payload on stdin.
        payload = json.dumps(
            {
                "session_id": "bench-codex-session",
                "cwd": str(code),
                "hook_event_name": "SessionStart",
                "model": "gpt-5.5",
                "source": "startup",
            }
        )
        # Interleaved with the same hook in a project with no memory at all (capture's own cost),
        # so that the difference is what the handoff adds, whatever the machine's load.
        empty_code = work / f"start-empty-{pages}"
        empty_code.mkdir()
        empty_payload = json.dumps(
            {
                "session_id": "bench-codex-session",
                "cwd": str(empty_code),
                "hook_event_name": "SessionStart",
                "model": "gpt-5.5",
                "source": "startup",
            }
        )
        fresh, empty = [], []
        for _ in range(max(10, runs // 5)):
            t = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "wiki_memory", "hook", "codex", "SessionStart"],
                input=payload,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            fresh.append(time.perf_counter() - t)
            assert "additionalContext" in out and "Goal: Turn 0" in out, out[:500]
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "wiki_memory", "hook", "codex", "SessionStart"],
                input=empty_payload,
                capture_output=True,
                text=True,
                check=True,
            )
            empty.append(time.perf_counter() - t)
        bare = []
        for _ in range(max(10, runs // 5)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t)
        # A session that ended but was never consolidated: summarised on the spot.
        session_events(project, f"bench-pending-{pages}", 500, start_hour=14)
        pending = []
        for _ in range(runs):
            t = time.perf_counter()
            from wiki_memory.consolidate.handoff import handoff_for_next_session

            view = handoff_for_next_session(project, session_id="bench-new-session")
            pending.append(time.perf_counter() - t)
        assert view is not None and view.pending
        rows.append(
            {
                "pages": pages,
                "chars": len(text),
                "in_process_p50_ms": round(p50(in_process) * 1000, 2),
                "in_process_p95_ms": round(p95(in_process) * 1000, 2),
                "fresh_process_p50_ms": round(p50(fresh) * 1000, 1),
                "fresh_process_p95_ms": round(p95(fresh) * 1000, 1),
                "bare_python_p50_ms": round(p50(bare) * 1000, 1),
                "hook_no_memory_p50_ms": round(p50(empty) * 1000, 1),
                "handoff_adds_p50_ms": round((p50(fresh) - p50(empty)) * 1000, 1),
                "with_pending_500_events_p95_ms": round(p95(pending) * 1000, 1),
                "context_refresh_cold_s": round(refresh_cold, 3),
                "context_refresh_warm_s": round(refresh_warm, 3),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--pages", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=100, help="SessionStart calls per wiki size")
    parser.add_argument("--json", metavar="PATH", help="Also write the figures to this JSON file.")
    args = parser.parse_args()
    # As `pip install` does: byte-compile the package, so that no hook process measured here
    # compiles a module from source (with PYTHONDONTWRITEBYTECODE set, none would be cached).
    import compileall

    import wiki_memory

    compileall.compile_dir(str(Path(wiki_memory.__file__).parent), quiet=1)
    with tempfile.TemporaryDirectory(prefix="wm-bench-consolidate-") as tmp:
        work = Path(tmp)
        os.environ["WIKI_MEMORY_HOME"] = str(work / "home")
        os.environ.pop("WIKI_MEMORY_STORE", None)
        consolidation = bench_consolidation(args.events, work)
        start = bench_session_start(args.pages, args.runs, work)
    print("Consolidation with distillation (session and handoff pages, then the distilled pages), target < 2 s")
    print(
        f"{'events':>7} {'journal':>8} {'in process':>11} {'peak (py)':>10} {'as process':>11} {'max RSS':>8} "
        f"{'pages':>6} {'no distill':>11} {'near dup':>9}"
    )
    for r in consolidation:
        print(
            f"{r['events']:>7} {r['journal_kb']:>6}KB {r['in_process_s']:>10.3f}s {r['peak_python_mb']:>8.1f}MB "
            f"{r['process_s']:>10.3f}s {r['process_max_rss_mb']:>6.1f}MB {r['distilled_pages']:>6} "
            f"{r['without_distillation_s']:>10.3f}s {r['process_near_duplicate_s']:>8.3f}s"
        )
    print()
    print("SessionStart handoff (session_start_text), target p95 <= 150 ms")
    print(
        f"{'pages':>6} {'chars':>6} {'in-proc p50':>12} {'p95':>8} {'hook p50':>12} {'p95':>8} "
        f"{'no-memory hook':>15} {'python -c pass':>15} {'+pending p95':>13} {'refresh cold':>13} {'warm':>7}"
    )
    for r in start:
        print(
            f"{r['pages']:>6} {r['chars']:>6} {r['in_process_p50_ms']:>10.2f}ms {r['in_process_p95_ms']:>6.2f}ms "
            f"{r['fresh_process_p50_ms']:>10.1f}ms {r['fresh_process_p95_ms']:>6.1f}ms "
            f"{r['hook_no_memory_p50_ms']:>13.1f}ms {r['bare_python_p50_ms']:>13.1f}ms "
            f"{r['with_pending_500_events_p95_ms']:>11.1f}ms {r['context_refresh_cold_s']:>12.3f}s "
            f"{r['context_refresh_warm_s']:>6.3f}s"
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"consolidation": consolidation, "session_start": start}, indent=2))


if __name__ == "__main__":
    main()
