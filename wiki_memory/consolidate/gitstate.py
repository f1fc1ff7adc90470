"""The state of a git repository's working tree, with the standard library alone: HEAD and
the content hash (git blob id) of every file `git status` lists; and which files differ
between two such states. Run as a script (`python -I -S gitstate.py ROOT OUT HOME`) it writes
a state to OUT: the SessionStart hook starts it so, in a process that imports nothing else
(a few milliseconds of interpreter start-up instead of a hundred).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_FILES = 5000  # a tree with more dirty files than this is not hashed file by file
GIT_TIMEOUT = 20


def _git(root: Path, *args: str, data: str | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            input=data,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # never take the index lock from under the agent
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _dirty(root: Path) -> list[str] | None:
    """The files `git status` lists (modified, added, deleted, renamed, untracked)."""
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if out is None:
        return None
    paths: list[str] = []
    parts = out.split("\0")
    i = 0
    while i < len(parts):
        entry = parts[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        paths.append(path)
        if "R" in status or "C" in status:
            if i < len(parts) and parts[i]:
                paths.append(parts[i])  # the old name of a rename or copy
            i += 1
    return list(dict.fromkeys(paths))


def _hashes(root: Path, paths: Sequence[str]) -> dict[str, str]:
    """Each path's content hash (its git blob id), "-" for a path that is not a file."""
    files = [p for p in paths if (root / p).is_file()]
    out = _git(root, "hash-object", "--stdin-paths", data="".join(f"{p}\n" for p in files)) if files else ""
    blobs = (out or "").split()
    hashed = dict(zip(files, blobs, strict=False)) if len(blobs) == len(files) else {}
    return {p: hashed.get(p, "-") for p in paths}


def snapshot(root: Path) -> dict[str, Any] | None:
    """The repository's state: HEAD and the hash of every file `git status` lists."""
    if not (root / ".git").exists():
        return None
    dirty = _dirty(root)
    if dirty is None:
        return None
    head = (_git(root, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
    if len(dirty) > MAX_FILES:
        return {"head": head, "files": None, "time": time.time()}
    return {"head": head, "files": _hashes(root, dirty), "time": time.time()}


def ignored(root: Path, paths: Sequence[str]) -> list[str]:
    """Of `paths` (relative to `root`), those git's ignore rules keep out of the repository
    (a file already tracked is not: it is committed whatever the rules say)."""
    if not paths or not (root / ".git").exists():
        return []
    out = _git(root, "check-ignore", "--stdin", data="".join(f"{p}\n" for p in paths))
    return [line for line in (out or "").splitlines() if line]  # (status 1: none is ignored)


def _tree_blobs(root: Path, head: Any, paths: Sequence[str]) -> dict[str, str]:
    """The blob id of each path in commit `head` (absent paths are left out)."""
    if not head or not paths:
        return {}
    out = _git(root, "ls-tree", "-r", "-z", "--full-tree", str(head), "--", *paths) or ""
    blobs: dict[str, str] = {}
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if path and len(fields) == 3:
            blobs[path] = fields[2]
    return blobs


def changed_files(root: Path, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The files whose content differs between two snapshots of the repository at `root`:
    each file's content is its hash as `git status` listed it, else its blob in HEAD."""
    head_a, head_b = before.get("head"), after.get("head")
    files_a, files_b = before.get("files"), after.get("files")
    candidates: dict[str, None] = {}
    if head_a != head_b and head_a and head_b:
        out = _git(root, "diff", "--name-only", "--no-renames", str(head_a), str(head_b))
        candidates.update((p, None) for p in (out or "").splitlines() if p)
    if not isinstance(files_a, dict) or not isinstance(files_b, dict):
        return list(candidates)  # too many dirty files to hash: what the commits changed
    candidates.update((p, None) for p in files_a)
    candidates.update((p, None) for p in files_b)
    paths = list(candidates)
    if head_a == head_b:
        in_a = in_b = _tree_blobs(root, head_a, [p for p in paths if p not in files_a or p not in files_b])
    else:
        in_a = _tree_blobs(root, head_a, [p for p in paths if p not in files_a])
        in_b = _tree_blobs(root, head_b, [p for p in paths if p not in files_b])
    return [p for p in paths if files_a.get(p, in_a.get(p, "-")) != files_b.get(p, in_b.get(p, "-"))]


def main(argv: Sequence[str]) -> int:
    """`ROOT OUT HOME`: write ROOT's state to OUT, if HOME (the project's home) still exists."""
    if len(argv) != 3:
        return 2
    root, out, home = Path(argv[0]), Path(argv[1]), Path(argv[2])
    state = snapshot(root)
    if state is None or not home.is_dir() or out.exists():
        return 0  # no repository, the home went away meanwhile (a demo cleaned up), or already recorded
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
