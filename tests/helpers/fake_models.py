"""Fake model APIs for end-to-end tests of the real agent CLIs.

The network is the one place where a fake belongs: these servers listen on 127.0.0.1, speak
real HTTP/1.1, and answer in the streaming wire formats the CLIs use (Anthropic Messages
SSE for Claude Code and OpenCode, OpenAI Responses SSE for Codex, Gemini
`streamGenerateContent` SSE for Gemini CLI). A test scripts them turn by turn and
reads back every request they received::

    from fake_models import FakeAnthropic, FakeResponses, bash, text

    with FakeAnthropic([bash("echo hi > out.txt"), text("Done.")]) as model:
        result = run_claude(["-p", "make out.txt"], cwd=repo, home=home, base_url=model.url)
        assert "echo hi" in json.dumps(model.turn_requests[1]["messages"])

Each entry of the script is a `Reply` and answers one *turn request* (a request that lets
the model call tools, i.e. the agent's own conversation). Side requests the CLIs make on
their own (a session title, a quota probe, token counting) get a short default answer and do
not consume the script; when the script runs out, every further turn is answered with
`default` (a plain "OK." unless given). `requests` holds every request (method, path,
headers, parsed JSON body), `turn_requests` only the turn requests, in order.

`bash(cmd)` is a shell tool call in each API's own terms: Claude Code's `Bash` tool (OpenCode's
`bash`) with a `command`; for Codex, whichever shell tool the request offered (`exec_command`,
`shell_command` or `shell`), with its argument spelled as that tool expects; Gemini CLI's
`run_shell_command`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeAnthropic", "FakeGemini", "FakeResponses", "RecordedRequest", "Reply", "bash", "text", "tool_call"]


@dataclass(frozen=True)
class Reply:
    """One scripted model turn: some text, then (optionally) one tool call.

    `tool` is a tool name (`"Bash"`, `"Write"`, `"update_plan"`) or the special `"$shell"`,
    which each server maps to its CLI's shell tool; `arguments` is the tool's input.
    """

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def text(message: str) -> Reply:
    """A turn that answers with `message` and ends the agent's turn."""
    return Reply(text=message)


def tool_call(name: str, arguments: dict[str, Any], message: str = "") -> Reply:
    """A turn that calls tool `name` with `arguments` (after optional text)."""
    return Reply(text=message, tool=name, arguments=dict(arguments))


def bash(command: str, message: str = "") -> Reply:
    """A turn that runs `command` with the CLI's own shell tool."""
    return Reply(text=message, tool="$shell", arguments={"command": command})


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON

    def __getitem__(self, key: str) -> Any:  # request["messages"] reads the JSON body
        return self.body[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default) if isinstance(self.body, dict) else default


class _FakeServer:
    """The shared machinery: a threaded HTTP server on 127.0.0.1 with a scripted queue."""

    def __init__(self, script: Iterable[Reply] = (), default: Reply | None = None) -> None:
        self.script: list[Reply] = list(script)
        self.default = default or text("OK.")
        self.requests: list[RecordedRequest] = []
        self.turn_requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> _FakeServer:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL, `http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, *replies: Reply) -> None:
        """Append replies to the script (for the next turns)."""
        with self._lock:
            self.script.extend(replies)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def _record(self, request: RecordedRequest, is_turn: bool) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not is_turn:
                return text("OK.")
            self.turn_requests.append(request)
            return self.script.pop(0) if self.script else self.default

    # -- what subclasses define ----------------------------------------------------------
    def handle(self, h: _Handler, request: RecordedRequest) -> None:
        raise NotImplementedError


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive with chunked streams, as the real APIs do
    fake: _FakeServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _read_request(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd" or self.headers.get("Content-Encoding") == "gzip":
            raw = _decompress(raw, self.headers.get("Content-Encoding", ""))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        return RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)

    def do_POST(self) -> None:
        self.fake.handle(self, self._read_request())

    def do_GET(self) -> None:
        self.fake.handle(self, self._read_request())

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- writing -------------------------------------------------------------------------
    def send_json(self, data: Any, status: int = 200) -> None:
        payload = json.dumps(data).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def send_sse(self, events: Iterable[tuple[str | None, Any]]) -> None:
        """A `text/event-stream` body in HTTP/1.1 chunks, one chunk per event."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in events:
            block = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
            chunk = block.encode("utf-8")
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _decompress(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        import gzip

        return gzip.decompress(raw)
    try:  # zstd: only when a decoder is available; otherwise keep the raw bytes
        import zstandard  # type: ignore[import-not-found]

        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
    except Exception:  # noqa: BLE001
        return raw


def _make_handler(fake: _FakeServer) -> type[_Handler]:
    return type("Handler", (_Handler,), {"fake": fake})


# ---------------------------------------------------------------------------------------
# Anthropic Messages (Claude Code)
# ---------------------------------------------------------------------------------------


class FakeAnthropic(_FakeServer):
    """A fake Anthropic Messages API (`POST /v1/messages`, streamed or not).

    Point Claude Code at it with `ANTHROPIC_BASE_URL=server.url` and `ANTHROPIC_API_KEY`
    set to anything. A turn request is a `/v1/messages` request that offers tools; the
    conversation's turns arrive in `turn_requests[i].body["messages"]`.
    """

    model = "claude-sonnet-4-5"

    def handle(self, h: _Handler, request: RecordedRequest) -> None:
        path = request.path.split("?", 1)[0]
        if request.method != "POST" or not path.endswith("/v1/messages"):
            if path.endswith("/count_tokens"):
                self._record(request, is_turn=False)
                h.send_json({"input_tokens": 100})
                return
            self._record(request, is_turn=False)
            h.send_json({"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
            return
        body = request.body if isinstance(request.body, dict) else {}
        reply = self._record(request, is_turn=bool(body.get("tools")))
        message_id = self._next_id("msg")
        model = body.get("model") or self.model
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        if reply.tool:
            offered = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
            # Claude Code's shell tool is `Bash`, OpenCode's `bash`.
            name = ("bash" if "bash" in offered else "Bash") if reply.tool == "$shell" else reply.tool
            blocks.append({"type": "tool_use", "id": self._next_id("toolu"), "name": name, "input": reply.arguments})
        stop_reason = "tool_use" if reply.tool else "end_turn"
        usage = {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if not body.get("stream"):
            h.send_json(
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
            return
        h.send_sse(self._events(message_id, model, blocks, stop_reason, usage))

    @staticmethod
    def _events(
        message_id: str, model: str, blocks: list[dict[str, Any]], stop_reason: str, usage: dict[str, int]
    ) -> Iterable[tuple[str, Any]]:
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        )
        yield "ping", {"type": "ping"}
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                yield (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            else:
                yield (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
                )
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield "message_stop", {"type": "message_stop"}


# ---------------------------------------------------------------------------------------
# OpenAI Responses (Codex)
# ---------------------------------------------------------------------------------------

#: Codex's shell tools and how each spells its command argument.
_SHELL_TOOLS: dict[str, Callable[[str], dict[str, Any]]] = {
    "exec_command": lambda cmd: {"cmd": cmd},
    "shell_command": lambda cmd: {"command": cmd},
    "shell": lambda cmd: {"command": ["bash", "-lc", cmd]},
}


class FakeResponses(_FakeServer):
    """A fake OpenAI Responses API (`POST /v1/responses`, streamed).

    Point Codex at it with a model provider in `config.toml` (see
    `agent_clis.codex_config`): `base_url = server.url + "/v1"`, `wire_api = "responses"`.
    A turn request is a `/responses` request that offers tools; the conversation so far
    arrives in `turn_requests[i].body["input"]` (tool outputs as `function_call_output` or
    `custom_tool_call_output` items).
    """

    model = "gpt-5.1-codex"

    def handle(self, h: _Handler, request: RecordedRequest) -> None:
        path = request.path.split("?", 1)[0]
        if request.method == "GET" and path.endswith("/models"):
            self._record(request, is_turn=False)
            h.send_json({"object": "list", "data": [], "models": []})
            return
        if request.method != "POST" or not path.endswith("/responses"):
            self._record(request, is_turn=False)
            h.send_json({"error": {"message": f"not found: {path}", "type": "invalid_request_error"}}, 404)
            return
        body = request.body if isinstance(request.body, dict) else {}
        reply = self._record(request, is_turn=bool(body.get("tools")))
        response_id = self._next_id("resp")
        items: list[dict[str, Any]] = []
        if reply.text:
            items.append(
                {
                    "type": "message",
                    "id": self._next_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        if reply.tool:
            name, arguments = self._tool(body, reply)
            call_id = self._next_id("call")
            if self._is_custom(body, name):  # freeform tools (apply_patch) take raw text
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": self._next_id("ctc"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": name,
                        "input": arguments.get("input", ""),
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "id": self._next_id("fc"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": name,
                        "arguments": json.dumps(arguments),
                    }
                )
        h.send_sse(self._events(response_id, body.get("model") or self.model, items))

    @staticmethod
    def _tool_names(body: dict[str, Any]) -> list[str]:
        return [t.get("name") for t in body.get("tools") or () if isinstance(t, dict) and t.get("name")]

    @staticmethod
    def _is_custom(body: dict[str, Any], name: str) -> bool:
        return any(
            isinstance(t, dict) and t.get("name") == name and t.get("type") == "custom" for t in body.get("tools") or ()
        )

    def _tool(self, body: dict[str, Any], reply: Reply) -> tuple[str, dict[str, Any]]:
        if reply.tool != "$shell":
            return str(reply.tool), reply.arguments
        offered = self._tool_names(body)
        for name, spell in _SHELL_TOOLS.items():
            if name in offered:
                return name, spell(reply.arguments["command"])
        raise AssertionError(f"the request offers no shell tool (tools: {offered})")

    @staticmethod
    def _events(response_id: str, model: str, items: list[dict[str, Any]]) -> Iterable[tuple[str, Any]]:
        base = {
            "id": response_id,
            "object": "response",
            "created_at": 1700000000,
            "model": model,
            "status": "in_progress",
            "output": [],
        }
        sequence = itertools.count()
        yield "response.created", {"type": "response.created", "sequence_number": next(sequence), "response": base}
        for index, item in enumerate(items):
            if item["type"] == "message":
                text_value = item["content"][0]["text"]
                yield (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(sequence),
                        "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []},
                    },
                )
                yield (
                    "response.content_part.added",
                    {
                        "type": "response.content_part.added",
                        "sequence_number": next(sequence),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []},
                    },
                )
                yield (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(sequence),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": text_value,
                    },
                )
                yield (
                    "response.output_text.done",
                    {
                        "type": "response.output_text.done",
                        "sequence_number": next(sequence),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "text": text_value,
                    },
                )
                yield (
                    "response.content_part.done",
                    {
                        "type": "response.content_part.done",
                        "sequence_number": next(sequence),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "part": item["content"][0],
                    },
                )
            else:
                yield (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(sequence),
                        "output_index": index,
                        "item": {**item, "status": "in_progress"},
                    },
                )
            yield (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(sequence),
                    "output_index": index,
                    "item": item,
                },
            )
        yield (
            "response.completed",
            {
                "type": "response.completed",
                "sequence_number": next(sequence),
                "response": {
                    **base,
                    "status": "completed",
                    "output": items,
                    "usage": {
                        "input_tokens": 100,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 20,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 120,
                    },
                },
            },
        )


# ---------------------------------------------------------------------------------------
# Gemini API (Gemini CLI)
# ---------------------------------------------------------------------------------------


class FakeGemini(_FakeServer):
    """A fake Gemini API (`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`, and
    `:generateContent` / `:countTokens`).

    Point Gemini CLI at it with `GOOGLE_GEMINI_BASE_URL=server.url`, `GEMINI_API_KEY` set to
    anything and `security.auth.selectedType = "gemini-api-key"` in its settings (see
    `agent_clis.write_gemini_settings`). A turn request is a request that offers tools
    (`functionDeclarations`); the conversation so far arrives in
    `turn_requests[i].body["contents"]`. A side request that asks for JSON (Gemini CLI's
    model router, its next-speaker check) gets an object of the schema it gives, the user
    speaking next.
    """

    model = "gemini-2.5-pro"

    def handle(self, h: _Handler, request: RecordedRequest) -> None:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST" or ":" not in path:
            self._record(request, is_turn=False)
            h.send_json({"error": {"code": 404, "message": f"not found: {path}", "status": "NOT_FOUND"}}, 404)
            return
        method = path.rsplit(":", 1)[1]
        if method == "countTokens":
            self._record(request, is_turn=False)
            h.send_json({"totalTokens": 100})
            return
        offers_tools = any(isinstance(t, dict) and t.get("functionDeclarations") for t in body.get("tools") or ())
        reply = self._record(request, is_turn=offers_tools)
        config = body.get("generationConfig") or body.get("config") or {}
        if not offers_tools and config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            reply = text(json.dumps(_example_of(schema)))
        parts: list[dict[str, Any]] = []
        if reply.text:
            parts.append({"text": reply.text})
        if reply.tool:
            name = "run_shell_command" if reply.tool == "$shell" else reply.tool
            parts.append({"functionCall": {"name": name, "args": reply.arguments}})
        response = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
            "modelVersion": path.rsplit("/", 1)[-1].split(":", 1)[0] or self.model,
            "responseId": self._next_id("resp"),
        }
        if method == "streamGenerateContent":
            h.send_sse([(None, response)])
        else:
            h.send_json(response)


def _example_of(schema: Any) -> Any:
    """A value of a (Gemini-style) JSON schema: every property filled, enums answered with
    `user` where it is one of them (who speaks next), else their first value."""
    if not isinstance(schema, dict):
        return "ok"
    kind = str(schema.get("type") or "object").lower()
    if kind == "object":
        return {k: _example_of(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    choices = schema.get("enum") or []
    return "user" if "user" in choices else (choices[0] if choices else "ok")
