"""Codex's hook trust through the real Codex app server (`hooks/list`): install trusts our hooks
and no foreign one, a second install finds them trusted, the doctor checks it, uninstall gives
back the user's files. The installers' other tests: tests/install/test_install.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_install import cli, state, write_foreign


def test_codex_trust_through_the_real_app_server_and_doctor(agent_clis):
    codex_home = Path.home() / ".codex"
    write_foreign(Path.home(), "codex")
    before = state(Path.home())
    env = {"PATH": f"{agent_clis.bin_dir}:{os.environ['PATH']}"}
    result = cli("install", "codex", env=env)
    assert "trusted 7 hooks (verified with hooks/list)" in result.output
    assert "7 hooks already trusted" in cli("install", "codex", env=env).output
    doctor = cli("doctor", "codex", env=env)
    assert "ok   codex        hooks trusted    7 hooks trusted" in doctor.output
    # The foreign Stop hook was not trusted on the user's behalf.
    config = (codex_home / "config.toml").read_text()
    assert config.count("trusted_hash") == 7
    cli("uninstall", "codex", env=env)
    after = state(Path.home())
    assert after[".codex/config.toml"] == before[".codex/config.toml"]
    assert json.loads(after[".codex/hooks.json"]) == json.loads(before[".codex/hooks.json"])
