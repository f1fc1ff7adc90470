"""Memory at the moment of action, measured: each fixture project of `scripts/data/moment/`
gets a real wiki and index, and each of its events is replayed through the real hook entry
point (`wiki-memory hook claude-code PreToolUse` before a command, `PostToolUseFailure` after
a failed one), in a session of its own.

    python scripts/eval_moment.py [--split dev|holdout|all] [--verbose] [--json]

Printed: the share of repeated failing commands and recurring errors that got the right page
(target >= 0.9), the share of other commands and errors that got any page (target <= 0.05),
and the characters per injection. Every event that went wrong is listed with `--verbose`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "moment"


def load(split: str) -> list[dict[str, Any]]:
    projects = [json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))]
    return [p for p in projects if split == "all" or p["split"] == split]


def build(project_data: dict[str, Any], base: Path) -> tuple[Any, Path, dict[str, str]]:
    """A code repository and its wiki holding the project's pages; title -> page path."""
    from wiki_memory.config import resolve_project
    from wiki_memory.consolidate.distill.pages import gotcha_body, procedure_body
    from wiki_memory.memory import Memory
    from wiki_memory.pages import Page
    from wiki_memory.store import Author

    repo = base / project_data["name"]
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for event in project_data["events"]:
        if event.get("cwd"):
            (repo / event["cwd"]).mkdir(parents=True, exist_ok=True)
    pages = []
    for p in project_data["pages"]:
        if "distilled" in p:
            meta = {"distilled": p["type"], **p["distilled"]}
            if p["type"] == "gotcha":
                meta.setdefault("occurrences", [])
            render = gotcha_body if p["type"] == "gotcha" else procedure_body
            pages.append(Page.new(p["title"], p["type"], render(p["title"], meta), extra=meta))
        else:
            pages.append(Page.new(p["title"], p["type"], p["body"]))
    project = resolve_project(repo)
    with Memory(project) as memory:
        memory.store(create=True).write_many(pages, Author.agent("eval"))
        memory.reindex(embed=False)
    return project, repo, {p.title: p.path for p in pages}


def hook(event: str, payload: dict[str, Any]) -> str:
    """The context the hook hands back for one call ("" for none)."""
    from wiki_memory.hook.main import main

    out = io.BytesIO()
    main(["claude-code", event], stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out, env=dict(os.environ))
    text = out.getvalue().decode()
    return json.loads(text)["hookSpecificOutput"]["additionalContext"] if text.strip() else ""


def replay(project_data: dict[str, Any], repo: Path, paths: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for n, event in enumerate(project_data["events"]):
        session = f"{project_data['name']}-{n}"
        cwd = str(repo / event.get("cwd", ""))
        tool_input = {"command": event["command"]}
        if event["kind"] == "command":
            payload = {"session_id": session, "cwd": cwd, "tool_name": "Bash", "tool_input": tool_input}
            text = hook("PreToolUse", {**payload, "hook_event_name": "PreToolUse"})
        else:
            payload = {"session_id": session, "cwd": cwd, "tool_name": "Bash", "tool_input": tool_input}
            payload["error"] = "Exit code 1\n" + event["output"]
            text = hook("PostToolUseFailure", {**payload, "hook_event_name": "PostToolUseFailure"})
        handed = [p for p in paths.values() if f"- {p}:" in text]
        expect = paths[event["expect"]] if event.get("expect") else None
        rows.append(
            {
                "project": project_data["name"],
                "kind": event["kind"],
                "subject": event["command"] if event["kind"] == "command" else event["output"].splitlines()[-1],
                "expect": expect,
                "handed": handed,
                "chars": len(text),
                "right": expect in handed if expect else not handed,
            }
        )
    return rows


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    needed = [r for r in rows if r["expect"]]
    others = [r for r in rows if not r["expect"]]
    sizes = [r["chars"] for r in rows if r["handed"]]
    out: dict[str, Any] = {
        "events": len(rows),
        "right_page": round(sum(r["right"] for r in needed) / max(1, len(needed)), 3),
        "right_page_n": f"{sum(r['right'] for r in needed)}/{len(needed)}",
        "any_page_on_others": round(sum(bool(r["handed"]) for r in others) / max(1, len(others)), 3),
        "any_page_on_others_n": f"{sum(bool(r['handed']) for r in others)}/{len(others)}",
        "only_right_page": round(sum(r["handed"] == [r["expect"]] for r in needed) / max(1, len(needed)), 3),
        "chars_per_injection_mean": round(statistics.mean(sizes)) if sizes else 0,
        "chars_per_injection_max": max(sizes) if sizes else 0,
    }
    for kind in ("command", "error"):
        k_needed = [r for r in needed if r["kind"] == kind]
        k_others = [r for r in others if r["kind"] == kind]
        out[f"{kind}s"] = {
            "right_page": f"{sum(r['right'] for r in k_needed)}/{len(k_needed)}",
            "any_page_on_others": f"{sum(bool(r['handed']) for r in k_others)}/{len(k_others)}",
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="dev")
    parser.add_argument("--verbose", action="store_true", help="list every event that went wrong")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="eval-moment-") as tmp:
        base = Path(tmp)
        os.environ["WIKI_MEMORY_HOME"] = str(base / "home")
        os.environ["WIKI_MEMORY_RECALL"] = "words"  # no helper: commands and errors need none
        for var in ("WIKI_MEMORY_STORE", "WIKI_MEMORY_PROJECT"):
            os.environ.pop(var, None)
        rows: list[dict[str, Any]] = []
        for data in load(args.split):
            _, repo, paths = build(data, base / "code")
            rows += replay(data, repo, paths)
    result = report(rows)
    if args.json:
        print(json.dumps({"split": args.split, **result, "wrong": [r for r in rows if not r["right"]]}, indent=2))
    else:
        print(f"split {args.split}: {result['events']} events")
        print(
            f"  repeated failing commands and recurring errors with the right page: {result['right_page']} "
            f"({result['right_page_n']}; commands {result['commands']['right_page']}, "
            f"errors {result['errors']['right_page']}); the right page alone: {result['only_right_page']}"
        )
        print(
            f"  other commands and errors with any page: {result['any_page_on_others']} "
            f"({result['any_page_on_others_n']}; commands {result['commands']['any_page_on_others']}, "
            f"errors {result['errors']['any_page_on_others']})"
        )
        print(f"  characters per injection: mean {result['chars_per_injection_mean']}, "
              f"max {result['chars_per_injection_max']}")  # fmt: skip
        if args.verbose:
            for r in rows:
                if not r["right"]:
                    print(
                        f"  WRONG {r['project']} {r['kind']}: {r['subject'][:100]!r} "
                        f"expected {r['expect']} got {r['handed']}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
