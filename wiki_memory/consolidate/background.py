"""Consolidation started from a hook, in a process of its own that outlives the hook.

Claude Code gives a SessionEnd hook about 1.5 s and Codex 3 s, and both may exit right
after: consolidation (git, maybe an LLM) runs in a detached process, in its own session
(`start_new_session`), with no tie to the hook's pipes. Standard library only.

Agents without a SessionEnd fire Stop after every turn; those starts are debounced: each
Stop writes a fresh token and starts a sleeper, and a sleeper whose token was replaced, or
whose session is still writing to its journal, does nothing. `python -m
wiki_memory.consolidate.background` is that sleeper.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from wiki_memory.config import Project, home

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Mapping, Sequence


def state_dir(project: Project) -> Path:
    """Per-session consolidation state, locks and debounce tokens."""
    return project.home / "consolidate"


def log(message: str, env: Mapping[str, str] | None = None) -> None:
    """One line in `WIKI_MEMORY_HOME/logs/consolidate.log`; never raises."""
    try:
        folder = home(env) / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(folder / "consolidate.log", "a", encoding="utf-8") as f:
            f.write(f"{stamp} [{os.getpid()}] {' '.join(message.split())}\n")
    except OSError:
        pass


def _project_args(project: Project) -> tuple[list[str], dict[str, str]]:
    """How a child process finds the same project: its code directory, or its wiki outright."""
    if project.root is not None and project.root.is_dir():
        return ["--project", str(project.root)], {}
    return [], {"WIKI_MEMORY_STORE": str(project.wiki)}


def spawn(project: Project, args: Sequence[str], *, module: str = "wiki_memory") -> int | None:
    """Start `python -m <module> [--project DIR] ARGS...` detached; returns its pid."""
    import subprocess

    project_args, extra_env = _project_args(project)
    env = dict(os.environ)
    env.update(extra_env)
    command = [sys.executable, "-m", module]
    command += (project_args + list(args)) if module == "wiki_memory" else list(args)
    try:
        logs = home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "consolidate.log", "ab") as err:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=str(project.root) if project.root and project.root.is_dir() else "/",
                env=env,
                start_new_session=True,
                close_fds=True,
            )
    except OSError as e:
        log(f"could not start {' '.join(command)}: {e}")
        return None
    return process.pid


def _token_file(project: Project, session_id: str) -> Path:
    from wiki_memory.capture.journal import journal_file

    return state_dir(project) / (journal_file(Path("."), session_id).stem + ".token")


def start_session(project: Project, session_id: str) -> int | None:
    """Consolidate one session now, in the background (SessionEnd)."""
    _new_token(project, session_id)  # a session end supersedes any debounced Stop
    return spawn(project, ["consolidate", "--session", session_id, "--quiet"])


def start_debounced(project: Project, session_id: str, delay: float) -> int | None:
    """Consolidate one session once it has been quiet for `delay` seconds (Stop)."""
    token = _new_token(project, session_id)
    project_args, _ = _project_args(project)
    return spawn(
        project,
        ["--token", token, "--delay", str(delay), "--session", session_id, "--"] + project_args,
        module="wiki_memory.consolidate.background",
    )


def start_pending(project: Project, *, every: float = 10.0) -> int | None:
    """Finish every journal left unconsolidated, at most once every `every` seconds."""
    marker = state_dir(project) / "pending.started"
    try:
        if time.time() - marker.stat().st_mtime < every:
            return None
    except FileNotFoundError:
        pass
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        return None
    return spawn(project, ["consolidate", "--pending", "--quiet"])


def _new_token(project: Project, session_id: str) -> str:
    token = os.urandom(8).hex()
    path = _token_file(project, session_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}")
        tmp.write_text(token, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return token


def _wait_for_quiet(project: Project, session_id: str, token: str, delay: float) -> bool:
    """Sleep until the session's journal has been quiet for `delay` seconds; False if a newer
    Stop (or the session's end) took over meanwhile."""
    from wiki_memory.capture.journal import journal_file

    journal = journal_file(project.journal_dir, session_id)
    token_path = _token_file(project, session_id)
    deadline = time.time() + max(delay * 20, 3600)
    while time.time() < deadline:
        time.sleep(delay)
        try:
            if token_path.read_text(encoding="utf-8").strip() != token:
                return False
        except OSError:
            return False
        try:
            quiet = time.time() - journal.stat().st_mtime
        except FileNotFoundError:
            return False
        if quiet >= delay:
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """`--token T --delay S --session ID -- [--project DIR]`: the debounced Stop sleeper."""
    import argparse

    parser = argparse.ArgumentParser(prog="wiki_memory.consolidate.background")
    parser.add_argument("--token", required=True)
    parser.add_argument("--delay", type=float, required=True)
    parser.add_argument("--session", required=True)
    parser.add_argument("rest", nargs="*")
    args = parser.parse_args(argv)
    from wiki_memory.config import resolve_project

    project_dir = args.rest[1] if len(args.rest) >= 2 and args.rest[0] == "--project" else None
    project = resolve_project(project_dir)
    if not _wait_for_quiet(project, args.session, args.token, args.delay):
        return 0
    command = [sys.executable, "-m", "wiki_memory", *args.rest, "consolidate", "--session", args.session, "--quiet"]
    os.execv(sys.executable, command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())


def _at_rest(path: Path) -> bool:
    """True when the session's last turn is over: its last Stop or end comes after its last
    prompt or start (read from the file's tail). Such a journal need not settle first: the
    agent is waiting for the user, or gone. Lines of asynchronous hooks (Claude Code's
    PostToolUse) that land after the Stop do not count."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read()
    except OSError:
        return False

    def last(kind: bytes) -> int:
        return max(tail.rfind(b'"kind":"' + kind + b'"'), tail.rfind(b'"kind": "' + kind + b'"'))

    return max(last(b"stop"), last(b"session-end")) > max(last(b"prompt"), last(b"session-start"))


def settle_seconds() -> float:
    """How long a journal must be quiet before `--pending` takes it (`[consolidate] settle_seconds`)."""
    from wiki_memory.config import load_settings
    from wiki_memory.errors import WikiMemoryError

    try:
        return float(load_settings().get("consolidate", "settle_seconds", 5))
    except (TypeError, ValueError, WikiMemoryError):
        return 5.0


def pending_journals(
    project: Project, *, settle: float = 5.0, exclude: Sequence[str] = (), now: float | None = None
) -> list[Path]:
    """Journals not consolidated as they stand, quiet for `settle` seconds (or whose last turn
    is over), newest first.

    A journal is consolidated when its state file is at least as new as the journal:
    consolidation stamps the state file with the journal's time as it read it, so a line
    appended meanwhile makes the journal newer again. Two directory listings, no reads.
    """
    from wiki_memory.capture.journal import journal_file

    now = time.time() if now is None else now
    skip = {journal_file(project.journal_dir, sid).name for sid in exclude if sid}
    states: dict[str, float] = {}
    try:
        with os.scandir(state_dir(project)) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    states[entry.name[:-5]] = entry.stat().st_mtime
    except OSError:
        pass
    found: list[tuple[float, Path]] = []
    try:
        with os.scandir(project.journal_dir) as entries:
            for entry in entries:
                if not entry.name.endswith(".jsonl") or entry.name in skip:
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                if st.st_size == 0:
                    continue
                done = states.get(entry.name[:-6])
                if done is not None and done >= st.st_mtime:
                    continue
                # A journal still being written is left alone, unless its turn is over.
                if now - st.st_mtime < settle and not _at_rest(Path(entry.path)):
                    continue
                found.append((st.st_mtime, Path(entry.path)))
    except OSError:
        return []
    found.sort(reverse=True)
    return [path for _, path in found]
