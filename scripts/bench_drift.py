#!/usr/bin/env python3
"""Benchmark: drift against the code, at the scale of a big wiki and a big repository.

A code repository of `--files` files (committed with the git CLI, so its .git/index is
git's own) and a wiki of `--pages` pages, most decisions, gotchas, facts and preferences
anchored to two files each at their real blob ids; then `--drifted` files are edited, so
that about a tenth of the anchored pages drift. It measures:

- reading the git index alone, and checking every anchor of the wiki (what `review` does);
- SessionStart: `session_start_text` in process (what the hook runs, drift notes included)
  and the whole `wiki-memory hook codex SessionStart` process, p50/p95, beside the same hook
  in a project with no memory and a bare `python -c pass`, interleaved;
- `review` of the whole wiki (drift, duplicates, links, expiry).

    python scripts/bench_drift.py
    python scripts/bench_drift.py --pages 10000 --files 2000 --runs 60 --json bench-results/drift.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def build_code(root: Path, files: int) -> dict[str, str]:
    """A repository of `files` files; path -> blob id (from git's own index)."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for i in range(files):
        path = root / "src" / f"pkg{i // 100}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}(x):\n    return x + {i}\n" * 5)
    git(root, "add", ".")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "code")
    blobs = {}
    for line in git(root, "ls-files", "-s").splitlines():
        meta, path = line.split("\t", 1)
        blobs[path] = meta.split()[1]
    return blobs


def build_wiki(project: Any, pages: int, blobs: dict[str, str], rng: random.Random) -> int:
    """`pages` pages, durable ones anchored to two files each; returns how many are anchored."""
    from bench_consolidate import open_store

    from wiki_memory.pages import Page, render_page
    from wiki_memory.store import Author

    paths = sorted(blobs)
    # A vocabulary of made-up words, so that pages differ as real ones do (no two alike).
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pu", "da", "fi", "go", "he", "ju"]
    vocab = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(4000)})
    store = open_store(project)
    changes = {}
    anchored = 0
    kinds = ("decision", "gotcha", "fact", "note", "procedure", "session", "gotcha", "decision")
    for i in range(pages):
        kind = kinds[i % len(kinds)] if i % 50 else "preference"
        words = rng.sample(vocab, 120)
        extra: dict[str, Any] = {}
        if kind in ("decision", "gotcha", "fact", "preference"):
            files = rng.sample(paths, 2)
            extra["anchors"] = [{"path": p, "blob": blobs[p]} for p in files]
            anchored += 1
        page = Page.new(
            f"Page {i}: {words[0]} {words[1]} {words[2]}",
            kind,
            f"**Context**: {' '.join(words[:50])}.\n\n## Details\n\n{' '.join(words[50:])}.\n",
            tags=[words[3]],
            date=f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T10:00:00Z",
            extra=extra,
        )
        changes[page.path] = render_page(page).encode()
    store.commit(changes, f"bench: {pages} pages", Author.agent("bench"))
    store.close()
    return anchored


class _NoView:
    shown: tuple[str, ...] = ()


def hook(payload: str) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "wiki_memory", "hook", "codex", "SessionStart"],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - t


def setup(work: Path, args: argparse.Namespace, rng: random.Random) -> tuple[Any, Path, list[Any], dict[str, Any]]:
    """The repository, the wiki (with a consolidated session for a handoff), the index, the
    SessionStart context; then the files of the pages SessionStart hands out, and
    `--drifted` others at random, are edited (their drift notes are the work measured)."""
    from bench_consolidate import consolidate_session, session_events

    from wiki_memory.config import resolve_project
    from wiki_memory.consolidate import context_build
    from wiki_memory.consolidate.handoff import handoff_for_next_session
    from wiki_memory.memory import Memory

    code = work / "code"
    t = time.perf_counter()
    blobs = build_code(code, args.files)
    project = resolve_project(code)
    anchored = build_wiki(project, args.pages, blobs, rng)
    session_events(project, "bench-drift-session", 500)
    consolidate_session(project, "bench-drift-session", llm=False)
    with Memory(project) as memory:
        memory.reindex(embed=False)
        context_build.refresh(project, memory.store(), memory.index)
        rows = memory.require_index().lifecycle_rows()
    setup_s = time.perf_counter() - t
    shown = set((handoff_for_next_session(project, session_id="bench-new") or _NoView()).shown)
    edited = {a["path"] for r in rows if r.path in shown and r.anchors for a in json.loads(r.anchors)}
    for path in sorted(edited) + rng.sample(sorted(blobs), args.drifted):
        with open(code / path, "a") as f:
            f.write("# edited by hand\n")
    return project, code, rows, {"anchored_pages": anchored, "setup_s": round(setup_s, 1)}


def time_anchors(code: Path, rows: list[Any]) -> dict[str, Any]:
    """Reading the git index alone, then every anchor of the wiki (review's drift pass)."""
    from wiki_memory.pages.anchors import anchors_from_json
    from wiki_memory.pages.drift import GitIndex, drifted

    t = time.perf_counter()
    GitIndex(code)
    index_ms = (time.perf_counter() - t) * 1000
    all_anchors = [anchors_from_json(r.anchors) for r in rows if r.anchors]
    t = time.perf_counter()
    drifting = sum(1 for anchors in all_anchors if drifted(code, anchors))
    all_ms = (time.perf_counter() - t) * 1000
    return {
        "anchors": sum(len(a) for a in all_anchors),
        "drifted_pages": drifting,
        "git_index_read_ms": round(index_ms, 1),
        "all_anchors_checked_ms": round(all_ms, 1),
    }


def time_session_start(project: Any, code: Path, work: Path, runs: int) -> dict[str, Any]:
    """SessionStart in process, and as the hook process beside a hook with no memory and
    `python -c pass`, interleaved."""
    from wiki_memory.hook import startup

    in_process: list[float] = []
    text = ""
    for _ in range(runs):
        t = time.perf_counter()
        text = startup.session_start_text(project, "codex", "bench-new", "startup") or ""
        in_process.append(time.perf_counter() - t)
    empty = work / "empty"
    empty.mkdir()
    base = {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}
    payload, empty_payload = json.dumps({**base, "cwd": str(code)}), json.dumps({**base, "cwd": str(empty)})
    fresh, bare_hook, bare = [], [], []
    for _ in range(runs):
        fresh.append(hook(payload))
        bare_hook.append(hook(empty_payload))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    ms = lambda values, q: round(pct(values, q) * 1000, 1)  # noqa: E731
    return {
        "session_start_chars": len(text),
        "session_start_drift_notes": text.count("may be stale ("),
        "in_process_p50_ms": ms(in_process, 0.5),
        "in_process_p95_ms": ms(in_process, 0.95),
        "hook_p50_ms": ms(fresh, 0.5),
        "hook_p95_ms": ms(fresh, 0.95),
        "hook_no_memory_p50_ms": ms(bare_hook, 0.5),
        "hook_no_memory_p95_ms": ms(bare_hook, 0.95),
        "python_pass_p50_ms": ms(bare, 0.5),
    }


def time_review(project: Any) -> dict[str, Any]:
    from wiki_memory.memory import Memory

    with Memory(project) as memory:
        memory.review()  # warm: the index file opened once
        t = time.perf_counter()
        found = memory.review()
        review_s = time.perf_counter() - t
    kinds = ("drift", "duplicate", "contradiction", "wrong-link")
    return {"review_s": round(review_s, 2), "review_items": {k: len(found.of_kind(k)) for k in kinds}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--drifted", type=int, default=200, help="Files edited after the pages were written.")
    parser.add_argument("--runs", type=int, default=60, help="SessionStart calls of each kind.")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    from evalkit import setup_model_env

    setup_model_env()
    import compileall

    import wiki_memory

    compileall.compile_dir(str(Path(wiki_memory.__file__).parent), quiet=1)
    with tempfile.TemporaryDirectory(prefix="wm-bench-drift-") as tmp:
        work = Path(tmp)
        os.environ["WIKI_MEMORY_HOME"] = str(work / "home")
        project, code, rows, made = setup(work, args, random.Random(15))
        result = {"pages": args.pages, "files": args.files, **made, **time_anchors(code, rows)}
        result |= time_session_start(project, code, work, args.runs) | time_review(project)
        result["load"] = round(os.getloadavg()[0], 1)
    for key, value in result.items():
        print(f"{key:>28}: {value}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
