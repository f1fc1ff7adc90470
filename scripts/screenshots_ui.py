#!/usr/bin/env python3
"""Screenshots of the web viewer's main views, for the README and docs/viewer.md.

Builds a small realistic memory in a temporary folder (the demo's Claude Code session,
consolidated into its session and handoff pages, then decisions, gotchas and procedures
written by agents and by a person, a page marked wrong, a drifted anchor, a broken page and
a sync conflict copy), starts the real `wiki-memory ui`, and drives Debian's Chromium with
Playwright (never a downloaded browser) through each view.

    python scripts/screenshots_ui.py                       # into docs/screenshots/
    python scripts/screenshots_ui.py --out /tmp/shots --keep
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("WIKI_MEMORY_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PAGES = [
    # (title, type, body, tags, agent or None for the person)
    (
        "Retry policy",
        "decision",
        "Retry idempotent HTTP calls twice with jittered backoff (200 ms, then 800 ms), then fail.\n\n"
        "## Why\n\nThree attempts cover the blips we see from the payment gateway; more only piles up load "
        "during an outage. See [[HTTP client timeouts]] and [[Payment webhook double-processing]].\n\n"
        "## Exceptions\n\n- `429 Too Many Requests`: honour `Retry-After` instead.\n- Never retry a `POST` "
        "without an idempotency key.",
        ["http", "reliability"],
        "claude-code",
    ),
    (
        "HTTP client timeouts",
        "fact",
        "Every outbound call goes through `src/http/client.py`, which sets a connect timeout of 2 s and a "
        "read timeout of 10 s. A default timeout of zero means *forever* in the old client: never use it.\n\n"
        "Related: [[Retry policy]].",
        ["http"],
        "codex",
    ),
    (
        "Payment webhook double-processing",
        "gotcha",
        "**Symptom**: a customer is charged twice when the gateway retries a webhook within a second.\n\n"
        "## Cause\n\nThe handler commits the order before it records the event id, so a retry that lands "
        "in between is processed again.\n\n## Fix\n\nRecord the event id first, in the same transaction "
        "(`INSERT ... ON CONFLICT DO NOTHING`), and return 200 for a duplicate. Follows the [[Retry policy]].",
        ["payments", "webhooks"],
        "claude-code",
    ),
    (
        "Release checklist",
        "procedure",
        "1. `make test` on a clean checkout.\n2. Bump the version in `pyproject.toml`.\n3. Tag `vX.Y.Z` and "
        "push the tag; CI publishes.\n4. Watch the error rate for 30 minutes; roll back with "
        "`make rollback` if it doubles.\n\nSee [[Retry policy]] for what a failed deploy's health checks do.",
        ["release"],
        None,
    ),
    (
        "Prefer pytest fixtures over setUp",
        "preference",
        "Write new tests as plain functions with fixtures; keep `unittest.TestCase` only where a test "
        "already uses it. Shared fixtures live in `tests/conftest.py`.",
        ["tests"],
        None,
    ),
    (
        "Cart totals are rounded once",
        "decision",
        "`src/cart.py` rounds the total once, after the discount, to two decimals. Rounding each line "
        "first made totals drift by a cent on large carts (see the session that fixed the discount test). "
        "Related: [[Release checklist]].",
        ["cart"],
        "codex",
    ),
    (
        "The staging database is a nightly copy",
        "fact",
        "Staging is restored from production's backup every night at 02:00 UTC; anything written there "
        "during the day is gone the next morning.",
        ["staging"],
        "codex",
    ),
]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def seed(root: Path) -> tuple[Path, Path]:
    """A memory worth looking at; (the wiki-memory home, the code repository)."""
    from wiki_memory.cli.demo import run_demo
    from wiki_memory.memory import Actor, Memory

    # The person's git identity, for their edits (as a real user's would be).
    os.environ.update(GIT_AUTHOR_NAME="Dana Reyes", GIT_AUTHOR_EMAIL="dana@acme.example")
    result = run_demo(root)
    home, repo = result.home, result.repo
    os.environ["WIKI_MEMORY_HOME"] = str(home)
    with Memory.at(repo) as memory:
        for title, page_type, body, tags, agent in PAGES:
            memory.write(title, body, page_type, tags=tags, actor=Actor(agent, "7f3c2a91e5") if agent else Actor())
        # An anchored page whose code changed since: the panel shows the drift.
        blob = _git(repo, "hash-object", "src/cart.py").strip()
        source = memory.page_source("Cart totals are rounded once")
        anchors = f"anchors:\n- path: src/cart.py\n  blob: {blob}\n- src/cart_api.py\n"
        text = source.text.replace("sources:", anchors + "sources:")
        memory.save_text(source.path, text, base=source.blob)
        (repo / "src" / "cart.py").write_text((repo / "src" / "cart.py").read_text() + "\n# currency: EUR\n")
        # A person's edit through the viewer's own operation, then a verdict.
        source = memory.page_source("Retry policy")
        memory.save_text(source.path, source.text.replace("twice", "twice (three attempts in all)"), base=source.blob)
        memory.edit("The staging database is a nightly copy", "set_status", status="wrong")
        memory.edit("HTTP client timeouts", "set_status", status="stale")
        # What a hand edit and a sync can leave behind.
        (memory.wiki / "notes").mkdir(exist_ok=True)
        (memory.wiki / "notes" / "deploy-notes.md").write_text(
            "---\ntitle: Deploy notes\ntags: [deploy\n---\n# Deploy notes\n\nCanary first, then 25%.\n"
        )
        (memory.wiki / "notes" / "release-checklist.conflict-laptop-2026-11-30.md").write_text(
            "---\ntitle: Release checklist (laptop)\ntype: note\nconflict_of: procedures/release-checklist.md\n---\n"
            "# Release checklist\n\n1. `make test`.\n2. Tag and push.\n"
        )
        memory.commit_hand_edits()
    return home, repo


def start_viewer(home: Path, repo: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "WIKI_MEMORY_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiki_memory", "ui", "--no-open", "--port", "0"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"(http://\S+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"the viewer did not start: {line}{proc.stderr.read() if proc.stderr else ''}")
    return proc, match.group(1)


def shoot(url: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    base = url.split("/?", 1)[0]
    shots = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.goto(url)
        page.wait_for_url(base + "/")

        def take(name: str, target: str, full: bool = False) -> None:
            page.goto(base + target)
            page.wait_for_load_state("networkidle")
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=full)
            shots.append(path)

        take("home", "/")
        take("search", "/search?q=charged+twice+when+the+gateway+retries")
        take("page", "/page/decisions/cart-totals-are-rounded-once.md")
        take("page-wrong", "/page/facts/the-staging-database-is-a-nightly-copy.md")
        take("history", "/history/decisions/retry-policy.md")
        take("handoff", "/handoff")
        take("review", "/review", full=True)
        page.goto(base + "/graph")
        page.wait_for_selector("#graph[data-ready]")
        time.sleep(2.5)  # let the layout settle
        path = out / "graph.png"
        page.screenshot(path=str(path))
        shots.append(path)
        take("edit", "/edit/decisions/retry-policy.md")
        browser.close()
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--keep", action="store_true", help="keep the temporary memory and print where it is")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wiki-memory-shots-"))
    proc = None
    try:
        home, repo = seed(root)
        proc, url = start_viewer(home, repo)
        for path in shoot(url, args.out):
            print(path)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
        if args.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
