"""Shared parts of the retrieval evaluations (eval_locomo.py, eval_coding.py): an embedding
cache on disk, so that tuning runs do not recompute the same vectors, and small helpers."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import statistics
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "models").is_dir()), REPO.parent / "shared")
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "wiki-memory-eval-cache"


def setup_model_env() -> None:
    """Point at the shared local model when nothing else is configured (as the tests do)."""
    local = SHARED / "models" / "all-MiniLM-L6-v2"
    if not os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH") and local.is_dir():
        os.environ["WIKI_MEMORY_EMBED_MODEL_PATH"] = str(local)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def caching_embedder(cache_dir: Path | None, **kwargs: Any):
    """An Embedder whose vectors are kept in `cache_dir/embeddings.sqlite`, keyed by model
    and text: the index code is the project's own; only repeated model runs are skipped."""
    from wiki_memory.index import Embedder

    class CachingEmbedder(Embedder):
        def __init__(self) -> None:
            super().__init__(**kwargs)
            self.hits = 0
            self.db = None
            if cache_dir is not None:
                cache_dir.mkdir(parents=True, exist_ok=True)
                # A search embeds its query on a worker thread: one connection, used under a lock.
                self.db = sqlite3.connect(str(cache_dir / "embeddings.sqlite"), check_same_thread=False)
                self.db_lock = threading.Lock()
                self.db.execute("CREATE TABLE IF NOT EXISTS vec(key TEXT PRIMARY KEY, v BLOB)")

        def _key(self, text: str) -> str:
            return hashlib.sha1(f"{self.name}\0{text}".encode()).hexdigest()

        def embed(self, texts: Sequence[str]):
            if self.db is None:
                return super().embed(texts)
            with self.db_lock:
                return self._cached(texts)

        def _cached(self, texts: Sequence[str]):
            import numpy as np

            keys = [self._key(t) for t in texts]
            found: dict[str, bytes] = {}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                found.update(
                    self.db.execute(
                        f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})", part
                    ).fetchall()
                )
            missing = [i for i, k in enumerate(keys) if k not in found]
            self.hits += len(keys) - len(missing)
            if missing:
                fresh = super().embed([texts[i] for i in missing])
                rows = [(keys[i], fresh[j].astype(np.float32).tobytes()) for j, i in enumerate(missing)]
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
                self.db.commit()
                found.update(rows)
            if self.dim is None and found:
                self.dim = len(next(iter(found.values()))) // 4
            return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

        def available(self) -> bool:
            # Loaded lazily: a fully cached run never loads the model.
            return self.db is not None or super().available()

        @property
        def loaded(self) -> bool:
            return True

    return CachingEmbedder()


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1] if 1 <= q <= 99 else ordered[-1]


def parse_settings(pairs: Sequence[str]) -> dict[str, Any]:
    """`key=value` pairs for Tuning fields, values as int/float when they look like one."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set {pair!r}: expected key=value")
        for cast in (int, float):
            try:
                out[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            out[key] = value
    return out
