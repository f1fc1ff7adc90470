"""`wiki-memory serve --http`: streamable HTTP at /mcp, GET /health, bearer tokens, loopback by default."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from conftest import git
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import PAGE_TOOLS, call, clean_env, run, serve_command

from wiki_memory.config import resolve_project

TOKEN = "s3cret-token-for-the-tests-0123456789"
ANNOUNCE = re.compile(r"serving MCP at (http://\S+)/mcp")


@contextmanager
def http_server(repo: Path, *args: str, **env: str) -> Iterator[str]:
    """`wiki-memory serve --http --port 0 ARGS` in `repo`; yields its base URL."""
    process = subprocess.Popen(
        [*serve_command(), "--http", "--port", "0", *args],
        cwd=repo,
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                raise AssertionError(f"the server exited with {process.returncode}: {process.stderr.read()}")
            found = ANNOUNCE.search(line)
            if found:
                base = found.group(1).replace("0.0.0.0", "127.0.0.1")
                break
        else:
            raise AssertionError("the server did not announce its address")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def request(url: str, method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None):
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}},
    }
).encode()
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def session(url: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60)))


def test_health_and_a_session_on_loopback_without_a_token(code_repo):
    # An HTTP server outlives the session that started it: it does not stamp that session on writes.
    with http_server(code_repo, CLAUDE_CODE_SESSION_ID="the-session-that-started-it") as base:
        assert base.startswith("http://127.0.0.1:")
        status, body = request(base + "/health")
        assert status == 200 and json.loads(body)["status"] == "ok"

        async def body_():
            async with session(base + "/mcp") as client:
                assert {t.name for t in (await client.list_tools()).tools} == PAGE_TOOLS
                out = await call(client, "write", title="Served over HTTP", type="fact", body="It works.")
                assert out["project"]["root"] == str(code_repo.resolve())
                assert "It works." in (await call(client, "read", page=out["path"]))["body"]

        run(body_)
    wiki = resolve_project(code_repo).wiki
    assert (wiki / "facts" / "served-over-http.md").is_file()
    assert git(wiki, "log", "-1", "--format=%(trailers:key=Session-Id,valueonly,separator=)").strip() == ""


def test_a_token_guards_everything_but_health(code_repo):
    with http_server(code_repo, "--token", TOKEN) as base:
        assert request(base + "/health")[0] == 200
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token"},
            {"Authorization": f"Basic {TOKEN}"},
            {"Authorization": f"Bearer {TOKEN}x"},
            {"Authorization": "Bearer"},
        ):
            status, body = request(base + "/mcp", "POST", {**MCP_HEADERS, **headers}, INITIALIZE)
            assert status == 401, headers
            assert "Bearer" in json.loads(body)["message"]
        status, _ = request(base + "/mcp", "POST", {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, INITIALIZE)
        assert status == 200

        async def body_():
            async with session(base + "/mcp", TOKEN) as client:
                out = await call(client, "write", title="Guarded", type="note", body="Only with the token.")
                assert (await call(client, "history", page=out["path"]))["commits"][0][
                    "subject"
                ] == "remember: notes/guarded"
            with pytest.raises(Exception):  # noqa: B017 - the SDK client fails on a 401 in its own way
                async with session(base + "/mcp", "not-the-token") as client:
                    await client.list_tools()

        run(body_)


def test_any_address_but_loopback_needs_a_token(code_repo):
    started = time.monotonic()
    result = subprocess.run(
        [*serve_command(), "--http", "--host", "0.0.0.0", "--port", "0"],
        cwd=code_repo,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "refusing to serve on 0.0.0.0 without a token" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert time.monotonic() - started < 30
    # With a token (from the environment here), it serves, and the token is required.
    with http_server(code_repo, "--host", "0.0.0.0", WIKI_MEMORY_TOKEN=TOKEN) as base:
        assert request(base + "/health")[0] == 200
        assert request(base + "/mcp", "POST", MCP_HEADERS, INITIALIZE)[0] == 401
        assert request(base + "/mcp", "POST", {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, INITIALIZE)[0] == 200


def test_serve_usage_errors(code_repo):
    result = subprocess.run(
        [*serve_command(), "--port", "9"], cwd=code_repo, env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--host and --port are for --http" in result.stderr
    result = subprocess.run(
        [*serve_command(), "--http", "--token", " "],
        cwd=code_repo,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "the token is empty" in result.stderr
