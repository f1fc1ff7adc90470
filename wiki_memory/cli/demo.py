"""`wiki-memory demo`: the main job, end to end, in a throwaway home.

A realistic Claude Code session is fed through the real hook entry point (`wiki-memory hook
claude-code EVENT`, one process per event, JSON on stdin, exactly as Claude Code runs it):
the user asks for a fix, a test fails, a file is edited, the test passes, a second test
still fails, a plan item is left pending, the session ends. Its SessionEnd hook starts
consolidation in the background, as in real use. Then Codex starts in the same directory:
its SessionStart hook (`wiki-memory hook codex SessionStart`) prints what Codex receives.
Nothing outside the temporary folder is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiki_memory.config import resolve_project
from wiki_memory.memory import state_dir

CART = '''"""The shopping cart."""


def total(items, discount=0.0):
    """Sum of price * quantity, with a fractional discount."""
    subtotal = sum(item["price"] * item["qty"] for item in items)
    return round(subtotal * (1 - discount), 2)
'''
TEST_CART = """from src.cart import total


def test_total_with_discount():
    assert total([{"price": 10.0, "qty": 3}], discount=0.1) == 27.0
"""


@dataclass
class DemoResult:
    home: Path
    repo: Path
    claude_session: str
    codex_session: str
    hook_calls: int
    consolidated_in: float | None
    envelope: dict[str, Any] | None
    pages: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def context(self) -> str:
        if not self.envelope:
            return ""
        return str((self.envelope.get("hookSpecificOutput") or {}).get("additionalContext") or "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "home": str(self.home),
            "repo": str(self.repo),
            "claude_session": self.claude_session,
            "codex_session": self.codex_session,
            "hook_calls": self.hook_calls,
            "consolidated_in_seconds": self.consolidated_in,
            "pages": self.pages,
            "codex_receives": self.envelope,
            "wiki_log": self.log,
        }


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _make_repo(root: Path) -> Path:
    repo = root / "acme-shop"
    (repo / "src").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "__init__.py").write_text("")
    (repo / "src" / "cart.py").write_text(CART)
    (repo / "tests" / "test_cart.py").write_text(TEST_CART)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Demo",
        "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "Demo",
        "GIT_COMMITTER_EMAIL": "demo@example.com",
    }
    for args in (
        ["init", "-q"],
        ["checkout", "-q", "-b", "fix/cart-discount"],
        ["add", "-A"],
        ["commit", "-q", "-m", "cart"],
    ):
        subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return repo


MODEL = "claude-sonnet-4-5"


def claude_session_events(repo: Path, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The hook payloads of a Claude Code session (as Claude Code 2.1 sends them)."""
    base = {
        "session_id": session_id,
        "cwd": str(repo),
        "permission_mode": "default",
        "transcript_path": str(repo.parent / ".claude-transcript-not-kept.jsonl"),
    }
    prompt = (
        "The cart total is off by a cent when a discount applies (test_total_with_discount fails). Fix it, "
        "and apply the same fix to the checkout totals."
    )
    answer = (
        "Fixed the cart total: it now rounds in cents with Decimal, and test_total_with_discount passes.\n\n"
        "Next steps:\n- The checkout totals (src/checkout.py) need the same rounding; tests/test_checkout.py "
        "does not exist yet.\n\nShould checkout round per line or on the total?"
    )
    return [
        (
            "SessionStart",
            {**base, "hook_event_name": "SessionStart", "source": "startup", "model": "claude-sonnet-4-5"},
        ),
        ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        *_tool_calls(base, str(repo / "src" / "cart.py")),
        ("Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": answer}),
        ("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}),
    ]


def _tool_calls(base: dict[str, Any], cart: str) -> list[tuple[str, dict[str, Any]]]:
    """The session's tool calls: a test fails, a plan, an edit, the test passes, another fails."""

    def tool(
        name: str, tool_input: dict[str, Any], response: Any, n: int, failure: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        event = "PostToolUseFailure" if failure else "PostToolUse"
        payload = {
            **base,
            "hook_event_name": event,
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_demo_{n:02d}",
            "duration_ms": 240,
        }
        if failure:
            payload.update(error=failure, is_interrupt=False)
        else:
            payload["tool_response"] = response
        return event, payload

    pytest_fail = (
        "Exit code 1\n============ FAILURES ============\n___ test_total_with_discount ___\n"
        "E       assert 27.000000000000004 == 27.0\nFAILED tests/test_cart.py::test_total_with_discount\n"
        "1 failed in 0.03s"
    )
    return [
        tool("Read", {"file_path": cart}, {"type": "text", "file": {"filePath": cart, "numLines": 7}}, 1),
        tool(
            "Bash",
            {"command": "python -m pytest tests/test_cart.py -q", "description": "Run the cart tests"},
            None,
            2,
            failure=pytest_fail,
        ),
        tool(
            "TaskCreate",
            {"subject": "Round the cart total in cents", "description": "use Decimal"},
            {"task": {"id": "1", "subject": "Round the cart total in cents"}},
            3,
        ),
        tool(
            "TaskCreate",
            {"subject": "Apply the same rounding to checkout totals (src/checkout.py)", "description": "same bug"},
            {"task": {"id": "2", "subject": "Apply the same rounding to checkout totals (src/checkout.py)"}},
            4,
        ),
        tool(
            "Edit",
            {
                "file_path": cart,
                "old_string": "round(subtotal * (1 - discount), 2)",
                "new_string": "float((Decimal(str(subtotal)) * (1 - Decimal(str(discount))))"
                ".quantize(Decimal('0.01')))",
            },
            {"filePath": cart, "structuredPatch": []},
            5,
        ),
        tool(
            "Bash",
            {"command": "python -m pytest tests/test_cart.py -q"},
            {"stdout": "1 passed in 0.02s", "stderr": "", "interrupted": False},
            6,
        ),
        tool(
            "TaskUpdate",
            {"taskId": "1", "status": "completed"},
            {"success": True, "taskId": "1", "statusChange": {"from": "pending", "to": "completed"}},
            7,
        ),
        tool(
            "Bash",
            {"command": "python -m pytest tests/test_checkout.py -q"},
            None,
            8,
            failure="Exit code 4\nERROR: file or directory not found: tests/test_checkout.py",
        ),
    ]


def _hook(agent: str, event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "hook", agent, event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    if result.returncode != 0:
        raise RuntimeError(f"wiki-memory hook {agent} {event} exited {result.returncode}: {result.stderr[-500:]}")
    return result.stdout


def run_demo(root: Path, *, say: Callable[[str], None] = lambda line: None, wait: float = 60.0) -> DemoResult:
    """Run the demo in `root` (a fresh folder); see the module docstring."""
    home = root / "wiki-memory-home"
    repo = _make_repo(root)
    # No repository state at SessionStart: the demo's folder is gone before that background step ends.
    env = {**os.environ, "WIKI_MEMORY_HOME": str(home), "WIKI_MEMORY_REPO_STATE": "0"}
    for key in ("WIKI_MEMORY_STORE", "WIKI_MEMORY_PROJECT"):
        env.pop(key, None)
    claude_id, codex_id = str(uuid.uuid4()), str(uuid.uuid4())
    events = claude_session_events(repo, claude_id)
    say(f"1. A Claude Code session in {repo} ({claude_id[:8]}), fed through `wiki-memory hook claude-code EVENT`:")
    for event, payload in events:
        _hook("claude-code", event, payload, env, repo)
        detail = payload.get("tool_name") or payload.get("prompt", "")[:60] or payload.get("reason") or ""
        say(f"   {event:<20} {detail}")

    # SessionEnd started `wiki-memory consolidate --session` in the background: wait for it.

    os.environ["WIKI_MEMORY_HOME"] = str(home)
    project = resolve_project(repo)
    state = state_dir(project) / f"{claude_id}.json"
    started = time.monotonic()
    while not state.exists() and time.monotonic() - started < wait:
        time.sleep(0.05)
    consolidated = round(time.monotonic() - started, 2) if state.exists() else None
    pages: list[str] = []
    if consolidated is not None:
        pages = list(json.loads(state.read_text()).get("pages") or [])
        say(f"2. SessionEnd consolidated it in the background ({consolidated:.1f} s after the hook returned):")
        for page in pages:
            say(f"   {page}")
    else:
        say("2. The background consolidation has not finished; Codex gets a summary made on the spot.")

    say(f"3. Codex starts in the same directory ({codex_id[:8]}): `wiki-memory hook codex SessionStart` prints")
    output = _hook(
        "codex",
        "SessionStart",
        {
            "session_id": codex_id,
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "model": "gpt-5.5",
            "permission_mode": "default",
            "source": "startup",
            "transcript_path": None,
        },
        env,
        repo,
    )
    envelope = json.loads(output) if output.strip() else None
    log = _git(project.wiki, "log", "--format=%h %an: %s").splitlines() if (project.wiki / ".git").is_dir() else []
    return DemoResult(home, repo, claude_id, codex_id, len(events) + 1, consolidated, envelope, pages, log)


def demo(keep: bool = False, say: Callable[[str], None] = print) -> DemoResult:
    root = Path(tempfile.mkdtemp(prefix="wiki-memory-demo-"))
    previous = os.environ.get("WIKI_MEMORY_HOME")
    try:
        return run_demo(root, say=say)
    finally:
        if previous is None:
            os.environ.pop("WIKI_MEMORY_HOME", None)
        else:
            os.environ["WIKI_MEMORY_HOME"] = previous
        if not keep:
            # Why: SessionEnd's worker goes on after the state file appears (distillation, its
            # log line), and Codex's SessionStart may start another; removing the folder under
            # them lets a late write make the home anew. Wait for them, then remove.
            wait_for_workers(root)
            shutil.rmtree(root, ignore_errors=True)


def wait_for_workers(root: Path, timeout: float = 60.0) -> None:
    """Until no background worker (`python -m wiki_memory.hook.worker`) serving a home inside
    `root` runs, at most `timeout` seconds. Workers are found by their command line, which
    names their project's home; where /proc is not there to read, this returns at once."""
    needle = str(root)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _workers_under(needle):
        time.sleep(0.05)


def _workers_under(needle: str) -> bool:
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        words = [a.decode("utf-8", "replace") for a in argv]
        if "wiki_memory.hook.worker" in words and any(needle in w for w in words):
            return True
    return False
