"""What the end-to-end tests check after a real agent's session: the installer run as a user
runs it, the handoff in a model request, the background consolidation finished, the logs
to show when it did not; and stand-ins for a wiki-memory that fails."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.consolidate import state


def install(*args: str, env: dict[str, str] | None = None) -> str:
    """`wiki-memory install ARGS...`, which must succeed; its output."""
    result = CliRunner().invoke(main, ["install", *args], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def strings(value: Any) -> str:
    """Every string in a JSON body, joined: what the model reads, unescaped."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(strings(v) for v in value)
    return ""


def logs() -> str:
    """The hook and consolidation logs, for a failure message."""
    from wiki_memory.config import home

    folder = home() / "logs"
    return (
        "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(folder.glob("*.log")))
        if folder.is_dir()
        else "(no logs)"
    )


def handoff_in(request_body: Any) -> str:
    """The handoff a model request carries (the test fails, with the logs, when it has none)."""
    seen = strings(request_body)
    start = seen.find("<wiki-memory handoff")
    assert start >= 0, f"the model request carries no handoff; logs:\n{logs()}"
    end = seen.find("</wiki-memory handoff>", start)
    return seen[start : end + len("</wiki-memory handoff>")]


def wait_consolidated(repo: Path, agent: str, timeout: float = 60) -> list[str]:
    """The pages of `agent`'s session, once its background consolidation has finished.

    An agent that exits without running its SessionEnd hook (Claude Code did, once in many CI
    runs: its journal held no end and no hook had logged a thing) leaves the session to the
    next SessionStart's pending consolidation; then this runs that consolidation itself, as
    the next session would, and says so in a warning. A journal that did record the end, or
    no journal at all, fails as before, with the journals and logs in the message.
    """
    project = resolve_project(repo)
    deadline = time.time() + timeout
    while time.time() < deadline:
        pages = _consolidated(project, agent)
        if pages:
            return pages
        if time.time() > deadline - timeout / 2 and _unended(project, agent):
            return _consolidate_as_next_start(project, agent)
        time.sleep(0.1)
    raise AssertionError(f"the {agent} session was never consolidated; journals: {_journals(project)}; logs:\n{logs()}")


def _consolidated(project: Any, agent: str) -> list[str]:
    for state_file in state.state_dir(project).glob("*.json"):
        data = json.loads(state_file.read_text())
        if data.get("agent") == agent and data.get("pages"):
            return list(data["pages"])
    return []


def _journals(project: Any) -> dict[str, dict[str, int]]:
    """Each journal of the project: how many observations of each kind it holds."""
    from wiki_memory.capture import journal

    out: dict[str, dict[str, int]] = {}
    for path in sorted(project.journal_dir.glob("*.jsonl")):
        kinds: dict[str, int] = {}
        for record in journal.records(path):
            key = f"{record.get('agent')}:{record.get('kind')}"
            kinds[key] = kinds.get(key, 0) + 1
        out[path.stem] = kinds
    return out


def _unended(project: Any, agent: str) -> bool:
    """Whether a journal of `agent` never recorded its session's end."""
    return any(
        not kinds.get(f"{agent}:session-end")
        for kinds in _journals(project).values()
        if any(k.startswith(f"{agent}:") for k in kinds)
    )


def _consolidate_as_next_start(project: Any, agent: str) -> list[str]:
    import warnings

    from wiki_memory.memory import Memory

    with Memory(project) as memory:
        memory.consolidate_pending(settle=0)
    pages = _consolidated(project, agent)
    assert pages, f"the pending consolidation wrote no {agent} session; journals: {_journals(project)}"
    warnings.warn(
        f"{agent} exited without running its SessionEnd hook; its session was consolidated as the "
        "next SessionStart would (consolidate --pending)",
        stacklevel=2,
    )
    return pages


# Stand-ins for a wiki-memory that fails: the agents must carry on regardless ------------------

_HANGING = """#!{python}
import os, sys, time
with open(os.path.join({record!r}, str(os.getpid())), "w") as f:
    f.write(" ".join(sys.argv[1:]))
time.sleep(600)
"""
# As Python crashes: half a JSON line out, a traceback, exit 1. (wiki-memory's hook itself
# always exits 0; a program that printed and exited 2 or more would be a veto to Gemini CLI.)
_CRASHING = """#!/bin/sh
cat > /dev/null
echo 'Traceback (most recent call last): {"decision": "deny", "context": 12'
echo 'ImportError: it all went wrong' >&2
exit 1
"""


def failing_wiki_memory(kind: str, folder: Path) -> Path:
    """A `wiki-memory` that hangs (recording its pid in `folder/pids`), crashes, or is
    missing (`kind`); its path, for the installer to write into the agent's entries."""
    (folder / "pids").mkdir(parents=True, exist_ok=True)
    exe = folder / "bin" / "wiki-memory"
    exe.parent.mkdir(parents=True, exist_ok=True)
    if kind == "hanging":
        exe.write_text(_HANGING.format(python=sys.executable, record=str(folder / "pids")))
    elif kind == "crashing":
        exe.write_text(_CRASHING)
    if exe.exists():
        exe.chmod(0o755)
    return exe


def stop_hanging(folder: Path) -> int:
    """End the hanging stand-ins still running (by the pids they recorded); how many were called."""
    pids = list((folder / "pids").iterdir())
    for pid in pids:
        try:
            os.kill(int(pid.name), signal.SIGTERM)
        except ProcessLookupError:
            pass
    return len(pids)
