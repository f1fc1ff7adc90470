"""How far recall's evidence can go: the best decision rule of a family, fitted on each set itself.

`eval_recall.py` measures the decision recall ships. This asks what any decision built on
the same evidence could reach: for every prompt of a set, every page recall may hand
(durable types, handed-out status) gets its words score (`recall.find`, 0 when FTS5 does
not find it) and its closeness in meaning (the best cosine of its chunks, the helper's
`Vectors`), and a grid of rules is run over the sessions, each scored as `eval_recall.py`
scores (recall, precision, quiet; a page is handed once per session). The rules:

    keep a page when  (words >= f and meaning >= m)  or  meaning >= alone
    a general question needs meaning >= q; keep pages within `relative` of the best's
    words + meaning, at most 3

`f = 0.4, m = 0.35, alone = 0.5, q = 0.65, relative = 0.85` is what recall ships (`alone`
here looks at every page; the helper at the 10 closest). For each set
the script prints the rule that is best on the set itself (an upper bound for the family:
it was chosen by looking at the answers), the most recall any rule reaches while precision
and quiet stay at their targets, and, with `--fit tune,holdout`, how the rule best
on those sets does on the others.

Needs pages only SessionStart may hand (session and handoff pages) are left out of recall
here and in `eval_recall.py` alike; a prompt needing nothing else is counted apart.

    python scripts/recall_ceiling.py --parts tune holdout scripts/data/recall_eval/unseen.json
    python scripts/recall_ceiling.py --parts tune holdout unseen.json --fit tune,holdout
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evalkit
from eval_recall import LOGS, NOTHING, TARGETS, build, load

GRID = {
    "f": [0.0, 0.1, 0.2, 0.3, 0.4],
    "m": [0.25, 0.3, 0.325, 0.35, 0.375, 0.4, 0.425, 0.45, 0.5],
    "alone": [0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 9.0],
    "q": [0.55, 0.65, 9.0],
    "relative": [0.7, 0.85, 1.0],
}
SHIPPED = {"f": 0.4, "m": 0.35, "alone": 0.5, "q": 0.65, "relative": 0.85}


def features(data: dict[str, Any], work: Path, embedder: Any) -> list[dict[str, Any]]:
    """Every turn with, per page recall may hand, (words, meaning)."""
    from wiki_memory.pages.status import handed_out
    from wiki_memory.recall import chatter, find
    from wiki_memory.recall.helper import Vectors

    turns: list[dict[str, Any]] = []
    for project in data["projects"]:
        pages = [p for p in data["pages"] if p["project"] == project]
        open_pages = [
            p["path"] for p in pages if p["type"] not in find.LOG_TYPES and handed_out(p.get("status", "active"))
        ]
        proj = build(pages, work / project, project, embedder)
        vectors = Vectors(str(proj.index_path), embedder.name).current()
        conn = find.connect(proj.index_path)
        assert conn is not None
        for session in (s for s in data["sessions"] if s["project"] == project):
            for turn in session["turns"]:
                prompt = turn["prompt"]
                query = find.prepare(conn, prompt)
                words = {c.path: c.score for c in find.candidates(conn, query)} if query else {}
                sims = vectors.similarities(embedder.embed_query(prompt), open_pages)
                needed = set(turn.get("needed", []))
                turns.append(
                    {
                        "session": session["id"],
                        "kind": turn["kind"],
                        "chatter": chatter.is_chatter(prompt),
                        "general": chatter.is_general_question(prompt),
                        "needed": {p for p in needed if not p.startswith(LOGS)},
                        "logs_only": bool(needed) and all(p.startswith(LOGS) for p in needed),
                        "ok": needed | set(turn.get("ok", [])),
                        "pages": {p: (words.get(p, 0.0), sims.get(p, 0.0)) for p in open_pages},
                    }
                )
        conn.close()
    return turns


def decide(turn: dict[str, Any], rule: dict[str, float], handed: set[str]) -> list[str]:
    if turn["chatter"]:
        return []
    keep = []
    for path, (w, s) in turn["pages"].items():
        if path in handed:
            continue
        if turn["general"]:
            ok = w >= rule["f"] and s >= rule["q"]
        else:
            ok = (w >= rule["f"] and s >= rule["m"]) or s >= rule["alone"]
        if ok:
            keep.append((w + s, path))
    if not keep:
        return []
    keep.sort(reverse=True)
    best = keep[0][0]
    return [p for e, p in keep if e >= rule["relative"] * best][:3]


def score(turns: list[dict[str, Any]], rule: dict[str, float]) -> dict[str, float]:
    handed: dict[str, set[str]] = {}
    hits = needing = good = given = quiet = nothing = 0
    for t in turns:
        seen = handed.setdefault(t["session"], set())
        got = decide(t, rule, seen)
        if t["needed"]:
            needing += 1
            hits += bool(t["needed"] & (set(got) | seen))
        elif t["kind"] in NOTHING and not t["logs_only"]:
            nothing += 1
            quiet += not got
        given += len(got)
        good += sum(1 for p in got if p in t["ok"])
        seen |= set(got)
    return {
        "recall": hits / needing if needing else 0.0,
        "precision": good / given if given else 1.0,
        "quiet": quiet / nothing if nothing else 1.0,
    }


def meets(s: dict[str, float]) -> bool:
    return all(s[k] >= TARGETS[k] for k in TARGETS)


def shortfall(s: dict[str, float]) -> float:
    """How far a rule is from the targets, summed; 0 when all are met (then: more is better)."""
    short = sum(max(0.0, TARGETS[k] - s[k]) for k in TARGETS)
    return short if short > 0 else -sum(s.values()) / 100


def rules() -> list[dict[str, float]]:
    return [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]


def best(turns: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, float]]:
    scored = [(shortfall(score(turns, r)), i, r) for i, r in enumerate(rules())]
    _, _, rule = min(scored)
    return rule, score(turns, rule)


def most_recall(turns: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, float]] | None:
    """The rule with the most recall among those that keep precision and quiet at their targets."""
    fine = []
    for i, r in enumerate(rules()):
        s = score(turns, r)
        if s["precision"] >= TARGETS["precision"] and s["quiet"] >= TARGETS["quiet"]:
            fine.append((-s["recall"], i, r, s))
    return (min(fine)[2], min(fine)[3]) if fine else None


def ranks(turns: list[dict[str, Any]]) -> dict[str, float]:
    """Where meaning alone puts a needed page among all the pages recall may hand."""
    firsts = []
    for t in turns:
        if not t["needed"]:
            continue
        order = sorted(t["pages"], key=lambda p: -t["pages"][p][1])
        firsts.append(min(order.index(p) for p in t["needed"] if p in t["pages"]) + 1)
    n = len(firsts) or 1
    return {"first": sum(r == 1 for r in firsts) / n, "top3": sum(r <= 3 for r in firsts) / n}


def line(name: str, rule: dict[str, float], s: dict[str, float]) -> str:
    shown = ", ".join(f"{k}={'off' if v >= 9 else v}" for k, v in rule.items())
    flag = "meets the targets" if meets(s) else "does not meet them"
    figures = f"recall {s['recall']:.3f}  precision {s['precision']:.3f}  quiet {s['quiet']:.3f}"
    return f"  {name:<28} {figures}  ({shown}; {flag})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="+", default=["tune", "holdout"], help="set names or JSON files")
    parser.add_argument("--fit", help="comma-separated parts to choose one rule on, then run it on every part")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    parser.add_argument("--cache", default=str(evalkit.DEFAULT_CACHE), help="embedding cache directory")
    args = parser.parse_args()

    evalkit.setup_model_env()
    embedder = evalkit.caching_embedder(Path(args.cache) if args.cache else None)
    work = Path(tempfile.mkdtemp(prefix="recall-ceiling-"))
    report: dict[str, Any] = {"grid": GRID, "targets": TARGETS, "parts": {}}
    by_part: dict[str, list[dict[str, Any]]] = {}
    try:
        for part in args.parts:
            by_part[part] = features(load(part), work / Path(part).stem, embedder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(rules())} rules; targets: " + ", ".join(f"{k} >= {v}" for k, v in TARGETS.items()))
    for part, turns in by_part.items():
        rule, s = best(turns)
        shipped = score(turns, SHIPPED)
        apart = sum(t["logs_only"] for t in turns)
        print(f"\n{part}: {len(turns)} prompts ({apart} needing only what SessionStart hands, left out)")
        print(line("as shipped", SHIPPED, shipped))
        print(line("best on this set itself", rule, s))
        r = ranks(turns)
        print(f"  a needed page first by meaning alone: {r['first']:.3f}; among the first three: {r['top3']:.3f}")
        most = most_recall(turns)
        if most:
            print(line("most recall, others met", *most))
        report["parts"][part] = {"shipped": shipped, "best_rule": rule, "best": s, "most_recall": most, "ranks": r}
    if args.fit:
        fit = [t for part in args.fit.split(",") for t in by_part[part]]
        rule, s = best(fit)
        print(f"\nthe rule best on {args.fit}:")
        print(line(f"on {args.fit}", rule, s))
        for part, turns in by_part.items():
            print(line(f"on {Path(part).stem}", rule, score(turns, rule)))
        report["fit"] = {"parts": args.fit, "rule": rule, "scores": {p: score(t, rule) for p, t in by_part.items()}}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
