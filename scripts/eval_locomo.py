"""Retrieval quality on LoCoMo, through the project's own store and index.

Each conversation becomes its own wiki with one page per session (turns as lines that keep
their dialog ids, the session date in the title and the page); the index is built by
`Index.sync`; every question is asked through `Index.search`. Printed per category and
overall, side by side for each mode (fts, hybrid):

- session recall@5 and @10: the share of a question's evidence sessions whose page is
  among the first 5 (10) results;
- evidence recall within the first 250, 500 and 1,000 words of the returned context (the
  results' titles and snippets, in rank order: what an agent with that budget would read);
- query latency p50/p95 (one search of k=20, warm process, cached query vectors excluded:
  see --no-cache for the latency with the model in the loop).

The first five conversations are the tuning set; the last five are reported separately.

    python scripts/eval_locomo.py                       # all ten, both modes
    python scripts/eval_locomo.py --conversations 0-4 --set fts_weight=0.3
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BUDGETS = (250, 500, 1000)
DIA = re.compile(r"D(\d+):(\d+)")


def normalize_evidence(raw: list[str], turns: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Evidence ids as (session, turn), glued and malformed ones repaired, unknown ones dropped."""
    out = set()
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            piece = piece.replace("D:", "D")
            m = DIA.fullmatch(piece.strip())
            if m:
                key = (int(m.group(1)), int(m.group(2)))
                if key in turns:
                    out.add(key)
    return out


TITLE_STYLE = "full"


def session_pages(conv: dict) -> list[tuple[int, str, str, str]]:
    """(session number, date text, title, body) for each session of a conversation."""
    c = conv["conversation"]
    a, b = c["speaker_a"], c["speaker_b"]
    out = []
    n = 1
    while f"session_{n}" in c or f"session_{n}_date_time" in c:
        turns = c.get(f"session_{n}") or []
        date = c.get(f"session_{n}_date_time", "")
        if turns:
            title = f"{a} and {b}, session {n} ({date})" if TITLE_STYLE == "full" else f"Session {n}, {date}"
            lines = [f"Conversation between {a} and {b} on {date}."]
            for t in turns:
                text = t.get("text", "")
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                lines.append(f"{t['dia_id']} {t['speaker']}: {text}")
            out.append((n, date, title, "\n\n".join(lines)))
        n += 1
    return out


def build(conv: dict, root: Path, embedder, tuning):
    """A wiki of one conversation's sessions and its index, synced through the project's code."""
    from wiki_memory.config import Project
    from wiki_memory.index import Index
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    store = Store.create(root / "wiki")
    pages = []
    path_of: dict[int, str] = {}
    for n, _date, title, body in session_pages(conv):
        path = f"sessions/session-{n:02d}.md"
        path_of[n] = path
        pages.append(Page.new(title, "session", body, path=path, tags=["locomo"]))
    store.write_many(pages, Author.agent("locomo"))
    project = Project("locomo", "locomo", root, root / "wiki")
    index = Index(root / "index.sqlite", project=project, embedder=embedder, tuning=tuning)
    started = time.perf_counter()
    stats = index.sync(store)
    return store, index, path_of, time.perf_counter() - started, stats


def context_ids(results, budget: int) -> set[tuple[int, int]]:
    """Dialog ids within the first `budget` words of the results' titles and snippets."""
    words: list[str] = []
    for r in results:
        words.extend(r.title.split())
        if r.heading and r.heading != r.title:
            words.extend(r.heading.split())
        words.extend(r.snippet.split())
        if len(words) >= budget:
            break
    text = " ".join(words[:budget])
    return {(int(a), int(b)) for a, b in DIA.findall(text)}


def evaluate(
    data: list[dict], conversations: list[int], modes: list[str], embedder, tuning, work: Path, k: int = 20
) -> dict:
    per_q: list[dict] = []
    timings = {}
    for ci in conversations:
        conv = data[ci]
        root = work / f"conv-{ci}"
        store, index, path_of, seconds, _stats = build(conv, root, embedder, tuning)
        timings[ci] = seconds
        turns = {
            (int(m.group(1)), int(m.group(2)))
            for s in conv["conversation"].values()
            if isinstance(s, list)
            for t in s
            for m in [DIA.fullmatch(t["dia_id"])]
            if m
        }
        for qi, qa in enumerate(conv["qa"]):
            cat = int(qa["category"])
            evidence = normalize_evidence(qa.get("evidence") or [], turns)
            row = {"conv": ci, "q": qi, "category": cat, "evidence": len(evidence)}
            question = qa["question"]
            for mode in modes:
                t0 = time.perf_counter()
                results = index.search(question, k=k, mode=mode)
                row[f"{mode}.ms"] = (time.perf_counter() - t0) * 1000
                if not evidence:
                    continue
                sessions = {s for s, _ in evidence}
                wanted = {path_of[s] for s in sessions if s in path_of}
                got = [r.path for r in results]
                for cut in (5, 10):
                    row[f"{mode}.s@{cut}"] = len(wanted & set(got[:cut])) / len(wanted)
                    row[f"{mode}.s@{cut}any"] = float(bool(wanted & set(got[:cut])))
                for budget in BUDGETS:
                    row[f"{mode}.e@{budget}"] = len(evidence & context_ids(results, budget)) / len(evidence)
            per_q.append(row)
        index.close()
        store.close()
    return {"questions": per_q, "index_seconds": timings}


def summarize(rows: list[dict], modes: list[str]) -> dict:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[str(r["category"])].append(r)
        if r["category"] != 5:
            groups["1-4"].append(r)
    out: dict[str, dict] = {}
    for name, items in groups.items():
        scored = [r for r in items if r["evidence"]]
        entry = {"questions": len(items), "with_evidence": len(scored)}
        for mode in modes:
            for key in ("s@5", "s@10", "s@5any", "s@10any", *(f"e@{b}" for b in BUDGETS)):
                vals = [r[f"{mode}.{key}"] for r in scored if f"{mode}.{key}" in r]
                entry[f"{mode}.{key}"] = sum(vals) / len(vals) if vals else float("nan")
            ms = [r[f"{mode}.ms"] for r in items]
            entry[f"{mode}.p50"] = evalkit.percentile(ms, 50)
            entry[f"{mode}.p95"] = evalkit.percentile(ms, 95)
        out[name] = entry
    return out


def print_table(title: str, summary: dict, modes: list[str]) -> None:
    print(f"\n{title}")
    cols = ["s@5", "s@10", "e@250", "e@500", "e@1000", "p50", "p95"]
    header = f"{'category':<18}{'n':>5}  " + "  ".join(
        f"{mode + ' ' + c:>{max(12, len(mode) + len(c) + 1)}}" for c in cols for mode in modes
    )
    print(header)
    order = ["1", "2", "3", "4", "1-4", "5"]
    for name in order:
        if name not in summary:
            continue
        e = summary[name]
        label = "overall 1-4" if name == "1-4" else f"{name} {CATEGORIES[int(name)]}"
        cells = []
        for c in cols:
            for mode in modes:
                v = e[f"{mode}.{c}"]
                width = max(12, len(mode) + len(c) + 1)
                cells.append(f"{v:>{width}.1f}" if c in ("p50", "p95") else f"{v:>{width}.3f}")
        print(f"{label:<18}{e['questions']:>5}  " + "  ".join(cells))


def parse_range(text: str, n: int) -> list[int]:
    if text == "all":
        return list(range(n))
    out: list[int] = []
    for part in text.split(","):
        a, sep, b = part.partition("-")
        out.extend(range(int(a), int(b) + 1) if sep else [int(a)])
    return [i for i in out if 0 <= i < n]


def main() -> None:
    from wiki_memory.index import Tuning

    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=evalkit.SHARED / "data" / "locomo" / "locomo10.json")
    ap.add_argument("--conversations", default="all", help="indexes, e.g. 0-4 (tuning set), 5-9, all")
    ap.add_argument("--modes", default="fts,hybrid", help="comma-separated: fts, vector, hybrid")
    ap.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a ranking setting ({', '.join(f.name for f in fields(Tuning))})",
    )
    ap.add_argument(
        "--cache", type=Path, default=evalkit.DEFAULT_CACHE, help="embedding cache folder (outside the repository)"
    )
    ap.add_argument("--no-cache", action="store_true", help="embed everything afresh (slow)")
    ap.add_argument(
        "--json",
        type=Path,
        default=Path(tempfile.gettempdir()) / "wiki-memory-eval" / "locomo.json",
        help="where to write the results",
    )
    ap.add_argument(
        "--title",
        choices=["full", "date"],
        default="full",
        help="page titles: speakers, session and date (full), or session and date",
    )
    ap.add_argument("--quiet", action="store_true", help="print only the overall lines")
    args = ap.parse_args()

    evalkit.setup_model_env()
    globals()["TITLE_STYLE"] = args.title
    if not args.data.is_file():
        raise SystemExit(f"no LoCoMo data at {args.data} (give --data PATH to locomo10.json)")
    data = json.loads(args.data.read_text())
    conversations = parse_range(args.conversations, len(data))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    tuning = replace(Tuning(), **evalkit.parse_settings(args.settings))
    embedder = evalkit.caching_embedder(None if args.no_cache else args.cache)
    work = Path(tempfile.mkdtemp(prefix="wm-locomo-"))
    try:
        started = time.perf_counter()
        result = evaluate(data, conversations, modes, embedder, tuning, work)
        elapsed = time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = result["questions"]
    tune = [r for r in rows if r["conv"] < 5]
    held = [r for r in rows if r["conv"] >= 5]
    report = {
        "tuning": {f.name: getattr(tuning, f.name) for f in fields(Tuning)},
        "modes": modes,
        "model": embedder.name,
        "conversations": conversations,
        "seconds": round(elapsed, 1),
        "index_seconds": result["index_seconds"],
        "all": summarize(rows, modes),
    }
    if tune and held:
        report["first_five"] = summarize(tune, modes)
        report["last_five"] = summarize(held, modes)
    print(
        f"LoCoMo retrieval, {len(conversations)} conversations, {len(rows)} questions, model {embedder.name}, "
        f"settings {report['tuning']}"
    )
    print("s@K: session recall at K pages; e@N: evidence recall within the first N words; p50/p95 in ms")
    if args.quiet:
        for key in ("first_five", "last_five", "all"):
            if key in report:
                e = report[key]["1-4"]
                print(
                    f"{key:<11}"
                    + "  ".join(
                        f"{m} s@5 {e[m + '.s@5']:.3f} s@10 {e[m + '.s@10']:.3f} e@250 {e[m + '.e@250']:.3f} "
                        f"e@500 {e[m + '.e@500']:.3f} e@1000 {e[m + '.e@1000']:.3f} mh@500 "
                        f"{report[key]['1'][m + '.e@500']:.3f}"
                        for m in modes
                    )
                )
    else:
        if tune and held:
            print_table("Conversations 1-5 (tuning set)", report["first_five"], modes)
            print_table("Conversations 6-10 (held out)", report["last_five"], modes)
        print_table(f"All {len(conversations)} conversations", report["all"], modes)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({**report, "questions": rows}, indent=1))
    print(f"\nresults: {args.json}  ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
