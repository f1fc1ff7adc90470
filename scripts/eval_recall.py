"""Recall at the moment of need, measured: for each prompt of a scripted session, the pages the
hook would hand over, against the pages the prompt needs; for each file a session reads, the
pages about it.

The sets are in `scripts/data/recall_eval/` (README.md there: how they were written, the
format, and that nothing may be tuned on `holdout.json`). Each project's pages (from
`scripts/data/search_eval/`, with the anchors the set adds) are written into a fresh wiki
and indexed with the real embedding model; then every session runs turn by turn through
`wiki_memory.recall.run`, exactly as the hook runs it, with the session's record of what
it was handed (a page is never handed twice, so a page needed again later counts as
present).

Printed per kind of prompt: recall (a prompt that needs a page got one of its pages, now
or earlier in the session; session and handoff pages are SessionStart's, so a prompt that
needs only those is the kind `sessionstart`, counted in precision alone), precision
(injected pages the prompt needed or may have), quiet (prompts that need nothing got
nothing), characters injected per prompt, latency.
Then per-file recall: recall of the pages about each file read, precision, quiet on
files no page is about.

    python scripts/eval_recall.py --part tune
    python scripts/eval_recall.py --part holdout --json /tmp/recall-holdout.json
    python scripts/eval_recall.py --part tune --set floor=0.45 --misses
    python scripts/eval_recall.py --data /path/to/another/set.json     # a set in the same format
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

DATA = Path(__file__).resolve().parent / "data" / "recall_eval"
NOTHING = ("ack", "generic", "uncovered", "nearmiss")
LOGS = ("sessions/", "handoffs/")
SESSION_START = "sessionstart"  # a prompt whose every need is a session or handoff page
TARGETS = {"recall": 0.75, "precision": 0.80, "quiet": 0.90}


def load(part_or_file: str) -> dict[str, Any]:
    """A set (`tune`, `holdout`, or a JSON file's path) with its pages resolved."""
    path = Path(part_or_file) if part_or_file.endswith(".json") else DATA / f"{part_or_file}.json"
    data = json.loads(path.read_text())
    pages_ref = data["pages"]
    if isinstance(pages_ref, str):
        source = json.loads((DATA.parent / pages_ref).read_text()) if not Path(pages_ref).is_absolute() else None
        source = source or json.loads(Path(pages_ref).read_text())
        data["pages"] = source["pages"]
        data.setdefault("projects", [p["name"] for p in source["projects"]])
    else:
        data.setdefault("projects", sorted({p["project"] for p in data["pages"]}))
    data["projects"] = [p if isinstance(p, str) else p["name"] for p in data["projects"]]
    for page in data["pages"]:
        extra_anchors = data.get("anchors", {}).get(page["project"], {}).get(page["path"])
        if extra_anchors:
            page["extra"] = {**page.get("extra", {}), "anchors": extra_anchors}
    return data


def build(pages: Sequence[dict[str, Any]], root: Path, project: str, embedder: Any) -> Any:
    """A wiki holding `pages`, its index synced, and the Project recall reads it through."""
    from wiki_memory.config import Project
    from wiki_memory.index import Index
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    store = Store.create(root / "wiki")
    store.write_many(
        [
            Page.new(
                p["title"],
                p["type"],
                p["body"],
                tags=p.get("tags", []),
                status=p.get("status", "active"),
                path=p["path"],
                extra=p.get("extra", {}),
                date=f"{p.get('date', '2025-01-01')}T09:00:00Z",
            )
            for p in pages
        ],
        Author.agent("eval"),
    )
    code_root = Path("/code") / project
    proj = Project(project, project, root, root / "wiki", code_root, f"eval:{project}")
    index = Index(root / "index.sqlite", project=proj, embedder=embedder)
    index.sync(store)
    index.close()
    store.close()
    return proj


def meaning_in_process(proj: Any, embedder: Any) -> Any:
    """Closeness in meaning as the warm helper computes it, in this process (its `Vectors`)."""
    from wiki_memory.recall.helper import Vectors

    vectors = Vectors(str(proj.index_path), embedder.name)

    def for_prompt(prompt: str) -> Any:
        query = embedder.embed_query(prompt)
        return (
            lambda pages: vectors.current().similarities(query, list(pages)),
            lambda floor: vectors.current().nearest(query, floor),
        )

    return for_prompt


def run_sessions(
    data: dict[str, Any], proj: Any, project: str, settings: Any, meaning: Any = None
) -> list[dict[str, Any]]:
    from wiki_memory.recall import run

    rows = []
    for session in (s for s in data["sessions"] if s["project"] == project):
        handed: list[str] = []
        for n, turn in enumerate(session["turns"]):
            t0 = time.perf_counter()
            sims, near = meaning(turn["prompt"]) if meaning is not None else (None, None)
            result = run.for_prompt(
                proj, turn["prompt"], settings=settings, exclude=set(handed), similarities=sims, nearby=near
            )
            ms = (time.perf_counter() - t0) * 1000
            labelled = set(turn.get("needed", []))
            ok = labelled | set(turn.get("ok", []))
            # Session and handoff pages are SessionStart's to hand, never recall's: a need of
            # one counts here only through the durable pages beside it.
            needed = {p for p in labelled if not p.startswith(LOGS)}
            rows.append(
                {
                    "session": session["id"],
                    "turn": n,
                    "kind": SESSION_START if labelled and not needed else turn["kind"],
                    "prompt": turn["prompt"],
                    "needed": sorted(needed),
                    "injected": list(result.pages),
                    "hit": bool(needed & (set(result.pages) | set(handed))) if needed else None,
                    "good": sum(1 for p in result.pages if p in ok),
                    "chars": len(result.text),
                    "ms": ms,
                    "candidates": [v.as_dict() for v in result.verdicts[:6]],
                }
            )
            handed += result.pages
    return rows


def run_files(data: dict[str, Any], proj: Any, project: str, settings: Any) -> list[dict[str, Any]]:
    from wiki_memory.recall import run

    rows = []
    for group in (g for g in data.get("files", []) if g["project"] == project):
        handed: set[str] = set()
        for read in group["reads"]:
            t0 = time.perf_counter()
            result = run.for_file(proj, f"{proj.root}/{read['file']}", settings=settings, exclude=set(handed))
            ms = (time.perf_counter() - t0) * 1000
            needed = set(read.get("needed", []))
            ok = needed | set(read.get("ok", []))
            rows.append(
                {
                    "file": read["file"],
                    "needed": sorted(needed),
                    "injected": list(result.pages),
                    "found": len(needed & (set(result.pages) | handed)),
                    "good": sum(1 for p in result.pages if p in ok),
                    "chars": len(result.text),
                    "ms": ms,
                }
            )
            handed |= set(result.pages) | {f"file:{result.subject}"}
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: (k in NOTHING, k))
    for kind in [*kinds, "all"]:
        part = [r for r in rows if kind == "all" or r["kind"] == kind]
        needing = [r for r in part if r["needed"]]
        nothing = [r for r in part if not r["needed"] and r["kind"] != SESSION_START]
        injected = sum(len(r["injected"]) for r in part)
        out[kind] = {
            "prompts": len(part),
            "recall": sum(r["hit"] for r in needing) / len(needing) if needing else None,
            "precision": sum(r["good"] for r in part) / injected if injected else None,
            "quiet": sum(not r["injected"] for r in nothing) / len(nothing) if nothing else None,
            "chars_per_prompt": statistics.mean(r["chars"] for r in part),
            "p50_ms": statistics.median(r["ms"] for r in part),
            "p95_ms": evalkit.percentile([r["ms"] for r in part], 95),
        }
    return out


def summarize_files(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    needing = [r for r in rows if r["needed"]]
    injected = sum(len(r["injected"]) for r in rows)
    nothing = [r for r in rows if not r["needed"]]
    return {
        "reads": len(rows),
        "recall": sum(r["found"] for r in needing) / sum(len(r["needed"]) for r in needing) if needing else None,
        "precision": sum(r["good"] for r in rows) / injected if injected else None,
        "quiet": sum(not r["injected"] for r in nothing) / len(nothing) if nothing else None,
        "chars_per_read": statistics.mean(r["chars"] for r in rows) if rows else 0,
        "p50_ms": statistics.median(r["ms"] for r in rows) if rows else 0,
    }


def _f(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def print_summary(summary: dict[str, Any], files: dict[str, Any]) -> None:
    print(f"{'kind':<12} {'n':>4} {'recall':>7} {'precis.':>7} {'quiet':>7} {'chars':>7} {'p50 ms':>7} {'p95 ms':>7}")
    for kind, s in summary.items():
        print(
            f"{kind:<12} {s['prompts']:>4} {_f(s['recall']):>7} {_f(s['precision']):>7} {_f(s['quiet']):>7}"
            f" {s['chars_per_prompt']:>7.0f} {s['p50_ms']:>7.1f} {s['p95_ms']:>7.1f}"
        )
    a = summary["all"]
    verdicts = [
        f"{name} {a[name]:.3f} ({'met' if a[name] >= goal else 'NOT met'}, target {goal})"
        for name, goal in TARGETS.items()
        if a[name] is not None
    ]
    print("targets: " + "; ".join(verdicts))
    print(
        f"per-file: {files['reads']} reads, recall {_f(files['recall'])}, precision {_f(files['precision'])}, "
        f"quiet {_f(files['quiet'])}, {files['chars_per_read']:.0f} chars per read, p50 {files['p50_ms']:.1f} ms"
    )


def print_misses(rows: Sequence[dict[str, Any]]) -> None:
    for r in rows:
        wrong = [p for p in r["injected"] if p not in r["needed"]]
        if r["hit"] is False or (not r["needed"] and r["injected"]) or wrong:
            print(f"\n[{r['kind']}] {r['prompt']}")
            print(f"   needed:   {r['needed']}")
            print(f"   injected: {r['injected']}")
            for c in r["candidates"][:4]:
                print(
                    f"   {'+' if c['kept'] else '-'} {c['score']:.2f}/{c['meaning'] or 0:.2f} {c['path']} "
                    f"matched={c['matched']} missing={c['missing']} ({c['reason']})"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="tune", help="tune, holdout, or all")
    parser.add_argument("--data", help="a set in the same format (a JSON file)")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="[recall] settings to try")
    parser.add_argument("--misses", action="store_true", help="print every miss and leak with its candidates")
    parser.add_argument(
        "--words", action="store_true", help="words alone: what the hook does when the warm helper is not there"
    )
    parser.add_argument("--json", metavar="PATH", help="write the figures and every row as JSON")
    parser.add_argument("--cache", default=str(evalkit.DEFAULT_CACHE), help="embedding cache directory")
    args = parser.parse_args()

    evalkit.setup_model_env()
    from wiki_memory.recall.settings import from_section

    settings, problems = from_section(
        {**evalkit.parse_settings(args.set), **({"meaning": False} if args.words else {})}
    )
    if problems:
        raise SystemExit("; ".join(problems))
    parts = [args.data] if args.data else (["tune", "holdout"] if args.part == "all" else [args.part])
    embedder = evalkit.caching_embedder(Path(args.cache) if args.cache else None)
    work = Path(tempfile.mkdtemp(prefix="eval-recall-"))
    report: dict[str, Any] = {"settings": settings._asdict(), "words_alone": args.words, "parts": {}}
    try:
        for part in parts:
            data = load(part)
            rows: list[dict[str, Any]] = []
            file_rows: list[dict[str, Any]] = []
            for project in data["projects"]:
                pages = [p for p in data["pages"] if p["project"] == project]
                proj = build(pages, work / part.replace("/", "_") / project, project, embedder)
                meaning = None if args.words else meaning_in_process(proj, embedder)
                rows += run_sessions(data, proj, project, settings, meaning)
                file_rows += run_files(data, proj, project, settings)
            summary, files = summarize(rows), summarize_files(file_rows)
            mode = "words alone" if args.words else "words and meaning"
            projects = ", ".join(data["projects"])
            print(f"\n== {part} ({mode}): {len(rows)} prompts, {len(file_rows)} file reads ({projects})")
            print_summary(summary, files)
            if args.misses:
                print_misses(rows)
            report["parts"][part] = {"summary": summary, "files": files, "rows": rows, "file_rows": file_rows}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
