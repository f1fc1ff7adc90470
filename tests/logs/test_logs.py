"""The logs (`wiki_memory.logs`): one file per purpose, rotated, redacted, private, and a
line that cannot be written never breaks the caller."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from wiki_memory import logs
from wiki_memory.config import resolve_project
from wiki_memory.hook import main as hook
from wiki_memory.recall.seen import seen_file

TOKEN = "ghp_" + "a1B2c3D4e5" * 4  # the shape of a GitHub token


def lines(name: str) -> list[str]:
    path = logs.path(name)
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_a_line_is_one_line_with_time_and_process():
    logs.write("sync", "first\nsecond   third")
    [line] = lines("sync")
    stamp, pid, message = line.split(" ", 2)
    assert stamp.endswith("Z") and pid == f"[{os.getpid()}]" and message == "first second third"


def test_each_purpose_writes_its_own_file():
    for name in logs.NAMES:
        logs.write(name, f"a line for {name}")
    found = sorted(p.name for p in logs.folder().iterdir())
    assert found == sorted(f"{name}.log" for name in logs.NAMES)
    with pytest.raises(ValueError, match="no log named 'hook'"):
        logs.path("hook")


def test_a_log_past_its_limit_moves_aside():
    path = logs.path("consolidate")
    path.parent.mkdir(parents=True)
    path.write_text("x" * (logs.LIMIT + 1))
    logs.write("consolidate", "after the move")
    assert path.with_name("consolidate.log.1").stat().st_size == logs.LIMIT + 1
    assert [line.split(" ", 2)[2] for line in lines("consolidate")] == ["after the move"]


def test_files_are_private_even_one_left_readable():
    logs.write("hooks", "a line")
    assert stat.S_IMODE(logs.path("hooks").stat().st_mode) == 0o600
    older = logs.path("sync")
    older.write_text("")
    older.chmod(0o644)
    logs.write("sync", "a line")
    assert stat.S_IMODE(older.stat().st_mode) == 0o600
    fd = logs.open_for_child("recall-helper")
    assert fd is not None
    os.close(fd)
    assert stat.S_IMODE(logs.path("recall-helper").stat().st_mode) == 0o600


def test_what_looks_like_a_secret_is_not_written():
    logs.write("mcp", f"push failed: https://x:{TOKEN}@github.com/org/repo rejected")
    text = logs.path("mcp").read_text()
    assert TOKEN not in text and "push failed" in text and "REDACTED" in text


def test_a_long_message_keeps_its_head_and_its_end():
    logs.write("sync", "start " + "y" * 10_000 + " ValueError: the end")
    [line] = lines("sync")
    assert len(line) < logs.MAX_LINE + 100
    assert " start " in line and line.endswith("ValueError: the end")


def test_a_disk_that_fails_does_not_raise(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env = {"WIKI_MEMORY_HOME": str(blocked / "home")}  # the home's parent is a file
    logs.write("hooks", "lost", env)
    assert logs.open_for_child("consolidate", env) is None
    if Path("/dev/full").exists():  # every write fails with ENOSPC
        logs.folder().mkdir(parents=True)
        logs.path("hooks").symlink_to("/dev/full")
        logs.write("hooks", "lost too")


def test_a_background_log_does_not_make_a_home_anew(tmp_path):
    gone = tmp_path / "gone"
    logs.write("consolidate", "a worker outlived its home", {"WIKI_MEMORY_HOME": str(gone)})
    logs.write("recall-helper", "so did the helper", root=str(gone))
    assert not gone.exists()
    logs.write("hooks", "a hook call makes it", {"WIKI_MEMORY_HOME": str(gone)})
    assert (gone / "logs" / "hooks.log").exists()


def test_the_front_ends_log_through_it(capsys):
    log = logs.Log("ui")
    try:
        raise OSError("the disk went away")
    except OSError:
        log.debug("closing %s failed", "proj-1", exc_info=True)
    log.warning("wiki-memory: %s", "a warning")
    assert [line.split(" ", 2)[2] for line in lines("ui")] == [
        "closing proj-1 failed: OSError: the disk went away",
        "wiki-memory: a warning",
    ]
    assert capsys.readouterr().err == "wiki-memory: a warning\n"


def test_a_recall_failure_lands_in_the_hook_log_not_consolidations(tmp_path):
    """Recall fails inside a hook call (here its record of what the session was handed is
    not UTF-8): the hook log says so, where `doctor` and SessionStart's health line look;
    consolidation's log stays about consolidation."""
    project = resolve_project(tmp_path)
    record = Path(seen_file(project, "s-1"))
    record.parent.mkdir(parents=True)
    record.write_bytes(b"\xff\xfe not text")
    payload = {
        "session_id": "s-1",
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how do we deploy the billing worker to staging",
    }
    env = {**os.environ, "WIKI_MEMORY_RECALL": "words"}
    out = io.BytesIO()
    assert hook.main(["claude-code", "UserPromptSubmit"], io.BytesIO(json.dumps(payload).encode()), out, env) == 0
    assert out.getvalue() == b""
    [line] = lines("hooks")
    assert "recall claude-code UserPromptSubmit s-1: UnicodeDecodeError" in line
    assert lines("consolidate") == []
