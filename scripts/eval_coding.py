"""Retrieval quality on coding memory: decisions, gotchas and procedures of a code project,
searched in other words than they were written, and by the identifiers they quote.

The pages (`scripts/data/coding_memory/pages.json`) are written into a fresh wiki through
the store, indexed by `Index.sync`, and every query (`queries.json`: paraphrases that share
few or no words with their page, and identifier queries) is asked through `Index.search`.
Printed per query kind and mode: recall@1, recall@5 and MRR (of the first 10 results).

    python scripts/eval_coding.py
    python scripts/eval_coding.py --set fts_weight=0.3 --json /tmp/coding.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

DATA = Path(__file__).resolve().parent / "data" / "coding_memory"


def build(pages: list[dict], root: Path, embedder, tuning):
    from wiki_memory.config import Project
    from wiki_memory.index import Index
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    store = Store.create(root / "wiki")
    written = store.write_many(
        [Page.new(p["title"], p["type"], p["body"], tags=p.get("tags", [])) for p in pages], Author.agent("eval")
    )
    path_of = {p["title"]: w.path for p, w in zip(pages, written, strict=False)}
    index = Index(
        root / "index.sqlite",
        project=Project("coding", "coding", root, root / "wiki"),
        embedder=embedder,
        tuning=tuning,
    )
    index.sync(store)
    return store, index, path_of


def evaluate(pages: list[dict], queries: list[dict], modes: list[str], embedder, tuning, work: Path) -> dict:
    store, index, path_of = build(pages, work, embedder, tuning)
    rows = []
    for q in queries:
        want = path_of[q["page"]]
        row = {"q": q["q"], "kind": q["kind"], "page": want}
        for mode in modes:
            t0 = time.perf_counter()
            got = [r.path for r in index.search(q["q"], k=10, mode=mode)]
            row[f"{mode}.ms"] = (time.perf_counter() - t0) * 1000
            rank = got.index(want) + 1 if want in got else None
            row[f"{mode}.rank"] = rank
        rows.append(row)
    index.close()
    store.close()
    return {"questions": rows}


def summarize(rows: list[dict], modes: list[str]) -> dict:
    out = {}
    for kind in ("paraphrase", "identifier", "all"):
        items = [r for r in rows if kind == "all" or r["kind"] == kind]
        entry: dict[str, float] = {"queries": len(items)}
        for mode in modes:
            ranks = [r[f"{mode}.rank"] for r in items]
            entry[f"{mode}.r@1"] = sum(1 for x in ranks if x == 1) / len(ranks)
            entry[f"{mode}.r@5"] = sum(1 for x in ranks if x and x <= 5) / len(ranks)
            entry[f"{mode}.mrr"] = sum(1 / x for x in ranks if x) / len(ranks)
            entry[f"{mode}.p50"] = evalkit.percentile([r[f"{mode}.ms"] for r in items], 50)
        out[kind] = entry
    return out


def print_table(summary: dict, modes: list[str]) -> None:
    cols = ["r@1", "r@5", "mrr", "p50"]
    print(f"{'queries':<12}{'n':>4}  " + "  ".join(f"{m + ' ' + c:>11}" for c in cols for m in modes))
    for kind in ("paraphrase", "identifier", "all"):
        e = summary[kind]
        cells = [f"{e[f'{m}.{c}']:>11.1f}" if c == "p50" else f"{e[f'{m}.{c}']:>11.3f}" for c in cols for m in modes]
        print(f"{kind:<12}{e['queries']:>4}  " + "  ".join(cells))


def main() -> None:
    from wiki_memory.index import Tuning

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder with pages.json and queries.json")
    ap.add_argument("--modes", default="fts,vector,hybrid")
    ap.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a ranking setting ({', '.join(f.name for f in fields(Tuning))})",
    )
    ap.add_argument("--cache", type=Path, default=evalkit.DEFAULT_CACHE, help="embedding cache folder")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--json", type=Path, default=Path(tempfile.gettempdir()) / "wiki-memory-eval" / "coding.json")
    ap.add_argument("--misses", action="store_true", help="list the paraphrases missed in the top 5")
    args = ap.parse_args()

    evalkit.setup_model_env()
    pages = json.loads((args.data / "pages.json").read_text())
    queries = json.loads((args.data / "queries.json").read_text())
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    tuning = replace(Tuning(), **evalkit.parse_settings(args.settings))
    embedder = evalkit.caching_embedder(None if args.no_cache else args.cache)
    work = Path(tempfile.mkdtemp(prefix="wm-coding-"))
    try:
        result = evaluate(pages, queries, modes, embedder, tuning, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = summarize(result["questions"], modes)
    print(f"Coding memory: {len(pages)} pages, {len(queries)} queries, model {embedder.name}")
    print("r@K: the page is among the first K results; mrr: mean reciprocal rank (first 10); p50 in ms")
    print_table(summary, modes)
    if args.misses:
        for r in result["questions"]:
            for m in modes:
                if r["kind"] == "paraphrase" and not (r[f"{m}.rank"] and r[f"{m}.rank"] <= 5):
                    print(f"  miss {m}: {r['q']!r} -> {r['page']} (rank {r[f'{m}.rank']})")
    report = {
        "tuning": {f.name: getattr(tuning, f.name) for f in fields(Tuning)},
        "model": embedder.name,
        "pages": len(pages),
        "summary": summary,
        "questions": result["questions"],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"\nresults: {args.json}")


if __name__ == "__main__":
    main()
