#!/usr/bin/env python3
"""Evaluation: knowledge that stays true, through the real hook entry points.

Three sessions over a small code project, each a sequence of fresh `wiki-memory hook AGENT
EVENT` processes fed the payloads Claude Code and Codex send (the files really change on
disk; the commands' outputs are given), each ending in the background consolidation the
SessionEnd hook starts:

1. claude-code: the user picks SQLite; `uv run pytest -q` fails with KeyError
   'SHOP_DB_URL', src/config.py is fixed, the tests pass.
2. codex: the user reverses the decision (Postgres, not SQLite); the same KeyError comes
   back after an edit, is fixed again, the tests pass.
3. claude-code: the test command changes to `make test`.
Then a person edits src/config.py by hand.

After each step it prints what a starting session is handed (SessionStart), what `search`
and `review` return, and checks: the reversed decision is superseded and never handed out;
one gotcha page for the repeated failure, with two occurrences; the procedure page holds
the current command; the pages anchored to the edited file are flagged, the others not.

    python scripts/eval_lifecycle.py
    python scripts/eval_lifecycle.py --json bench-results/lifecycle.json --quiet
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "wiki-memory"
HOOK = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "wiki_memory"]
GOTCHA = "gotchas/keyerror-shop-db-url-when-running-the-tests.md"
PROCEDURE = "procedures/how-to-run-the-tests.md"
OLD_DECISION = "decisions/lets-go-with-sqlite-for-the-database.md"
NEW_DECISION = "decisions/we-use-postgres-for-the-database-not-sqlite.md"


class Eval:
    def __init__(self, base: Path, quiet: bool) -> None:
        self.base = base
        self.quiet = quiet
        self.code = base / "shop"
        self.env = {
            **os.environ,
            "HOME": str(base / "home"),
            "WIKI_MEMORY_HOME": str(base / "wm-home"),
            "GIT_AUTHOR_NAME": "Pat Person",
            "GIT_AUTHOR_EMAIL": "pat@example.com",
            "GIT_COMMITTER_NAME": "Pat Person",
            "GIT_COMMITTER_EMAIL": "pat@example.com",
        }
        self.checks: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []

    # The project and the hooks --------------------------------------------------------------

    def setup(self) -> None:
        (self.base / "home").mkdir()
        (self.code / "src").mkdir(parents=True)
        (self.code / "tests").mkdir()
        (self.code / "src" / "config.py").write_text("import os\n\nDB_URL = os.environ['SHOP_DB_URL']\n")
        (self.code / "src" / "orders.py").write_text("def list_orders(db):\n    return db.all('orders')\n")
        (self.code / "tests" / "test_orders.py").write_text("def test_orders():\n    assert True\n")
        self.git("init", "-q", "-b", "main")
        self.git("add", ".")
        self.git("commit", "-qm", "shop: first cut")

    def git(self, *args: str, cwd: Path | None = None) -> str:
        result = subprocess.run(["git", *args], cwd=cwd or self.code, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {result.stderr}")
        return result.stdout

    def wm(self, *args: str) -> str:
        result = subprocess.run([*HOOK, *args], cwd=self.code, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"wiki-memory {' '.join(args)}: {result.stderr}")
        return result.stdout

    def hook(self, agent: str, event: str, payload: dict[str, Any]) -> str:
        base = {"cwd": str(self.code), "hook_event_name": event, "transcript_path": str(self.base / "none.jsonl")}
        result = subprocess.run(
            [*HOOK, "hook", agent, event],
            input=json.dumps({**base, **payload}).encode(),
            cwd=self.code,
            env=self.env,
            capture_output=True,
            timeout=60,
        )
        return result.stdout.decode()

    def session_start(self, agent: str, session: str) -> str:
        out = self.hook(agent, "SessionStart", {"session_id": session, "source": "startup"})
        if not out.strip():
            return ""
        envelope = json.loads(out)
        return str(envelope.get("hookSpecificOutput", {}).get("additionalContext") or "")

    def wait_distilled(self, session: str, timeout: float = 120) -> None:
        log = self.base / "wm-home" / "logs" / "consolidate.log"
        deadline = time.time() + timeout
        while time.time() < deadline:
            if log.exists() and f"session {session}: distilled" in log.read_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"session {session} was never distilled:\n{log.read_text() if log.exists() else ''}")

    # Claude Code and Codex, as their hooks send it ----------------------------------------------

    def claude_bash(self, session: str, command: str, output: str, *, ok: bool) -> None:
        if ok:
            self.hook(
                "claude-code",
                "PostToolUse",
                {"session_id": session, "tool_name": "Bash", "tool_input": {"command": command},
                 "tool_response": {"stdout": output, "stderr": "", "interrupted": False}},
            )  # fmt: skip
        else:
            self.hook(
                "claude-code",
                "PostToolUseFailure",
                {"session_id": session, "tool_name": "Bash", "tool_input": {"command": command},
                 "error": f"Exit code 1\n{output}"},
            )  # fmt: skip

    def claude_edit(self, session: str, rel: str, old: str, new: str) -> None:
        path = self.code / rel
        path.write_text(path.read_text().replace(old, new))
        self.hook(
            "claude-code",
            "PostToolUse",
            {"session_id": session, "tool_name": "Edit",
             "tool_input": {"file_path": str(path), "old_string": old, "new_string": new},
             "tool_response": {"filePath": str(path), "oldString": old, "newString": new}},
        )  # fmt: skip

    def codex_bash(self, session: str, command: str, output: str, code: int) -> None:
        self.hook(
            "codex",
            "PostToolUse",
            {"session_id": session, "tool_name": "Bash", "tool_input": {"command": command},
             "tool_response": f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{output}"},
        )  # fmt: skip

    def codex_patch(self, session: str, rel: str, old: str, new: str) -> None:
        path = self.code / rel
        path.write_text(path.read_text().replace(old, new))
        patch = f"*** Begin Patch\n*** Update File: {rel}\n-{old}\n+{new}\n*** End Patch\n"
        self.hook(
            "codex",
            "PostToolUse",
            {"session_id": session, "tool_name": "apply_patch", "tool_input": {"command": patch},
             "tool_response": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"
             f"M {rel}\n"},
        )  # fmt: skip

    def say(self, agent: str, session: str, event: str, **payload: Any) -> None:
        self.hook(agent, event, {"session_id": session, **payload})

    # What an agent is handed, found and asked to review ---------------------------------------

    def look(self, label: str) -> dict[str, Any]:
        start = self.session_start("codex", f"probe-{len(self.steps)}")
        search = json.loads(self.wm("search", "SHOP_DB_URL KeyError tests database", "--json", "-k", "6"))
        database = json.loads(self.wm("search", "which database do we use", "--json", "-k", "5"))
        review = json.loads(self.wm("review", "--json"))
        step = {"label": label, "session_start": start, "search": search, "database": database, "review": review}
        self.steps.append(step)
        if not self.quiet:
            print(f"\n=== after {label} ===")
            print("--- SessionStart hands out:")
            print(start or "(nothing)")
            print("--- search 'SHOP_DB_URL KeyError tests database':")
            for r in search:
                print(f"  {r['path']} [{r['status']}]" + (f"  {r['drift']}" if r.get("drift") else ""))
            print("--- search 'which database do we use':")
            for r in database:
                print(f"  {r['path']} [{r['status']}]")
            print("--- review:")
            for item in review["items"]:
                print(f"  [{item['kind']}] {item['message']}\n     -> {item['command']}")
            if not review["items"]:
                print("  (nothing)")
        return step

    def page(self, rel: str) -> dict[str, Any]:
        from wiki_memory.pages import parse_page

        wiki = Path(json.loads(self.wm("path", "--json"))["wiki"])
        path = wiki / rel
        if not path.exists():
            return {}
        found = parse_page(path.read_text(), rel)
        return {"meta": dict(found.meta), "body": found.body}

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append({"check": name, "ok": bool(ok), "detail": detail})
        if not self.quiet:
            print(f"  {'PASS' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail and not ok else ""))


def run(ev: Eval) -> None:
    ev.setup()
    session_one(ev)
    session_two(ev)
    session_three(ev)
    hand_edit(ev)


def session_one(ev: Eval) -> None:
    """claude-code: the user picks SQLite; a KeyError fixed by an edit; the tests pass."""
    s1 = "c1a0de00-0000-4000-8000-000000000001"
    ev.session_start("claude-code", s1)
    ev.say("claude-code", s1, "UserPromptSubmit", prompt="Build the orders API. Let's go with SQLite for the database.")
    ev.claude_bash(s1, "uv run pytest -q", "E   KeyError: 'SHOP_DB_URL'\n1 failed in 0.12s", ok=False)
    ev.claude_edit(
        s1, "src/config.py", "os.environ['SHOP_DB_URL']", "os.environ.get('SHOP_DB_URL', 'sqlite:///shop.db')"
    )
    ev.say("claude-code", s1, "Stop", last_assistant_message=(
        "The tests failed because SHOP_DB_URL was not set in the test run; src/config.py now falls back to a local "
        "SQLite file. Running the tests again."))  # fmt: skip
    ev.claude_bash(s1, "uv run pytest -q", "6 passed in 0.20s", ok=True)
    ev.say("claude-code", s1, "Stop", last_assistant_message="The orders API is in place and the tests pass.")
    ev.say("claude-code", s1, "SessionEnd", reason="prompt_input_exit")
    ev.wait_distilled(s1)
    first = ev.look("session 1 (claude-code)")
    ev.check("session 1: the failure fixed by an edit is one gotcha page", bool(ev.page(GOTCHA)))
    ev.check(
        "session 1: the test command that worked is the procedure",
        ev.page(PROCEDURE).get("body", "").splitlines()[2:3] == ["Run `uv run pytest -q` in `.`."],
    )
    ev.check(
        "session 1: the user's decision is a page", ev.page(OLD_DECISION).get("meta", {}).get("status") == "active"
    )
    ev.check("session 1: the gotcha is handed to the next session", GOTCHA in first["session_start"])


def session_two(ev: Eval) -> None:
    """codex: the decision reversed; the same KeyError again, fixed again."""
    s2 = "019ad1c0-0000-7000-8000-0000000000c2"
    handed = ev.session_start("codex", s2)
    ev.check("session 2: codex is handed the gotcha before it hits the error", GOTCHA in handed)
    ev.say(
        "codex",
        s2,
        "UserPromptSubmit",
        prompt="Actually we use Postgres for the database, not SQLite. Switch the store.",
    )
    ev.codex_patch(
        s2, "src/config.py", "os.environ.get('SHOP_DB_URL', 'sqlite:///shop.db')", "os.environ['SHOP_DB_URL']"
    )
    ev.codex_bash(s2, "uv run pytest -q", "E   KeyError: 'SHOP_DB_URL'\n1 failed in 0.31s", 1)
    ev.codex_patch(
        s2, "src/config.py", "os.environ['SHOP_DB_URL']", "os.environ.get('SHOP_DB_URL', 'postgresql://localhost/shop')"
    )
    ev.codex_bash(s2, "uv run pytest -q", "6 passed in 0.22s", 0)
    ev.say(
        "codex", s2, "Stop", last_assistant_message="Switched to Postgres; SHOP_DB_URL defaults to the local server."
    )
    ev.say("codex", s2, "SessionEnd", reason="exit")
    ev.wait_distilled(s2)
    second = ev.look("session 2 (codex)")
    old, new, gotcha = ev.page(OLD_DECISION)["meta"], ev.page(NEW_DECISION).get("meta", {}), ev.page(GOTCHA)["meta"]
    replaced = old.get("status") == "superseded" and old.get("superseded_by") == NEW_DECISION
    ev.check("session 2: the reversed decision is superseded by the new one", replaced, str(old.get("status")))
    ev.check("session 2: the new decision names what it replaced", new.get("supersedes") == [OLD_DECISION])
    ev.check("session 2: the superseded decision is not handed out", OLD_DECISION not in second["session_start"])
    ev.check(
        "session 2: default search does not return it", OLD_DECISION not in [r["path"] for r in second["database"]]
    )
    ev.check(
        "session 2: default search returns the new decision", NEW_DECISION in [r["path"] for r in second["database"]]
    )
    wiki = Path(json.loads(ev.wm("path", "--json"))["wiki"])
    gotchas = sorted(p.name for p in (wiki / "gotchas").glob("*.md"))
    ev.check("session 2: still one gotcha page", gotchas == [Path(GOTCHA).name], ", ".join(gotchas))
    ev.check(
        "session 2: the gotcha has two occurrences",
        gotcha.get("evidence") == 2 and len(gotcha.get("occurrences", [])) == 2,
    )
    ev.check(
        "session 2: ... from both agents",
        [s.split(":")[0] for s in gotcha.get("sources", [])] == ["claude-code", "codex"],
    )
    found = ev.wm("search", "go with SQLite for the database", "--status", "superseded", "--json")
    ev.check("session 2: search still finds it when asked", OLD_DECISION in found)


def session_three(ev: Eval) -> None:
    """claude-code: the test command changes to `make test`."""
    s3 = "d3e5a1f0-0000-4000-8000-000000000003"
    ev.session_start("claude-code", s3)
    ev.say("claude-code", s3, "UserPromptSubmit", prompt="Add a Makefile target for the tests.")
    (ev.code / "Makefile").write_text("test:\n\tuv run pytest -q\n")
    ev.hook("claude-code", "PostToolUse", {"session_id": s3, "tool_name": "Write",
            "tool_input": {"file_path": str(ev.code / "Makefile"), "content": "test:\n"},
            "tool_response": {"type": "create", "filePath": str(ev.code / "Makefile")}})  # fmt: skip
    ev.claude_bash(s3, "make test", "uv run pytest -q\n6 passed in 0.21s", ok=True)
    ev.say("claude-code", s3, "Stop", last_assistant_message="`make test` runs the suite now.")
    ev.say("claude-code", s3, "SessionEnd", reason="prompt_input_exit")
    ev.wait_distilled(s3)
    third = ev.look("session 3 (claude-code)")
    procedure = ev.page(PROCEDURE)
    first_line = procedure["body"].splitlines()[2]
    ev.check("session 3: the procedure page holds the current command first", first_line == "Run `make test` in `.`.")
    ev.check("session 3: ... and keeps the one that worked before",
             [c["command"] for c in procedure["meta"]["commands"]] == ["make test", "uv run pytest -q"])  # fmt: skip
    ev.check("session 3: SessionStart hands out the current command", "Run `make test`" in third["session_start"])


def hand_edit(ev: Eval) -> None:
    """A person edits the file the gotcha is anchored to; another page anchored elsewhere."""
    ev.wm(
        "write",
        "-t",
        "Orders are listed from the orders table",
        "--type",
        "fact",
        "--body",
        "list_orders reads the table.",
    )
    ev.wm("anchor", "Orders are listed from the orders table", "src/orders.py")
    config = ev.code / "src" / "config.py"
    config.write_text(config.read_text() + "POOL_SIZE = 5\n")
    fourth = ev.look("a hand edit of src/config.py")
    note = "may be stale (src/config.py changed since)"
    drift = [i for i in fourth["review"]["items"] if i["kind"] == "drift"]
    ev.check(
        "hand edit: SessionStart flags the gotcha",
        f"{GOTCHA}): " in fourth["session_start"] and note in fourth["session_start"],
    )
    ev.check(
        "hand edit: search flags it", any(r["path"] == GOTCHA and r.get("drift") == note for r in fourth["search"])
    )
    listed = [i["paths"] for i in drift] == [[GOTCHA]]
    ev.check(
        "hand edit: review lists it with its command",
        listed and drift[0]["command"].startswith(f"wiki-memory mark {GOTCHA} "),
    )
    ev.check("hand edit: the page anchored to the untouched file is not flagged",
             "facts/orders-are-listed-from-the-orders-table.md" not in json.dumps(drift))  # fmt: skip
    ev.wm("mark", GOTCHA, "active", "--reason", "checked: POOL_SIZE does not touch SHOP_DB_URL")
    ev.check("hand edit: marked active (checked), it is no longer flagged",
             not [i for i in json.loads(ev.wm("review", "--json"))["items"] if i["kind"] == "drift"])  # fmt: skip
    wiki = Path(json.loads(ev.wm("path", "--json"))["wiki"])
    log = ev.git("log", "--format=%an|%s", cwd=wiki)
    ev.check("every change is a commit by its author",
             "Pat Person|mark: active gotchas/keyerror-shop-db-url-when-running-the-tests" in log
             and "codex|supersede: decisions/lets-go-with-sqlite-for-the-database by" in log, "")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="Write the steps and checks as JSON.")
    parser.add_argument("--quiet", action="store_true", help="Print the checks' summary only.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary project and wiki.")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "scripts"))
    from evalkit import setup_model_env

    setup_model_env()
    base = Path(tempfile.mkdtemp(prefix="wm-eval-lifecycle-"))
    ev = Eval(base, args.quiet)
    started = time.monotonic()
    try:
        run(ev)
    finally:
        passed = sum(c["ok"] for c in ev.checks)
        took, load = time.monotonic() - started, os.getloadavg()[0]
        print(f"\n{passed}/{len(ev.checks)} checks passed in {took:.1f} s (load {load:.1f})")
        for c in ev.checks:
            if not c["ok"]:
                print(f"  FAILED: {c['check']} {c['detail']}")
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps({"checks": ev.checks, "steps": ev.steps}, indent=1))
        if args.keep:
            print(f"kept: {base}")
        else:
            import shutil

            shutil.rmtree(base, ignore_errors=True)
    sys.exit(0 if ev.checks and all(c["ok"] for c in ev.checks) else 1)


if __name__ == "__main__":
    main()
