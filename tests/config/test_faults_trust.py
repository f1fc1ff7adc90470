"""No repository is hijacked (issue 21): a repository's own `.wiki-memory.toml` counts only
when the user trusts it, and an MCP server reaches only the projects it was started for.
Each test fails on the code before the fix it names."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import set_config

from wiki_memory.config import home, resolve_project
from wiki_memory.hook import main as hook
from wiki_memory.logs import path as log_path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiki_memory", *args], cwd=cwd, capture_output=True, text=True)


def hook_call(event: str, cwd: Path, session_id: str, **payload: object) -> bytes:
    """One Claude Code hook call, as the agent makes it; what it printed."""
    body = {"session_id": session_id, "cwd": str(cwd), "hook_event_name": event, "transcript_path": "", **payload}
    out = io.BytesIO()
    assert hook.main(["claude-code", event], stdin=io.BytesIO(json.dumps(body).encode()), stdout=out) == 0
    return out.getvalue()


def a_session(cwd: Path, session_id: str, prompt: str) -> None:
    hook_call("SessionStart", cwd, session_id, source="startup")
    hook_call("UserPromptSubmit", cwd, session_id, prompt=prompt)
    hook_call("Stop", cwd, session_id, last_assistant_message="Done: the deploy script now retries.")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Someone's repository on this machine, with one commit."""
    repo = tmp_path / "victim"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "main.c").write_text("int main(void) { return 0; }\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the victim's own commit")
    return repo


def cloned(tmp_path: Path, name: str, project_file: str) -> Path:
    """A repository cloned from somewhere, carrying its own `.wiki-memory.toml`."""
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", f"https://example.com/{name}.git")
    (repo / ".wiki-memory.toml").write_text(project_file)
    return repo


# 3. A repository aims our commits at another repository ---------------------------------


@pytest.mark.parametrize("store", ["../victim", "{victim}", "~/../../victim"])
def test_an_untrusted_project_file_cannot_aim_commits_at_another_repository(tmp_path, victim, store, monkeypatch):
    """`store = "../other"` (or an absolute or `~` path) in a cloned repository made its
    session content land on another repository's branch. Untrusted, it is ignored, with a
    warning, and the repository gets its own memory under the home."""
    monkeypatch.setenv("HOME", str(tmp_path / "a" / "b"))
    hostile = cloned(tmp_path, "hostile", f'store = "{store.format(victim=victim)}"\n')
    before = git(victim, "log", "--all", "--format=%H")
    a_session(hostile, "hijack-1", "Make the deploy script retry on 502")
    project = resolve_project(hostile)
    assert project.warning and "wiki-memory trust" in project.warning
    assert consolidate_session(project, "hijack-1").commit
    written = cli("write", "-t", "Deploy notes", "--body", "secret-ish session content", cwd=hostile)
    assert written.returncode == 0, written.stderr
    assert "not said you trust this repository" in written.stderr
    assert git(victim, "log", "--all", "--format=%H") == before
    assert git(victim, "status", "--porcelain") == ""
    assert project.wiki == home() / "projects" / project.id / "wiki"
    assert cli("path", cwd=hostile).stdout.strip() == str(project.wiki)
    assert "hostile/.wiki-memory.toml asks for store" in log_path("hooks").read_text()


def test_a_folder_that_is_not_a_repository_is_never_made_one(tmp_path, monkeypatch):
    """A store (even one the user set) naming a folder with files and no git repository:
    the folder was turned into a repository and committed into; now it is refused."""
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "taxes.txt").write_text("private\n")
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(folder))
    result = cli("write", "-t", "Note", "--body", "x", cwd=tmp_path)
    assert result.returncode == 1 and "will not make it one" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["taxes.txt"]
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(tmp_path / "new-wiki"))
    assert cli("write", "-t", "Note", "--body", "x", cwd=tmp_path).returncode == 0


def test_an_untrusted_name_does_not_pull_another_projects_handoffs(tmp_path):
    """`name = "..."` in any repository pulled another project's handoffs into its
    SessionStart. The user's own project pins the name and trusts it; a cloned repository
    pinning the same name is refused it."""
    mine = cloned(tmp_path, "mine", 'name = "payments"\n')
    assert cli("trust", cwd=mine).returncode == 0
    a_session(mine, "mine-1", "Rotate the payments signing key")
    assert consolidate_session(resolve_project(mine), "mine-1").commit
    assert b"Rotate the payments signing key" in hook_call("SessionStart", mine, "mine-2", source="startup")
    hostile = cloned(tmp_path, "hostile", 'name = "payments"\n')
    assert resolve_project(hostile).id != resolve_project(mine).id
    assert b"payments signing key" not in hook_call("SessionStart", hostile, "hostile-1", source="startup")


def test_trust_honours_the_file_as_it_was_and_config_paths_trust_a_folder(tmp_path):
    team = tmp_path / "team-wiki"
    repo = cloned(tmp_path, "widgets", 'store = "../team-wiki"\n')
    assert resolve_project(repo).wiki.resolve() != team
    trusted = cli("trust", "--json", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    assert json.loads(trusted.stdout)["asks"] == {"store": "../team-wiki"}
    assert resolve_project(repo).wiki.resolve() == team and resolve_project(repo).warning is None
    # The file changes (a pull brings another store): trust it again, or it is ignored.
    (repo / ".wiki-memory.toml").write_text('store = "../elsewhere"\n')
    assert resolve_project(repo).wiki.resolve() != tmp_path / "elsewhere" and resolve_project(repo).warning
    assert cli("trust", "--remove", cwd=repo).returncode == 0
    # `[trust] paths` in the user's own config.toml trusts every repository under a folder.
    set_config(f'[trust]\npaths = ["{tmp_path}"]\n')
    assert resolve_project(repo).wiki.resolve() == tmp_path / "elsewhere"
    set_config('[trust]\npaths = ["relative/paths/count/for/nothing"]\n')
    assert resolve_project(repo).warning
    doctor = cli("doctor", "--json", cwd=repo)
    assert "not said you trust" in doctor.stdout


# 5. DNS rebinding ------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.2", "[::1]", "127.0.0.1"])
def test_a_loopback_server_answers_to_its_own_names_only(code_repo, host):
    """`serve --http --host '[::1]'` or `--host 127.0.0.2` without a token accepted a foreign
    `Host` and `Origin` (the SDK guards only the names it knows): a web page that rebinds
    its name to this machine read a page through it. Every loopback bind is gated now."""
    from test_mcp_http import INITIALIZE, MCP_HEADERS, http_server, request

    with http_server(code_repo, "--host", host) as base:
        port = base.rsplit(":", 1)[1]
        mcp = base + "/mcp"
        for bad in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            status, body = request(mcp, "POST", {**MCP_HEADERS, "Host": bad}, INITIALIZE)
            assert status == 421, (bad, status, body)
        for origin in ("http://evil.example", "null", f"http://evil.example:{port}"):
            status, _ = request(mcp, "POST", {**MCP_HEADERS, "Origin": origin}, INITIALIZE)
            assert status == 403, origin
        assert request(base + "/health", headers={"Host": f"evil.example:{port}"})[0] == 421
        for good in (base.split("//", 1)[1], f"localhost:{port}", f"127.0.0.1:{port}"):
            status, body = request(mcp, "POST", {**MCP_HEADERS, "Host": good, "Origin": f"http://{good}"}, INITIALIZE)
            assert status == 200, (good, body)


# 11. What an MCP server may reach ---------------------------------------------------------------


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path]:
    from wiki_memory.memory import Memory

    repos = []
    for name in ("alpha", "beta"):
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q")
        with Memory.at(repo) as memory:
            memory.write(f"Only in {name}", f"the {name} secret", "fact")
        repos.append(repo)
    return repos[0], repos[1]


def test_a_server_reaches_its_own_project_unless_started_for_more(two_projects, tmp_path):
    """Any caller could read and write any project of the home by path, id or name, and
    create wikis for any directory. Now a server reaches its own project; others only
    with `--projects` or `[mcp] projects`."""
    from mcp import Client
    from mcp_helpers import call, fail, run

    from wiki_memory.mcp.server import build_server

    alpha, beta = two_projects
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    beta_project = resolve_project(beta)

    async def confined(server):
        async with Client(server) as client:
            assert (await call(client, "read", page="Only in alpha"))["body"].strip().endswith("the alpha secret")
            for ref in (str(beta), beta_project.id, beta_project.name):
                assert "out of this server's reach" in await fail(client, "read", page="Only in beta", project=ref)
            refused = await fail(client, "write", title="Planted", type="note", body="x", project=str(stranger))
            assert "out of this server's reach" in refused
            with pytest.raises(Exception, match="out of this server's reach"):
                await client.read_resource(f"wiki://page/facts/only-in-beta.md?project={beta}")

    server = build_server(project_dir=str(alpha))
    run(lambda: confined(server))
    server.close()
    assert not resolve_project(stranger).wiki.exists()  # no wiki made for a directory out of reach

    async def reaching(server):
        async with Client(server) as client:
            read = await call(client, "read", page="Only in beta", project=str(beta))
            assert read["body"].strip().endswith("the beta secret")
            by_path = await client.read_resource(f"wiki://page/facts/only-in-beta.md?project={beta}")
            assert "the beta secret" in by_path.contents[0].text  # `?project=<path>` was "Unknown resource"
            by_id = await client.read_resource(f"wiki://page/facts/only-in-beta.md?project={beta_project.id}")
            assert "the beta secret" in by_id.contents[0].text

    for server in (build_server(project_dir=str(alpha), projects=[str(beta)]), build_server(projects=["all"])):
        run(lambda server=server: reaching(server))
        server.close()
    set_config(f'[mcp]\nprojects = ["{beta_project.id}"]\n')
    server = build_server(project_dir=str(alpha))
    run(lambda: reaching(server))
    server.close()


def test_an_http_server_ignores_roots_and_reaches_what_it_was_started_for(two_projects):
    """A token holder of an HTTP server reached every project of the home; roots are the
    client's word, so over HTTP only the server's own project and `--projects` count."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_helpers import call, fail, run
    from mcp_types import ListRootsResult, Root
    from test_mcp_http import TOKEN, http_server

    alpha, beta = two_projects

    async def list_roots(ctx):
        return ListRootsResult(roots=[Root(uri=beta.resolve().as_uri(), name="beta")])

    def client(base: str) -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        return Client(streamable_http_client(base + "/mcp", http_client=http), list_roots_callback=list_roots)

    with http_server(alpha, "--token", TOKEN) as base:

        async def confined():
            async with client(base) as c:
                assert (await call(c, "recent"))["project"]["root"] == str(alpha.resolve())
                assert "out of this server's reach" in await fail(c, "read", page="Only in beta", project=str(beta))

        run(confined)
    with http_server(alpha, "--token", TOKEN, "--projects", str(beta)) as base:

        async def reaching():
            async with client(base) as c:
                read = await call(c, "read", page="Only in beta", project=str(beta))
                assert read["body"].strip().endswith("the beta secret")

        run(reaching)
