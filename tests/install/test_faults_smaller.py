"""The smaller faults of issue 21: a full disk, the installer on dotfiles, leftovers. Each
test fails on the code before the fix it names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from wiki_memory.cli import main


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# The installer on dotfiles -------------------------------------------------------------------


def test_the_installer_writes_through_a_symlinked_settings_file(tmp_path):
    """A symlinked `~/.claude/settings.json` (a dotfiles repository) was replaced by a
    regular file: the link is kept and the file it points at gets the entries."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text(json.dumps({"model": "opus"}) + "\n")
    link = Path.home() / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Agents\n")
    (tmp_path / "CLAUDE.md").symlink_to(agents)
    result = cli("install", "claude-code", "--no-mcp")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.path.realpath(link) == str(real)
    data = json.loads(real.read_text())
    assert data["model"] == "opus" and "SessionStart" in data["hooks"]
    assert cli("install-instructions", str(tmp_path / "CLAUDE.md")).exit_code == 0
    assert (tmp_path / "CLAUDE.md").is_symlink() and "wiki-memory:start" in agents.read_text()
    assert cli("uninstall", "claude-code").exit_code == 0
    assert link.is_symlink() and "hooks" not in json.loads(real.read_text())


def test_a_settings_path_that_is_a_directory_is_one_clear_line():
    """Gemini's settings path being a directory gave a traceback."""
    (Path.home() / ".gemini" / "settings.json").mkdir(parents=True)
    result = CliRunner().invoke(main, ["install", "gemini"])
    assert result.exit_code == 1 and "is a directory" in result.output.lower()
    assert len(result.output.strip().splitlines()) == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)


# A full disk ------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path):
    """An 8 MB file system (tmpfs) to fill up. Mounting needs root: on a machine where the
    tests run as another user, the full-disk test skips, saying so."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root; run as root to test a full disk")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); a full disk is not tested")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_memory", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_full_disk_is_one_line_and_leaves_nothing_behind(small_disk, code_repo):
    """A full disk gave raw tracebacks (28 commands of 28), then a misleading "index is
    busy", and left temporary files. Now every command says it in a line, leaves no
    litter, and works again once there is room."""
    env = {**os.environ, "WIKI_MEMORY_HOME": str(small_disk / "home")}
    assert run("write", "-t", "Seed page", "--body", "before the disk filled", cwd=code_repo, env=env).returncode == 0
    assert run("search", "filled", "--mode", "fts", cwd=code_repo, env=env).returncode == 0
    wiki = Path(run("path", cwd=code_repo, env=env).stdout.strip())
    filler = small_disk / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
    (wiki / "notes" / "hand.md").write_bytes(b"")  # an empty file fits; its edit below does not
    for args in (
        ("write", "-t", "Another page", "--body", "x" * 20000),
        ("edit", "Seed page", "--append", "y" * 20000),
        ("mv", "Seed page", "--title", "Renamed page"),
        ("rm", "Seed page"),
        ("handoff", "write", "--summary", "z" * 20000),
        ("reindex",),
        ("search", "filled", "--mode", "fts"),
        ("consolidate", "--pending"),
    ):
        result = run(*args, cwd=code_repo, env=env)
        assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, (args, result.stderr)
        assert "busy" not in result.stderr, (args, result.stderr)
        if result.returncode != 0:
            assert "no space left" in result.stderr or "disk is full" in result.stderr, (args, result.stderr)
    # Reading needs no room: the index as it stands answers (issue 27: search failed).
    found = run("search", "filled", "--mode", "fts", cwd=code_repo, env=env)
    assert found.returncode == 0 and "seed-page" in found.stdout, found.stderr
    writer_locks = {"wiki-memory.lock", ".create-wiki.lock", "sync.lock"}
    litter = [
        str(p.relative_to(small_disk))
        for p in small_disk.rglob("*")
        if p.name not in writer_locks and (p.name.endswith(".lock") or "tmp" in p.name)
    ]
    assert litter == []
    filler.unlink()
    after = run("write", "-t", "After the disk filled", "--body", "room again", cwd=code_repo, env=env)
    assert after.returncode == 0, after.stderr
    assert run("search", "room again", "--mode", "fts", cwd=code_repo, env=env).stdout.count("after-the-disk") == 1
    git(wiki, "fsck", "--strict")
    assert git(wiki, "status", "--porcelain").strip() in ("", "?? notes/hand.md")
