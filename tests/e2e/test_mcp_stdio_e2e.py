"""`wiki-memory serve` driven over stdio by an independent MCP client: the MCP Inspector CLI,
from npm. The SDK's own client over stdio: tests/mcp/test_mcp_stdio.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp_helpers import PAGE_TOOLS, clean_env, serve_command

from wiki_memory.config import resolve_project

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
# npm's cache of the person running the tests (each test has its own HOME): npx installs once.
NPM_CACHE = os.environ.get("npm_config_cache") or str(Path.home() / ".npm")  # noqa: SIM112 - npm spells it so


def _npx() -> str:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed (Node.js): the MCP Inspector CLI comes from npm")
    return npx


def _inspector(npx: str, repo: Path, *args: str) -> dict:
    command = [npx, "-y", INSPECTOR, "--cli", *serve_command(), *args]
    result = subprocess.run(
        command, cwd=repo, env=clean_env(npm_config_cache=NPM_CACHE), capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0 and ("npm error" in result.stderr or "npm ERR!" in result.stderr):
        # npm itself failed (no registry, no network): the inspector never ran.
        pytest.skip(f"npx could not install {INSPECTOR}: {result.stderr.strip()[-300:]}")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_mcp_inspector_cli_as_an_independent_client(code_repo):
    npx = _npx()
    listed = _inspector(npx, code_repo, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == PAGE_TOOLS
    assert tools["write"]["inputSchema"]["required"] == ["title", "body", "type"]
    written = _inspector(
        npx,
        code_repo,
        "--method",
        "tools/call",
        "--tool-name",
        "write",
        "--tool-arg",
        "title=Use uv, not pip",
        "--tool-arg",
        "type=preference",
        "--tool-arg",
        "body=The lock file is uv.lock.",
        "--tool-arg",
        'tags=["python"]',
    )
    assert written["isError"] is False
    assert written["structuredContent"]["path"] == "preferences/use-uv-not-pip.md"
    assert written["content"][0]["text"].startswith("created preferences/use-uv-not-pip.md: commit ")
    page = (resolve_project(code_repo).wiki / "preferences" / "use-uv-not-pip.md").read_text()
    assert "tags: [python]" in page and "The lock file is uv.lock." in page
