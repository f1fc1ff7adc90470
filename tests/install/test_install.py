"""Installers on temporary HOMEs: foreign entries kept, a second install changes nothing,
uninstall returns every file to what it was; dry runs, scopes, --no-mcp, bad files, doctor."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from wiki_memory.cli import main
from wiki_memory.install import Context, install, installer, jsonc, uninstall
from wiki_memory.install.base import is_our_hook

COMMAND = "/opt/wiki memory/bin/wiki-memory"  # a space, to prove the command is quoted


def cli(*args: str, ok: bool = True, env: dict | None = None):
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def ctx(**kwargs) -> Context:
    return Context(command=kwargs.pop("command", COMMAND), env={**os.environ, "PATH": "/nonexistent"}, **kwargs)


FOREIGN = {
    "claude-code": {
        ".claude/settings.json": {
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {
                "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            },
        },
        ".claude.json": {"numStartups": 3, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp"}}},
    },
    "codex": {".codex/hooks.json": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}},
    "gemini": {
        ".gemini/settings.json": {
            "theme": "Dracula",
            "mcpServers": {"fs": {"command": "fs-mcp"}},
            "hooks": {
                "AfterTool": [
                    {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint", "timeout": 5000}]}
                ]
            },
        }
    },
    "cursor": {
        ".cursor/hooks.json": {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}},
        ".cursor/mcp.json": {"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}},
    },
}
CODEX_TOML = 'model = "gpt-5.5"  # my model\n\n# providers\n[model_providers.local]\nname = "local"\nbase_url = "http://localhost:1234/v1"\n'


def write_foreign(home: Path, agent: str) -> dict[Path, bytes]:
    files = {}
    for rel, data in FOREIGN[agent].items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=4) + "\n")
        files[path] = path.read_bytes()
    if agent == "codex":
        path = home / ".codex" / "config.toml"
        path.write_text(CODEX_TOML)
        files[path] = path.read_bytes()
    return files


def our_commands(data) -> list[str]:
    found = []

    def walk(value):
        if isinstance(value, dict):
            if is_our_hook(value.get("command")):
                found.append(value["command"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(data)
    return found


def state(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and ".bak" not in p.name and ".gitconfig" not in p.name
    }


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "cursor"])
def test_install_keeps_foreign_entries_twice_changes_nothing_uninstall_restores(agent, tmp_path):
    home = Path.home()
    original_files = write_foreign(home, agent)
    before = state(home)

    first = install([agent], ctx())[agent]
    assert {c.action for c in first} <= {"update", "create", "note"}
    inst = installer(agent)
    hooks = json.loads(inst.hooks_path(ctx()).read_text())
    commands = our_commands(hooks)
    assert sorted(e for e in inst.installed_hooks(ctx())) == sorted(inst.expected_events())
    # Gemini CLI's commands exec the hook, quiet on stderr (see install/gemini.py).
    prefix = "exec " if agent == "gemini" else ""
    assert all(c.startswith(prefix + "'/opt/wiki memory/bin/wiki-memory' hook " + agent + " ") for c in commands)
    # Every foreign entry is still there, unchanged.
    for path, raw in original_files.items():
        if path.suffix == ".json":
            _assert_contains(json.loads(path.read_text()), json.loads(raw))
    assert inst.mcp_entry(ctx()) == {
        "command": COMMAND,
        "args": ["serve"],
        **({"type": "stdio", "env": {}} if agent == "claude-code" else {}),
    }
    # Backed up first: each changed file's backup holds what was there before.
    for change in first:
        if change.backup:
            assert change.backup.read_bytes() == original_files[change.path]

    after_first = state(home)
    second = install([agent], ctx())[agent]
    assert all(c.action in ("unchanged", "note") for c in second), [(c.path, c.action, c.lines) for c in second]
    assert state(home) == after_first

    removed = uninstall([agent], ctx())[agent]
    assert any(c.action in ("update", "delete") for c in removed)
    after = state(home)
    assert set(after) == set(before)
    for name, raw in before.items():
        if name.endswith(".json"):
            assert json.loads(after[name]) == json.loads(raw), name
        else:
            assert after[name] == raw, name  # config.toml: comments and layout kept byte for byte
    assert all(c.action == "unchanged" for c in uninstall([agent], ctx())[agent])


def _assert_contains(actual, expected):
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert key in actual, key
            if key == "hooks" and isinstance(value, dict):
                for event, groups in value.items():
                    for group in groups:
                        assert group in actual[key][event]
            else:
                _assert_contains(actual[key], value)
    else:
        assert actual == expected


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "cursor"])
def test_install_on_a_bare_home_and_uninstall_leaves_no_file(agent):
    home = Path.home()
    before = state(home)
    install([agent], ctx())
    assert state(home) != before
    uninstall([agent], ctx())
    assert state(home) == before


def test_dry_run_prints_the_changes_and_writes_nothing():
    home = Path.home()
    write_foreign(home, "claude-code")
    before = state(home)
    result = cli("install", "claude-code", "gemini", "--dry-run")
    assert "would update" in result.output and "+ PostToolUse:" in result.output
    assert "would create" in result.output and "mcpServers.wiki-memory" in result.output
    assert state(home) == before and not list(home.rglob("*.bak"))
    cli("install", "claude-code")
    after = state(home)
    result = cli("uninstall", "claude-code", "--dry-run")
    assert "- SessionEnd:" in result.output
    assert state(home) == after


def test_project_scope_writes_the_repository_files(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    cli("install", "claude-code", "codex", "cursor", "gemini", "--scope", "project")
    assert our_commands(json.loads((code_repo / ".claude" / "settings.json").read_text()))
    assert json.loads((code_repo / ".mcp.json").read_text())["mcpServers"]["wiki-memory"]["args"] == ["serve"]
    assert our_commands(json.loads((code_repo / ".codex" / "hooks.json").read_text()))
    assert "[mcp_servers.wiki-memory]" in (code_repo / ".codex" / "config.toml").read_text()
    assert json.loads((code_repo / ".cursor" / "hooks.json").read_text())["version"] == 1
    assert our_commands(json.loads((code_repo / ".gemini" / "settings.json").read_text()))
    assert not (Path.home() / ".claude").exists()
    cli("uninstall", "all", "--scope", "project")
    for rel in (
        ".claude/settings.json",
        ".mcp.json",
        ".codex/hooks.json",
        ".codex/config.toml",
        ".cursor/hooks.json",
        ".cursor/mcp.json",
        ".gemini/settings.json",
    ):
        assert not (code_repo / rel).exists(), rel


def test_no_mcp_installs_hooks_only():
    cli("install", "claude-code", "cursor", "--no-mcp")
    assert not (Path.home() / ".claude.json").exists() and not (Path.home() / ".cursor" / "mcp.json").exists()
    assert (Path.home() / ".cursor" / "hooks.json").exists()


def test_hook_commands_name_this_installation_by_absolute_path():
    cli("install", "claude-code")
    commands = our_commands(json.loads((Path.home() / ".claude" / "settings.json").read_text()))
    exe = commands[0].split(" hook ")[0].strip("'")
    assert os.path.isabs(exe) and os.access(exe, os.X_OK)
    assert json.loads((Path.home() / ".claude.json").read_text())["mcpServers"]["wiki-memory"]["command"] == exe


def test_hook_timeouts_and_async_as_each_agent_wants():
    install(["claude-code", "codex", "gemini"], ctx())
    claude = json.loads((Path.home() / ".claude" / "settings.json").read_text())["hooks"]
    assert claude["PostToolUse"][0]["hooks"][0]["async"] is True
    assert claude["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert claude["SessionEnd"][0]["hooks"][0]["timeout"] == 5
    codex = json.loads((Path.home() / ".codex" / "hooks.json").read_text())["hooks"]
    assert codex["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    gemini = json.loads((Path.home() / ".gemini" / "settings.json").read_text())["hooks"]
    assert gemini["AfterTool"][0]["hooks"][0]["timeout"] == 5000  # milliseconds
    assert "PreCompress" not in gemini  # Gemini CLI fires it before every model request


def test_a_stale_entry_from_an_older_installation_is_replaced_in_place():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    old = "/old/venv/bin/wiki-memory hook claude-code Stop"
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": "say hi"}, {"type": "command", "command": old}]}]
                }
            }
        )
    )
    changes = install(["claude-code"], ctx(mcp=False))["claude-code"]
    assert any(line.startswith("~ Stop:") for line in changes[0].lines)
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert stop[0] == {"hooks": [{"type": "command", "command": "say hi"}]}
    assert our_commands(stop) == [f"'{COMMAND}' hook claude-code Stop"]


def test_invalid_settings_are_one_clear_error_and_nothing_changes():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "x", // a comment\n}')  # Claude Code reads plain JSON
    result = cli("install", "claude-code", ok=False)
    assert result.exit_code == 1 and "is not valid JSON" in result.output and "Traceback" not in result.output
    assert path.read_text() == '{"model": "x", // a comment\n}'
    path = Path.home() / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "x",, }')
    result = cli("install", "gemini", ok=False)
    assert result.exit_code == 1 and "is not valid JSON" in result.output and "Traceback" not in result.output
    assert path.read_text() == '{"theme": "x",, }'


def test_gemini_settings_keep_their_comments_and_uninstall_gives_back_the_same_bytes():
    # As Gemini CLI writes it: comments kept, two-space indents, no last newline.
    original = (
        '{\n  // my theme\n  "theme": "Dracula",\n  "hooks": {\n    "AfterTool": [\n      {\n        "matcher": "w",'
    )
    original += '\n        "hooks": [{"type": "command", "command": "lint"}]\n      }\n    ]\n  }\n}'
    path = Path.home() / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(original)
    install(["gemini"], ctx())
    text = path.read_text()
    assert "// my theme" in text and not text.endswith("\n")
    assert [g["hooks"][0]["command"] for g in jsonc.loads(text)["hooks"]["AfterTool"]] == [
        "lint",
        f"exec '{COMMAND}' hook gemini AfterTool 2>/dev/null",
    ]
    assert all(c.action == "unchanged" for c in install(["gemini"], ctx())["gemini"])
    uninstall(["gemini"], ctx())
    assert path.read_text() == original


def test_unknown_agent_and_all_without_agents_are_errors():
    result = cli("install", "vim", ok=False)
    assert result.exit_code == 1 and "unknown agent 'vim'" in result.output
    result = cli("install", "all", ok=False, env={"PATH": "/nonexistent"})
    assert result.exit_code == 1 and "no agent found" in result.output


def test_all_means_every_agent_found_on_the_machine():
    (Path.home() / ".gemini").mkdir()
    (Path.home() / ".cursor").mkdir()
    result = cli("install", "all", "--no-mcp", env={"PATH": "/nonexistent"})
    assert "gemini:" in result.output and "cursor:" in result.output and "claude-code:" not in result.output


def test_file_modes_are_kept():
    path = Path.home() / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    path.chmod(0o600)
    install(["claude-code"], ctx(mcp=False))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_codex_without_codex_on_path_says_how_to_trust():
    result = cli("install", "codex", env={"PATH": "/nonexistent"})
    assert "note" in result.output and "/hooks" in result.output and "--codex" in result.output


def test_codex_uninstall_moves_the_trust_of_a_hook_whose_position_shifts():
    import tomlkit

    codex_home = Path.home() / ".codex"
    codex_home.mkdir()
    hooks_path = codex_home / "hooks.json"
    ours = f"'{COMMAND}' hook codex Stop"
    hooks_path.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": ours, "timeout": 10}]},
                        {"hooks": [{"type": "command", "command": "say done"}]},
                    ]
                }
            }
        )
    )
    (codex_home / "config.toml").write_text(
        f'[hooks.state."{hooks_path}:stop:0:0"]\ntrusted_hash = "sha256:ours"\n\n'
        f'[hooks.state."{hooks_path}:stop:1:0"]\ntrusted_hash = "sha256:theirs"\n'
    )
    uninstall(["codex"], ctx())
    config = tomlkit.parse((codex_home / "config.toml").read_text()).unwrap()
    assert config == {"hooks": {"state": {f"{hooks_path}:stop:0:0": {"trusted_hash": "sha256:theirs"}}}}
    assert json.loads(hooks_path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    }


def test_doctor_reports_hooks_and_fails_on_a_missing_executable():
    install(["claude-code"], ctx(command="/nonexistent/bin/wiki-memory"))
    result = cli("doctor", "claude-code", "--json", ok=False)
    assert result.exit_code == 1
    checks = {(c["agent"], c["name"]): c for c in json.loads(result.output)}
    assert checks[("claude-code", "hooks")]["status"] == "ok"
    assert checks[("claude-code", "hook executable")]["status"] == "fail"
    assert "/nonexistent/bin/wiki-memory" in checks[("claude-code", "hook executable")]["detail"]
    assert checks[("wiki-memory", "store writable")]["status"] == "ok"
    assert checks[("wiki-memory", "embedding model")]["status"] in ("ok", "warn")


def test_doctor_passes_after_install_and_finds_the_model():
    cli("install", "claude-code", "gemini", "cursor")
    result = cli("doctor", "claude-code", "gemini", "cursor")
    assert "FAIL" not in result.output
    for agent in ("claude-code", "gemini", "cursor"):
        assert f"ok   {agent:<12} hooks" in result.output
        assert f"ok   {agent:<12} hook executable" in result.output
        assert f"ok   {agent:<12} mcp entry" in result.output
    if os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH"):
        assert "ok   wiki-memory  embedding model" in result.output


def test_doctor_shows_logged_hook_failures():
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "wiki_memory", "hook", "claude-code"], input=b"not json", timeout=60)
    result = cli("doctor", "cursor", ok=False)
    assert "warn wiki-memory  hook log" in result.output and "not JSON" in result.output


def doctor_checks(*args: str, ok: bool = True) -> dict[tuple[str, str], dict]:
    result = cli("doctor", *args, "--json", ok=ok)
    return {(c["agent"], c["name"]): c for c in json.loads(result.output)}


def test_doctor_on_a_fresh_home_checks_no_agent_and_says_how_to_install():
    checks = doctor_checks()  # exits 0
    assert {agent for agent, _ in checks} == {"wiki-memory"}  # nothing about agents' hooks or MCP entries
    line = checks[("wiki-memory", "agents")]
    assert line["status"] == "warn" and "`wiki-memory install AGENT`" in line["detail"]
    rows = cli("doctor").output.splitlines()
    assert [row.split()[:3] for row in rows if "wiki-memory install" in row] == [["warn", "wiki-memory", "agents"]]


def test_doctor_without_agents_checks_only_the_connected_ones():
    cli("install", "claude-code")
    checks = doctor_checks()
    assert {agent for agent, _ in checks} == {"wiki-memory", "claude-code"}
    assert ("wiki-memory", "agents") not in checks
    for name in ("hooks", "hook executable", "mcp entry", "mcp server"):
        assert checks[("claude-code", name)]["status"] == "ok", checks[("claude-code", name)]
    # Named, an agent that is not connected is checked in full, as before.
    cursor = doctor_checks("cursor")
    assert {agent for agent, _ in cursor} == {"wiki-memory", "cursor"}
    assert cursor[("cursor", "mcp entry")]["status"] == "warn"


def test_doctor_names_the_scope_where_agents_are_connected(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    cli("install", "cursor", "--scope", "project", "--no-mcp")
    line = doctor_checks()[("wiki-memory", "agents")]
    assert "cursor connected in project scope: `wiki-memory doctor --scope project`" in line["detail"]
    checks = doctor_checks("--scope", "project")
    assert {agent for agent, _ in checks} == {"wiki-memory", "cursor"}
    assert checks[("cursor", "hooks")]["status"] == "ok"


def test_an_mcp_entry_alone_or_an_unreadable_file_counts_as_connected():
    from wiki_memory.install import connected_agents

    install(["gemini"], ctx())
    settings = Path.home() / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]
    settings.write_text(json.dumps(data))
    assert connected_agents(ctx()) == ["gemini"]
    (Path.home() / ".cursor").mkdir()
    (Path.home() / ".cursor" / "mcp.json").write_text("{not json")
    assert connected_agents(ctx()) == ["gemini", "cursor"]


def test_the_install_part_reaches_no_front_end():
    """install may import capture and config: the doctor starts the MCP server as a
    subprocess and speaks to it with the SDK's client, importing nothing of ours above."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys\n"
        "import wiki_memory.install as part\n"
        "for m in pkgutil.iter_modules(part.__path__): importlib.import_module(f'wiki_memory.install.{m.name}')\n"
        "from wiki_memory.install import Context, doctor, install\n"
        "install(['claude-code'], Context())\n"
        "checks = {(c.agent, c.name): c.status for c in doctor(['claude-code'], Context())}\n"
        "assert checks[('claude-code', 'mcp server')] == 'ok', checks\n"
        "print(' '.join(n for n in sys.modules if n.startswith('wiki_memory.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    parts = {name.split(".")[1] for name in result.stdout.split()}
    assert not parts & {"cli", "mcp", "hook", "memory", "consolidate", "sync", "watch"}, parts


def test_registered_doctor_checks_run_per_agent():
    from wiki_memory.install.base import EXTRA_CHECKS, Check, register_check

    seen = []

    @register_check("cursor")
    def probe(ctx, inst):
        seen.append(inst.agent)
        yield Check(inst.agent, "probe", "ok", "extra check ran")

    try:
        result = cli("doctor", "cursor", "claude-code", ok=False)
    finally:
        EXTRA_CHECKS["cursor"].remove(probe)
    assert seen == ["cursor"] and "extra check ran" in result.output


def test_the_shell_command_hooks_are_added_to_an_older_install_once_and_removed():
    """An install from before the shell-command hooks (PreToolUse on the file tools only) is
    brought up to date in place; a second install changes nothing; uninstall removes it."""
    path = Path.home() / ".claude" / "settings.json"
    install(["claude-code", "codex"], ctx())
    data = json.loads(path.read_text())
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Read|Edit|Write|MultiEdit|Bash"
    codex = json.loads((Path.home() / ".codex" / "hooks.json").read_text())["hooks"]
    assert codex["PreToolUse"][0]["matcher"] == "apply_patch|Bash"
    data["hooks"]["PreToolUse"][0]["matcher"] = "Read|Edit|Write|MultiEdit"  # the older install
    path.write_text(json.dumps(data))
    install(["claude-code"], ctx())
    upgraded = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert [g["matcher"] for g in upgraded] == ["Read|Edit|Write|MultiEdit|Bash"]
    before = path.read_bytes()
    install(["claude-code"], ctx())
    assert path.read_bytes() == before
    uninstall(["claude-code", "codex"], ctx())
    assert not path.exists() or "PreToolUse" not in path.read_text()
