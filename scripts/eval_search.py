"""Retrieval quality on coding memory as agents and people ask for it: in other words than the
page uses, symptom first, by an exact identifier, for the rule that replaced a superseded one, for
what happened in a session, for how-to knowledge that session logs also mention, and prompts that
should find nothing.

The sets are in `scripts/data/search_eval/` (`tune.json`, `holdout.json`; README.md there says how
they were written and that nothing may be tuned on the held-out part). Each project's pages are
written into a fresh wiki through the store and indexed by `Index.sync`; each query is asked of its
own project through `Index.search`. Printed per mode and query kind: recall@1, recall@5 and MRR of
the first 10 results with 95% bootstrap intervals; for `superseded` how often the old page ranks
above its replacement, for `durable` how often a session or handoff log does; for `none` the top
scores a relevance floor would have to separate from the answered queries' correct hits.

    python scripts/eval_search.py --part tune
    python scripts/eval_search.py --part holdout --json /tmp/holdout.json
    python scripts/eval_search.py --part tune --set fts_weight=0.3 --misses paraphrase
    python scripts/eval_search.py --overlap          # the paraphrase rule, no model needed
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit

DATA = Path(__file__).resolve().parent / "data" / "search_eval"
OLD_SETS = (Path(__file__).resolve().parent / "data" / "coding_memory", DATA.parent / "coding_memory_holdout")
PARTS = ("tune", "holdout")
KINDS = ("paraphrase", "symptom", "identifier", "superseded", "history", "durable", "none")
ANSWERED = KINDS[:-1]
LOG_TYPES = frozenset({"session", "handoff"})
# What a relevance floor could read off the first result (SearchResult fields; None when absent).
SIGNALS = ("score", "similarity", "coverage")
MAX_PARAPHRASE_OVERLAP = 1 / 3
K = 10

# Function words and chat filler: what a paraphrase may share with its page without giving it away.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during each
    else even ever few for from further get gets getting got had hadn has hasn have haven having he her
    here hers herself him himself his how i if in into is isn it its itself just let lets like ll m may me
    might more most much must my myself need needs no nor not now of off on once one only or other ought
    our ours ourselves out over own re s same shall she should shouldn so some such t than that the their
    theirs them themselves then there these they this those through to too under until up us ve very was
    wasn we were weren what when where which while who whom why will with won would wouldn y you your
    yours yourself yourselves okay ok hey hi please thanks thank anything something someone somebody way
    thing things still yet really actually maybe
    """.split()
)


# Content words ------------------------------------------------------------------------------------


class _Stems:
    """Porter stems from SQLite's own FTS5 tokenizer, so that 'retries' and 'retried' meet as the
    index's word search would have them meet."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
        self.db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self.known: dict[str, str] = {}

    def __call__(self, words: Iterable[str]) -> set[str]:
        words = set(words)
        todo = sorted(w for w in words if w not in self.known)
        if todo:
            self.db.execute("DELETE FROM t")
            self.db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(todo)))
            stem = dict(self.db.execute("SELECT doc, term FROM v"))
            self.known.update((w, stem.get(i, w)) for i, w in enumerate(todo))
        return {self.known[w] for w in words}


_stems = _Stems()


def content_words(text: str) -> set[str]:
    """The distinct content stems of a text (README.md of the sets defines them)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return _stems(w for w in words if len(w) > 1 and w not in STOPWORDS)


def overlap(query: str, page_text: str) -> float:
    """The share of the query's content stems that also occur in the page's text."""
    asked = content_words(query)
    return len(asked & content_words(page_text)) / len(asked) if asked else 0.0


def page_text(page: dict[str, Any]) -> str:
    return f"{page['title']}\n{page['body']}"


# Data ---------------------------------------------------------------------------------------------


def load(part: str, data: Path = DATA) -> dict[str, Any]:
    """One part (`tune`, `holdout`) or both (`all`): projects, pages and queries."""
    names = PARTS if part == "all" else (part,)
    merged: dict[str, Any] = {"part": part, "projects": [], "pages": [], "queries": []}
    for name in names:
        one = json.loads((data / f"{name}.json").read_text())
        for key in ("projects", "pages", "queries"):
            merged[key] += [{**item, "part": name} for item in one[key]]
    return merged


def overlap_report(data: dict[str, Any]) -> dict[str, list[float]]:
    """Per kind, each query's overlap with its (first) expected page."""
    pages = {(p["project"], p["path"]): p for p in data["pages"]}
    out: dict[str, list[float]] = {}
    for q in data["queries"]:
        if q["expected"]:
            text = page_text(pages[(q["project"], q["expected"][0])])
            out.setdefault(q["kind"], []).append(overlap(q["query"], text))
    return out


def old_set_overlaps() -> dict[str, list[float]]:
    """The same measure on the older coding sets' paraphrases, for comparison."""
    out: dict[str, list[float]] = {}
    for folder in OLD_SETS:
        pages = {p["title"]: p for p in json.loads((folder / "pages.json").read_text())}
        queries = json.loads((folder / "queries.json").read_text())
        out[folder.name] = [overlap(q["q"], page_text(pages[q["page"]])) for q in queries if q["kind"] == "paraphrase"]
    return out


# Building and asking ------------------------------------------------------------------------------


def build(pages: Sequence[dict[str, Any]], root: Path, project: str, embedder: Any, tuning: Any) -> tuple[Any, Any]:
    """A wiki holding `pages` and its synced index, through the public API only."""
    from wiki_memory.config import Project
    from wiki_memory.index import Index
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    store = Store.create(root / "wiki")
    written = store.write_many(
        [
            Page.new(
                p["title"],
                p["type"],
                p["body"],
                tags=p["tags"],
                status=p["status"],
                path=p["path"],
                extra=p["extra"],
                date=f"{p['date']}T09:00:00Z",
            )
            for p in pages
        ],
        Author.agent("eval"),
    )
    moved = [(p["path"], w.path) for p, w in zip(pages, written, strict=True) if w.path != p["path"]]
    if moved:
        raise SystemExit(f"the store wrote pages elsewhere than asked: {moved[:3]}")
    index = Index(
        root / "index.sqlite", project=Project(project, project, root, root / "wiki"), embedder=embedder, tuning=tuning
    )
    index.sync(store)
    return store, index


def rank_of(paths: Sequence[str], wanted: Iterable[str]) -> int | None:
    ranks = [paths.index(w) + 1 for w in wanted if w in paths]
    return min(ranks) if ranks else None


def outranked(paths: Sequence[str], wanted_rank: int | None, rivals: Iterable[int]) -> bool:
    """A rival page is in the results above the best expected page (or the expected page is absent)."""
    return any(wanted_rank is None or r < wanted_rank for r in rivals)


def judge(q: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """What one mode's results say about one query."""
    paths: list[str] = []
    types: dict[str, str] = {}
    for r in results:
        if r.path not in types:  # one entry per page, in rank order
            paths.append(r.path)
            types[r.path] = r.type
    first = results[0] if results else None
    signals = {name: getattr(first, name, None) for name in SIGNALS} if first is not None else {}
    rank = rank_of(paths, q["expected"])
    logs = [i + 1 for i, p in enumerate(paths) if types[p] in LOG_TYPES and p not in q["expected"]]
    old = [i + 1 for i, p in enumerate(paths) if p in q.get("superseded", ())]
    return {
        "rank": rank,
        "top": paths[:5],
        "top_type": types[paths[0]] if paths else None,
        "top_score": float(first.score) if first is not None else None,
        "top_signals": {name: None if v is None else float(v) for name, v in signals.items()},
        "old_above": outranked(paths, rank, old) if q["kind"] == "superseded" else None,
        "log_above": outranked(paths, rank, logs) if q["kind"] == "durable" else None,
    }


def evaluate(
    data: dict[str, Any], modes: Sequence[str], embedder: Any, tuning: Any, work: Path
) -> list[dict[str, Any]]:
    """Every query of `data` asked of its own project's index, in every mode."""
    rows = []
    for project in [p["name"] for p in data["projects"]]:
        pages = [p for p in data["pages"] if p["project"] == project]
        store, index = build(pages, work / project, project, embedder, tuning)
        try:
            for q in (q for q in data["queries"] if q["project"] == project):
                row = {k: q[k] for k in ("id", "part", "project", "kind", "query", "expected")}
                row["superseded"] = q.get("superseded", [])
                for mode in modes:
                    t0 = time.perf_counter()
                    results = index.search(q["query"], k=K, mode=mode)
                    row[mode] = {**judge(q, results), "ms": (time.perf_counter() - t0) * 1000}
                rows.append(row)
        finally:
            index.close()
            store.close()
    return rows


# Statistics ---------------------------------------------------------------------------------------


def bootstrap(values: Sequence[float], resamples: int, seed: int) -> tuple[float, float, float]:
    """The mean and its 95% percentile-bootstrap interval (queries resampled with replacement)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(v.mean()), float(lo), float(hi)


def metric_values(ranks: Sequence[int | None]) -> dict[str, list[float]]:
    return {
        "r@1": [1.0 if r == 1 else 0.0 for r in ranks],
        "r@5": [1.0 if r is not None and r <= 5 else 0.0 for r in ranks],
        "mrr": [1.0 / r if r is not None else 0.0 for r in ranks],
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {
        "n": len(ordered),
        "min": ordered[0],
        **{f"p{q}": evalkit.percentile(ordered, q) for q in (25, 50, 75)},
        "max": ordered[-1],
    }


def floor_split(none_tops: Sequence[float], hit_tops: Sequence[float]) -> dict[str, float | None]:
    """The best single floor on the top score: the share of `none` queries it silences and of
    correct rank-1 answers it keeps, at the threshold maximising their mean (no floor: None)."""
    best: dict[str, float | None] = {"floor": None, "none_silenced": 0.0, "hits_kept": 1.0, "balanced": 0.5}
    for t in sorted(set(none_tops) | set(hit_tops)):
        silenced = sum(s < t for s in none_tops) / len(none_tops) if none_tops else 0.0
        kept = sum(s >= t for s in hit_tops) / len(hit_tops) if hit_tops else 0.0
        if (silenced + kept) / 2 > (best["balanced"] or 0.0):
            best = {"floor": t, "none_silenced": silenced, "hits_kept": kept, "balanced": (silenced + kept) / 2}
    return best


def summarize(rows: Sequence[dict[str, Any]], modes: Sequence[str], resamples: int, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"kinds": {}, "none": {}}
    for kind in (*ANSWERED, "all"):
        items = [r for r in rows if (r["kind"] == kind if kind != "all" else r["kind"] != "none")]
        entry: dict[str, Any] = {"queries": len(items)}
        for mode in modes:
            for name, values in metric_values([r[mode]["rank"] for r in items]).items():
                entry[f"{mode}.{name}"] = bootstrap(values, resamples, seed)
            entry[f"{mode}.p50_ms"] = evalkit.percentile([r[mode]["ms"] for r in items], 50)
            for flag in ("old_above", "log_above"):
                flags = [float(r[mode][flag]) for r in items if r[mode][flag] is not None]
                if flags:
                    entry[f"{mode}.{flag}"] = bootstrap(flags, resamples, seed)
        out["kinds"][kind] = entry
    for mode in modes:
        empty = sum(1 for r in rows if r["kind"] == "none" and r[mode]["top_score"] is None)
        out["none"][mode] = {"none_empty": empty}
        for signal in SIGNALS:
            tops = {"none": [], "hit": []}
            for r in rows:
                value = r[mode]["top_signals"].get(signal)
                if value is not None and (r["kind"] == "none" or r[mode]["rank"] == 1):
                    tops["none" if r["kind"] == "none" else "hit"].append(value)
            if not tops["none"] and not tops["hit"]:
                continue
            entry = {
                "none_top": spread(tops["none"]),
                "hit_top": spread(tops["hit"]),
                "floor": floor_split(tops["none"], tops["hit"]),
            }
            if signal == "score":
                out["none"][mode].update(entry)
            else:
                out["none"][mode].setdefault("signals", {})[signal] = entry
    return out


# Output -------------------------------------------------------------------------------------------


def percentiles(s: dict[str, float], spec: str) -> str:
    return " ".join(f"{k}={s[k]:{spec}}" for k in ("min", "p25", "p50", "p75", "max")) if s else "-"


def cell(stat: tuple[float, float, float]) -> str:
    mean, lo, hi = stat
    return f"{mean:.3f} [{lo:.2f},{hi:.2f}]"


def print_summary(summary: dict[str, Any], modes: Sequence[str]) -> None:
    kinds = summary["kinds"]
    print(f"{'mode':<7}{'kind':<11}{'n':>4}  {'recall@1':<19}{'recall@5':<19}{'MRR@10':<19}{'p50 ms':>7}")
    for mode in modes:
        for kind in (*ANSWERED, "all"):
            e = kinds[kind]
            metrics = "".join(f"{cell(e[f'{mode}.{m}']):<19}" for m in ("r@1", "r@5", "mrr"))
            print(f"{mode:<7}{kind:<11}{e['queries']:>4}  {metrics}{e[f'{mode}.p50_ms']:>7.1f}")
        print()
    print("superseded page above its replacement; session/handoff log above the durable page (share of queries):")
    for mode in modes:
        old, log = kinds["superseded"].get(f"{mode}.old_above"), kinds["durable"].get(f"{mode}.log_above")
        old_text, log_text = cell(old) if old else "-", cell(log) if log else "-"
        print(f"  {mode:<7} superseded above: {old_text:<22} log above durable: {log_text}")
    print(
        "\nnone: the first result's score (and similarity, coverage) for prompts that should find nothing vs. for"
        " correct rank-1 answers, and the best floor on each:"
    )
    for mode in modes:
        n = summary["none"][mode]
        nt, ht, fl = n["none_top"], n["hit_top"], n["floor"]
        print(f"  {mode:<7} none ({nt.get('n', 0)}, {n['none_empty']} empty): {percentiles(nt, '.3f')}")
        print(f"  {'':<7} hits ({ht.get('n', 0)}):          {percentiles(ht, '.3f')}")
        print(f"  {'':<7} {floor_text(fl)}")
        for signal, entry in n.get("signals", {}).items():
            print(f"  {'':<7} {signal}: none {percentiles(entry['none_top'], '.3f')}")
            print(f"  {'':<7} {' ' * len(signal)}  hits {percentiles(entry['hit_top'], '.3f')}")
            print(f"  {'':<7} {' ' * len(signal)}  {floor_text(entry['floor'])}")


def floor_text(fl: dict[str, Any]) -> str:
    if fl["floor"] is None:
        return "no floor separates them"
    return f"floor {fl['floor']:.3f} silences {fl['none_silenced']:.0%} of none, keeps {fl['hits_kept']:.0%} of hits"


def print_overlaps(data: dict[str, Any]) -> None:
    def line(name: str, values: Sequence[float]) -> str:
        s = spread(values)
        over = sum(v > MAX_PARAPHRASE_OVERLAP + 1e-9 for v in values)
        mean = sum(values) / len(values)
        return f"  {name:<24}{len(values):>4}  mean={mean:.2f} {percentiles(s, '.2f')}  above 1/3: {over}"

    print(f"content-word overlap of each query with its expected page ({data['part']}):")
    for kind, values in sorted(overlap_report(data).items(), key=lambda kv: KINDS.index(kv[0])):
        print(line(kind, values))
    print("the older sets' paraphrases, for comparison:")
    for name, values in old_set_overlaps().items():
        print(line(name, values))


def print_misses(rows: Sequence[dict[str, Any]], modes: Sequence[str], kinds: Sequence[str]) -> None:
    for r in rows:
        if r["kind"] not in kinds:
            continue
        for mode in modes:
            j = r[mode]
            if r["kind"] == "none" or not (j["rank"] and j["rank"] <= 5):
                print(
                    f"  {mode:<7} {r['id']:<16} rank {j['rank']}: {r['query']!r} -> {r['expected']}; top {j['top'][:3]}"
                )


def main() -> None:
    from wiki_memory.index import Tuning

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=(*PARTS, "all"), default="tune")
    ap.add_argument("--modes", default="fts,vector,hybrid")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                    help=f"override a ranking setting ({', '.join(f.name for f in fields(Tuning))})")  # fmt: skip
    ap.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples for the intervals")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--cache", type=Path, default=evalkit.DEFAULT_CACHE, help="embedding cache folder")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--json", type=Path, help="write the summary and every query's results here")
    ap.add_argument("--misses", default="", help="list top-5 misses of these kinds (comma-separated)")
    ap.add_argument("--overlap", action="store_true", help="print the content-word overlap per kind and stop")
    args = ap.parse_args()

    data = load(args.part)
    if args.overlap:
        print_overlaps(data)
        return
    evalkit.setup_model_env()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    tuning = replace(Tuning(), **evalkit.parse_settings(args.settings))
    embedder = evalkit.caching_embedder(None if args.no_cache else args.cache)
    work = Path(tempfile.mkdtemp(prefix="wm-search-eval-"))
    try:
        rows = evaluate(data, modes, embedder, tuning, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = summarize(rows, modes, args.bootstrap, args.seed)
    projects = ", ".join(p["name"] for p in data["projects"])
    print(
        f"search_eval {args.part} ({projects}): {len(data['pages'])} pages, {len(rows)} queries, model {embedder.name}"
    )
    print("recall@K: an expected page among the first K results; MRR of the first 10; [95% bootstrap interval]\n")
    print_summary(summary, modes)
    if args.misses:
        print_misses(rows, modes, [k.strip() for k in args.misses.split(",")])
    if args.json:
        report = {
            "part": args.part,
            "tuning": {f.name: getattr(tuning, f.name) for f in fields(Tuning)},
            "model": embedder.name,
            "pages": len(data["pages"]),
            "summary": summary,
            "queries": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
        print(f"\nresults: {args.json}")


if __name__ == "__main__":
    main()
