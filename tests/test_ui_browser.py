"""The real `wiki-memory ui` in a real browser: Debian's Chromium, headless, driven by
Playwright through `executable_path` (Playwright's own browsers are never downloaded).

A person opens the address with its token, searches, opens a result, follows a [[link]],
edits the page (the commit is theirs in `git log`), reads its history with the diff in
colour, reverts a commit, marks a page wrong and sees it flagged, and clicks through the
graph; a browser without the token, a foreign Host and a POST without the CSRF token are
refused. A screenshot of each view is saved."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.memory import Actor, Memory

CHROMIUM = os.environ.get("WIKI_MEMORY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
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
CODEX = Actor("codex", "9c1d2e3f")


@pytest.fixture(scope="module")
def chromium_path() -> str:
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: these tests drive the system's browser (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture
def wiki(code_repo) -> Iterator[Memory]:
    with Memory.at(code_repo) as memory:
        memory.write(
            "Celery eager mode hides the broker",
            "**Symptom**: tests pass locally and the worker never runs in staging.\n\n"
            "## Fix\n\nTurn `CELERY_TASK_ALWAYS_EAGER` off in CI; see [[Worker deploy procedure]].",
            "gotcha",
            tags=["celery"],
            actor=CODEX,
        )
        memory.write(
            "Worker deploy procedure",
            "1. Drain the queue.\n2. Deploy the workers.\n3. Check the broker has consumers.",
            "procedure",
            actor=CODEX,
        )
        memory.write("Staging resets nightly", "Staging is restored from production every night.", "fact")
        yield memory


@pytest.fixture
def viewer(wiki, code_repo) -> Iterator[tuple[str, str]]:
    """The real command, as a person starts it; (its address with the token, its base)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiki_memory", "ui", "--no-open", "--port", "0"],
        cwd=code_repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([\w-]+)", line)
        assert match, f"no address in {line!r}: {proc.stderr.read() if proc.stderr else ''}"
        yield match.group(0), match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.fixture
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, args=FLAGS)
        yield browser
        browser.close()


def _log(wiki: Memory, fmt: str = "%an|%s") -> str:
    return git(wiki.wiki, "log", "-1", f"--format={fmt}").strip()


def test_a_person_browses_edits_reverts_and_marks_memory(browser, viewer, wiki, tmp_path):
    url, base = viewer
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    shots = tmp_path / "shots"

    def shot(name: str) -> None:
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    # The address with the token: the cookie is set, and the token leaves the address bar.
    page.goto(url)
    page.wait_for_url(base + "/")
    assert "token" not in page.url
    assert page.locator("h1", has_text="Activity").is_visible()
    assert page.locator(".event").count() == 4  # init, and three pages
    shot("home")

    # Search from the box at the top, then open the first result.
    page.fill("#quick-search", "tests pass locally but the worker never runs")
    page.press("#quick-search", "Enter")
    page.wait_for_url(re.compile(r"/search\?q="))
    first = page.locator(".result").first
    assert first.locator(".title").inner_text() == "Celery eager mode hides the broker"
    assert first.locator("mark").count() >= 2
    shot("search")
    first.locator(".title").click()
    page.wait_for_url(base + "/page/gotchas/celery-eager-mode-hides-the-broker.md")
    assert page.locator(".panel .b-type-gotcha").inner_text() == "gotcha"
    shot("page")

    # Follow the [[link]] in the page's text.
    page.locator("article a.wikilink", has_text="Worker deploy procedure").click()
    page.wait_for_url(base + "/page/procedures/worker-deploy-procedure.md")
    assert page.locator(".panel .links a", has_text="gotchas/celery-eager-mode-hides-the-broker.md").is_visible()

    # Edit it: the commit is the person's.
    page.locator(".panel-actions a", has_text="Edit").click()
    page.wait_for_url(base + "/edit/procedures/worker-deploy-procedure.md")
    area = page.locator("textarea[name=text]")
    area.fill(area.input_value().replace("3. Check the broker has consumers.", "3. Check the broker has 4 consumers."))
    shot("edit")
    page.locator("button", has_text="Save and commit").click()
    page.wait_for_url(re.compile(r"/page/procedures/worker-deploy-procedure\.md\?committed=[0-9a-f]{40}"))
    edit_commit = page.url.rsplit("=", 1)[1]
    assert page.locator(".flash").inner_text().startswith("Committed " + edit_commit[:8])
    assert _log(wiki) == "Test Person|edit: procedures/worker-deploy-procedure.md"
    assert git(wiki.wiki, "rev-parse", "HEAD").strip() == edit_commit
    assert "Check the broker has 4 consumers." in page.locator("article").inner_text()

    # Its history: the diff, in colour.
    page.locator(".panel-actions a", has_text="History").click()
    page.wait_for_url(base + "/history/procedures/worker-deploy-procedure.md")
    added = page.locator("pre.diff .add", has_text="+3. Check the broker has 4 consumers.")
    removed = page.locator("pre.diff .del", has_text="-3. Check the broker has consumers.")
    assert added.count() == 1 and removed.count() == 1
    green = added.evaluate("e => getComputedStyle(e).backgroundColor")
    red = removed.evaluate("e => getComputedStyle(e).backgroundColor")
    assert green != red and "rgba(0, 0, 0, 0)" not in (green, red)
    shot("history")

    # Revert the edit (the page asks first).
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(".commit-block").first.locator("button", has_text="Revert").click()
    page.wait_for_url(re.compile(r"/commit/[0-9a-f]{40}\?reverted=" + edit_commit))
    assert page.locator(".flash").inner_text().startswith("Reverted " + edit_commit[:8])
    assert _log(wiki) == "Test Person|revert: edit: procedures/worker-deploy-procedure.md"
    text = (wiki.wiki / "procedures" / "worker-deploy-procedure.md").read_text()
    assert "3. Check the broker has consumers." in text and "4 consumers" not in text
    shot("commit")

    # Mark a page wrong: it is flagged, in the page, in search and in the review list.
    page.goto(base + "/page/facts/staging-resets-nightly.md")
    page.locator("button", has_text="Mark wrong").click()
    page.wait_for_url(re.compile(r"/page/facts/staging-resets-nightly\.md\?committed="))
    assert "Marked wrong" in page.locator(".flag").inner_text()
    assert _log(wiki) == "Test Person|update: facts/staging-resets-nightly (set_status)"
    assert wiki.read("Staging resets nightly").page.status == "wrong"
    page.goto(base + "/search?q=staging+restored+every+night")
    assert page.locator(".result.retired .b-status-wrong").first.inner_text() == "wrong"
    page.goto(base + "/review")
    assert page.locator(".review-item", has_text="Staging resets nightly").is_visible()
    shot("review")

    page.goto(base + "/handoff")
    assert page.locator("h1").inner_text() == "What the next agent is handed"
    shot("handoff")
    assert not errors, errors
    assert sorted(p.name for p in shots.iterdir()) == [
        "commit.png", "edit.png", "handoff.png", "history.png", "home.png", "page.png", "review.png", "search.png",
    ]  # fmt: skip
    assert all(p.stat().st_size > 10_000 for p in shots.iterdir())


def test_the_graph_opens_the_page_clicked(browser, viewer):
    url, base = viewer
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.wait_for_url(base + "/")
    page.goto(base + "/graph")
    page.wait_for_selector("#graph[data-ready]")
    assert page.locator(".node-list li").count() == 3
    # Once the layout is still, and a zoom has stopped it following the canvas's size, a page
    # stays where it is found.
    page.wait_for_selector("#graph[data-settled]", timeout=30_000)
    page.locator("#graph").dispatch_event("wheel", {"deltaY": 1})
    target = "procedures/worker-deploy-procedure.md"
    x, y = page.evaluate(f"document.getElementById('graph').nodePosition({target!r})")
    box = page.locator("#graph").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_url(base + "/page/" + target)


def test_what_the_viewer_refuses(browser, viewer, wiki):
    url, base = viewer
    # A browser that never had the token.
    stranger = browser.new_context().new_page()
    response = stranger.goto(base + "/")
    assert response is not None and response.status == 401
    assert "needs its token" in stranger.content() and "Celery" not in stranger.content()
    # A foreign Host (a rebound DNS name pointing at 127.0.0.1), even with the token.
    port = base.rsplit(":", 1)[1]
    request = urllib.request.Request(url, headers={"Host": f"attacker.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    # A POST without the CSRF token, from a browser that has the cookie.
    page = browser.new_page()
    page.goto(url)
    page.wait_for_url(base + "/")
    head = git(wiki.wiki, "rev-parse", "HEAD").strip()
    posted = page.request.post(base + "/revert/HEAD", form={"next": "/"})
    assert posted.status == 403 and "did not carry this viewer" in posted.text()
    posted = page.request.post(base + "/status/facts/staging-resets-nightly.md", form={"verdict": "wrong"})
    assert posted.status == 403
    assert git(wiki.wiki, "rev-parse", "HEAD").strip() == head
