"""Vectors for a changed model, made in a process of its own while searches go on by words.

`python -m wiki_memory.index.rebuild INDEX` embeds every chunk that lacks a vector of the
configured model (`[index]` of config.toml in the home of its environment), then deletes
the vectors of every other model. One runs per index at a time (a lock beside the file);
a second start exits at once. A provider that fails stops it (the chunks stay pending, and
the next search that finds the change starts it again).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from wiki_memory.config import load_settings


def lock_path(index: Path) -> Path:
    return index.with_name(index.name + ".rebuild.lock")


def start(index: Path) -> subprocess.Popen[bytes] | None:
    """Start the rebuild of `index`'s vectors in the background (None when it cannot start)."""
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "wiki_memory.index.rebuild", str(index)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the search that started it
            close_fds=True,
        )
    except OSError:
        return None


def run(index_path: Path) -> int:
    """Embed what lacks a vector, then drop other models' vectors; 0 when complete."""
    import fcntl  # deferred: POSIX only (no fcntl on Windows)

    from wiki_memory.index import Index  # deferred: index.py imports this module: a cycle at the top

    with open(lock_path(index_path), "a+") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another process rebuilds it
        index = Index(index_path, settings=load_settings())
        try:
            index.embedder.for_bulk()
            if not index.embedder.available():
                return 1
            while True:
                pending = index.vectors.pending_count()
                if not pending:
                    index.vectors.drop_other_models()
                    return 0
                if not index.vectors.embed_pending(limit=1024):
                    return 1  # the provider failed (said in its warning)
        finally:
            index.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not os.path.isfile(args[0]):
        print("usage: python -m wiki_memory.index.rebuild INDEX_FILE", file=sys.stderr)
        return 2
    return run(Path(args[0]))


if __name__ == "__main__":
    sys.exit(main())
