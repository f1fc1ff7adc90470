"""A team's MCP server: `wiki-memory serve --http` with one token per person (`wiki-memory
token`), each scoped to projects and to reading or writing; writes committed as the person;
refusals logged. Driven through the MCP SDK's own HTTP client against the real server."""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import git
from mcp_helpers import call, clean_env, fail, run, serve_command
from test_mcp_http import INITIALIZE, MCP_HEADERS, http_server, request, session

from wiki_memory.config import home, resolve_project
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.access import Tokens


def wiki_memory(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed `wiki-memory` CLI with ARGS."""
    command = serve_command()[:-1]  # the same program, without `serve`
    return subprocess.run([*command, *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=120)


def make_token(name: str, *args: str) -> str:
    result = wiki_memory("token", "create", name, *args)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("wmt_") and "\n" not in token
    return token


def access_log() -> str:
    path = home() / "logs" / "access.log"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return path.read_text()


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path]:
    """Two code repositories, each with a memory holding one gotcha."""
    found = []
    for name in ("api", "web"):
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", f"git@example.com:acme/{name}.git")
        result = wiki_memory(
            "--project",
            str(repo),
            "write",
            "--title",
            f"The {name} build needs the vendored protoc",
            "--type",
            "gotcha",
            "--body",
            f"The {name} build fails with `protoc: not found` unless tools/protoc is on PATH.",
        )
        assert result.returncode == 0, result.stderr
        found.append(repo)
    return found[0], found[1]


def commits(repo: Path) -> int:
    return int(git(resolve_project(repo).wiki, "rev-list", "--count", "HEAD").strip())


def test_a_read_token_searches_and_is_refused_a_write(projects):
    api, _ = projects
    ada = make_token("ada", "--project", str(api), "--read", "--email", "ada@example.com")
    before = commits(api)
    with http_server(api) as base:

        async def body():
            async with session(base + "/mcp", ada) as client:
                found = await call(client, "search", query="protoc not found")
                assert found["results"][0]["title"] == "The api build needs the vendored protoc"
                assert (await call(client, "read", page=found["results"][0]["path"]))["type"] == "gotcha"
                message = await fail(client, "write", title="Sneaky", type="note", body="Should not land.")
                assert message == "ada's token may only read: `write` changes the memory and is refused"
                message = await fail(client, "handoff_write", summary="Should not land either.")
                assert "may only read" in message

        run(body)
    assert commits(api) == before
    log = access_log()
    assert "refused ada: `write`: the token may only read" in log
    assert "refused ada: `handoff_write`: the token may only read" in log
    assert ada not in log and ada.removeprefix("wmt_") not in log
    assert hashlib.sha256(ada.encode()).hexdigest() not in log


def test_a_write_token_commits_as_its_person(projects):
    api, _ = projects
    ada = make_token("ada", "--project", str(api), "--write", "--email", "ada@example.com")
    wiki = resolve_project(api).wiki
    with http_server(api) as base:

        async def body():
            async with session(base + "/mcp", ada) as client:
                out = await call(client, "write", title="Run protoc from tools", type="procedure", body="1. Add it.")
                assert out["commit"]
                assert git(wiki, "log", "-1", "--format=%an%ae").strip() == "adaada@example.com"
                await call(client, "edit", page=out["path"], operation="append", text="2. Build.")
                assert git(wiki, "log", "-1", "--format=%an <%ae>").strip() == "ada <ada@example.com>"
                await call(client, "handoff_write", summary="Documented the protoc steps.")
                assert git(wiki, "log", "-1", "--format=%an%ae").strip() == "adaada@example.com"

        run(body)
    # The agent still signs the commit's trailer; the author is the person.
    assert git(wiki, "log", "-1", "--format=%(trailers:key=Agent,valueonly,separator=)").strip()
    assert git(wiki, "fsck", "--strict").strip() == ""
    listed = json.loads(wiki_memory("token", "list", "--json").stdout)
    assert listed[0]["name"] == "ada" and listed[0]["last_used"]


def test_a_project_outside_the_token_is_refused(projects):
    api, web = projects
    ada = make_token("ada", "--project", str(api), "--write")
    web_id = resolve_project(web).id
    before = commits(web)
    with http_server(api, "--projects", "all") as base:

        async def body():
            async with session(base + "/mcp", ada) as client:
                message = await fail(client, "search", query="protoc", project=web_id)
                assert "ada's token does not reach project web; it reaches api (" in message
                message = await fail(client, "write", title="Elsewhere", type="note", body="No.", project=web_id)
                assert "does not reach project web" in message
                with pytest.raises(Exception, match="does not reach project web"):
                    await client.read_resource(f"wiki://page/gotchas/x.md?project={web_id}")
                # Its own project, by default and by name.
                assert (await call(client, "search", query="protoc"))["project"]["name"] == "api"
                assert (await call(client, "search", query="protoc", project="api"))["project"]["name"] == "api"
            async with session(f"{base}/mcp/{web_id}", ada) as client:  # a path naming the project
                assert "does not reach project web" in await fail(client, "recent")

        run(body)
    assert commits(web) == before
    log = access_log()
    assert f"refused ada: `search`: project web ({web_id}) is outside the token's scope" in log
    assert f"refused ada: `write`: project web ({web_id}) is outside the token's scope" in log
    assert "refused ada: resource wiki://page/gotchas/x.md" in log


def test_a_revoked_token_is_refused_by_the_running_server(projects):
    api, _ = projects
    ada = make_token("ada", "--project", str(api), "--read")
    bob = make_token("bob", "--project", str(api), "--read")
    with http_server(api) as base:
        auth = {**MCP_HEADERS, "Authorization": f"Bearer {ada}"}
        assert request(base + "/mcp", "POST", auth, INITIALIZE)[0] == 200
        assert request(base + "/mcp", "POST", MCP_HEADERS, INITIALIZE)[0] == 401  # tokens exist: one is needed
        result = wiki_memory("token", "revoke", "ada")
        assert result.returncode == 0 and "revoked ada's token" in result.stdout
        assert request(base + "/mcp", "POST", auth, INITIALIZE)[0] == 401

        async def body():
            with pytest.raises(Exception):  # noqa: B017 - the SDK client fails on a 401 in its own way
                async with session(base + "/mcp", ada) as client:
                    await client.list_tools()
            async with session(base + "/mcp", bob) as client:  # the others still get in
                assert (await call(client, "search", query="protoc"))["results"]

        run(body)
        # A token file broken by hand: nobody gets in, and the log says why.
        (home() / "tokens.json").write_text("{not json")
        assert request(base + "/mcp", "POST", {**MCP_HEADERS, "Authorization": f"Bearer {bob}"}, INITIALIZE)[0] == 401
    log = access_log()
    assert "POST /mcp: cannot read" in log
    assert "refused a caller from 127.0.0.1: POST /mcp: unknown or revoked token" in log
    assert "refused a caller from 127.0.0.1: POST /mcp: no token" in log
    assert ada not in log


def test_the_token_file_holds_hashes_only_with_mode_0600(projects):
    api, web = projects
    ada = make_token("ada", "--project", str(api), "--project", "web", "--write", "--email", "ada@example.com")
    path = home() / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert ada not in text and ada.removeprefix("wmt_") not in text
    record = json.loads(text)["tokens"][0]
    assert record["sha256"] == hashlib.sha256(ada.encode()).hexdigest()
    assert [p["id"] for p in record["projects"]] == [resolve_project(api).id, resolve_project(web).id]
    listed = wiki_memory("token", "list")
    assert listed.returncode == 0 and ada not in listed.stdout and record["sha256"] not in listed.stdout
    assert "ada <ada@example.com>  read-write  api (" in listed.stdout
    # A made token is checked by its hash; a near miss is not.
    tokens = Tokens()
    assert tokens.authenticate(ada).name == "ada"
    assert tokens.authenticate(ada[:-1]) is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # still, after noting the use


def test_one_process_serves_two_projects(projects):
    api, web = projects
    lead = make_token("lead", "--all-projects", "--write", "--email", "lead@example.com")
    webdev = make_token("webdev", "--project", "web", "--write", "--email", "webdev@example.com")
    api_id, web_id = resolve_project(api).id, resolve_project(web).id
    with http_server(api, "--projects", "all") as base:

        async def body():
            async with session(base + "/mcp", lead) as client:
                a = await call(client, "search", query="protoc", project=api_id)
                w = await call(client, "search", query="protoc", project=web_id)
                assert a["results"][0]["title"] == "The api build needs the vendored protoc"
                assert w["results"][0]["title"] == "The web build needs the vendored protoc"
                await call(client, "write", title="Lead note", type="note", body="For web.", project=web_id)
            async with session(base + "/mcp/web", lead) as client:  # the endpoint of one project, by name
                w = await call(client, "search", query="protoc")
                assert w["project"]["id"] == web_id
                assert w["results"][0]["title"] == "The web build needs the vendored protoc"
                # A `project` argument still wins over the path.
                assert (await call(client, "recent", project=api_id))["project"]["id"] == api_id
            async with session(base + "/mcp", webdev) as client:
                # Its only project is its default, though the server runs in the api repository.
                out = await call(client, "write", title="Webdev note", type="note", body="Also web.")
                assert out["project"]["id"] == web_id

        run(body)
    web_wiki = resolve_project(web).wiki
    authors = git(web_wiki, "log", "-2", "--format=%an <%ae> %s").splitlines()
    assert authors == [
        "webdev <webdev@example.com> remember: notes/webdev-note",
        "lead <lead@example.com> remember: notes/lead-note",
    ]
    assert not (resolve_project(api).wiki / "notes").exists()


def test_person_tokens_let_a_server_listen_beyond_loopback(projects):
    api, _ = projects
    refused = subprocess.run(
        [*serve_command(), "--http", "--host", "0.0.0.0", "--port", "0"],
        cwd=api,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "refusing to serve on 0.0.0.0 without a token" in refused.stderr
    ada = make_token("ada", "--project", str(api), "--read")
    with http_server(api, "--host", "0.0.0.0") as base:
        assert request(base + "/health")[0] == 200
        assert request(base + "/mcp", "POST", MCP_HEADERS, INITIALIZE)[0] == 401
        auth = {**MCP_HEADERS, "Authorization": f"Bearer {ada}"}
        assert request(base + "/mcp", "POST", auth, INITIALIZE)[0] == 200
        # Its last token revoked, a server off loopback stays closed: never open to all.
        assert wiki_memory("token", "revoke", "ada").returncode == 0
        assert request(base + "/mcp", "POST", MCP_HEADERS, INITIALIZE)[0] == 401
        assert request(base + "/mcp", "POST", auth, INITIALIZE)[0] == 401


def test_who_is_admitted():
    tokens = Tokens()
    # No tokens: a loopback server is open, any other is not; the shared token works alone.
    assert tokens.admit(None).allowed
    assert not tokens.admit(None, loopback=False).allowed
    assert not tokens.admit(None, shared="s" * 32).allowed
    assert tokens.admit("Bearer " + "s" * 32, shared="s" * 32).allowed
    _, ada = tokens.create("ada", None, write=False)
    # A person's token: required even on loopback; its grant comes with it.
    assert not tokens.admit(None).allowed
    assert not tokens.admit(f"Basic {ada}").allowed
    admitted = tokens.admit(f"Bearer {ada}")
    assert admitted.allowed and admitted.grant is not None and admitted.grant.name == "ada"
    assert not admitted.grant.write and admitted.grant.all_projects
    # The shared token still reaches the whole server, as no person.
    shared = tokens.admit("Bearer " + "s" * 32, shared="s" * 32)
    assert shared.allowed and shared.grant is None
    # A token file broken by hand lets nobody in (the gate answers 401), never everyone.
    tokens.path.write_text("{not json")
    with pytest.raises(WikiMemoryError, match=r"cannot read .*tokens\.json"):
        tokens.admit(f"Bearer {ada}")


def test_token_command_errors():
    result = wiki_memory("token", "create", "ada", "--read")
    assert result.returncode == 2 and "--project P" in result.stderr
    result = wiki_memory("token", "create", "ada", "--all-projects")
    assert result.returncode == 2 and "--read or --write" in result.stderr
    result = wiki_memory("token", "create", "ada", "--project", "no-such-project", "--read")
    assert result.returncode == 1 and "unknown project 'no-such-project'" in result.stderr
    result = wiki_memory("token", "create", "a<b>", "--all-projects", "--read")
    assert result.returncode == 1 and "invalid token name" in result.stderr
    result = wiki_memory("token", "create", "ada", "--all-projects", "--read", "--email", "not an email")
    assert result.returncode == 1 and "invalid email" in result.stderr
    assert wiki_memory("token", "create", "ada", "--all-projects", "--read").returncode == 0
    result = wiki_memory("token", "create", "ADA", "--all-projects", "--write")
    assert result.returncode == 1 and "exists already" in result.stderr
    result = wiki_memory("token", "revoke", "bob")
    assert result.returncode == 1 and "no token named 'bob' (tokens: ada)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_path_names_the_project_without_tokens_too(projects):
    api, web = projects
    web_id = resolve_project(web).id
    with http_server(api) as base:

        async def reach():
            async with session(f"{base}/mcp/{web_id}") as client:
                return await fail(client, "search", query="protoc")

        assert "is out of this server's reach" in run(reach)
    with http_server(api, "--projects", web_id) as base:

        async def body():
            async with session(f"{base}/mcp/{web_id}") as client:
                out = await call(client, "write", title="Via the path", type="note", body="Lands in web.")
                assert out["project"]["id"] == web_id

        run(body)
    assert (resolve_project(web).wiki / "notes" / "via-the-path.md").is_file()
    assert git(resolve_project(web).wiki, "log", "-1", "--format=%ae").strip().endswith("@wiki-memory")


def test_a_stored_hash_that_is_not_one_refuses_everyone():
    tokens = Tokens()
    _, ada = tokens.create("ada", None, write=False)
    data = json.loads(tokens.path.read_text())
    # Edited by hand: not a hex digest (a non-ASCII one would make the constant-time compare raise).
    data["tokens"][0]["sha256"] = "é" * 64
    tokens.path.write_text(json.dumps(data))
    with pytest.raises(WikiMemoryError, match=r"cannot read .*tokens\.json.*sha256 is not 64 hex digits"):
        tokens.admit(f"Bearer {ada}")


def test_a_shared_token_beyond_ascii_is_read_as_utf8(code_repo):
    shared = "clé-" + "k" * 40
    with http_server(code_repo, "--token", shared) as base:
        # urllib sends a header's text as latin-1; these are the token's UTF-8 bytes, as curl sends them.
        sent = f"Bearer {shared}".encode().decode("latin-1")
        assert request(base + "/mcp", "POST", {**MCP_HEADERS, "Authorization": sent}, INITIALIZE)[0] == 200
        garbled = "Bearer cl\xff-" + "k" * 40  # not UTF-8 at all: refused, not a server error
        assert request(base + "/mcp", "POST", {**MCP_HEADERS, "Authorization": garbled}, INITIALIZE)[0] == 401
