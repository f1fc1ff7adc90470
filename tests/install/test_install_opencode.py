"""OpenCode's installer on temporary HOMEs: the plugin file, `mcp.wiki-memory` edited into
`opencode.json[c]` as text (comments and layout kept), a second install changes nothing,
uninstall gives back the very same bytes; the JSONC editor under it; the doctor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install import Context, doctor, install, installer, jsonc, uninstall
from wiki_memory.install.opencode import plugin_command, render_plugin

COMMAND = "/opt/wiki memory/bin/wiki-memory"
USER_CONFIG = """{
  // my OpenCode
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5", /* the default */
  "mcp": {
    "github": {"type": "remote", "url": "https://api.githubcopilot.com/mcp/", "enabled": true},
  },
}"""


def ctx(**kwargs) -> Context:
    env = {**os.environ, "PATH": "/nonexistent", **kwargs.pop("env", {})}
    return Context(command=kwargs.pop("command", COMMAND), env=env, **kwargs)


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".bak" not in p.name and ".gitconfig" not in p.name
    }


def config_dir() -> Path:
    return Path.home() / ".config" / "opencode"


def test_install_on_a_commented_jsonc_keeps_it_and_uninstall_gives_back_the_same_bytes():
    home = Path.home()
    config = config_dir() / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    before = files(home)

    changes = install(["opencode"], ctx())["opencode"]
    assert [c.action for c in changes] == ["create", "update"]
    plugin = config_dir() / "plugins" / "wiki-memory.js"
    assert plugin_command(plugin.read_text()) == [COMMAND]
    text = config.read_text()
    assert "// my OpenCode" in text and "/* the default */" in text
    data = jsonc.loads(text)
    assert data["mcp"]["wiki-memory"] == {"type": "local", "command": [COMMAND, "serve"], "enabled": True}
    assert data["mcp"]["github"]["url"] == "https://api.githubcopilot.com/mcp/"
    assert changes[1].backup is not None and changes[1].backup.read_text() == USER_CONFIG
    inst = installer("opencode")
    assert sorted(inst.installed_hooks(ctx())) == sorted(inst.expected_events())
    assert inst.mcp_entry(ctx())["args"] == ["serve"]

    after_first = files(home)
    assert all(c.action == "unchanged" for c in install(["opencode"], ctx())["opencode"])
    assert files(home) == after_first

    removed = uninstall(["opencode"], ctx())["opencode"]
    assert [c.action for c in removed] == ["delete", "update"]
    assert files(home) == before  # byte for byte; the plugins folder we made is gone too
    assert not (config_dir() / "plugins").exists()
    assert all(c.action == "unchanged" for c in uninstall(["opencode"], ctx())["opencode"])


def test_on_a_bare_home_a_new_opencode_json_is_made_and_uninstall_leaves_nothing():
    before = files(Path.home())
    install(["opencode"], ctx())
    assert json.loads((config_dir() / "opencode.json").read_text())["mcp"]["wiki-memory"]["command"][-1] == "serve"
    uninstall(["opencode"], ctx())
    assert files(Path.home()) == before
    assert [p.name for p in config_dir().iterdir()] == [p.name for p in config_dir().glob("opencode.json.*.bak")]


def test_opencode_s_own_default_config_is_edited_not_shadowed():
    config = config_dir() / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    config.write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}')  # as OpenCode writes it, no newline
    install(["opencode"], ctx())
    assert not (config_dir() / "opencode.json").exists()
    assert jsonc.loads(config.read_text())["$schema"] == "https://opencode.ai/config.json"
    uninstall(["opencode"], ctx())
    assert config.read_text() == '{\n  "$schema": "https://opencode.ai/config.json"\n}'


def test_xdg_config_home_and_the_project_scope(code_repo, tmp_path):
    xdg = tmp_path / "xdg"
    install(["opencode"], ctx(env={"XDG_CONFIG_HOME": str(xdg)}))
    assert (xdg / "opencode" / "plugins" / "wiki-memory.js").is_file()
    assert (xdg / "opencode" / "opencode.json").is_file()
    project = ctx(scope="project", project_root=code_repo)
    install(["opencode"], project)
    assert (code_repo / ".opencode" / "plugins" / "wiki-memory.js").is_file()
    assert jsonc.loads((code_repo / "opencode.json").read_text())["mcp"]["wiki-memory"]["type"] == "local"
    uninstall(["opencode"], project)
    assert not (code_repo / ".opencode").exists() and not (code_repo / "opencode.json").exists()


def test_python_m_installations_and_dry_runs():
    command = "/usr/bin/python3 -m wiki_memory"
    changes = install(["opencode"], ctx(command=command, dry_run=True))["opencode"]
    assert [c.action for c in changes] == ["create", "create"] and not config_dir().exists()
    install(["opencode"], ctx(command=command))
    plugin = (config_dir() / "plugins" / "wiki-memory.js").read_text()
    assert plugin_command(plugin) == ["/usr/bin/python3", "-m", "wiki_memory"]
    entry = jsonc.loads((config_dir() / "opencode.json").read_text())["mcp"]["wiki-memory"]
    assert entry["command"] == ["/usr/bin/python3", "-m", "wiki_memory", "serve"]


def test_what_is_not_ours_is_refused_and_left_alone():
    plugins = config_dir() / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "wiki-memory.js").write_text("export const Mine = async () => ({})\n")
    with pytest.raises(WikiMemoryError, match="is not wiki-memory's plugin"):
        install(["opencode"], ctx())
    (plugins / "wiki-memory.js").unlink()
    (config_dir() / "opencode.json").write_text('{"mcp": {"wiki-memory": {"type": "remote", "url": "https://x"}}}')
    with pytest.raises(WikiMemoryError, match="is not wiki-memory's server"):
        install(["opencode"], ctx())
    (config_dir() / "opencode.json").write_text('{"mcp": [1, 2]')
    with pytest.raises(WikiMemoryError, match=r"is not valid JSON .*line 1, column 15"):
        install(["opencode"], ctx())
    assert (config_dir() / "opencode.json").read_text() == '{"mcp": [1, 2]'


def test_the_doctor_checks_the_plugin_and_says_when_it_is_another_version(tmp_path):
    exe = tmp_path / "bin" / "wiki-memory"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho wiki-memory 0.1.0\n")
    exe.chmod(0o755)
    install(["opencode"], ctx(command=str(exe), mcp=False))
    checks = {c.name: c for c in doctor(["opencode"], ctx(command=str(exe)))}
    assert checks["hooks"].status == "ok" and "6 events" in checks["hooks"].detail
    assert checks["hook executable"].status == "ok" and "plugin version" not in checks
    plugin = config_dir() / "plugins" / "wiki-memory.js"
    plugin.write_text(plugin.read_text().replace("const START_WAIT_MS = 10000", "const START_WAIT_MS = 5000"))
    checks = {c.name: c for c in doctor(["opencode"], ctx(command=str(exe)))}
    assert checks["plugin version"].status == "warn" and "install opencode" in checks["plugin version"].detail


def test_the_plugin_names_the_command_and_nothing_else_changes():
    template = render_plugin(["wiki-memory"])
    rendered = render_plugin(["/a b/wiki-memory"])
    assert plugin_command(rendered) == ["/a b/wiki-memory"]
    assert [a for a, b in zip(template.splitlines(), rendered.splitlines(), strict=True) if a != b] == [
        'const WIKI_MEMORY = ["wiki-memory"] // wiki-memory:command'
    ]


# The JSONC editor ---------------------------------------------------------------------------

ENTRY = {"type": "local", "command": ["/x/wiki-memory", "serve"], "enabled": True}
TEXTS = [
    '{\n  "$schema": "https://opencode.ai/config.json"\n}',
    "{}",
    "{\n}\n",
    USER_CONFIG,
    '{"a": 1, "mcp": {}}',
    '{\n\t"mcp": {\n\t\t"x": {"type": "local", "command": ["x"]}\n\t}\n}\n',
    '{\n  "mcp": {\n    "x": {},\n  }, // trailing commas\n}\n',
    '{"s": "a // b /* c */ \\" d", "mcp": {"y": 1}}',
]


@pytest.mark.parametrize("text", TEXTS)
def test_adding_then_removing_a_member_gives_back_the_same_text(text):
    data = jsonc.loads(text)
    if "mcp" in data:
        added = jsonc.add_member(text, ["mcp"], "wiki-memory", ENTRY)
        back = jsonc.remove(added, ["mcp", "wiki-memory"])
    else:
        added = jsonc.add_member(text, [], "mcp", {"wiki-memory": ENTRY})
        back = jsonc.remove(added, ["mcp"])
    assert jsonc.loads(added)["mcp"]["wiki-memory"] == ENTRY
    assert {k: v for k, v in jsonc.loads(added).items() if k != "mcp"} == {k: v for k, v in data.items() if k != "mcp"}
    assert back == text


def test_jsonc_reads_comments_and_trailing_commas_and_says_where_it_is_broken():
    assert jsonc.loads('// top\n{"a": [1, 2,], /* x */ "b": "// not a comment",}') == {
        "a": [1, 2],
        "b": "// not a comment",
    }
    for bad, where in (('{"a": 1 "b": 2}', "line 1, column 9"), ('{\n  "a": /* open', "line 2, column 8")):
        with pytest.raises(jsonc.JsoncError, match=where):
            jsonc.loads(bad)


def test_removing_a_member_among_others_leaves_them_valid():
    text = '{\n  "mcp": {\n    "a": 1,\n    "wiki-memory": 2,\n    "b": 3\n  }\n}\n'
    assert jsonc.loads(jsonc.remove(text, ["mcp", "wiki-memory"])) == {"mcp": {"a": 1, "b": 3}}
    first = '{"mcp": {"wiki-memory": 2, "b": 3}}'
    assert jsonc.remove(first, ["mcp", "wiki-memory"]) == '{"mcp": {"b": 3}}'
    assert jsonc.remove(first, ["mcp", "none"]) == first
