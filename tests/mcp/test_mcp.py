"""The MCP server through the SDK's own client, in process: tools, errors, scoping, resources."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import git, runbook_body
from mcp import Client
from mcp_helpers import PAGE_TOOLS, call, fail, run
from mcp_types import Implementation, ListRootsResult, Root

from wiki_memory.config import resolve_project
from wiki_memory.mcp.scope import SESSION_ENV
from wiki_memory.mcp.server import build_server

CLAUDE = Implementation(name="claude-code", version="2.1.197")


@pytest.fixture(autouse=True)
def no_agent_session(monkeypatch):
    for var in (*SESSION_ENV, "WIKI_MEMORY_AGENT"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server(code_repo):
    srv = build_server(project_dir=str(code_repo))
    yield srv
    srv.close()


def wiki(repo: Path) -> Path:
    return resolve_project(repo).wiki


def head(repo: Path) -> str:
    return git(wiki(repo), "rev-parse", "HEAD").strip()


def test_tools_are_listed_with_descriptions_and_schemas(server):
    async def body():
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == PAGE_TOOLS
            for tool in tools.values():
                # An agent picks a tool by its description alone; the source's indentation is gone.
                assert len(tool.description) > 80 and "\n        " not in tool.description, tool.name
                assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
                assert "project" in tool.input_schema["properties"], tool.name
                assert "roots" not in tool.input_schema["properties"], tool.name
            types = tools["write"].input_schema["properties"]["type"]["enum"]
            assert "gotcha" in types and "handoff" not in types
            assert tools["search"].annotations.read_only_hint is True
            assert tools["delete"].annotations.destructive_hint is True

    run(body)


def test_write_read_history_recent(server, code_repo, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "2624e4c8-aaaa-bbbb")
    srv = build_server(project_dir=str(code_repo))  # the session comes from the server's environment

    async def body():
        async with Client(srv, client_info=CLAUDE) as client:
            written = await call(
                client,
                "write",
                title="JWT refresh must happen before the retry",
                type="gotcha",
                body="**Symptom**: login test fails one run in ten with 401.\n\n## Fix\n\n"
                "Refresh before the retry. See [[Retry policy]].",
                tags=["auth", "flaky"],
            )
            assert written["path"] == "gotchas/jwt-refresh-must-happen-before-the-retry.md"
            assert written["created"] and written["changed"] and len(written["commit"]) == 40
            assert written["project"]["root"] == str(code_repo.resolve())
            page = await call(client, "read", page="JWT refresh must happen before the retry")
            assert page["path"] == written["path"] and page["id"] == written["id"]
            assert page["tags"] == ["auth", "flaky"] and page["type"] == "gotcha"
            assert "Refresh before the retry." in page["body"]
            assert page["sources"] == ["claude-code:2624e4c8"]
            assert (await call(client, "read", page=written["id"]))["path"] == written["path"]
            # An update by title keeps the id and the tags it was not given.
            again = await call(
                client,
                "write",
                title="JWT refresh must happen before the retry",
                type="gotcha",
                body="Refresh first, then retry.",
            )
            assert not again["created"] and again["id"] == written["id"]
            page = await call(client, "read", page=written["path"])
            assert page["tags"] == ["auth", "flaky"] and page["body"].strip().endswith("Refresh first, then retry.")
            unchanged = await call(
                client,
                "write",
                title="JWT refresh must happen before the retry",
                type="gotcha",
                body="Refresh first, then retry.",
            )
            assert unchanged["commit"] is None and not unchanged["changed"]
            history = await call(client, "history", page=written["path"])
            assert [c["id"] for c in history["commits"]] == [again["commit"], written["commit"]]
            trailers = history["commits"][0]["trailers"]
            assert trailers["Session-Id"] == "2624e4c8-aaaa-bbbb" and trailers["Agent"] == "claude-code"
            old = await call(client, "read", page=written["path"], rev=written["commit"])
            assert "Refresh before the retry." in old["body"] and old["rev"] == written["commit"]
            await call(client, "write", title="Retry policy", type="decision", body="Retry twice, then fail.")
            recent = await call(client, "recent")
            assert [p["path"] for p in recent["pages"]] == ["decisions/retry-policy.md", written["path"]]
            assert [p["path"] for p in (await call(client, "recent", type="gotcha"))["pages"]] == [written["path"]]
            assert recent["pages"][0]["author"] == "claude-code"

    run(body)
    log = git(wiki(code_repo), "log", "--format=%an|%ae|%s|%(trailers:key=Session-Id,valueonly,separator=)")
    assert (
        log.splitlines()[0] == "claude-code|claude-code@wiki-memory|remember: decisions/retry-policy|2624e4c8-aaaa-bbbb"
    )
    assert git(wiki(code_repo), "status", "--porcelain") == ""
    git(wiki(code_repo), "fsck", "--strict")


def test_readable_text_names_what_happened(server):
    async def body():
        async with Client(server) as client:
            result = await client.call_tool("write", {"title": "Use uv", "type": "preference", "body": "Not pip."})
            assert result.content[0].text.startswith("created preferences/use-uv.md: commit ")
            result = await client.call_tool("read", {"page": "Use uv"})
            text = result.content[0].text
            assert "title: Use uv" in text and "Not pip." in text
            result = await client.call_tool("history", {})
            assert "remember: preferences/use-uv" in result.content[0].text

    run(body)


def test_edit_operations(server, code_repo):
    page_body = (
        "Intro line.\n\n## Symptom\n\nTests hang.\n\n## Fix\n\nOld fix.\n\n### Detail\n\nx = 1\n\n## Links\n\nNone."
    )

    async def body():
        async with Client(server) as client:
            path = (await call(client, "write", title="Celery eager mode", type="gotcha", body=page_body))["path"]
            out = await call(client, "edit", page=path, operation="append", text="Seen on CI too.", heading="Symptom")
            assert out["operation"] == "append" and out["changed"]
            await call(client, "edit", page=path, operation="append", text="Last words.")
            await call(
                client,
                "edit",
                page=path,
                operation="replace_section",
                heading="## Fix",
                text="Set CELERY_TASK_ALWAYS_EAGER=False.",
            )
            out = await call(
                client, "edit", page=path, operation="find_replace", find="Tests hang", replace="Tests hang forever"
            )
            assert out["replaced"] == 1
            text = (await call(client, "read", page=path))["body"]
            assert text == (
                "# Celery eager mode\n\nIntro line.\n\n## Symptom\n\nTests hang forever.\n\nSeen on CI too.\n\n"
                "## Fix\n\nSet CELERY_TASK_ALWAYS_EAGER=False.\n\n## Links\n\nNone.\n\nLast words.\n"
            )
            await call(
                client,
                "write",
                title="Celery tasks run eagerly only in unit tests",
                type="decision",
                body="Because of the broker timeouts.",
            )
            out = await call(
                client,
                "edit",
                page=path,
                operation="set_status",
                status="superseded",
                superseded_by="Celery tasks run eagerly only in unit tests",
            )
            page = await call(client, "read", page=path)
            assert page["status"] == "superseded"
            assert page["extra"]["superseded_by"] == "decisions/celery-tasks-run-eagerly-only-in-unit-tests.md"
            # Asked for (status any), a search result names the page that replaced it, in the data and the text.
            default = await call(client, "search", query="Celery eager mode tests hang")
            assert path not in [hit["path"] for hit in default["results"]]  # not handed out unasked
            result = await client.call_tool("search", {"query": "Celery eager mode tests hang", "status": "any"})
            hits = {hit["path"]: hit for hit in result.structured_content["results"]}
            replacement = "decisions/celery-tasks-run-eagerly-only-in-unit-tests.md"
            assert hits[path]["superseded_by"] == replacement and hits[replacement]["superseded_by"] is None
            assert f"   superseded by {replacement}" in result.content[0].text

            before = head(code_repo)
            message = await fail(client, "edit", page=path, operation="find_replace", find="e", replace="E")
            assert "expected 1" in message and "occurrences" in message
            message = await fail(client, "edit", page=path, operation="find_replace", find="no such text", replace="x")
            assert "does not contain" in message
            message = await fail(client, "edit", page=path, operation="replace_section", heading="Nope", text="x")
            assert "no section headed 'Nope'" in message and "'Symptom'" in message
            message = await fail(client, "edit", page=path, operation="append", text="   ")
            assert "`text` is empty" in message
            message = await fail(client, "edit", page=path, operation="set_status", status="superseded")
            assert "superseded_by" in message
            message = await fail(
                client, "edit", page=path, operation="replace_section", heading="Celery eager mode", text=""
            )
            assert "empty" in message
            assert head(code_repo) == before  # refused edits write nothing

    run(body)


def test_find_replace_with_the_expected_count(server):
    async def body():
        async with Client(server) as client:
            path = (await call(client, "write", title="Ports", type="fact", body="api 8000, worker 8000, db 5432"))[
                "path"
            ]
            message = await fail(client, "edit", page=path, operation="find_replace", find="8000", replace="8080")
            assert "found 2 occurrences" in message and "expected_count=2" in message
            out = await call(
                client, "edit", page=path, operation="find_replace", find="8000", replace="8080", expected_count=2
            )
            assert out["replaced"] == 2
            assert "api 8080, worker 8080, db 5432" in (await call(client, "read", page=path))["body"]

    run(body)


def test_a_persons_uncommitted_edit_is_kept_and_committed_first(server, code_repo):
    async def body():
        async with Client(server) as client:
            path = (await call(client, "write", title="Deploy", type="procedure", body="1. Build.\n2. Push."))["path"]
            file = wiki(code_repo) / path
            file.write_text(file.read_text().replace("2. Push.", "2. Push.\n3. Tag the release."))
            read = await call(client, "read", page=path)
            assert "3. Tag the release." not in read["body"] and "not committed it yet" in read["note"]
            await call(client, "edit", page=path, operation="append", text="4. Announce it.")
            body_now = (await call(client, "read", page=path))["body"]
            assert "3. Tag the release.\n\n4. Announce it." in body_now

    run(body)
    authors = git(wiki(code_repo), "log", "--format=%an: %s", "-3").splitlines()
    assert authors[0] == "mcp: update: procedures/deploy (append)"
    assert authors[1] == "Test Person: edit: procedures/deploy.md"


def test_delete_keeps_history(server, code_repo):
    async def body():
        async with Client(server) as client:
            path = (await call(client, "write", title="Old idea", type="note", body="Maybe."))["path"]
            out = await call(client, "delete", page="Old idea")
            assert out["path"] == path
            assert "no page" in await fail(client, "read", page=path)
            history = await call(client, "history", page=path)
            assert [c["subject"] for c in history["commits"]] == ["forget: notes/old-idea", "remember: notes/old-idea"]
            assert (await call(client, "recent"))["pages"] == []

    run(body)
    assert not (wiki(code_repo) / "notes" / "old-idea.md").exists()


@pytest.mark.parametrize(
    "tool,arguments,expected",
    [
        ("read", {"page": "No such page"}, "no page with path, title or id 'No such page'"),
        ("read", {"page": "../outside.md"}, "may not leave the wiki"),
        ("read", {"page": "/etc/passwd.md"}, "relative to the wiki"),
        ("write", {"title": "X", "type": "note", "body": "y", "path": "../../escape.md"}, "may not leave the wiki"),
        ("write", {"title": "X", "type": "note", "body": "y", "path": ".git/config.md"}, ".git folder"),
        ("write", {"title": "X", "type": "note", "body": ""}, "`body` is empty"),
        ("write", {"title": "X", "type": "note", "body": " \n\t"}, "`body` is empty"),
        ("write", {"title": "", "type": "note", "body": "y"}, "`title` is empty"),
        ("write", {"title": "X", "type": "bogus", "body": "y"}, "invalid arguments for write: `type`"),
        ("write", {"title": "X", "type": "handoff", "body": "y"}, "invalid arguments for write: `type`"),
        ("write", {"title": "X", "body": "y"}, "invalid arguments for write: `type`: Field required"),
        ("write", {"title": "X", "type": "note", "body": "y", "tags": "not-a-list"}, "`tags`"),
        ("write", {"title": "X", "type": "note", "body": "y", "tags": [""]}, "tags may not be empty"),
        ("search", {"query": "x", "k": "many"}, "invalid arguments for search: `k`"),
        ("search", {"query": "x", "k": 0}, "`k`"),
        ("edit", {"page": "X", "operation": "rewrite"}, "invalid arguments for edit: `operation`"),
        ("history", {"n": -3}, "`n`"),
        (
            "search",
            {"query": "x", "tags": ["a"]},
            "unknown argument for search: `tags` (it takes k, max_chars, project",
        ),
        (
            "write",
            {"title": "X", "type": "note", "body": "y", "kind": "z", "text": "q"},
            "unknown arguments for write: `kind`, `text`",
        ),
        ("read", {"page": "x", "project": "no-such-project"}, "unknown project 'no-such-project'"),
        ("read", {"page": "x", "project": "/no/such/dir"}, "does not exist"),
    ],
)
def test_bad_input_is_a_clear_tool_error_and_writes_nothing(server, code_repo, tool, arguments, expected):
    async def body():
        async with Client(server) as client:
            await call(client, "write", title="Existing", type="note", body="Here.")
            before = head(code_repo)
            message = await fail(client, tool, **arguments)
            assert expected in message, message
            assert head(code_repo) == before
            # The server is still serving.
            assert (await call(client, "read", page="Existing"))["title"] == "Existing"

    run(body)
    assert git(wiki(code_repo), "status", "--porcelain") == ""


def test_a_10_mb_body_is_refused(server, code_repo):
    async def body():
        async with Client(server) as client:
            message = await fail(client, "write", title="Huge", type="note", body="x" * (10 * 1024 * 1024))
            assert "over the 2,097,152-byte limit" in message
            assert (await call(client, "recent"))["pages"] == []

    run(body)
    assert not (wiki(code_repo) / "notes" / "huge.md").exists()


def test_a_title_of_another_type_is_refused_not_duplicated(server):
    async def body():
        async with Client(server) as client:
            await call(client, "write", title="Flaky login", type="gotcha", body="401s.")
            message = await fail(client, "write", title="Flaky login", type="note", body="dup")
            assert "gotchas/flaky-login.md" in message and "path=" in message
            out = await call(
                client, "write", title="Flaky login", type="note", body="dup", path="gotchas/flaky-login.md"
            )
            assert out["path"] == "gotchas/flaky-login.md" and not out["created"]

    run(body)


def test_reading_a_project_with_no_memory_yet(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    srv = build_server(project_dir=str(empty))

    async def body():
        async with Client(srv) as client:
            assert (await call(client, "recent"))["pages"] == []
            assert (await call(client, "history"))["commits"] == []
            assert "no memory yet" in await fail(client, "read", page="x")
            assert (await call(client, "handoff"))["text"] is None
            assert (await call(client, "search", query="anything"))["results"] == []

    run(body)
    srv.close()
    assert not resolve_project(empty).wiki.exists()  # reading creates nothing


def test_two_servers_for_two_projects_never_see_each_others_pages(tmp_path, monkeypatch):
    repo_a, repo_b = tmp_path / "a", tmp_path / "b"
    for repo in (repo_a, repo_b):
        repo.mkdir()
        git(repo, "init", "-q")
    server_a, server_b = build_server(project_dir=str(repo_a)), build_server(project_dir=str(repo_b))

    async def body():
        async with Client(server_a) as a, Client(server_b) as b:
            await call(a, "write", title="Only in A", type="fact", body="alpha")
            await call(b, "write", title="Only in B", type="fact", body="beta")
            assert [p["title"] for p in (await call(a, "recent"))["pages"]] == ["Only in A"]
            assert [p["title"] for p in (await call(b, "recent"))["pages"]] == ["Only in B"]
            assert "no page" in await fail(a, "read", page="Only in B")
            # Naming the other project is refused: a server reaches its own project (and its
            # client's roots) unless started for more (tests/config/test_faults_trust.py).
            assert "out of this server's reach" in await fail(a, "read", page="Only in B", project=str(repo_b))

    run(body)
    server_a.close()
    server_b.close()
    server_a = build_server(project_dir=str(repo_a), projects=[str(repo_b)])

    async def reaching():
        async with Client(server_a) as a:
            # An explicit project reaches the other one, for that call only.
            other = await call(a, "read", page="Only in B", project=str(repo_b))
            assert other["project"]["root"] == str(repo_b.resolve())
            by_id = await call(a, "read", page="Only in B", project=resolve_project(repo_b).id)
            assert by_id["body"].strip().endswith("beta")
            assert "no page" in await fail(a, "read", page="Only in B")

    run(reaching)
    server_a.close()


def test_without_a_project_directory_the_clients_roots_decide(tmp_path, monkeypatch):
    repo_a, repo_b = tmp_path / "a", tmp_path / "b"
    for repo in (repo_a, repo_b):
        repo.mkdir()
        git(repo, "init", "-q")
    monkeypatch.chdir(Path.home())  # where desktop apps start their servers: not a project
    srv = build_server()
    assert srv.project_dir is None

    def roots_of(repo: Path):
        async def list_roots(ctx):
            return ListRootsResult(roots=[Root(uri=repo.resolve().as_uri(), name=repo.name)])

        return list_roots

    async def body():
        # Two sessions of one server, each with its own roots, interleaved: neither moves the other.
        async with (
            Client(srv, list_roots_callback=roots_of(repo_a)) as a,
            Client(srv, list_roots_callback=roots_of(repo_b), mode="legacy") as b,
        ):
            for i in range(3):
                await call(a, "write", title=f"A {i}", type="note", body="a")
                await call(b, "write", title=f"B {i}", type="note", body="b")
            assert {p["title"] for p in (await call(a, "recent"))["pages"]} == {"A 0", "A 1", "A 2"}
            assert {p["title"] for p in (await call(b, "recent"))["pages"]} == {"B 0", "B 1", "B 2"}
        async with Client(srv) as no_roots:
            message = await fail(no_roots, "recent")
            assert "no project for this call" in message and "`project`" in message
            assert "out of this server's reach" in await fail(no_roots, "recent", project=str(repo_a))
        async with Client(srv, list_roots_callback=roots_of(repo_a)) as a:
            assert "out of this server's reach" in await fail(a, "recent", project=str(repo_b))
            assert (await call(a, "recent", project=str(repo_a)))["project"]["root"] == str(repo_a.resolve())

    run(body)
    srv.close()


def test_claude_project_dir_names_the_project(tmp_path, monkeypatch, code_repo):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(code_repo))
    srv = build_server()

    async def body():
        async with Client(srv) as client:
            out = await call(client, "write", title="Here", type="note", body="x")
            assert out["project"]["root"] == str(code_repo.resolve())

    run(body)
    srv.close()


def test_concurrent_calls_on_one_server_all_land(server, code_repo):
    async def write(client, i):
        await call(client, "write", title=f"Note {i}", type="note", body=f"body {i}")

    async def body():
        async with Client(server) as client:
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(write, client, i)
            assert len((await call(client, "recent", n=50))["pages"]) == 12

    run(body)
    assert len(git(wiki(code_repo), "log", "--format=%s").splitlines()) == 13  # init + 12
    git(wiki(code_repo), "fsck", "--strict")


def test_pages_are_resources(server, code_repo):
    async def body():
        async with Client(server) as client:
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["wiki://page/{+path}{?project}"]
            await call(client, "write", title="Retry policy", type="decision", body="Retry twice.")
            result = await client.read_resource("wiki://page/decisions/retry-policy.md")
            text = result.contents[0].text
            assert text.startswith("---\nid: ") and "title: Retry policy" in text and "Retry twice." in text
            assert result.contents[0].mime_type == "text/markdown"
            for bad in ("wiki://page/decisions/nope.md", "wiki://page/../secret.md"):
                with pytest.raises(Exception) as info:
                    await client.read_resource(bad)
                assert "Traceback" not in str(info.value)

    run(body)


@pytest.mark.usefixtures("embedding_model")
def test_search_by_meaning_and_by_identifier_with_filters(server, code_repo):
    async def body():
        async with Client(server) as client:
            celery = await call(
                client,
                "write",
                title="Celery eager mode masks broker timeouts",
                type="gotcha",
                tags=["ci", "celery"],
                body="With CELERY_TASK_ALWAYS_EAGER the tasks run inline, so a dead broker never "
                "shows locally.\n\n## Fix\n\nRun a real Redis in the pipeline.",
            )
            await call(
                client,
                "write",
                title="Retry policy",
                type="decision",
                tags=["http"],
                body="Retry twice with jitter, then fail. ERR_CONN_RESET counts as retryable.",
            )
            await call(
                client,
                "write",
                title="Release steps",
                type="procedure",
                body="Tag, package the wheel, upload, announce in the channel.",
            )
            found = await call(client, "search", query="tests hang on the build server")
            assert found["results"][0]["path"] == celery["path"]
            hit = found["results"][0]
            assert hit["title"] == "Celery eager mode masks broker timeouts" and hit["type"] == "gotcha"
            assert hit["snippet"] and hit["score"] > 0 and hit["retrievers"]
            assert found["note"] is None
            exact = await call(client, "search", query="ERR_CONN_RESET")
            assert (
                exact["results"][0]["path"] == "decisions/retry-policy.md"
                and "fts" in exact["results"][0]["retrievers"]
            )
            only = await call(client, "search", query="tests hang on the build server", type="decision")
            assert {r["type"] for r in only["results"]} <= {"decision"}
            tagged = await call(client, "search", query="pipeline", tag="celery")
            assert [r["path"] for r in tagged["results"]] == [celery["path"]]
            small = await call(client, "search", query="broker timeouts", max_chars=200)
            assert sum(len(r["snippet"]) for r in small["results"]) <= 200
            assert "`query` is empty" in await fail(client, "search", query="   ")
            # FTS syntax in a query is text, not an error.
            assert (await call(client, "search", query='"unbalanced AND (NEAR -*'))["query"]
            result = await client.call_tool("search", {"query": "build server hangs"})
            assert "Celery eager mode masks broker timeouts" in result.content[0].text

    run(body)


@pytest.mark.usefixtures("embedding_model")
def test_a_huge_page_is_embedded_between_calls(server, code_repo, monkeypatch):
    """A write embeds its chunks for a bounded time (here: one batch); the server works off
    the rest in slices while no call is waiting, so later searches find them all embedded."""
    import time

    from wiki_memory.index import Index
    from wiki_memory.index import index as index_module

    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 0.0)
    body = runbook_body(60)

    async def body_():
        async with Client(server) as client:
            await call(client, "write", title="Warm", type="note", body="Loads the model in the server.")
            await call(client, "search", query="warm")  # the server's model is loaded now
            written = await call(client, "write", title="Long runbook", type="procedure", body=body)
            with Index.open(resolve_project(code_repo)) as index:
                chunks = index.conn.execute(
                    "SELECT count(*) FROM chunks WHERE page = ?", (written["path"],)
                ).fetchone()[0]
                assert chunks >= 60 and index.pending_count() > 0  # the write returned first
                deadline = time.monotonic() + 60
                while index.pending_count() and time.monotonic() < deadline:
                    await anyio.sleep(0.2)  # no call: the server embeds while idle
                assert index.pending_count() == 0
            found = await call(client, "search", query="restart ingest worker 42")
            assert found["results"][0]["path"] == written["path"] and "vector" in found["results"][0]["retrievers"]

    run(body_)


def test_search_sees_what_other_processes_committed(server, code_repo):
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    async def body():
        async with Client(server) as client:
            await call(client, "write", title="First", type="note", body="Something about kubernetes pods.")
            assert (await call(client, "search", query="kubernetes"))["results"]
            # Another process (a hook's consolidation, the CLI, a person's commit) writes.
            Store(wiki(code_repo)).write(
                Page.new("Terraform state lock", "gotcha", "The S3 lock table was missing."), Author.agent("codex")
            )
            found = await call(client, "search", query="terraform state lock")
            assert found["results"][0]["path"] == "gotchas/terraform-state-lock.md"

    run(body)


def test_search_without_a_model_says_so_and_finds_words(code_repo, monkeypatch, tmp_path):
    monkeypatch.setenv("WIKI_MEMORY_EMBED_MODEL_PATH", str(tmp_path / "no-model-here"))
    srv = build_server(project_dir=str(code_repo))

    async def body():
        async with Client(srv) as client:
            await call(client, "write", title="Redis eviction", type="fact", body="maxmemory-policy is allkeys-lru.")
            found = await call(client, "search", query="allkeys-lru")
            assert found["results"][0]["path"] == "facts/redis-eviction.md"
            assert "words only" in found["note"]

    with pytest.warns(UserWarning):
        run(body)
    srv.close()


def test_links_and_backlinks(server):
    async def body():
        async with Client(server) as client:
            await call(client, "write", title="Auth service overview", type="fact", body="Issues JWTs.")
            source = await call(
                client,
                "write",
                title="JWT refresh",
                type="gotcha",
                body="See [[Auth service overview]] and [[Token rotation plan]].",
            )
            out = await call(client, "links", page=source["path"])
            assert out["links"] == [
                {"target": "Auth service overview", "path": "facts/auth-service-overview.md"},
                {"target": "Token rotation plan", "path": None},
            ]
            assert out["backlinks"] == []
            back = await call(client, "links", page="Auth service overview")
            assert back["backlinks"] == [source["path"]]
            page = await call(client, "read", page="Auth service overview")
            assert page["backlinks"] == [source["path"]]
            assert (await call(client, "read", page=source["path"]))["links"][0][
                "path"
            ] == "facts/auth-service-overview.md"

    run(body)


def test_pages_are_found_by_title_and_id_through_the_index(server, code_repo):
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store

    # Pages whose paths do not follow from their titles: found through the index, not a scan.
    store = Store(wiki(code_repo)) if (wiki(code_repo) / ".git").is_dir() else Store.create(wiki(code_repo))
    store.write(
        Page.new(
            "Kubernetes pods restart at midnight", "fact", "The cron job drains nodes.", path="ops/k8s-restarts.md"
        ),
        Author.agent("codex"),
    )
    store.write(Page.new("Top level", "note", "At the root.", path="toplevel.md"), Author.agent("codex"))

    async def body():
        async with Client(server) as client:
            page = await call(client, "read", page="kubernetes PODS restart at midnight")
            assert page["path"] == "ops/k8s-restarts.md"
            assert (await call(client, "read", page=page["id"]))["path"] == "ops/k8s-restarts.md"
            assert (await call(client, "read", page="toplevel"))["path"] == "toplevel.md"
            assert "no page with path, title or id 'Nothing by that name'" in await fail(
                client, "read", page="Nothing by that name"
            )
            await call(client, "write", title="Twice", type="note", body="a", path="a/twice.md")
            await call(client, "write", title="Twice", type="note", body="b", path="b/twice.md")
            assert "names 2 pages: a/twice.md, b/twice.md" in await fail(client, "read", page="twice")

    run(body)
