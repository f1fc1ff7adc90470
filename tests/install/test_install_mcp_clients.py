"""MCP-only clients (Claude Desktop, VS Code, Zed, Windsurf, Goose, Copilot CLI): our entry in
each client's own file, shape and place, merged with what is there; install again changes
nothing; uninstall gives back the very bytes; the SDK's own client starts the server
through each written entry and lists its tools; at project scope the memory block goes in
the instruction file the client reads, and comes out again."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import PAGE_TOOLS, run, serve_command

from wiki_memory.cli import main
from wiki_memory.install import Context, install, installer, jsonc, uninstall
from wiki_memory.memory import Memory
from wiki_memory.memory.instructions_export import START

COMMAND = serve_command()[0]
CONFIG = ".config"  # XDG default on Linux; Claude Desktop and VS Code live under it here


def cli(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def ctx(home: Path, **kwargs: Any) -> Context:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "COPILOT_HOME", "APPDATA")}
    return Context(home=home, command=COMMAND, env=env, **kwargs)


def app_dir(name: str) -> str:
    return {"darwin": f"Library/Application Support/{name}"}.get(sys.platform, f"{CONFIG}/{name}")


# Each client's file as the client (or its user) writes it, with a server of someone else's.
FOREIGN: dict[str, tuple[str, str]] = {
    "claude-desktop": (
        f"{app_dir('Claude')}/claude_desktop_config.json",
        '{\n  "mcpServers": {\n    "filesystem": {\n      "command": "npx",\n'
        '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]\n    }\n  }\n}\n',
    ),
    "vscode": (
        f"{app_dir('Code/User')}/mcp.json",
        '{\n\t// Added by hand\n\t"servers": {\n\t\t"playwright": {\n\t\t\t"type": "stdio",\n'
        '\t\t\t"command": "npx",\n\t\t\t"args": ["@playwright/mcp@latest"]\n\t\t}\n\t},\n\t"inputs": []\n}',
    ),
    "zed": (
        f"{CONFIG}/zed/settings.json",
        '// Zed settings\n{\n  "ui_font_size": 16,\n  "theme": "One Dark", // mine\n  "context_servers": {\n'
        '    "local-mcp-server": {"command": "some-command", "args": ["arg-1"], "env": {}}\n  }\n}\n',
    ),
    "windsurf": (
        ".codeium/windsurf/mcp_config.json",
        '{\n  "mcpServers": {\n    "github": {\n      "command": "docker",\n      "args": ["run", "-i", "--rm", '
        '"ghcr.io/github/github-mcp-server"],\n      "disabled": false\n    }\n  }\n}',
    ),
    "goose": (
        f"{CONFIG}/goose/config.yaml",
        "GOOSE_PROVIDER: anthropic\nGOOSE_MODEL: claude-sonnet-4\nextensions:\n  developer:\n    bundled: true\n"
        "    display_name: Developer\n    enabled: true\n    name: developer\n    timeout: 300\n    type: builtin\n"
        "  github:\n    args: []\n    cmd: github-mcp-server\n    enabled: false\n    envs: {}\n    name: github\n"
        "    timeout: 300\n    type: stdio\nGOOSE_MODE: smart_approve\n",
    ),
    "copilot-cli": (
        ".copilot/mcp-config.json",
        '{\n  "mcpServers": {\n    "context7": {\n      "type": "http",\n      "url": "https://mcp.context7.com/mcp",\n'
        '      "tools": ["*"]\n    }\n  }\n}\n',
    ),
}


def our_entry(client: str, path: Path) -> dict[str, Any]:
    """Our entry as the client itself would read it from its file."""
    text = path.read_text(encoding="utf-8")
    if client == "goose":
        return yaml.safe_load(text)["extensions"]["wiki-memory"]
    table = {"vscode": "servers", "zed": "context_servers"}.get(client, "mcpServers")
    return jsonc.loads(text)[table]["wiki-memory"]


SHAPES = {
    "claude-desktop": {"command": COMMAND, "args": ["serve"]},
    "vscode": {"type": "stdio", "command": COMMAND, "args": ["serve"]},
    "zed": {"command": COMMAND, "args": ["serve"], "env": {}},
    "windsurf": {"command": COMMAND, "args": ["serve"]},
    "copilot-cli": {"type": "local", "command": COMMAND, "args": ["serve"], "tools": ["*"]},
}


@pytest.mark.parametrize("client", sorted(FOREIGN))
def test_install_merges_is_idempotent_and_uninstall_restores_every_byte(client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    rel, text = FOREIGN[client]
    path = home / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode())
    changes = install([client], ctx(home))[client]
    assert [c.action for c in changes] == ["update"] and changes[0].path == path and changes[0].backup
    entry = our_entry(client, path)
    if client == "goose":
        assert entry["cmd"] == COMMAND and entry["args"] == ["serve"] and entry["type"] == "stdio"
        assert entry["enabled"] is True and yaml.safe_load(path.read_text())["extensions"]["github"]["enabled"] is False
    else:
        assert entry == SHAPES[client]
    after_install = path.read_bytes()
    assert [c.action for c in install([client], ctx(home))[client]] == ["unchanged"]
    assert path.read_bytes() == after_install
    assert [c.action for c in uninstall([client], ctx(home))[client]] == ["update"]
    assert path.read_bytes() == text.encode()
    assert [c.action for c in uninstall([client], ctx(home))[client]] == ["unchanged"]


@pytest.mark.parametrize("client", sorted(FOREIGN))
def test_a_file_install_created_is_gone_after_uninstall(client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    dry = install([client], ctx(home, dry_run=True))[client]
    assert dry[0].action == "create" and not dry[0].path.exists()
    path = install([client], ctx(home))[client][0].path
    assert path == home / FOREIGN[client][0] and path.is_file()
    uninstall([client], ctx(home))
    assert not path.exists()


def test_someone_elses_server_of_our_name_is_refused_unchanged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / ".codeium/windsurf/mcp_config.json"
    path.parent.mkdir(parents=True)
    text = '{"mcpServers": {"wiki-memory": {"command": "/opt/other/server", "args": []}}}'
    path.write_text(text)
    with pytest.raises(Exception, match="someone else's server"):
        install(["windsurf"], ctx(home))
    assert path.read_text() == text


def test_the_sdk_client_lists_our_tools_through_each_written_entry(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = tmp_path / "home"
    for client in FOREIGN:
        install([client], ctx(home))
    entries = {client: installer(client).mcp_entry(ctx(home)) for client in FOREIGN}

    async def tools(entry: dict[str, Any]) -> set[str]:
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"], cwd=str(tmp_path), env=dict(os.environ)
        )
        async with Client(stdio_client(params)) as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    # Each client's entry, read back from its own file, starts the same server: start it once
    # per distinct (command, args) and check every entry is one of those.
    distinct = {json.dumps([e["command"], e["args"]]) for e in entries.values() if e}
    assert len(entries) == 6 and all(entries.values()) and len(distinct) == 1
    entry = next(iter(entries.values()))
    assert entry is not None
    assert run(lambda: tools(entry)) >= PAGE_TOOLS


def test_doctor_starts_the_server_through_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    cli("install", "goose", "--json")
    checks = json.loads(cli("doctor", "goose", "--json").output)
    mine = {c["name"]: c for c in checks if c["agent"] == "goose"}
    assert mine["mcp entry"]["status"] == "ok" and mine["mcp server"]["status"] == "ok", mine
    assert "lists its" in mine["mcp server"]["detail"]


def test_project_scope_writes_the_memory_block_where_the_client_reads(code_repo: Path) -> None:
    with Memory.at(code_repo) as memory:
        memory.write("Use pnpm", "Always use pnpm, never npm.", "preference")
    agents = code_repo / "AGENTS.md"
    agents.write_text("# Team rules\n\nBe kind.\n")
    result = json.loads(cli("--project", str(code_repo), "install", "zed", "--scope", "project", "--json").output)
    paths = {c["path"]: c["action"] for c in result["zed"]}
    assert paths == {str(code_repo / ".zed/settings.json"): "create", str(agents): "update"}
    assert "**Use pnpm**" in agents.read_text().split(START)[1]
    cli("--project", str(code_repo), "uninstall", "zed", "--scope", "project")
    assert agents.read_text() == "# Team rules\n\nBe kind.\n"
    assert not (code_repo / ".zed/settings.json").exists()
