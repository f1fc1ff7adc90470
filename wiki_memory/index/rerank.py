"""An optional reranker: a cross-encoder that scores the top candidates of a search against
the query, read by pairs (query, passage) rather than compared as two vectors.

Off unless `[search]` in config.toml names one (`WIKI_MEMORY_RERANK` overrides `rerank`):

- `rerank = "<fastembed cross-encoder>"` (`Xenova/ms-marco-MiniLM-L-6-v2`,
  `BAAI/bge-reranker-base`, `jinaai/jina-reranker-v1-turbo-en`, ...: any name
  `fastembed.rerank.cross_encoder.TextCrossEncoder.list_supported_models()` lists), run in
  this process; `rerank_path` names a local copy, loaded offline.
- `rerank_url = "http://localhost:8080/v1"` (any Cohere/Jina-style endpoint: Cohere, Jina,
  vLLM, TEI, Infinity): `POST {rerank_url}/rerank` with `{model, query, documents, top_n}`,
  answered by `{"results": [{"index", "relevance_score"}]}`; `rerank_model`, the key read from
  the variable `rerank_api_key_env` names, `rerank_timeout` seconds.

`rerank_top` candidates (20) are reranked; `rerank_recall = true` lets recall use it too
(off: a hook never waits on a reranker). A reranker that fails or times out leaves the fused
order, with one warning, and is tried again a minute later.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

from wiki_memory.config import model_cache_dir
from wiki_memory.config.settings import SearchSettings, Settings
from wiki_memory.errors import WikiMemoryError

DEFAULT_TOP = SearchSettings.rerank_top  # candidates reranked: a cross-encoder reads each (query, passage) pair
DEFAULT_TIMEOUT = SearchSettings.rerank_timeout  # seconds an endpoint may take for one query's candidates
RETRY_AFTER = 60.0  # seconds before a failed reranker is asked again


class RerankFailedWarning(UserWarning):
    """The reranker failed: the search keeps the fused order."""


_warned: set[str] = set()


class Reranker:
    """The reranker `[search]` configures (`enabled` is False when none is)."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings if settings is not None else Settings()
        section = settings.search
        self.name = os.environ.get("WIKI_MEMORY_RERANK") or section.rerank
        self.url = section.rerank_url.rstrip("/")
        self.model = section.rerank_model or self.name
        self.path = section.rerank_path or None
        self.api_key_env = section.rerank_api_key_env
        self.for_recall = section.rerank_recall
        self._error: str | None = None
        self._retry_at = 0.0
        self._model: Any = None
        self._lock = threading.Lock()
        self.timeout = section.rerank_timeout or DEFAULT_TIMEOUT
        self.top = max(1, section.rerank_top)
        try:
            settings.check("search", ("rerank_timeout", "rerank_top"))
        except WikiMemoryError as e:
            self._fail(str(e))

    @property
    def enabled(self) -> bool:
        return bool(self.url or self.name)

    @property
    def label(self) -> str:
        """What reranks, for notes and --explain."""
        return f"{self.url}/rerank ({self.model})" if self.url else self.name

    @property
    def error(self) -> str | None:
        return self._error

    def _fail(self, why: str) -> None:
        """Give up on the reranker for RETRY_AFTER seconds, with one warning."""
        self._error = why
        self._retry_at = time.monotonic() + RETRY_AFTER
        key = self.label or "reranker"
        if key not in _warned:
            _warned.add(key)
            warnings.warn(
                f"the reranker failed ({why[:300]}); keeping the fused order", RerankFailedWarning, stacklevel=3
            )

    def scores(self, query: str, documents: Sequence[str]) -> list[float] | None:
        """Each document's relevance to `query` (higher is better), or None when the
        reranker is off or failed (said once)."""
        if not self.enabled or not documents:
            return None
        if self._error is not None:
            if time.monotonic() < self._retry_at:
                return None
            self._error = None
        try:
            if self.url:
                return self._endpoint(query, documents)
            return self._local(query, documents)
        except RerankFailed as e:
            self._fail(str(e))
            return None

    # A fastembed cross-encoder --------------------------------------------------------

    def _local(self, query: str, documents: Sequence[str]) -> list[float]:
        model = self._load()
        try:
            return [float(s) for s in model.rerank(query, list(documents))]
        except Exception as e:  # noqa: BLE001 - onnxruntime's errors have no common base
            raise RerankFailed(f"{self.name}: {first_line(e)}") from None

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            if self.path and not os.path.isdir(self.path):
                raise RerankFailed(f"{self.name}: no model folder at {self.path}")
            try:
                from fastembed.rerank.cross_encoder import TextCrossEncoder  # deferred: onnxruntime, ~1 s

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if self.path:
                        self._model = TextCrossEncoder(
                            self.name, specific_model_path=self.path, local_files_only=True, threads=1
                        )
                    else:
                        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
                        self._model = TextCrossEncoder(
                            self.name, cache_dir=model_cache_dir(), local_files_only=offline, threads=1
                        )
            except Exception as e:  # noqa: BLE001 - offline, an unknown name, a broken file
                raise RerankFailed(f"{self.name}: {first_line(e)}") from None
            return self._model

    # A Cohere/Jina-style endpoint -------------------------------------------------------

    def _endpoint(self, query: str, documents: Sequence[str]) -> list[float]:
        """POST {url}/rerank; the scores in the documents' order."""

        body = {"model": self.model, "query": query, "documents": list(documents), "top_n": len(documents)}
        from wiki_memory.index.http import post_json  # deferred: urllib and ssl load only for a reranking endpoint

        answer = post_json(
            f"{self.url}/rerank", body, api_key_env=self.api_key_env, timeout=self.timeout, error=RerankFailed
        )
        scores: list[float | None] = [None] * len(documents)
        try:
            for item in answer["results"]:
                scores[int(item["index"])] = float(item["relevance_score"])
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise RerankFailed(f"{self.url}: not a rerank answer ({error!r})") from None
        if any(s is None for s in scores):
            raise RerankFailed(f"{self.url}: scored {sum(s is not None for s in scores)} of {len(documents)}")
        return [float(s) for s in scores if s is not None]


class RerankFailed(RuntimeError):
    """The reranker failed on a call."""


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__
