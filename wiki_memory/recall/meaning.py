"""Asking the warm helper (`recall.helper`) how close a prompt's meaning is to some pages,
and starting it when it is not there. Standard library only: this runs in the hook.

There is one helper per user, whatever the environment: it serves every wiki-memory home
(each request names its project or index), and it listens on a Unix socket in a private
folder (mode 0700, checked) that depends on the user alone, not on `$TMPDIR` or the home:
`/tmp/wiki-memory-<uid>/recall.sock` (`WIKI_MEMORY_RUNTIME_DIR` names another folder, for
tests). Helpers of earlier versions listened in `$TMPDIR/wiki-memory-<uid>/`, one per home
and per temporary directory; their files are removed when a hook starts the helper, and a
helper whose socket is removed exits. A hook that cannot reach the helper within its
timeout goes on by words alone.
"""

from __future__ import annotations

import _socket
import json
import os
import sys
import time

from wiki_memory import logs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from typing import Any

    from wiki_memory.config import Project
    from wiki_memory.recall.settings import RecallSettings

IDLE = 600.0  # seconds the helper stays up without a request
TIMEOUT = 0.25  # seconds a hook waits for an answer
START_EVERY = 10.0  # seconds between two starts of the helper by hooks, at most
NAME = "recall"


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def _folder() -> str:
    """The user's folder for the helper: the same for every home and temporary directory."""
    # Not tempfile.gettempdir() (nor $TMPDIR): a session's own temporary directory made a
    # helper of its own. A socket path must stay under ~100 bytes, which a deep home would break.
    return os.environ.get("WIKI_MEMORY_RUNTIME_DIR") or f"/tmp/wiki-memory-{_uid()}"


def socket_path(home: str | None = None) -> str:
    """The helper's socket (`home`, once its address, no longer matters: one serves all)."""
    return os.path.join(_folder(), f"{NAME}.sock")


def lock_path(home: str | None = None) -> str:
    return os.path.join(_folder(), f"{NAME}.lock")


def started_path(home: str | None = None) -> str:
    return os.path.join(_folder(), f"{NAME}.started")


def remove_leftovers() -> list[str]:
    """Remove what helpers of earlier versions left in the temporary directories (one
    socket, lock and marker per home, in `$TMPDIR/wiki-memory-<uid>/` and `/tmp/...`): a
    helper still running there sees its socket gone and exits. The paths removed."""
    removed: list[str] = []
    current = os.path.abspath(_folder())
    folders = {os.path.join(base, f"wiki-memory-{_uid()}") for base in (os.environ.get("TMPDIR") or "/tmp", "/tmp")}
    for folder in sorted(folders):
        try:
            info = os.lstat(folder)
            names = os.listdir(folder)
        except OSError:
            continue
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            continue  # not ours: never touched
        for name in names:
            stem, dot, suffix = name.partition(".")
            old = stem.startswith(f"{NAME}-") and len(stem) == len(NAME) + 9 and suffix in ("sock", "lock", "started")
            if dot and old:
                try:
                    os.unlink(os.path.join(folder, name))
                    removed.append(os.path.join(folder, name))
                except OSError:
                    pass
        if os.path.abspath(folder) != current:
            try:
                os.rmdir(folder)  # only when nothing else is in it
            except OSError:
                pass
    return removed


def private_folder() -> str | None:
    """The helper's folder, created 0700; None when it exists but is not ours alone."""
    folder = _folder()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder)
    except OSError:
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        return None
    return folder


def ask(home: str | None, request: dict, timeout: float = TIMEOUT) -> dict | None:
    """The helper's answer to `request`, or None (not running, not ready, too slow). (`home`
    no longer picks the helper: one serves the user's every home.)"""
    if private_folder() is None:
        return None
    # Why `_socket`: importing `socket` builds its enums, which every prompt's hook would pay
    # for; the C socket object has every method used here.

    deadline = time.monotonic() + timeout
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(timeout)
            conn.connect(socket_path(home))
            conn.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                conn.settimeout(left)
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            conn.close()
        answer = json.loads(data)
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and answer.get("ok") else None


def similarities(
    home: str, index: str, text: str, pages: Sequence[str], timeout: float = TIMEOUT
) -> dict[str, float] | None:
    """page -> the best cosine between `text` and the page's chunks; None without a helper."""
    found = closeness(home, index, text, pages, None, timeout)
    return found[0] if found else None


def closeness(
    home: str, index: str, text: str, pages: Sequence[str], near: float | None, timeout: float = TIMEOUT
) -> tuple[dict[str, float], dict[str, tuple[float, int]]] | None:
    """`similarities` of `pages`, and (with `near`) the pages of the whole index whose best
    chunk is at least that close: page -> (closeness, chunk id); None without a helper."""
    request: dict[str, Any] = {"index": index, "text": text, "pages": list(pages)}
    if near is not None:
        request["near"] = near
    answer = ask(home, request, timeout)
    if answer is None or not isinstance(answer.get("sims"), dict):
        return None
    sims, nearest = answer["sims"], answer.get("near")
    close = {
        str(k): (float(v[0]), int(v[1]))
        for k, v in (nearest.items() if isinstance(nearest, dict) else ())
        if isinstance(v, list) and len(v) == 2
    }
    return {str(k): float(v) for k, v in sims.items()}, close


def recall(
    home: str,
    project: Project,
    settings: RecallSettings,
    *,
    prompt: str | None = None,
    files: Sequence[str] = (),
    cwd: str | None = None,
    exclude: Collection[str] = (),
    timeout: float = TIMEOUT,
) -> list[dict[str, Any]] | None:
    """The whole recall for a prompt (or files), done by the helper: its words and meaning,
    and the block; a list of {trigger, subject, text, pages}, or None without a helper.

    Why the helper does the words too: it holds the index open and its modules loaded, so a
    hook that asks it loads neither SQLite nor the finder."""
    request = {
        "op": "recall",
        "project": project.fields(),
        "settings": settings._asdict(),
        "prompt": prompt,
        "files": list(files),
        "cwd": cwd,
        "exclude": sorted(exclude),
    }
    answer = ask(home, request, timeout)
    results = answer.get("results") if answer else None
    return results if isinstance(results, list) else None


def running(home: str | None = None) -> bool:
    return ask(home, {"op": "ping"}, timeout=1.0) is not None


def stop(home: str | None = None) -> bool:
    """Ask the user's helper to exit; True when one answered."""
    return ask(home, {"op": "stop"}, timeout=2.0) is not None


def ensure_started(home: str, preload: str | None = None, idle: float = IDLE) -> int | None:
    """Start the user's helper in the background unless one was started in the last
    START_EVERY seconds; returns the new process's pid. A helper already running keeps its
    lock and the new one exits at once, so a race costs a short-lived process, never two.
    `home` is where the helper's log goes; the helper serves every home."""
    folder = private_folder()
    if folder is None:
        return None
    marker = started_path()
    try:
        if time.time() - os.stat(marker).st_mtime < START_EVERY:
            return None
    except FileNotFoundError:
        pass
    try:
        with open(marker, "w"):
            pass
    except OSError:
        return None
    remove_leftovers()
    command = [sys.executable, "-m", "wiki_memory.recall.helper", "--home", home, "--idle", str(idle)]
    if preload:
        command += ["--preload", preload]
    return logs.start_detached("recall-helper", command, "/", home_env={"WIKI_MEMORY_HOME": home})
