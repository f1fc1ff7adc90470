#!/usr/bin/env python3
"""Soak: kill -9 writers, consolidation, the MCP server and sync at random points, round
after round, and check that nothing a command reported written is lost and that
`git fsck --strict` stays clean.

Each round runs one operation through the real entry points, in a process of its own:
a CLI `write` (sometimes two at once), a session's hooks and its consolidation, an MCP
`write` over stdio, a `sync` with a bare remote (which another clone pushes to now and
then), or a hand edit and `watch --once`. Half the time the process is killed with SIGKILL
after a random delay within its usual run time. After each round `git fsck --strict` runs
on the wiki (and on the remote after a sync). At the end a last `watch --once`,
`consolidate --pending` and `sync` run unkilled, and every page, prompt and hand edit a
process reported done must be in the wiki's HEAD and the remote's main; no lock or
temporary file may be left. The search index runs on words alone unless `--model`.

Two phases of issue 27 follow the rounds when asked:

- `--forget-rounds N`: a page holding a unique string is written and synced, then
  `forget --string` of it is killed at one of its steps in turn (`WIKI_MEMORY_CRASH_AT`:
  after the new pack, after its journal, after the branch moved, after the other refs,
  after the old objects went, after the remote's lease was recorded, after the index,
  after the local files), and the `sync` its error message recommends runs. The string
  must never be back in the wiki's objects nor pushed to the remote's `main`; after
  `forget` (again, if it was undone) and `sync --replace-remote-history`, it must be gone
  from both, and every page reported written must still be there.
- `--edit-rounds N`: `wiki-memory edit` opens a page in an "editor" (a script) that,
  while it is open, has an agent change the page through the CLI (at the line the person
  changes, or elsewhere), then saves the person's change. Both changes must be in HEAD:
  merged into the page, or the person's kept in a conflict copy beside it.

    python scripts/soak.py --rounds 200 --seed 21
    python scripts/soak.py --rounds 20 --json bench-results/soak.json --keep
    python scripts/soak.py --rounds 0 --forget-rounds 50 --edit-rounds 50
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

OPERATIONS = ("write", "session", "mcp", "sync", "hand")
WRITER_LOCKS = {"wiki-memory.lock", ".create-wiki.lock", "sync.lock", "wiki-memory-push.lock"}


class GitFailed(Exception):
    pass


@dataclass
class Run:
    """One process of a round: killed or not, how it ended, how long it ran."""

    op: str
    killed: bool
    returncode: int | None
    seconds: float
    stdout: str = ""
    stderr: str = ""


@dataclass
class Figures:
    rounds: int = 0
    kills: int = 0
    by_op: Counter[str] = field(default_factory=Counter)
    kills_by_op: Counter[str] = field(default_factory=Counter)
    pages_reported: set[str] = field(default_factory=set)  # tokens
    killed_pages: set[str] = field(default_factory=set)  # tokens of killed writes
    prompts_reported: dict[str, str] = field(default_factory=dict)  # token -> session id
    hand_reported: set[str] = field(default_factory=set)
    remote_pushed: set[str] = field(default_factory=set)  # tokens another clone pushed
    other_push_refused: list[str] = field(default_factory=list)
    fsck_runs: int = 0
    fsck_failures: list[str] = field(default_factory=list)
    unkilled_failures: list[str] = field(default_factory=list)


class Soak:
    def __init__(self, root: Path, seed: int, model: bool) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.code = root / "code"
        self.remote = root / "remote.git"
        self.other = root / "other-machine"
        home = root / "home"
        home.mkdir(parents=True)
        (home / ".gitconfig").write_text("[user]\n\tname = Soak Person\n\temail = soak@example.com\n")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("WIKI_MEMORY_", "CLAUDE_", "GIT_"))}
        self.env.update(HOME=str(home), WIKI_MEMORY_HOME=str(root / "wm-home"), HF_HUB_OFFLINE="1")
        if model and os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH"):
            self.env["WIKI_MEMORY_EMBED_MODEL_PATH"] = os.environ["WIKI_MEMORY_EMBED_MODEL_PATH"]
        else:
            self.env["WIKI_MEMORY_EMBED_MODEL_PATH"] = str(root / "no-model")  # words only
        self.figures = Figures()
        self.durations: dict[str, list[float]] = {op: [] for op in (*OPERATIONS, "consolidate", "hook")}
        self.n = 0

    # Set-up -------------------------------------------------------------------------------

    def git(self, cwd: Path, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise GitFailed(f"git {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def setup(self) -> None:
        self.code.mkdir()
        self.git(self.code, "init", "-q")
        self.git(self.code, "remote", "add", "origin", "git@example.com:soak/widgets.git")
        self.git(self.root, "init", "-q", "--bare", "-b", "main", str(self.remote))
        for args in (("init",), ("remote", "add", "origin", str(self.remote)), ("sync",)):
            run = self.command("setup", args, kill=False)
            if run.returncode != 0:
                raise SystemExit(f"set-up failed: wiki-memory {' '.join(args)}: {run.stderr}")
        self.wiki = Path(self.command("setup", ("path",), kill=False).stdout.strip())
        self.git(self.root, "clone", "-q", str(self.remote), str(self.other))

    def token(self) -> str:
        self.n += 1
        return f"soaktok{self.n:05d}x"

    # Running one process, maybe killing it ------------------------------------------------

    def kill_delay(self, op: str) -> float:
        times = self.durations.get(op) or [1.0]
        return self.rng.uniform(0.0, 1.2 * statistics.median(times[-20:]))

    def spawn(self, args: list[str], stdin: int | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            args,
            cwd=self.code,
            env=self.env,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self, op: str, proc: subprocess.Popen[str], kill: bool, started: float, input: str | None = None) -> Run:
        delay = self.kill_delay(op) if kill else None
        try:
            out, err = proc.communicate(input=input, timeout=delay if delay is not None else 600)
            killed = False
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            killed = True
        seconds = time.monotonic() - started
        if not killed and op in self.durations:
            self.durations[op].append(seconds)
        if killed:
            self.figures.kills += 1
            self.figures.kills_by_op[op] += 1
        return Run(op, killed, proc.returncode, seconds, out, err)

    def command(self, op: str, args: tuple[str, ...], kill: bool, input: str | None = None) -> Run:
        started = time.monotonic()
        proc = self.spawn([sys.executable, "-m", "wiki_memory", *args], stdin=subprocess.PIPE if input else None)
        run = self.finish(op, proc, kill, started, input)
        if not run.killed and run.returncode != 0 and op != "setup":
            self.figures.unkilled_failures.append(f"{op} {' '.join(args)[:60]}: {run.stderr.strip()[-300:]}")
        return run

    def maybe(self) -> bool:
        return self.rng.random() < 0.5

    # The operations ------------------------------------------------------------------------

    def op_write(self) -> None:
        writers = []
        for _ in range(2 if self.rng.random() < 0.25 else 1):
            token = self.token()
            args = ("write", "-t", f"Soak page {token}", "--type", self.rng.choice(("note", "gotcha", "decision")))
            started = time.monotonic()
            proc = self.spawn([sys.executable, "-m", "wiki_memory", *args, "--body", f"Written by the soak: {token}."])
            writers.append((token, args, proc, started))
        for token, args, proc, started in writers:
            run = self.finish("write", proc, self.maybe(), started)
            self.settle(run, token, args)

    def settle(self, run: Run, token: str, args: tuple[str, ...]) -> None:
        if run.killed:
            self.figures.killed_pages.add(token)
        elif run.returncode == 0:
            self.figures.pages_reported.add(token)
        else:
            self.figures.unkilled_failures.append(f"write {token}: {run.stderr.strip()[-300:]}")

    def hook(self, event: str, payload: dict[str, object], kill: bool) -> Run:
        body = json.dumps({"cwd": str(self.code), "hook_event_name": event, **payload})
        return self.command("hook", ("hook", "claude-code", event), kill, input=body)

    def op_session(self) -> None:
        session = f"soak-session-{self.n}"
        token = self.token()
        prompt = self.hook("UserPromptSubmit", {"session_id": session, "prompt": f"Fix the soak {token}"}, self.maybe())
        if not prompt.killed:
            self.figures.prompts_reported[token] = session
        tool = {"tool_name": "Bash", "tool_input": {"command": f"make test-{token}"}, "tool_response": {"stdout": "ok"}}
        self.hook("PostToolUse", {"session_id": session, **tool}, kill=False)
        self.hook("Stop", {"session_id": session, "last_assistant_message": "Done."}, kill=False)
        self.command("consolidate", ("consolidate", "--session", session), self.maybe())

    def op_mcp(self) -> None:
        token = self.token()
        started = time.monotonic()
        proc = self.spawn([sys.executable, "-m", "wiki_memory", "serve"], stdin=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write", "arguments": {
                "title": f"Soak page {token}", "type": "note", "body": f"Written over MCP: {token}."}}},
        ]  # fmt: skip
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        deadline = started + (self.kill_delay("mcp") if self.maybe() else 600)
        answer = None
        buffer = ""
        while answer is None and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, min(0.2, deadline - time.monotonic())))
            if ready:
                line = proc.stdout.readline()
                buffer += line
                if line.strip():
                    message = json.loads(line)
                    if message.get("id") == 2:
                        answer = message
        killed = answer is None and proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
            self.figures.kills += 1
            self.figures.kills_by_op["mcp"] += 1
        else:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        err = proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if answer is not None and not answer.get("result", {}).get("isError") and "error" not in answer:
            self.durations["mcp"].append(time.monotonic() - started)
            self.figures.pages_reported.add(token)
        elif killed:
            self.figures.killed_pages.add(token)
        else:
            self.figures.unkilled_failures.append(f"mcp write {token}: {json.dumps(answer)[:300]} {err[-300:]}")

    def op_sync(self) -> None:
        if self.rng.random() < 0.3:
            self.other_machine_pushes()
        self.command("sync", ("sync",), self.maybe())
        self.fsck(self.remote)

    def other_machine_pushes(self) -> None:
        """Another machine commits a page with git and pushes it. A push git refuses (a
        sync of ours killed mid-push left the remote's ref locked, until our next sync
        removes the lock) is counted, and that machine drops its commit."""
        token = self.token()
        try:
            self.git(self.other, "fetch", "-q", "origin")
            self.git(self.other, "reset", "-q", "--hard", "origin/main")
            notes = self.other / "notes"
            notes.mkdir(exist_ok=True)
            (notes / f"{token}.md").write_text(f"# From the other machine\n\nPushed by git: {token}.\n")
            self.git(self.other, "add", "-A")
            self.git(self.other, "commit", "-q", "-m", f"other machine: {token}")
            self.git(self.other, "push", "-q", "origin", "main")
            self.figures.remote_pushed.add(token)
        except GitFailed as e:
            self.figures.other_push_refused.append(str(e)[-200:])

    def op_hand(self) -> None:
        token = self.token()
        folder = self.wiki / "notes"
        folder.mkdir(exist_ok=True)
        (folder / f"hand-{token}.md").write_text(f"# Hand {token}\n\nWritten by hand: {token}.\n")
        run = self.command("hand", ("watch", "--once"), self.maybe())
        if not run.killed and run.returncode == 0 and f"hand-{token}" in run.stdout:
            self.figures.hand_reported.add(token)

    # Checking ------------------------------------------------------------------------------

    def fsck(self, repo: Path) -> None:
        self.figures.fsck_runs += 1
        result = subprocess.run(["git", "fsck", "--strict"], cwd=repo, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            self.figures.fsck_failures.append(f"{repo.name} round {self.figures.rounds}: {result.stderr.strip()[:300]}")

    def found(self, repo: Path, rev: str, tokens: set[str]) -> set[str]:
        if not tokens:
            return set()
        patterns = self.root / "tokens.txt"
        patterns.write_text("\n".join(sorted(tokens)) + "\n")
        result = subprocess.run(
            ["git", "grep", "-o", "-h", "-F", "-f", str(patterns), rev],
            cwd=repo,
            env=self.env,
            capture_output=True,
            text=True,
        )
        return {line.split(":")[-1] for line in result.stdout.split()} & tokens

    def journal_text(self) -> str:
        return "".join(p.read_text(errors="replace") for p in (self.root / "wm-home").rglob("journal/*.jsonl"))

    def litter(self) -> list[str]:
        found = []
        for top in (self.remote, self.root / "wm-home"):  # (the wiki is in the home)
            for path in top.rglob("*"):
                name = path.name
                if name in WRITER_LOCKS or path.parent.name == "consolidate":
                    continue  # flock files, empty once released (a session's consolidation lock too)
                temporary = name.startswith(("tmp", ".tmp")) or ".wm-tmp-" in name or ".creating-" in name
                if name.endswith(".lock") or temporary:
                    found.append(str(path.relative_to(self.root)))
        return sorted(found)

    # Issue 27: a forget killed at each of its steps; an edit made while an editor is open ----

    FORGET_STEPS = (
        "forget:packed",
        "forget:journal",
        "forget:branch",
        "forget:refs",
        "forget:pruned",
        "forget:remembered",
        "forget:indexed",
        "forget:scrubbed",
    )

    def all_objects(self, repo: Path) -> bytes:
        return subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, env=self.env, capture_output=True
        ).stdout

    def run_forget(self, rounds: int) -> dict[str, object]:
        out: dict[str, object] = {"rounds": rounds, "by_step": Counter(), "undone": 0, "finished": 0}
        back: list[str] = []
        pushed: list[str] = []
        left: list[str] = []
        failures: list[str] = []
        for i in range(rounds):
            step = self.FORGET_STEPS[i % len(self.FORGET_STEPS)]
            out["by_step"][step] += 1  # type: ignore[index]
            token = self.token()
            needle = f"db-{token}.staging.internal"
            write = self.command("forget", ("write", "-t", f"Forget page {token}", "--body", f"Host: {needle}."), False)
            if write.returncode == 0:
                self.figures.pages_reported.add(token)  # its title stays (only the host goes)
            self.command("forget", ("sync",), False)
            remote_before = self.git(self.remote, "rev-parse", "main").strip()
            env = dict(self.env, WIKI_MEMORY_CRASH_AT=step)
            killed = subprocess.run(
                [sys.executable, "-m", "wiki_memory", "forget", "--string", needle],
                cwd=self.code, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            if killed.returncode != 137:
                failures.append(f"{step}: forget was not stopped there ({killed.returncode}: {killed.stderr[-200:]})")
            after = self.command("forget-sync", ("sync",), False)
            self.figures.unkilled_failures = [
                f for f in self.figures.unkilled_failures if not f.startswith("forget-sync")
            ]
            if self.git(self.remote, "rev-parse", "main").strip() != remote_before and needle.encode() in (
                self.git(self.remote, "log", "-p", "main").encode()
            ):
                pushed.append(step)
            undone = after.returncode == 0
            out["undone" if undone else "finished"] += 1  # type: ignore[operator]
            if not undone and needle.encode() in self.all_objects(self.wiki):
                back.append(step)  # the sync brought it back
            if undone:
                self.command("forget", ("forget", "--string", needle), False)
            self.command("forget", ("sync", "--replace-remote-history"), False)
            if needle.encode() in self.all_objects(self.wiki) or needle in self.git(self.remote, "log", "-p", "main"):
                left.append(step)
            self.fsck(self.wiki)
            self.fsck(self.remote)
        out.update(secret_back_after_sync=back, secret_pushed=pushed, secret_left=left, failures=failures)
        out["by_step"] = dict(out["by_step"])  # type: ignore[call-overload]
        return out

    EDITOR = """\
import subprocess, sys
agent_change, old, new, title, path = sys.argv[1:6]
buffer = open(path, encoding="utf-8").read()
change = [sys.executable, "-m", "wiki_memory", "edit", title, "--agent", "codex", *agent_change.split("|")]
done = subprocess.run(change, capture_output=True, text=True)
if done.returncode:
    sys.exit("the agent's edit failed: " + done.stderr)
with open(path, "w", encoding="utf-8") as f:
    f.write(buffer.replace(old, new))
"""

    def run_edits(self, rounds: int) -> dict[str, object]:
        script = self.root / "editor.py"
        script.write_text(self.EDITOR)
        merged = kept_both = 0
        lost: list[str] = []
        for _ in range(rounds):
            token = self.token()
            title = f"Edited page {token}"
            body = f"First line {token}.\n\nMiddle line.\n\nLast line {token}."
            if self.command("edit", ("write", "-t", title, "--body", body), False).returncode != 0:
                continue
            same_line = self.rng.random() < 0.5
            agent_word, person_word = f"agent{token}", f"person{token}"
            agent = (
                f"--find|First line {token}.|--replace|First line {agent_word}."
                if same_line
                else (f"--append|Appended {agent_word}.")
            )
            editor = f"{sys.executable} {script} '{agent}' 'First line {token}.' 'First line {person_word}.' '{title}'"
            run = subprocess.run(
                [sys.executable, "-m", "wiki_memory", "edit", title],
                cwd=self.code, env=dict(self.env, EDITOR=editor), capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            if run.returncode != 0:
                self.figures.unkilled_failures.append(f"edit {token}: {run.stderr.strip()[-900:]}")
                continue
            found = self.found(self.wiki, "HEAD", {agent_word, person_word})
            if found != {agent_word, person_word}:
                lost.append(f"{token}: {sorted({agent_word, person_word} - found)}")
            elif "your version is in" in run.stdout:
                kept_both += 1
            else:
                merged += 1
            self.fsck(self.wiki)
        return {"rounds": rounds, "merged": merged, "kept_both": kept_both, "lost": lost}

    def run(self, rounds: int, forget_rounds: int = 0, edit_rounds: int = 0) -> dict[str, object]:
        started = time.monotonic()
        self.setup()
        for _ in range(rounds):
            op = self.rng.choice(OPERATIONS)
            self.figures.rounds += 1
            self.figures.by_op[op] += 1
            getattr(self, f"op_{op}")()
            self.fsck(self.wiki)
        forgets = self.run_forget(forget_rounds) if forget_rounds else None
        edits = self.run_edits(edit_rounds) if edit_rounds else None
        for args in (("watch", "--once"), ("consolidate", "--pending", "--settle", "0"), ("sync",)):
            self.command("final", args, kill=False)
        self.fsck(self.wiki)
        self.fsck(self.remote)
        f = self.figures
        landed = self.found(self.wiki, "HEAD", f.killed_pages)
        everything = f.pages_reported | set(f.prompts_reported) | f.hand_reported | f.remote_pushed
        in_head = self.found(self.wiki, "HEAD", everything)
        in_remote = self.found(self.remote, "main", everything)
        journals = self.journal_text()
        expected_in_remote = f.pages_reported | f.hand_reported | f.remote_pushed
        return {
            "rounds": f.rounds,
            "seconds": round(time.monotonic() - started, 1),
            "operations": dict(f.by_op),
            "kills": f.kills,
            "kills_by_operation": dict(f.kills_by_op),
            "pages_reported_written": len(f.pages_reported),
            "pages_lost": sorted(f.pages_reported - in_head),
            "pages_missing_from_remote": sorted(expected_in_remote - in_remote),
            "killed_writes": len(f.killed_pages),
            "killed_writes_that_landed": len(landed),
            "prompts_reported_kept": len(f.prompts_reported),
            "prompts_lost_from_journal": sorted(t for t in f.prompts_reported if t not in journals),
            "prompts_missing_from_session_pages": sorted(set(f.prompts_reported) - in_head),
            "hand_edits_reported_committed": len(f.hand_reported),
            "hand_edits_lost": sorted(f.hand_reported - in_head),
            "remote_pages_pushed_elsewhere": len(f.remote_pushed),
            "remote_pages_lost": sorted(f.remote_pushed - in_head),
            "other_machine_pushes_refused": f.other_push_refused,
            "fsck_runs": f.fsck_runs,
            "fsck_failures": f.fsck_failures,
            "unkilled_failures": f.unkilled_failures,
            "litter": self.litter(),
            **({"forget_killed": forgets} if forgets is not None else {}),
            **({"edits_while_open": edits} if edits is not None else {}),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--model", action="store_true", help="Use the embedding model (WIKI_MEMORY_EMBED_MODEL_PATH).")
    parser.add_argument("--forget-rounds", type=int, default=0, help="Forgets killed at each step in turn.")
    parser.add_argument("--edit-rounds", type=int, default=0, help="Edits while an editor has the page open.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder and print where it is.")
    parser.add_argument("--json", type=Path, help="Also write the results to this JSON file.")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wiki-memory-soak-"))
    try:
        results = Soak(root, args.seed, args.model).run(args.rounds, args.forget_rounds, args.edit_rounds)
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    results = {"seed": args.seed, "model": args.model, **results}
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = value if not isinstance(value, list) else (len(value) if not value else value[:5])
        print(f"{key:<{width}}  {shown}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    bad = ("pages_lost", "pages_missing_from_remote", "prompts_lost_from_journal", "prompts_missing_from_session_pages",
           "hand_edits_lost", "remote_pages_lost", "fsck_failures", "unkilled_failures", "litter")  # fmt: skip
    forget = results.get("forget_killed") or {}
    edits = results.get("edits_while_open") or {}
    worse = any(forget.get(k) for k in ("secret_back_after_sync", "secret_pushed", "secret_left", "failures"))  # type: ignore[union-attr]
    sys.exit(1 if any(results[k] for k in bad) or worse or edits.get("lost") else 0)  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
