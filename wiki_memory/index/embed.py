"""Embeddings, loaded lazily and only in processes that need them: fastembed in this
process, or any server speaking OpenAI's embeddings API (Ollama, LM Studio, vLLM, OpenAI).

`[index] provider` in config.toml picks one (`WIKI_MEMORY_EMBED_PROVIDER` overrides):
`"fastembed"` (the default) runs `model` (`sentence-transformers/all-MiniLM-L6-v2` unless
configured: `WIKI_MEMORY_EMBED_MODEL` or `[index] model`; `WIKI_MEMORY_EMBED_MODEL_PATH` or
`[index] model_path` names a local copy, loaded offline). `"openai-compatible"` posts to
`base_url` + `/embeddings` with `model`, optional `dimensions`, the key read from the
variable `api_key_env` names, `batch_size` texts a request and `timeout` seconds each.

Every vector is stored under `Embedder.name`, which names the provider's model (and its
dimensions): vectors of two models are never compared. When no model can be had, or the
provider fails, is slow or answers with vectors of the wrong size, one warning says why and
search runs on words (FTS) alone; a remote provider is tried again a minute later.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from wiki_memory.config import model_cache_dir
from wiki_memory.config.settings import IndexSettings, Settings
from wiki_memory.errors import WikiMemoryError

DEFAULT_MODEL = IndexSettings.model
# fastembed's default batch of 256 takes gigabytes of memory on 200-word chunks.
BATCH_SIZE = 16


# How vectors are stored: half the bytes of float32, and a cosine within ~1e-3 of it (the
# rankings of the evaluation sets did not move); read back into float32 for search.
VECTOR_DTYPE = "float16"


def to_blob(vector: Any) -> bytes:
    """A vector as the index stores it."""
    return bytes(vector.astype(VECTOR_DTYPE).tobytes())


def from_blobs(blobs: Any, dim: int) -> Any:
    """An (n, dim) float32 matrix of stored vectors (bytes, joined or in a list)."""
    import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

    raw = blobs if isinstance(blobs, (bytes, bytearray)) else b"".join(blobs)
    return np.frombuffer(raw, dtype=VECTOR_DTYPE).astype(np.float32).reshape(-1, dim)


class ModelUnavailableWarning(UserWarning):
    """No embedding model could be loaded: search uses FTS alone."""


_warned: set[str] = set()


def _warn_once(message: str, key: str | None = None) -> None:
    """Warn once per `key` (the message itself when none is given)."""
    if (key or message) not in _warned:
        _warned.add(key or message)
        warnings.warn(message, ModelUnavailableWarning, stacklevel=3)


def hub_unreachable(timeout: float = 2.0) -> str | None:
    """Why the model hub (`HF_ENDPOINT`, else huggingface.co) cannot be reached, or None
    when it may be (a proxy, if one is set, decides for itself).

    Why: fastembed, with no network and no cached model, retries its download for ~40 s
    (sleeps of 3, 9 and 27 s), in every process: each `wiki-memory search` would hang that
    long before falling back to words. A failed name lookup or connection takes milliseconds.
    """
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None

    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    try:
        port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
        addresses = _lookup(host, port, timeout)
    except (OSError, ValueError) as e:
        return f"{host} cannot be reached ({getattr(e, 'strerror', None) or e})"
    failure: OSError | None = None
    for family, kind, proto, _, address in addresses:  # IPv6 may be listed first and be unrouted
        try:
            with socket.socket(family, kind, proto) as s:
                s.settimeout(timeout)
                s.connect(address)
            return None
        except OSError as e:
            failure = e
    return f"{host} cannot be reached ({getattr(failure, 'strerror', None) or failure})"


def _lookup(host: str, port: int, timeout: float) -> list[Any]:
    """`socket.getaddrinfo`, given up after `timeout` seconds: a resolver that times out
    rather than fails (a captive portal, a dead DNS server) can take half a minute, and
    no socket timeout covers the lookup."""

    found: dict[str, Any] = {}

    def look() -> None:
        try:
            found["addresses"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            found["error"] = e

    thread = threading.Thread(target=look, name="wiki-memory-lookup", daemon=True)
    thread.start()
    thread.join(timeout)
    if "error" in found:
        raise found["error"]
    if "addresses" not in found:
        raise TimeoutError(f"looking up the name took over {timeout:g} s")
    return found["addresses"]


PROVIDERS = ("fastembed", "openai-compatible")
REMOTE_BATCH_SIZE = 64  # texts per request to an embeddings server
REMOTE_TIMEOUT = IndexSettings.timeout  # seconds a request to an embeddings server may take
RETRY_AFTER = 60.0  # seconds before a failed remote provider is asked again


class EmbeddingFailed(RuntimeError):
    """The provider failed on a call (an error, a timeout, vectors of the wrong size)."""


class Embedder:
    """A sentence embedding model, loaded on first use. Vectors are float32, unit length."""

    def __init__(
        self,
        name: str | None = None,
        path: str | None = None,
        batch_size: int | None = None,
        settings: Settings | None = None,
    ):
        settings = settings if settings is not None else Settings()
        section = settings.index
        # An empty string in config.toml is the default, as an unset key is.
        self.provider = os.environ.get("WIKI_MEMORY_EMBED_PROVIDER") or section.provider or IndexSettings.provider
        self.model = name or os.environ.get("WIKI_MEMORY_EMBED_MODEL") or section.model or DEFAULT_MODEL
        self.path = path or os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH") or section.model_path or None
        self.remote = self.provider == "openai-compatible"
        self._error: str | None = None
        self._retry_at = 0.0
        self.base_url = (section.base_url or IndexSettings.base_url).rstrip("/")
        self.api_key_env = section.api_key_env or ("OPENAI_API_KEY" if self.remote else "")
        self.dimensions = section.dimensions or None
        self.timeout = section.timeout or REMOTE_TIMEOUT
        default_batch = REMOTE_BATCH_SIZE if self.remote else BATCH_SIZE
        self.batch_size = max(1, int(batch_size or section.batch_size or default_batch))
        try:
            settings.check("index", ("dimensions", "timeout", "batch_size", "threads"))
        except WikiMemoryError as e:
            self._fail(str(e))
        if self.provider not in PROVIDERS:
            self._fail(f"[index] provider = {self.provider!r} is not one of {', '.join(PROVIDERS)}")
        # What the vectors are stored under: the model, and for a server its dimensions too
        # (one model may answer in several sizes). The fastembed name stays the bare model
        # name, as it always was: its vectors stay valid.
        if self.remote:
            self.name = f"openai-compatible:{self.model}" + (f"@{self.dimensions}" if self.dimensions else "")
        else:
            self.name = self.model
        # One inference thread: on a shared 2-core machine this halved the query latency and
        # raised document throughput against onnx's default of one thread per core; an agent
        # and its tools share these cores too. Two threads win only on an idle machine; with
        # one core busy they gain nothing and the slowest queries take twice as long.
        self._configured_threads = os.environ.get("WIKI_MEMORY_EMBED_THREADS") or section.threads
        self.threads = int(self._configured_threads or 1)
        self._model: Any = None
        self._lock = threading.Lock()
        self.dim: int | None = self.dimensions
        self.calls = 0  # how many times the model ran (batches of documents or one query)
        self.texts_embedded = 0

    def _fail(self, why: str) -> None:
        """Give up on the provider (a remote one for RETRY_AFTER seconds), with one warning."""
        self._error = f"{self.name if hasattr(self, 'name') else self.model}: {why}"
        self._retry_at = time.monotonic() + RETRY_AFTER
        _warn_once(
            f"the embedding provider failed ({self._error[:300]}); searching by words only (FTS)",
            key=f"provider {self._error.partition(':')[0]}",
        )

    def for_bulk(self) -> None:
        """A long job someone waits for (`reindex`, `sync`, `import`): one inference
        thread per core, unless threads are configured. Takes effect when the model is not
        loaded yet.

        Why: nothing else of ours runs meanwhile; two threads embed 1.8x the chunks per
        second here (12.7 -> 23.3 on the bench_search wiki)."""
        if not self._configured_threads and self._model is None:
            self.threads = os.cpu_count() or 1

    @property
    def loaded(self) -> bool:
        """True once the model is in memory (nothing is loaded by asking)."""
        return self._model is not None

    @property
    def error(self) -> str | None:
        return self._error

    def available(self) -> bool:
        """Load the model if needed; False (with one warning) when it cannot be had."""
        return self._load() is not None

    def _load(self) -> Any:
        if self._model is not None and self._error is None:
            return self._model
        if self._error is not None:
            if not (self.remote and self._model is not None and time.monotonic() >= self._retry_at):
                return None
            self._error = None  # a remote provider is asked again after a pause
            return self._model
        with self._lock:
            if self._model is not None or self._error is not None:
                return self._model
            if self.remote:
                # No probe: a server is asked when there is something to embed (a probe would
                # cost every search a round trip); its failures are caught there.
                self._model = OpenAICompatible(self)
                return self._model
            try:
                model = self._construct()
                probe = next(iter(model.embed(["probe"], batch_size=1)))
                self.dim = len(probe)
                self._model = model
            except Exception as e:  # noqa: BLE001 - offline, no local copy, a broken file, an unknown name
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                self._error = f"{self.name}: {first}"
                where = (
                    f" (WIKI_MEMORY_EMBED_MODEL_PATH={self.path})"
                    if self.path
                    else " (set WIKI_MEMORY_EMBED_MODEL_PATH to a local copy for offline use)"
                )
                _warn_once(f"no embedding model could be loaded{where}: {first[:200]}; searching by words only (FTS)")
        return self._model

    def _construct(self) -> Any:
        """The fastembed model: the local copy, else the cached download, else a download."""
        if self.path and not os.path.isdir(self.path):
            raise FileNotFoundError(f"no model folder at {self.path}")
        from fastembed import TextEmbedding  # deferred: fastembed, onnxruntime (~1 s): a local model only

        try:
            from loguru import logger  # deferred: with fastembed

            # fastembed logs each failed attempt at ERROR; the one warning `_load` gives says it all.
            logger.disable("fastembed")
        except ImportError:
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fastembed's notes on pooling and threads
            if self.path:
                return TextEmbedding(
                    self.name, specific_model_path=self.path, local_files_only=True, threads=self.threads
                )

            cache = model_cache_dir()
            try:
                return TextEmbedding(self.name, cache_dir=cache, local_files_only=True, threads=self.threads)
            except Exception:  # noqa: BLE001
                if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
                    raise RuntimeError(f"not in the model cache ({cache}) and HF_HUB_OFFLINE is set") from None
                unreachable = hub_unreachable()
                if unreachable is not None:
                    raise RuntimeError(f"not in the model cache ({cache}) and {unreachable}") from None
            return TextEmbedding(self.name, cache_dir=cache, threads=self.threads)

    def embed(self, texts: Sequence[str]) -> Any:
        """An (n, dim) float32 array of unit vectors; raises if no model is available."""
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        model = self._load()
        if model is None:
            raise EmbeddingFailed(self._error or "no embedding model")
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            self.calls += 1
            self.texts_embedded += len(batch)
            if self.remote:
                try:
                    out.extend(model.embed(batch))
                except EmbeddingFailed as e:
                    self._fail(str(e))
                    raise
            else:
                out.extend(model.embed(batch, batch_size=self.batch_size))
        return normalize(np.asarray(out, dtype=np.float32))

    def embed_query(self, text: str) -> Any:
        return self.embed([text])[0]


class OpenAICompatible:
    """A client of an OpenAI-style embeddings endpoint (`POST {base_url}/embeddings`), on
    the standard library alone."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of `texts`, in order; raises EmbeddingFailed on any failure."""

        e = self.embedder
        body: dict[str, Any] = {"model": e.model, "input": list(texts), "encoding_format": "float"}
        if e.dimensions:
            body["dimensions"] = e.dimensions
        from wiki_memory.index.http import post_json  # deferred: urllib and ssl load only for an embeddings endpoint

        answer = post_json(
            f"{e.base_url}/embeddings", body, api_key_env=e.api_key_env, timeout=e.timeout, error=EmbeddingFailed
        )
        try:
            items = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError) as error:
            raise EmbeddingFailed(f"{e.base_url}: not an embeddings answer ({error!r})") from None
        if len(vectors) != len(texts):
            raise EmbeddingFailed(f"{e.base_url}: {len(vectors)} vectors for {len(texts)} texts")
        sizes = {len(v) for v in vectors}
        expected = e.dim
        if len(sizes) != 1 or (expected is not None and sizes != {expected}) or 0 in sizes:
            got = "/".join(map(str, sorted(sizes)))
            raise EmbeddingFailed(f"{e.base_url}: vectors of {got} dimensions, expected {expected or 'one size'}")
        e.dim = sizes.pop()
        return vectors


def normalize(matrix: Any) -> Any:
    import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def batched(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
