#!/usr/bin/env python3
"""Evaluation: what the no-LLM distiller makes of real agent transcripts.

Each transcript is imported on its own into a throwaway wiki (`import_transcripts`, the
code `wiki-memory import` runs, which distils every session from its evidence), and the
script prints every page the distiller wrote, in full, and every candidate it refused with
the reason, for a person to label each page correct, wrong or trivial (the labels of the
last run are in docs/lifecycle.md). Nothing is copied into the repository: transcripts are
read where they are (by default ../shared/data/transcripts/).

    python scripts/eval_distill.py
    python scripts/eval_distill.py /path/to/transcripts/ --json bench-results/distill.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))


def agent_of(path: Path) -> str | None:
    """claude-code or codex, from the file's name or its first records."""
    name = path.name.lower()
    if name.startswith(("claude_code", "claude-code")):
        return "claude-code"
    if name.startswith(("codex", "rollout-")):
        return "codex"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for _ in range(20):
                line = f.readline()
                if not line:
                    break
                record = json.loads(line) if line.strip().startswith("{") else {}
                if "payload" in record:
                    return "codex"
                if record.get("type") in ("user", "assistant", "summary") or "uuid" in record:
                    return "claude-code"
    except (OSError, ValueError):
        return None
    return None


def transcripts(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        found += sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    seen: set[bytes] = set()
    unique = []
    for p in found:
        data = p.read_bytes()
        if data not in seen:  # the same transcript under two names counts once
            seen.add(data)
            unique.append(p)
    return unique


def distil(path: Path, agent: str) -> dict[str, Any]:
    from wiki_memory.config import resolve_project
    from wiki_memory.memory import import_transcripts

    work = Path(tempfile.mkdtemp(prefix="wm-eval-distill-"))
    os.environ["WIKI_MEMORY_HOME"] = str(work / "home")
    (work / "code").mkdir()
    project = resolve_project(work / "code")
    report = import_transcripts(agent, [path], project=project)
    pages = []
    refused: list[str] = []
    for distilled in report.distilled.get(project.id, []):
        refused += list(distilled.refused)
        for p in distilled.pages:
            text = (project.wiki / p.path).read_text(encoding="utf-8")
            pages.append({"path": p.path, "action": p.action, "why": p.why, "text": text})
    return {
        "transcript": str(path),
        "agent": agent,
        "sessions": sum(len(v) for v in report.imported.values()),
        "empty": len(report.empty),
        "failed": [r for _, r in report.failed],
        "pages": pages,
        "refused": refused,
    }


def main() -> None:
    from evalkit import SHARED, setup_model_env

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="Transcript files or folders (default: the shared transcripts).")
    parser.add_argument("--json", metavar="PATH", help="Write every transcript's pages and refusals as JSON.")
    args = parser.parse_args()
    setup_model_env()
    results = []
    for path in transcripts(args.paths or [str(SHARED / "data" / "transcripts")]):
        agent = agent_of(path)
        if agent is None:
            print(f"skipped {path}: not a Claude Code or Codex transcript")
            continue
        result = distil(path, agent)
        results.append(result)
        print(f"\n### {path.name} ({agent}): {result['sessions']} session(s), {len(result['pages'])} page(s)")
        for failure in result["failed"]:
            print(f"  not imported: {failure}")
        for page in result["pages"]:
            print(f"\n--- {page['action']} {page['path']} ({page['why']})")
            body = page["text"].split("\n---\n", 1)[-1].strip()
            print("\n".join("    " + line for line in body.splitlines()))
        for line in result["refused"]:
            print(f"  refused: {line}")
    total = sum(len(r["pages"]) for r in results)
    print(f"\n{len(results)} transcripts, {sum(r['sessions'] for r in results)} sessions, {total} distilled pages")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
