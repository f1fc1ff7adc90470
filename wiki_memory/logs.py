"""The logs: one file per purpose under `WIKI_MEMORY_HOME/logs/`, written one line at a time.

    hooks.log          a hook call that could not do its job, recall's failures inside one
    consolidate.log    background consolidation and distillation (and the workers' stderr)
    recall-helper.log  the warm recall helper (and its stderr)
    sync.log           `[sync] auto` after a consolidation
    access.log         the team server's refusals
    mcp.log, ui.log    the MCP server's and the viewer's failures between calls
    watch.log          what `watch` could not do, when its caller says nothing

Recall's failures (and SessionStart's, compaction's) go to `hooks.log`, not `consolidate.log`
where they used to: they happen inside a hook call, and `hooks.log` is where `doctor` and
SessionStart's health line look for a hook that is not doing its job. What the detached
workers do, hook-started or not, stays in `consolidate.log`.

Every line is `TIME [PID] MESSAGE`, the message on one line (its middle cut past `MAX_LINE`
characters),
with what looks like a secret redacted (the capture rules: an error message may quote a
token). Files are created mode 0600 (they may quote a path or a prompt's words), and moved
to `NAME.log.1` past `LIMIT` bytes. Writing a line never raises: a full disk or a home that
is gone loses the line, never the caller's work (a hook never breaks).

Standard library only: the hook path writes here.
"""

from __future__ import annotations

import os
import sys
import time

from wiki_memory.config import home

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime `typing` import on the hook path
    from collections.abc import Mapping
    from pathlib import Path

#: Every log by name; a name not listed here is a bug of ours (a typo would be a new file).
NAMES = ("hooks", "consolidate", "recall-helper", "sync", "access", "mcp", "ui", "watch")
#: Logs written by processes that may outlive their home (a demo's, a test's): they never
#: create a home anew, they leave nothing behind.
BACKGROUND = frozenset({"consolidate", "recall-helper"})
LIMIT = 1024 * 1024  # bytes; past this the log moves to NAME.log.1
MAX_LINE = 2000  # characters of one message


def folder(env: Mapping[str, str] | None = None) -> Path:
    """Where the logs live: `logs/` in the wiki-memory home."""
    return home(env) / "logs"


def path(name: str, env: Mapping[str, str] | None = None) -> Path:
    """The file of the log `name` (one of NAMES)."""
    if name not in NAMES:
        raise ValueError(f"no log named {name!r} (one of {', '.join(NAMES)})")
    return folder(env) / f"{name}.log"


def write(name: str, message: str, env: Mapping[str, str] | None = None, *, root: str | None = None) -> None:
    """Append one line to the log `name` (in `root`'s `logs/` when given, else the home's);
    never raises."""
    try:
        directory = os.path.join(root, "logs") if root is not None else str(folder(env))
        home_dir = os.path.dirname(directory)
        if name in BACKGROUND and not os.path.isdir(home_dir):
            return
        os.makedirs(directory, exist_ok=True)
        file = os.path.join(directory, os.path.basename(path(name)))
        _rotate(file)
        line = f"{stamp()} [{os.getpid()}] {_clean(message)}\n"
        fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o600)  # a log an older version left readable by others
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except BaseException:  # noqa: BLE001 - a full disk, a home that is gone, a bug here: the caller goes on
        pass


def open_for_child(name: str, env: Mapping[str, str] | None = None) -> int | None:
    """A file descriptor appending to the log `name`, for a detached process's stderr (the
    caller closes it), or None when the log cannot be opened."""
    try:
        file = path(name, env)
        file.parent.mkdir(parents=True, exist_ok=True)
        _rotate(str(file))
        return os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except (OSError, ValueError):
        return None


def start_detached(
    name: str,
    command: list[str],
    cwd: str,
    *,
    env: dict[str, str] | None = None,
    home_env: Mapping[str, str] | None = None,
) -> int | None:
    """Start `command` detached from the caller (its own session, no stdin or stdout), its
    stderr appended to the log `name`; its pid, or None when it could not start (the reason
    in that log). A hook's caller is never held up by, nor sees, what it started."""
    import subprocess  # deferred: only the hook calls that start a process pay for subprocess

    err = open_for_child(name, home_env)
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if err is None else err,
            cwd=cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        write(name, f"could not start {' '.join(command[:4])} ...: {e}", home_env)
        return None
    finally:
        if err is not None:
            os.close(err)
    return process.pid


class Log:
    """The log `name` behind the few `logging.Logger` methods long-running front ends call
    (`log.debug("closing %s failed", id, exc_info=True)`): every level goes to the file; a
    warning also to stderr, where a server's user (an MCP client's log) sees it."""

    def __init__(self, name: str) -> None:
        path(name)  # a name not in NAMES fails here, at import, not at the first line
        self.name = name

    def debug(self, message: str, *args: object, exc_info: bool = False) -> None:
        text = message % args if args else message
        if exc_info:
            error = sys.exc_info()[1]
            if error is not None:
                text += f": {type(error).__name__}: {error}"
        write(self.name, text)

    info = debug

    def warning(self, message: str, *args: object, exc_info: bool = False) -> None:
        self.debug(message, *args, exc_info=exc_info)
        try:
            print(message % args if args else message, file=sys.stderr)
        except (OSError, ValueError):  # a closed stderr
            pass


def stamp() -> str:
    """The time of a line: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _rotate(file: str) -> None:
    try:
        if os.stat(file).st_size > LIMIT:
            os.replace(file, file + ".1")
    except FileNotFoundError:
        pass


def _clean(message: str) -> str:
    # deferred: redaction's tables take ~50 ms to load; only a line actually written needs them
    from wiki_memory.capture.redact import redact

    text = redact(" ".join(str(message).split()))
    if len(text) <= MAX_LINE:
        return text
    # The head says what was being done, the tail (a traceback's last line) what went wrong.
    return f"{text[: MAX_LINE // 2]} ... {text[-MAX_LINE // 2 :]}"
