"""`wiki-memory install-instructions`: the AGENTS.md / CLAUDE.md block between markers."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from wiki_memory.cli import main
from wiki_memory.install import instructions


@pytest.fixture
def cli(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    runner = CliRunner()

    def invoke(*args, ok=True):
        result = runner.invoke(main, list(args), catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return invoke


def test_the_block_tells_agents_when_to_call_handoff_and_search():
    block = instructions.block()
    assert block.startswith(instructions.START + "\n") and block.endswith(instructions.END + "\n")
    for tool in ("`handoff`", "`search`", "`write`", "`handoff_write`"):
        assert tool in block


def test_default_file_is_agents_md_at_the_project_root(cli, code_repo):
    sub = code_repo / "src"
    sub.mkdir()
    out = cli("--project", str(sub), "install-instructions").output
    agents = code_repo / "AGENTS.md"
    assert out.strip() == f"added the block to {agents}"
    assert agents.read_text() == instructions.block()
    assert cli("install-instructions").output.strip() == f"no change to {agents}"
    assert (
        cli("install-instructions", "--remove").output.strip()
        == f"removed the block from {agents} (and deleted the file: it held only the block)"
    )
    assert not agents.exists()


def test_existing_files_keep_everything_outside_the_markers(cli, code_repo):
    claude = code_repo / "CLAUDE.md"
    original = "# Project rules\n\nUse tabs.\n"
    claude.write_text(original)
    cli("install-instructions", "CLAUDE.md", "AGENTS.md")
    text = claude.read_text()
    assert text == original + "\n" + instructions.block()
    # An older block (another wording) is updated in place; text after it stays after it.
    stale = text.replace("## Project memory (wiki-memory)", "## Old wording") + "\n## Later section\n\nKeep me.\n"
    claude.write_text(stale)
    out = json.loads(cli("install-instructions", "CLAUDE.md", "--json").output)
    assert out == [{"path": str(claude), "action": "updated", "dry_run": False}]
    assert claude.read_text() == original + "\n" + instructions.block() + "\n## Later section\n\nKeep me.\n"
    cli("install-instructions", "--remove", "CLAUDE.md")
    assert claude.read_text() == original + "\n## Later section\n\nKeep me.\n"


def test_dry_run_and_print_change_nothing(cli, code_repo):
    assert cli("install-instructions", "--print").output == instructions.block()
    out = cli("install-instructions", "--dry-run", "NOTES.md").output
    assert out.strip() == f"would add the block to {code_repo / 'NOTES.md'}"
    assert not (code_repo / "NOTES.md").exists()


def test_an_unwritable_file_is_one_clear_line(cli, code_repo):
    (code_repo / "notes.txt").write_text("a file, not a folder")
    result = cli("install-instructions", "notes.txt/AGENTS.md", ok=False)
    assert result.exit_code == 1 and "notes.txt/AGENTS.md" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_doctor_starts_the_installed_server_and_lists_its_tools(cli, code_repo):
    cli("install", "claude-code", "cursor")
    result = cli("doctor", "claude-code", "cursor", "--json")
    checks = {(c["agent"], c["name"]): c for c in json.loads(result.output)}
    for agent in ("claude-code", "cursor"):
        assert checks[(agent, "mcp server")]["status"] == "ok"
        assert "starts and lists its 12 tools" in checks[(agent, "mcp server")]["detail"]


def test_doctor_fails_when_the_entry_does_not_start_a_server(cli, code_repo):
    from pathlib import Path

    cli("install", "claude-code")
    config = Path.home() / ".claude.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["wiki-memory"]["args"] = ["serve", "--no-such-option"]
    config.write_text(json.dumps(data))
    result = cli("doctor", "claude-code", "--json", ok=False)
    assert result.exit_code == 1
    check = next(c for c in json.loads(result.output) if c["name"] == "mcp server")
    assert check["status"] == "fail" and "did not start as an MCP server" in check["detail"]
