"""The web viewer over a real wiki, through Starlette's test client: who may use it (token,
Host, Origin, CSRF), what each view shows, and that each action is one commit made as the
person. The same viewer in a real browser: tests/e2e/test_ui_browser.py."""

from __future__ import annotations

import email.message
import html
import http.cookiejar
import os
import re
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from conftest import git
from markupsafe import escape
from starlette.routing import Route
from starlette.testclient import TestClient

from wiki_memory.memory import Actor, Memory
from wiki_memory.ui.app import Viewer, build_app
from wiki_memory.ui.auth import CSP

PORT = 8766
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "k3y-" + "x" * 40
CODEX = Actor("codex", "c0dex5e55")


def _seed(memory: Memory) -> None:
    memory.write(
        "Retry policy",
        "Retry twice, then fail. See [[Auth overview]] and [[Not written yet]].\n\n"
        "<script>alert('x')</script> <img src=x onerror=alert(1)>",
        "decision",
        tags=["http"],
        actor=CODEX,
    )
    memory.write("Auth overview", "Tokens refresh before the retry; see [[Retry policy]].", "fact", tags=["auth"])
    memory.write("Flaky login test", "The login test fails one run in ten with a 401.", "gotcha", actor=CODEX)


@pytest.fixture
def memory(code_repo):
    with Memory.at(code_repo) as memory:
        _seed(memory)
        yield memory


@pytest.fixture
def viewer(memory):
    return Viewer(memory.project, token=TOKEN, port=PORT)


@pytest.fixture
def root(viewer):
    """The viewer's secret path: every address it makes starts with it."""
    return viewer.base


@pytest.fixture
def client(viewer):
    with TestClient(build_app(viewer), base_url=BASE + viewer.base, follow_redirects=False) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200  # the cookie, as a browser gets it
        yield client


def _csrf(client: TestClient, url: str = "/page/decisions/retry-policy.md") -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', client.get(url).text)
    assert match
    return match.group(1)


def _head(memory: Memory) -> str:
    return git(memory.wiki, "rev-parse", "HEAD").strip()


# Who may use it ------------------------------------------------------------------------


def test_without_the_token_everything_is_refused(viewer):
    with TestClient(build_app(viewer), base_url=BASE + viewer.base, follow_redirects=False) as anonymous:
        for url in ("/", "/page/decisions/retry-policy.md", "/search?q=retry", "/static/app.css", "/graph"):
            response = anonymous.get(url)
            assert response.status_code == 401, url
            assert "needs its token" in response.text and "Retry" not in response.text
        assert anonymous.post("/revert/HEAD").status_code == 401
        assert anonymous.get("/?token=not-the-token").status_code == 401
        anonymous.cookies.set(f"wiki_memory_ui_{PORT}", "guess")
        assert anonymous.get("/").status_code == 401
        anonymous.cookies.clear()
        # Scripts may send it as a bearer token.
        assert anonymous.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_outside_its_secret_path_the_viewer_is_a_404_that_does_not_name_it(viewer):
    """Only the token leads in from outside the prefix; everything else, the bearer token
    and a wrong token included, is the same bare 404 (the prefix in no header or body)."""
    with TestClient(build_app(viewer), base_url=BASE, follow_redirects=False) as outsider:
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        for url, headers in [
            ("/", {}),
            ("/search?q=retry", {}),
            ("/static/app.js", {}),
            ("/favicon.ico", {}),
            ("/?token=not-the-token", {}),
            ("/", bearer),
            (f"/{viewer.prefix[:-1]}/", bearer),  # the prefix but one character
            (f"/x{viewer.base}/", bearer),
        ]:
            response = outsider.get(url, headers=headers)
            assert response.status_code == 404, url
            assert response.text == "not found\n" and "set-cookie" not in response.headers
            assert viewer.prefix not in str(response.headers), url
        assert outsider.post("/revert/HEAD", headers=bearer).status_code == 404
        # The prefix without its slash goes to the prefix with it (the cookie's Path has one).
        bare = outsider.get(f"{viewer.base}?who=codex")
        assert bare.status_code == 308 and bare.headers["location"] == f"{viewer.base}/?who=codex"


def test_the_token_in_the_address_becomes_a_strict_cookie_and_leaves_the_address(viewer):
    with TestClient(build_app(viewer), base_url=BASE + viewer.base, follow_redirects=False) as browser:
        landing = browser.get(f"/search?q=retry&token={TOKEN}")
        assert landing.status_code == 200
        cookie = landing.headers["set-cookie"]
        assert cookie.startswith(f"wiki_memory_ui_{PORT}=") and TOKEN not in cookie  # not the token itself
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"Path={viewer.base}/" in cookie
        assert f'<meta http-equiv="refresh" content="0;url={viewer.base}/search?q=retry">' in landing.text
        assert TOKEN not in landing.text
        assert browser.get("/search?q=retry").status_code == 200  # the cookie does the rest
    # The address without the prefix, as a fixed `--token` was always opened: the token leads
    # under the prefix, where the cookie counts.
    with TestClient(build_app(viewer), base_url=BASE, follow_redirects=False) as kept:
        landing = kept.get(f"/graph?token={TOKEN}")
        assert landing.status_code == 200 and f"Path={viewer.base}/" in landing.headers["set-cookie"]
        assert f'content="0;url={viewer.base}/graph"' in landing.text
        assert kept.get(f"{viewer.base}/graph").status_code == 200


def _jar_after_landing(app, viewer) -> http.cookiejar.CookieJar:
    """A cookie jar (the standard library's, with RFC 6265's domain and path rules) that has
    been through the viewer's landing page, as a browser is."""
    with TestClient(app, base_url=BASE, follow_redirects=False) as browser:
        landing = browser.get(f"{viewer.base}/?token={TOKEN}")
    assert landing.status_code == 200

    class Answer:  # what CookieJar.extract_cookies reads of a response: its headers
        def info(self) -> email.message.Message:
            message = email.message.Message()
            for value in landing.headers.get_list("set-cookie"):
                message["Set-Cookie"] = value
            return message

    jar = http.cookiejar.CookieJar()
    jar.extract_cookies(Answer(), urllib.request.Request(f"{BASE}{viewer.base}/?token={TOKEN}"))  # type: ignore[arg-type]
    assert len(jar) == 1
    return jar


def _sent_to(jar: http.cookiejar.CookieJar, url: str) -> str | None:
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


def test_the_cookie_goes_only_under_the_secret_path_never_to_another_server_on_the_host(viewer):
    """Issue 27, item 11: cookies ignore ports, so a cookie with `Path=/` went to every
    server on 127.0.0.1, which could replay it to the viewer. Scoped to `/<prefix>/`, it
    goes to no address another server is asked for unless that server knows the prefix."""
    app = build_app(viewer)
    jar = _jar_after_landing(app, viewer)
    (cookie,) = list(jar)
    assert cookie.path == f"{viewer.base}/" and cookie.has_nonstandard_attr("HttpOnly")
    other = f"http://127.0.0.1:{PORT + 1}"
    for url in (
        f"{other}/",
        f"{other}/favicon.ico",
        f"{other}/search?q=retry",
        f"{other}/static/app.js",
        f"{BASE}/",  # this viewer's own port, outside the prefix
        f"{BASE}/favicon.ico",
        f"{BASE}{viewer.base}",  # no slash: not under the cookie's path
        f"{BASE}/{viewer.prefix[:-1]}/",
        f"{BASE}{viewer.base}x/",
    ):
        assert _sent_to(jar, url) is None, url
    # Under the prefix it is sent (to any port: ports are not what scopes it; the secret is).
    for url in (f"{BASE}{viewer.base}/", f"{BASE}{viewer.base}/search?q=retry", f"{other}{viewer.base}/graph"):
        assert _sent_to(jar, url) == f"{cookie.name}={cookie.value}", url
    # And what the jar sends under the prefix opens the viewer.
    with TestClient(app, base_url=BASE, follow_redirects=False) as replay:
        sent = _sent_to(jar, f"{BASE}{viewer.base}/search?q=retry")
        assert replay.get(f"{viewer.base}/search?q=retry", headers={"Cookie": sent or ""}).status_code == 200


def test_a_cookie_of_the_same_name_on_a_wider_path_does_not_shadow_the_viewer_s(client, viewer):
    """Another server on the host may set `wiki_memory_ui_<port>` on `Path=/`; the browser
    then sends both, and the viewer takes its own."""
    own = client.cookies[f"wiki_memory_ui_{PORT}"]
    name = f"wiki_memory_ui_{PORT}"
    for header in (f"{name}=planted; {name}={own}", f"{name}={own}; {name}=planted"):
        assert client.get("/", headers={"Cookie": header}).status_code == 200
    assert client.get("/", headers={"Cookie": f"{name}=planted"}).status_code == 401


def test_a_viewers_cookie_opens_no_other_viewer_and_no_other_launch(memory):
    """The cookie is an HMAC of the port under a secret of the launch: no other port's
    viewer (even one started with the same `--token`), nor this one relaunched, takes it."""
    other_port = PORT + 1
    first_viewer = Viewer(memory.project, token=TOKEN, port=PORT)
    second_viewer = Viewer(memory.project, token=TOKEN, port=other_port)
    assert first_viewer.prefix != second_viewer.prefix  # drawn per launch
    with TestClient(build_app(first_viewer), base_url=BASE + first_viewer.base, follow_redirects=False) as browser:
        assert browser.get(f"/?token={TOKEN}").status_code == 200
        stolen = browser.cookies[f"wiki_memory_ui_{PORT}"]
        assert stolen != TOKEN and browser.get("/search?q=retry").status_code == 200
    second_base = f"http://127.0.0.1:{other_port}{second_viewer.base}"
    with TestClient(build_app(second_viewer), base_url=second_base, follow_redirects=False) as thief:
        for name in (f"wiki_memory_ui_{PORT}", f"wiki_memory_ui_{other_port}"):
            thief.cookies.clear()
            thief.cookies.set(name, stolen)
            assert thief.get("/search?q=retry").status_code == 401
            assert thief.post("/revert/HEAD", headers={"Origin": f"http://127.0.0.1:{other_port}"}).status_code == 401
        thief.cookies.clear()
        assert thief.get(f"/?token={TOKEN}").status_code == 200  # its own launch's cookie works
        assert thief.get("/search?q=retry").status_code == 200
    again = Viewer(memory.project, token=TOKEN, port=PORT, prefix=first_viewer.prefix)
    with TestClient(build_app(again), base_url=BASE + again.base, follow_redirects=False) as later:
        later.cookies.set(f"wiki_memory_ui_{PORT}", stolen)
        assert later.get("/").status_code == 401  # a cookie of an earlier launch is worth nothing


def test_a_foreign_host_is_refused_and_loopback_names_are_not(client):
    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1:9999", f"192.168.1.20:{PORT}"):
        response = client.get("/", headers={"Host": host})
        assert response.status_code == 403, host
        assert "Retry" not in response.text
    for host in (f"localhost:{PORT}", f"[::1]:{PORT}", f"127.0.0.1:{PORT}"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host


def test_a_viewer_on_another_loopback_address_answers_to_it_and_refuses_foreign_names(memory):
    viewer = Viewer(memory.project, token=TOKEN, host="127.0.0.2", port=PORT)
    with TestClient(
        build_app(viewer), base_url=f"http://127.0.0.2:{PORT}{viewer.base}", follow_redirects=False
    ) as browser:
        assert browser.get(f"/?token={TOKEN}").status_code == 200
        assert browser.get("/", headers={"Host": f"127.0.0.2:{PORT}"}).status_code == 200
        assert browser.get("/", headers={"Host": f"evil.example:{PORT}"}).status_code == 403


def test_every_action_needs_the_csrf_token_and_the_viewer_s_origin(client, memory, viewer):
    head = _head(memory)
    csrf = _csrf(client)
    posts = [r for r in build_app(viewer).app.routes if isinstance(r, Route) and "POST" in (r.methods or ())]
    assert {r.path for r in posts} == {"/edit/{path:path}", "/revert/{rev}", "/status/{path:path}"}
    actions = {
        "/edit/decisions/retry-policy.md": {"text": "---\ntitle: x\n---\n# x\n\nGone.\n"},
        "/revert/HEAD": {},
        "/status/decisions/retry-policy.md": {"verdict": "wrong"},
    }
    for url, form in actions.items():
        assert client.post(url, data=form).status_code == 403, url
        assert client.post(url, data={**form, "csrf": "guessed"}).status_code == 403, url
        with_token = {**form, "csrf": csrf}
        assert client.post(url, data=with_token, headers={"Origin": "http://evil.example"}).status_code == 403, url
        assert client.post(url, data=with_token, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403, url
    huge = client.post("/edit/decisions/retry-policy.md", data={"csrf": csrf, "text": "x" * (5 * 1024 * 1024)})
    assert huge.status_code == 413
    assert _head(memory) == head  # nothing was committed
    same_origin = {"Origin": BASE, "Sec-Fetch-Site": "same-origin"}
    ok = client.post("/status/decisions/retry-policy.md", data={"verdict": "wrong", "csrf": csrf}, headers=same_origin)
    assert ok.status_code == 303 and _head(memory) != head


def test_every_response_carries_a_strict_policy_and_pages_run_no_inline_script(client):
    for url in ("/", "/page/decisions/retry-policy.md", "/graph", "/static/app.js", "/nope"):
        response = client.get(url)
        assert response.headers["content-security-policy"] == CSP, url
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
    assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP and "frame-ancestors 'none'" in CSP
    for url in ("/", "/graph", "/search?q=retry", "/page/decisions/retry-policy.md", "/review", "/handoff"):
        scripts = re.findall(r"<script([^>]*)>", client.get(url).text)
        assert all("src=" in attrs or 'type="application/json"' in attrs for attrs in scripts), url


def test_raw_html_in_a_page_is_shown_as_text(client, memory):
    text = client.get("/page/decisions/retry-policy.md").text
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in text
    assert "<script>alert" not in text and "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    memory.write("Links", '[a](javascript:alert(1)) [b](data:text/html,x) [[x" onmouseover="alert(1)]]', "note")
    links = client.get("/page/notes/links.md").text
    assert 'href="javascript:' not in links and 'href="data:' not in links
    assert 'onmouseover="alert' not in links and "x&#34; onmouseover=&#34;alert(1)" in links


# What the views show -------------------------------------------------------------------------


def test_a_page_with_its_links_backlinks_and_front_matter(client, root, memory, code_repo):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "retry.py").write_text("RETRIES = 2\n")
    blob = git(code_repo, "hash-object", "src/retry.py").strip()
    source = memory.page_source("Auth overview")
    anchors = f"anchors:\n- path: src/retry.py\n  blob: {blob}\n- src/gone.py\n"
    memory.save_text(source.path, source.text.replace("sources:", anchors + "sources:"))
    (code_repo / "src" / "retry.py").write_text("RETRIES = 3\n")
    text = client.get("/page/decisions/retry-policy.md").text
    assert f'<a class="wikilink" href="{root}/page/facts/auth-overview.md">Auth overview</a>' in text
    assert re.search(
        rf'<a class="wikilink missing" href="{root}/go\?ref=Not\+written\+yet"[^>]*>Not written yet</a>', text
    )
    assert "codex:c0dex5e5" in text and "#http" in text and 'b-type-decision">decision<' in text
    auth = client.get("/page/facts/auth-overview.md").text
    assert f'<a href="{root}/page/decisions/retry-policy.md">decisions/retry-policy.md</a>' in auth  # a backlink
    assert re.search(r"src/retry\.py</span>\s*<span class=\"badge b-anchor-drifted\"", auth)
    assert re.search(r"src/gone\.py</span>\s*<span class=\"badge b-anchor-missing\"", auth)
    # A title or an id leads to the page's own address; a name no page has is a 404.
    by_title = client.get("/page/" + quote("Auth overview"))
    assert by_title.status_code == 303 and by_title.headers["location"] == root + "/page/facts/auth-overview.md"
    assert client.get("/go?ref=Retry+policy").headers["location"] == root + "/page/decisions/retry-policy.md"
    missing = client.get("/go?ref=Not+written+yet")
    assert missing.status_code == 404 and "no page with path, title or id" in missing.text


def test_a_page_as_it_was_at_a_commit(client, memory):
    first = _head(memory)
    memory.edit("Flaky login test", "find_replace", find="one run in ten", replace="one run in five")
    old = client.get(f"/page/gotchas/flaky-login-test.md?rev={first}").text
    assert "one run in ten" in old and "as of commit" in old and "one run in five" not in old


def test_search_with_filters_and_the_query_s_words_marked(client, root):
    text = client.get("/search?q=login+fails+401").text
    assert f'href="{root}/page/gotchas/flaky-login-test.md"' in text
    assert "<mark>fails</mark>" in text and "<mark>401</mark>" in text
    only_facts = client.get("/search?q=retry&type=fact").text
    assert "facts/auth-overview.md" in only_facts and "decisions/retry-policy.md" not in only_facts
    tagged = client.get("/search?q=retry&tag=http").text
    assert "decisions/retry-policy.md" in tagged and "facts/auth-overview.md" not in tagged
    assert "Nothing found" in client.get("/search?q=retry&status=archived").text
    assert client.get("/search?q=" + "x" * 2100).status_code == 400  # refused in one line, as everywhere


def test_home_shows_the_handoff_and_who_did_what(client, root, memory):
    memory.handoff_write("Fixing the flaky login", done=["Found the refresh race"], actor=CODEX)
    text = client.get("/").text
    expected = memory.handoff()
    assert expected is not None and escape(expected.text.splitlines()[0]) in text
    assert "Fixing the flaky login" in text
    assert text.count('class="event ') == 5  # init, three pages, the handoff
    assert f'href="{root}/?who=codex"' in text and f'href="{root}/?who=Test%20Person"' in text
    codex_only = client.get("/?who=codex").text
    assert codex_only.count('class="event ') == 3 and "remember: facts/auth-overview" not in codex_only
    handoff = client.get("/handoff").text
    assert escape(expected.text) in handoff  # exactly what the next agent gets
    # A write leaves the prepared handoff behind: home says so rather than rebuild it (slow
    # in a big wiki); the handoff page rebuilds it.
    assert "The wiki changed since" not in client.get("/").text
    memory.write("Token refresh order", "Refresh the token before the retry.", "decision")
    assert "The wiki changed since" in client.get("/").text
    client.get("/handoff")
    assert "The wiki changed since" not in client.get("/").text


def test_history_and_commit_show_coloured_diffs(client, memory):
    memory.edit("Flaky login test", "find_replace", find="one run in ten", replace="one run in five")
    text = client.get("/history/gotchas/flaky-login-test.md").text
    assert '<span class="del">-The login test fails one run in ten with a 401.</span>' in text
    assert '<span class="add">+The login test fails one run in five with a 401.</span>' in text
    assert "Test Person" in text and "codex" in text and "session c0dex5e5" in text
    head = _head(memory)
    commit = client.get(f"/commit/{head}").text
    assert "update: gotchas/flaky-login-test (find_replace)" in commit and head in commit
    assert '<span class="add">+The login test fails one run in five' in commit
    assert client.get("/commit/0000000").status_code == 404


def test_review_and_graph(client, root, memory):
    (memory.wiki / "notes").mkdir(exist_ok=True)
    (memory.wiki / "notes" / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n")
    memory.commit_hand_edits()
    review = client.get("/review").text
    assert "notes/broken.md" in review and "invalid YAML front matter" in review
    broken = client.get("/page/notes/broken.md")  # shown as it is, with the way to fix it
    assert broken.status_code == 200 and "title: [unclosed" in broken.text
    assert f'href="{root}/edit/notes/broken.md"' in broken.text
    graph = client.get("/graph").text
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', graph, re.S)
    assert data and '"path": "decisions/retry-policy.md"' in data.group(1) and '"edges": [[' in data.group(1)
    around = client.get("/graph?around=Flaky+login+test").text
    assert "gotchas/flaky-login-test.md" in around


# Actions: one commit each, as the person --------------------------------------------------------


def test_an_edit_is_committed_as_the_person_and_a_stale_one_is_refused_with_the_text_kept(client, root, memory):
    form = client.get("/edit/gotchas/flaky-login-test.md").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    base = re.search(r'name="base" value="([^"]+)"', form).group(1)
    text = html.unescape(re.search(r"<textarea[^>]*>(.*?)</textarea>", form, re.S).group(1))
    saved = client.post(
        "/edit/gotchas/flaky-login-test.md",
        data={"csrf": csrf, "base": base, "text": text.replace("one run in ten", "one run in three")},
    )
    assert saved.status_code == 303
    commit = _head(memory)
    assert saved.headers["location"] == f"{root}/page/gotchas/flaky-login-test.md?committed={commit}"
    log = git(memory.wiki, "log", "-1", "--format=%an <%ae>|%s").strip()
    assert log == "Test Person <person@example.com>|edit: gotchas/flaky-login-test.md"
    assert "one run in three" in (memory.wiki / "gotchas" / "flaky-login-test.md").read_text()
    assert f'<a href="{root}/commit/{commit}">{commit[:8]}</a>' in client.get(BASE + saved.headers["location"]).text
    broken = client.post("/edit/gotchas/flaky-login-test.md", data={"csrf": csrf, "text": "---\ntags: [x\n---\nBody"})
    assert broken.status_code == 400 and "invalid YAML" in broken.text and "tags: [x" in broken.text
    assert _head(memory) == commit
    # The same form again: the page moved on since, at the same lines; both are kept, neither lost.
    again = client.post("/edit/gotchas/flaky-login-test.md", data={"csrf": csrf, "base": base, "text": text + "Mine."})
    assert again.status_code == 303
    page = (memory.wiki / "gotchas" / "flaky-login-test.md").read_text()
    copy = next((memory.wiki / "gotchas").glob("flaky-login-test.conflict-edit-*.md")).read_text()
    assert "one run in three" in page and "Edit conflict" in page and "Mine." in copy


def test_a_revert_is_one_commit_by_the_person(client, root, memory):
    memory.edit("Flaky login test", "find_replace", find="one run in ten", replace="one run in five", actor=CODEX)
    undone = _head(memory)
    response = client.post(f"/revert/{undone}", data={"csrf": _csrf(client)})
    new = _head(memory)
    assert response.status_code == 303 and response.headers["location"] == f"{root}/commit/{new}?reverted={undone}"
    log = git(memory.wiki, "log", "-1", "--format=%an|%s|%b").strip()
    assert log.startswith("Test Person|revert: update: gotchas/flaky-login-test (find_replace)|")
    assert "one run in ten" in (memory.wiki / "gotchas" / "flaky-login-test.md").read_text()
    twice = client.post(f"/revert/{undone}", data={"csrf": _csrf(client)})
    assert twice.status_code == 409 and "already undone" in twice.text


def _trailers(memory: Memory) -> str:
    """The last commit as `author|subject|Reason|Verdict`, read with the git CLI."""
    fmt = "%an|%s|%(trailers:key=Reason,valueonly,separator=%x2C)|%(trailers:key=Verdict,valueonly,separator=%x2C)"
    return git(memory.wiki, "log", "-1", f"--format={fmt}").strip()


def test_a_verdict_flags_the_page_and_a_supersede_names_the_replacement(client, root, memory):
    csrf = _csrf(client)
    page = client.get("/page/gotchas/flaky-login-test.md").text
    for verdict in ("helpful", "active", "stale", "wrong", "archived"):
        assert f'name="verdict" value="{verdict}"' in page  # helpful joins the verdicts
    assert 'name="reason"' in page  # and a reason may go with any of them
    response = client.post(
        "/status/gotchas/flaky-login-test.md",
        data={"csrf": csrf, "verdict": "wrong", "reason": "the 401 came from the proxy,\nnot the test"},
    )
    assert response.status_code == 303
    # Memory.mark: one commit by the person, with the reason and the verdict as trailers.
    assert _trailers(memory) == (
        "Test Person|mark: wrong gotchas/flaky-login-test|the 401 came from the proxy, not the test|wrong"
    )
    page = client.get("/page/gotchas/flaky-login-test.md").text
    assert "Marked <strong>wrong</strong>" in page and "never handed to an agent" in page
    # Search hides it, as it does for an agent, unless the status filter asks for it.
    assert "gotchas/flaky-login-test.md" not in client.get("/search?q=login+test+401").text
    assert 'class="result retired"' in client.get("/search?q=login+test+401&status=any").text
    assert "gotchas/flaky-login-test.md" in client.get("/review").text
    back = client.post(
        "/status/gotchas/flaky-login-test.md", data={"csrf": csrf, "verdict": "stale", "next": "/review"}
    )
    assert back.headers["location"] == root + "/review"
    assert _trailers(memory) == "Test Person|mark: stale gotchas/flaky-login-test||stale"
    assert (
        client.post("/status/x.md", data={"csrf": csrf, "verdict": "stale", "next": "//evil.example"}).status_code
        == 404
    )
    helped = client.post("/status/decisions/retry-policy.md", data={"csrf": csrf, "verdict": "helpful"})
    assert (
        helped.status_code == 303 and _trailers(memory) == "Test Person|mark: helpful decisions/retry-policy||helpful"
    )
    assert memory.read("Retry policy").page.meta["helpful"] == 1
    moved = client.post(
        "/status/facts/auth-overview.md",
        data={"csrf": csrf, "superseded_by": "Retry policy", "reason": "merged into it", "next": "//evil.example"},
    )
    assert moved.status_code == 303 and moved.headers["location"].startswith(root + "/page/facts/auth-overview.md")
    # Memory.supersede: both pages in one commit, with the reason.
    assert _trailers(memory) == (
        "Test Person|supersede: facts/auth-overview by decisions/retry-policy|merged into it|supersede"
    )
    changed = git(memory.wiki, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["decisions/retry-policy.md", "facts/auth-overview.md"]
    assert memory.read("Auth overview").page.meta["superseded_by"] == "decisions/retry-policy.md"
    assert memory.read("Retry policy").page.meta["supersedes"] == ["facts/auth-overview.md"]
    assert client.post("/status/facts/auth-overview.md", data={"csrf": csrf, "verdict": "bogus"}).status_code == 400


def test_review_lists_the_lifecycle_s_actions_and_resolves_a_drifted_page(client, root, memory, code_repo):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "retry.py").write_text("RETRIES = 2\n")
    (code_repo / "src" / "auth.py").write_text("REFRESH_FIRST = True\n")
    git(code_repo, "add", "src")
    git(code_repo, "commit", "-qm", "code")
    memory.anchor("Retry policy", ["src/retry.py"])
    memory.anchor("Auth overview", ["src/auth.py"])
    quiet = client.get("/review").text
    assert "Code changed since" not in quiet and "review-drift" not in quiet
    (code_repo / "src" / "retry.py").write_text("RETRIES = 3\n")  # the code moves on; auth.py does not
    review = client.get("/review").text
    assert 'id="drift"' in review and "decisions/retry-policy.md may be stale (src/retry.py changed since)" in review
    assert "wiki-memory mark decisions/retry-policy.md active|stale|wrong" in review  # the command too
    assert "facts/auth-overview.md may be stale" not in review
    drift_item = review[review.index('class="review-item review-drift"') :].split("</li>", 1)[0]
    assert f'action="{root}/status/decisions/retry-policy.md"' in drift_item
    for verdict in ("active", "stale", "wrong"):
        assert f'name="verdict" value="{verdict}"' in drift_item
    page = client.get("/page/decisions/retry-policy.md").text
    assert "This page may be stale (src/retry.py changed since)" in page
    assert re.search(r"src/retry\.py</span>\s*<span class=\"badge b-anchor-drifted\"", page)
    # "Still true": marked active from the review, it is re-anchored to the file as it is now.
    still = client.post(
        "/status/decisions/retry-policy.md",
        data={"csrf": _csrf(client), "verdict": "active", "reason": "three retries is right", "next": "/review"},
    )
    assert still.status_code == 303 and still.headers["location"] == root + "/review"
    assert _trailers(memory) == "Test Person|mark: active decisions/retry-policy|three retries is right|active"
    blob = git(code_repo, "hash-object", "src/retry.py").strip()
    assert memory.read("Retry policy").page.meta["anchors"] == [{"path": "src/retry.py", "blob": blob}]
    assert "may be stale" not in client.get("/review").text
    assert re.search(
        r"src/retry\.py</span>\s*<span class=\"badge b-anchor-current\"",
        client.get("/page/decisions/retry-policy.md").text,
    )


def test_review_offers_a_supersede_for_a_duplicate_and_the_command(client, root, memory, embedding_model):
    # Written oldest first, so the older page is the older by its time and by its path alike:
    # `updated` counts seconds, and a slow machine may put the two writes in different ones.
    memory.write("CSV export batches 500 rows", "The CSV exporter writes its rows in batches of 500.", "fact")
    memory.write("Exports are batched by 500 rows", "The CSV exporter writes rows in batches of 500.", "fact")
    memory.reindex()  # the vectors: duplicates are told by meaning as well as words
    old, new = "facts/csv-export-batches-500-rows.md", "facts/exports-are-batched-by-500-rows.md"
    review = client.get("/review").text
    assert 'id="duplicate"' in review and "say the same" in review
    item = review[review.index('class="review-item review-duplicate"') :].split("</li>", 1)[0]
    assert f"wiki-memory supersede {old} {new}" in html.unescape(item)
    assert f'action="{root}/status/{old}"' in item and f'name="superseded_by" value="{new}"' in item
    merged = client.post(
        f"/status/{old}", data={"csrf": _csrf(client), "superseded_by": new, "reason": "one page", "next": "/review"}
    )
    assert merged.status_code == 303 and merged.headers["location"] == root + "/review"
    assert _trailers(memory) == (
        "Test Person|supersede: facts/csv-export-batches-500-rows by facts/exports-are-batched-by-500-rows"
        "|one page|supersede"
    )
    assert 'id="duplicate"' not in client.get("/review").text


# Projects, and the command ---------------------------------------------------------------------


def test_the_project_switcher(client, root, tmp_path):
    other = tmp_path / "billing"
    other.mkdir()
    git(other, "init", "-q")
    with Memory.at(other) as billing:
        billing.write("Invoices are immutable", "Correct with a credit note.", "decision")
        project_id = billing.project.id
    client.app.app.state.viewer._projects = (0.0, [])  # the list is kept ten seconds
    home = client.get("/").text
    assert f'<option value="{project_id}"' in home
    switched = client.get(f"/project?id={project_id}")
    assert switched.status_code == 303 and switched.headers["location"] == root + "/"
    assert "HttpOnly" in switched.headers["set-cookie"] and f"Path={root}/" in switched.headers["set-cookie"]
    assert "Invoices are immutable" in client.get("/search?q=invoices").text
    assert "Retry policy" not in client.get("/").text
    assert client.get("/project?id=nope").status_code == 404


def test_a_project_without_memory_yet(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    viewer = Viewer(Memory.at(empty).project, token=TOKEN, port=PORT)
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(build_app(viewer), base_url=BASE + viewer.base, headers=bearer) as client:
        assert "No memory yet" in client.get("/").text
        for url in ("/handoff", "/review", "/graph", "/search?q=x"):
            assert client.get(url).status_code == 200, url
        assert client.get("/page/x.md").status_code == 404


def test_the_command_refuses_an_open_address_without_a_token_in_one_line(code_repo, monkeypatch):
    from wiki_memory.cli import main

    monkeypatch.chdir(code_repo)
    result = CliRunner().invoke(main, ["ui", "--host", "0.0.0.0", "--no-open"])
    assert result.exit_code == 1 and "refusing to serve on 0.0.0.0 without a token" in result.output
    assert "Traceback" not in result.output
    assert "--no-open" in CliRunner().invoke(main, ["ui", "--help"]).output


def test_the_command_opens_the_browser_through_a_private_file(code_repo, memory, tmp_path):
    """The token reaches the browser in a file only the person can read, never on a command
    line other users can list; the viewer serves the address the file forwards to."""
    seen = tmp_path / "browser-was-given"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {seen}\n')
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": f"{browser} %s"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiki_memory", "ui", "--port", "0"],
        cwd=code_repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        address = re.search(r"(http://127\.0\.0\.1:\d+/[\w-]{20,}/\?token=[\w-]+)", proc.stdout.readline())
        assert address
        deadline = time.monotonic() + 20
        while not (seen.exists() and seen.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        given = seen.read_text().strip()
        assert given.startswith("file://") and "token=" not in given
        forwarder = Path(given.removeprefix("file://"))
        assert stat.S_IMODE(forwarder.stat().st_mode) == 0o600
        assert f'content="0;url={address.group(1)}"' in html.unescape(forwarder.read_text())
        with urllib.request.urlopen(address.group(1), timeout=10) as landing:
            assert landing.status == 200 and "HttpOnly" in landing.headers["Set-Cookie"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert not forwarder.exists()  # removed when the viewer stops


def test_a_very_large_page_is_shown_in_part_with_its_whole_raw_file(client, root, memory):
    """A page far over `[pages] large_kb` that arrived by hand: its beginning is shown, with
    a note and a link to the raw file, which is whole (issue 27, item 8)."""
    filler = "".join(f"line {i} of a log pasted whole into a page\n" for i in range(80_000))
    text = f"---\ntitle: Huge log\ntype: note\n---\nFIRSTWORD\n{filler}LASTWORD\n"
    path = memory.wiki / "notes" / "huge-log.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    memory.commit_hand_edits()
    page = client.get("/page/notes/huge-log.md")
    assert page.status_code == 200
    assert "FIRSTWORD" in page.text and "LASTWORD" not in page.text
    assert f"This page is {len(text.split('---', 2)[2].lstrip()):,} bytes" in page.text
    assert f'href="{root}/raw/notes/huge-log.md"' in page.text
    raw = client.get("/raw/notes/huge-log.md")
    assert raw.status_code == 200 and raw.content == text.encode() and path.read_text() == text


def test_malformed_values_and_overlong_names_are_no_server_error(client, memory):
    """A hand edit that makes `superseded_by` a number and `anchors` an integer, and a name
    over 255 bytes, answer pages, not a 500 (issue 27, item 12)."""
    path = memory.wiki / "decisions" / "retry-policy.md"
    path.write_text(path.read_text().replace("status: active", "status: superseded\nsuperseded_by: 5\nanchors: 7"))
    memory.commit_hand_edits()
    page = client.get("/page/decisions/retry-policy.md")
    assert page.status_code == 200 and "Retry" in page.text
    long = client.get("/page/notes/" + "x" * 300 + ".md")
    assert long.status_code in (400, 404) and "255 bytes" in long.text
    assert client.get("/graph").status_code == 200
