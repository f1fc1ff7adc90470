"""The commits this wiki received from a remote: sync records them as it brings them in, so
that what arrived by sync can be told from what was written here, whatever a commit's own
author or `Host:` trailer claim (`consolidate.provenance` reads it).

One hex commit id a line in `.git/wiki-memory-received`, appended under the writer lock.
A wiki cloned or pulled by other means has no record: commits from another machine are
then known by their `Host:` trailer alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FILE = "wiki-memory-received"


def record_path(repo: Any) -> Path:
    """Where the record of `repo` (a dulwich Repo) lives: in its git directory."""
    return Path(repo.controldir()) / FILE


def record(repo: Any, commits: Iterable[bytes | str]) -> int:
    """Add `commits` to the record; how many were added."""
    lines = [(c.decode() if isinstance(c, bytes) else c) + "\n" for c in commits]
    if not lines:
        return 0
    with open(record_path(repo), "a", encoding="ascii") as f:
        f.write("".join(lines))
        f.flush()
        os.fsync(f.fileno())
    return len(lines)


def received(repo: Any) -> frozenset[str]:
    """The ids of every commit recorded as received."""
    try:
        text = record_path(repo).read_text(encoding="ascii", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if len(line.strip()) == 40)
