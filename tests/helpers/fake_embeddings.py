"""A fake OpenAI-compatible embeddings (and rerank) server on 127.0.0.1, for tests of the
remote providers.

It speaks the real wire format: `POST /v1/embeddings` with `{"model", "input", "dimensions"?,
"encoding_format"}` answered by `{"object": "list", "data": [{"object": "embedding",
"index", "embedding"}], "model", "usage"}`. Its vectors come from the real local model
(all-MiniLM-L6-v2), so what a search finds through it can be checked; with `dimensions`
they are cut to that size and made unit length again, as OpenAI's text-embedding-3 models do.

`POST /v1/rerank` with `{"model", "query", "documents", "top_n"}` is answered as Cohere, Jina,
vLLM and TEI answer: `{"id", "model", "results": [{"index", "relevance_score"}]}`, best first,
`top_n` of them; each document scores `scorer(query, document)` (by default, the share of the
query's words it holds).

`mode` makes it misbehave: "error" (HTTP 500 with an OpenAI error body), "wrong-dims"
(vectors one dimension longer than asked), "block" (no answer until `release()` or the end).
`requests` records every request's path, headers and JSON body.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeEmbeddings:
    def __init__(self, embedder: Any, mode: str = "ok", scorer: Any = None) -> None:
        self.embedder = embedder  # a loaded wiki_memory Embedder (fastembed, local); None: rerank only
        self.scorer = scorer or word_share
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path not in ("/v1/embeddings", "/v1/rerank"):
                    return self.reply(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request"}})
                if fake.mode == "block":
                    fake.released.wait()
                    return self.reply(503, {"error": {"message": "released", "type": "server_error"}})
                if fake.mode == "error":
                    return self.reply(500, {"error": {"message": "the model is overloaded", "type": "server_error"}})
                if self.path == "/v1/rerank":
                    return self.rerank(body)
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = fake.embedder.embed(texts)
                size = body.get("dimensions")
                if size:
                    vectors = vectors[:, :size]
                    vectors = vectors / ((vectors**2).sum(axis=1, keepdims=True) ** 0.5)
                rows = [v.tolist() for v in vectors]
                if fake.mode == "wrong-dims":
                    rows = [r + [0.0] for r in rows]
                data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
                tokens = sum(len(t.split()) for t in texts)
                self.reply(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body["model"],
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

            def rerank(self, body: dict[str, Any]) -> None:
                scored = [(fake.scorer(body["query"], d), i) for i, d in enumerate(body["documents"])]
                scored.sort(key=lambda pair: -pair[0])
                results = [{"index": i, "relevance_score": s} for s, i in scored[: body.get("top_n") or len(scored)]]
                self.reply(200, {"id": "rerank-1", "model": body["model"], "results": results})

            def reply(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/embeddings"]

    def rerank_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/rerank"]

    def release(self) -> None:
        self.released.set()

    def __enter__(self) -> FakeEmbeddings:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def word_share(query: str, document: str) -> float:
    """The share of the query's words the document holds."""
    words = set(query.lower().split())
    held = set(document.lower().split())
    return len(words & held) / max(len(words), 1)
