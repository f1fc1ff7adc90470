"""Fake LLM servers on 127.0.0.1 for the consolidation tests: real HTTP, real wire formats.

- OpenAI-compatible chat completions: `POST /v1/chat/completions` -> `{"choices": [{"message": ...}]}`
- Anthropic Messages: `POST /v1/messages` -> `{"type": "message", "content": [{"type": "text", ...}]}`

Each records the requests it gets (path, headers, JSON body) and answers with what the test
set: a text (`reply`), a delay before answering (`delay`, for timeouts), a refusal, or an
HTTP error status.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    def __init__(self, kind: str):
        assert kind in ("openai", "anthropic")
        self.kind = kind
        self.requests: list[dict[str, Any]] = []
        self.reply = "{}"
        self.delay = 0.0
        self.refuse = False
        self.status = 200
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(
                    {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                )
                if server.delay:
                    time.sleep(server.delay)
                status, payload = server._answer(self.path, body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1" if self.kind == "openai" else f"http://{host}:{port}"

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.status != 200:
            return self.status, {"error": {"message": "server error", "type": "server_error"}}
        if self.kind == "openai":
            if not path.endswith("/chat/completions"):
                return 404, {"error": {"message": f"no route {path}"}}
            message = {
                "role": "assistant",
                "content": None if self.refuse else self.reply,
                "refusal": "I can't help with that." if self.refuse else None,
            }
            return 200, {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        if not path.endswith("/v1/messages"):
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
        return 200, {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [] if self.refuse else [{"type": "text", "text": self.reply}],
            "stop_reason": "refusal" if self.refuse else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
