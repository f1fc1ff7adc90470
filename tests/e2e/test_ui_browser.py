"""The real `wiki-memory ui` in a real browser: Debian's Chromium, headless, driven by
Playwright through `executable_path` (Playwright's own browsers are never downloaded).

A person opens the address with its token, searches, opens a result, follows a [[link]],
edits the page (the commit is theirs in `git log`), reads its history with the diff in
colour, reverts a commit, marks a page wrong and supersedes it, each with a reason (the
lifecycle's commits, `Reason:` trailers and all), resolves a drifted page from the review
list, and clicks through the graph; a browser without the token, a foreign Host and a POST without the CSRF token are
refused. A screenshot of each view is saved."""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

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
    (code_repo / "ci").mkdir()
    (code_repo / "ci" / "settings.py").write_text("CELERY_TASK_ALWAYS_EAGER = False\n")
    git(code_repo, "add", "ci")
    git(code_repo, "commit", "-qm", "ci settings")
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
        memory.write("Staging resets weekly", "Staging is restored from production every Sunday.", "fact")
        memory.anchor("Celery eager mode hides the broker", ["ci/settings.py"], reason="the setting lives there")
        yield memory


@pytest.fixture
def viewer(wiki, code_repo) -> Iterator[tuple[str, str]]:
    """The real command, as a person starts it; (its address with the token, its base: the
    origin and the secret path, `http://127.0.0.1:PORT/<prefix>`)."""
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
        match = re.search(r"(http://127\.0\.0\.1:\d+/[\w-]{20,})/\?token=([\w-]+)", line)
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
    assert page.locator(".event").count() == 6  # init, four pages, an anchor
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

    # Mark a page wrong, saying why: Memory.mark's commit, with the reason as its trailer; the
    # page is flagged, in the page, in search (asked for) and in the review list.
    page.goto(base + "/page/facts/staging-resets-nightly.md")
    page.fill(".verdict-form textarea[name=reason]", "staging is restored weekly now")
    page.locator("button", has_text="Mark wrong").click()
    page.wait_for_url(re.compile(r"/page/facts/staging-resets-nightly\.md\?committed="))
    assert "Marked wrong" in page.locator(".flag").inner_text()
    fmt = "%an|%s|%(trailers:key=Reason,valueonly,separator=%x2C)|%(trailers:key=Verdict,valueonly,separator=%x2C)"
    assert (
        _log(wiki, fmt) == "Test Person|mark: wrong facts/staging-resets-nightly|staging is restored weekly now|wrong"
    )
    assert wiki.read("Staging resets nightly").page.status == "wrong"
    page.goto(base + "/search?q=staging+restored+every+night&status=any")
    assert page.locator(".result.retired .b-status-wrong").first.inner_text() == "wrong"

    # Supersede it by the page that holds now, with a reason: Memory.supersede, one commit.
    page.goto(base + "/page/facts/staging-resets-nightly.md")
    page.fill("form.supersede input[name=superseded_by]", "Staging resets weekly")
    page.fill("form.supersede input[name=reason]", "the schedule changed")
    page.locator("form.supersede button", has_text="Supersede").click()
    page.wait_for_url(re.compile(r"/page/facts/staging-resets-nightly\.md\?committed="))
    assert "Replaced by" in page.locator(".flag").inner_text()
    assert _log(wiki, fmt) == (
        "Test Person|supersede: facts/staging-resets-nightly by facts/staging-resets-weekly"
        "|the schedule changed|supersede"
    )
    changed = git(wiki.wiki, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["facts/staging-resets-nightly.md", "facts/staging-resets-weekly.md"]

    # The code the gotcha is anchored to changes: the review lists the drifted page, and
    # "Active" (it still holds) re-anchors it.
    settings = wiki.project.root / "ci" / "settings.py"
    settings.write_text("CELERY_TASK_ALWAYS_EAGER = True  # only in unit tests\n")
    page.goto(base + "/review")
    drifted = page.locator(".review-item.review-drift")
    assert drifted.count() == 1
    assert "may be stale (ci/settings.py changed since)" in drifted.inner_text()
    assert "wiki-memory mark gotchas/celery-eager-mode-hides-the-broker.md active" in drifted.inner_text()
    assert page.locator(".review-item", has_text="Staging resets nightly").count() == 0  # superseded: done
    shot("review")
    drifted.locator("textarea[name=reason]").fill("still true: CI keeps it off")
    drifted.locator("button", has_text="Active").click()
    page.wait_for_url(base + "/review")
    assert page.locator(".review-item.review-drift").count() == 0
    assert _log(wiki, fmt) == (
        "Test Person|mark: active gotchas/celery-eager-mode-hides-the-broker|still true: CI keeps it off|active"
    )
    blob = git(wiki.project.root, "hash-object", "ci/settings.py").strip()
    assert wiki.read("Celery eager mode hides the broker").page.meta["anchors"] == [
        {"path": "ci/settings.py", "blob": blob}
    ]

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
    assert page.locator(".node-list li").count() == 4
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
    port = urlsplit(base).port
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


class _Hostile(http.server.BaseHTTPRequestHandler):
    """Another program's server on 127.0.0.1 (another port): it notes what each request
    brought, and links back to nothing."""

    seen: ClassVar[list[tuple[str, str, str]]] = []  # (path, Cookie, Referer)

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Cookie", ""), self.headers.get("Referer", "")))
        body = b"<!doctype html><title>another server</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    seen: list[tuple[str, str, str]] = []
    _Hostile.seen = seen
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_another_server_on_the_host_never_gets_the_viewer_s_cookie(browser, viewer, wiki, hostile):
    """Issue 27, item 11: browsers send a 127.0.0.1 cookie to every port, so a cookie on
    `Path=/` reached any local server, which could replay it. Scoped to the secret path, it
    reaches none that does not know the secret, and no link out of the viewer tells it."""
    url, base = viewer
    other, seen = hostile
    wiki.write("Another local service", f"Its dashboard: [the dashboard]({other}/dashboard).", "fact")
    page = browser.new_page()
    page.goto(url)
    page.wait_for_url(base + "/")
    cookies = page.context.cookies()
    (cookie,) = [c for c in cookies if c["name"].startswith("wiki_memory_ui_")]
    prefix = urlsplit(base).path
    # The other server, opened in the same browser, at the addresses it would be asked for.
    for path in ("/", "/favicon.ico", "/search?q=x"):
        page.goto(other + path)
    # A link out of the viewer: the browser follows it with no Referer naming the prefix.
    page.goto(base + "/page/facts/another-local-service.md")
    page.click("text=the dashboard")
    page.wait_for_url(other + "/dashboard")
    assert {"/", "/favicon.ico", "/search?q=x", "/dashboard"} <= {path for path, _, _ in seen}
    for path, cookie_header, referer in seen:
        assert cookie["name"] not in cookie_header and prefix not in referer, path
    assert cookie["path"] == prefix + "/" and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    # What scopes it is the path, not the port: under the prefix even this server would get
    # it, which is why the prefix is a secret.
    page.goto(other + prefix + "/")
    under = [header for path, header, _ in seen if path == prefix + "/"]
    assert under and f"{cookie['name']}={cookie['value']}" in under[0]


def test_graph_labels_never_overlap(browser, viewer, wiki):
    """Thirty pages linked to one, drawn close together: no label is drawn over another
    (issue 27, item 12); those left out show on hover."""
    for n in range(30):
        wiki.write(f"Rollout step {n} of the worker fleet", "See [[Worker deploy procedure]].", "note", actor=CODEX)
    url, base = viewer
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(url)
    page.wait_for_url(base + "/")
    page.goto(base + "/graph")
    page.wait_for_selector("#graph[data-settled]", timeout=30_000)
    boxes = page.evaluate("document.getElementById('graph').labelBoxes()")
    assert len(boxes) >= 3
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
