"""Gemini CLI: SessionStart, BeforeAgent (the prompt), AfterTool, AfterAgent (the final
answer in `prompt_response`), SessionEnd.

As seen on Gemini CLI 0.61.0 (every payload carries `session_id`, `transcript_path`, `cwd`,
`hook_event_name` and `timestamp`):

- The SessionStart hook's `additionalContext` reaches the model (and the later hooks'
  `prompt`) as `<hook_context>...</hook_context>` before the user's words in a headless
  run: it is taken off the prompt here, so the handoff is never taken for the goal.
- AfterTool's `tool_response` is `{llmContent, returnDisplay, error?}`; a shell command's
  `llmContent` is `<untrusted_context>Output: ...\\nExit Code: N\\n...</untrusted_context>`
  (no exit code line when it is 0), unwrapped here.
- PreCompress fires before every model request (`trigger: "auto"`), not only before a
  compression: it is known and records nothing.
- Hooks run only in trusted folders. A hook that exits with a code other than 0 or 1
  and prints anything (stdout, else stderr) vetoes what it hooks (the turn, a tool's
  result); a hook that outlives its timeout is sent SIGTERM, and Gemini waits until its
  stdout closes. The installer's commands `exec` the hook with stderr to /dev/null.

Stdout must be JSON only, so the hook prints nothing but the SessionStart envelope.

Transcripts (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, written by its
ChatRecordingService; sub-agents' under `chats/<parent id>/<id>.jsonl`) are read for
`import`: one JSON record per line, either the session's metadata (`sessionId`,
`projectHash`, `startTime`, `kind`, `directories`), a message (`id`, `timestamp`, `type`
user | gemini | info | error | warning, `content` as text or parts, and on a gemini message
`toolCalls` with `name`, `args`, `status` success | error | cancelled, `result` as function
responses, `resultDisplay`), a metadata update (`$set`, whose `messages` replace them all),
or a rewind (`$rewindTo` a message id: it and what followed are dropped). A message written
again under its id replaces the earlier one. Older versions wrote the same as one JSON object
(`session-*.json`, `messages` in it); `/chat save` checkpoints hold the model's history
(`[{role, parts}]`, function calls and responses as parts); `logs.json` only the prompts.
No file names the working directory: the project folder's `.project_root` does, when there
is one, or the sub-agent's `directories`; else the import needs `--project`. The hooks do
not read transcripts (`find_transcript` stays the base's): their journal is complete.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from wiki_memory.capture.adapter import Adapter, call_observation
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, tool_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar

AGENT = "gemini"

_HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)
_UNTRUSTED = re.compile(r"\A\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*\Z", re.DOTALL)
_PGID = re.compile(r"^Process Group PGID: \S+\n?", re.M)


def strip_hook_context(prompt: str) -> str:
    """The user's words without the hook context Gemini CLI put before them."""
    return _HOOK_CONTEXT.sub("", prompt, count=1)


def unwrap(content: Any) -> Any:
    """A tool's `llmContent` without Gemini CLI's `<untrusted_context>` wrapper."""
    if isinstance(content, str) and (m := _UNTRUSTED.match(content)):
        return _PGID.sub("", m.group(1)).rstrip("\n")
    return content


class Gemini(Adapter):
    name = "gemini"
    events: ClassVar[dict[str, str | None]] = {
        "SessionStart": "session-start",
        "BeforeAgent": "prompt",
        "AfterTool": "tool",
        "AfterAgent": "stop",
        "SessionEnd": "session-end",
        "PreCompress": None,
        "BeforeTool": None,
        "BeforeModel": None,
        "AfterModel": None,
        "BeforeToolSelection": None,
        "Notification": None,
    }
    end_events = frozenset({"SessionEnd"})
    recall_prompt_events = frozenset({"BeforeAgent"})
    # BeforeTool's output cannot carry context; AfterTool's additionalContext is appended to
    # the tool's result, which the model reads next.
    recall_file_events = frozenset({"AfterTool"})
    recall_file_tools = frozenset({"read_file", "replace", "write_file", "edit"})
    # No context before a command (BeforeTool cannot carry it); after a failed one, AfterTool can.
    recall_error_events = frozenset({"AfterTool"})

    def parse(self, event: str, payload: Mapping[str, Any]) -> list[Observation]:
        cleaned = dict(payload)
        if isinstance(payload.get("prompt"), str):
            cleaned["prompt"] = strip_hook_context(payload["prompt"])
        response = payload.get("tool_response")
        if isinstance(response, dict) and "llmContent" in response:
            cleaned["tool_response"] = {**response, "llmContent": unwrap(response["llmContent"])}
        return super().parse(event, cleaned)

    def read_transcript(self, path: Path) -> list[Observation]:
        return read_chat(path)

    def default_transcripts(self) -> list[Path]:
        base = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini" / "tmp"
        found = {p for pattern in ("*/chats/session-*.jsonl", "*/chats/session-*.json") for p in base.glob(pattern)}
        return sorted(p for p in found if p.is_file())


ADAPTER = Gemini()


# Transcripts ---------------------------------------------------------------------------------


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the session's metadata, its messages in order) from any of the file shapes."""

    text = path.read_text(encoding="utf-8")
    try:
        whole: Any = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):  # session-*.json
        return {k: v for k, v in whole.items() if k != "messages"}, [
            m for m in whole["messages"] if isinstance(m, dict)
        ]
    if isinstance(whole, list):
        if all(isinstance(m, dict) and "role" in m and "parts" in m for m in whole):  # a checkpoint
            return {}, _from_history(whole)
        if all(isinstance(m, dict) and "message" in m and "sessionId" in m for m in whole):  # logs.json
            prompts = [m for m in whole if m.get("type") == "user"]
            first = {"sessionId": prompts[0]["sessionId"]} if prompts else {}
            return first, [{"id": str(n), "type": "user", "content": m.get("message"), "timestamp": m.get("timestamp")}
                          for n, m in enumerate(prompts)]  # fmt: skip
        return {}, []
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for gone in ids[cut:]:
                del messages[gone]
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            if isinstance(record["$set"].get("messages"), list):
                messages = {m["id"]: m for m in record["$set"]["messages"] if isinstance(m, dict) and m.get("id")}
            meta.update({k: v for k, v in record["$set"].items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for m in record.get("messages") or ():
                if isinstance(m, dict) and m.get("id"):
                    messages[m["id"]] = m
    return meta, list(messages.values())


def _from_history(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A checkpoint's model history as messages: a function call and its response, paired by
    name in order, become one tool call of the gemini message that made it."""
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for n, content in enumerate(history):
        parts = [p for p in content.get("parts") or () if isinstance(p, dict)]
        calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        texts = "".join(str(p.get("text") or "") for p in parts if not p.get("thought"))
        if content.get("role") == "model":
            tool_calls = [{"id": c.get("id") or f"{n}-{k}", "name": c.get("name"), "args": c.get("args")}
                          for k, c in enumerate(calls)]  # fmt: skip
            pending.extend(tool_calls)
            messages.append({"id": str(n), "type": "gemini", "content": texts, "toolCalls": tool_calls})
        elif responses:
            for r in responses:
                call = next((c for c in pending if c["name"] == r.get("name")), None)
                if call is not None:
                    pending.remove(call)
                    call["result"] = [{"functionResponse": r}]
                    call["status"] = (
                        "error" if isinstance(r.get("response"), dict) and "error" in r["response"] else "success"
                    )
        elif texts.strip():
            messages.append({"id": str(n), "type": "user", "content": texts})
    return messages


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and not p.get("thought"))
    return ""


def _result(call: dict[str, Any]) -> tuple[Any, Any]:
    """(the call's output as its AfterTool hook gets it in `llmContent`, an error text)."""
    outputs, error = [], None
    for part in call.get("result") or ():
        response = (part.get("functionResponse") or {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            if response.get("error"):
                error = response["error"]
            if response.get("output") is not None:
                outputs.append(response["output"])
            elif response.get("content") is not None:
                outputs.append(response["content"])
        elif isinstance(part, dict) and part.get("text"):
            outputs.append(part["text"])
    if isinstance(call.get("result"), str):
        outputs.append(call["result"])
    text = "\n".join(str(unwrap(o)) if isinstance(o, str) else str(o) for o in outputs)
    return text, error


def _project_dir(path: Path, meta: dict[str, Any]) -> str | None:
    """The working directory: the project folder's `.project_root`, else the first workspace
    directory the session names."""
    for folder in (path.parent.parent, path.parent.parent.parent):
        marker = folder / ".project_root"
        try:
            text = marker.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if text:
            return text
    directories = meta.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        return directories[0]
    return None


def read_chat(path: str | Path) -> list[Observation]:
    """The observations of a Gemini CLI session file (or checkpoint, or logs.json), in order,
    redacted, normalised as the hooks' are."""

    from wiki_memory.capture.redact import redact_observation, reload_user_patterns  # deferred: out of hook start-up

    path = Path(path)
    reload_user_patterns()
    meta, messages = _load(path)
    if not messages:
        return []
    session_id = str(meta.get("sessionId") or path.stem)
    cwd = _project_dir(path, meta)
    start_meta: dict[str, Any] = {"source": "transcript", "transcript_path": str(path)}
    if meta.get("kind") == "subagent":  # chats/<parent session id>/<its id>.jsonl
        start_meta["subagent"] = session_id
        start_meta["parent_session"] = path.parent.name
    out: list[Observation] = []
    answer: tuple[str, str] | None = None

    def obs(kind: str, when: str, **fields: Any) -> Observation:
        return Observation(kind, AGENT, session_id, when, cwd=cwd, event="transcript", **fields)

    def close_turn() -> None:
        nonlocal answer
        if answer is not None:
            out.append(obs("stop", answer[0], text=clip(answer[1], PROMPT_LIMIT)))
        answer = None

    started = str(meta.get("startTime") or "")
    last = started
    for message in messages:
        when = str(message.get("timestamp") or last)
        last = when
        kind = message.get("type")
        if kind == "user":
            text = strip_hook_context(_text(message.get("content"))).strip()
            if text:
                close_turn()
                out.append(obs("prompt", when, text=clip(text, PROMPT_LIMIT)))
        elif kind == "gemini":
            if message.get("model"):
                start_meta.setdefault("model", message["model"])
            for call in message.get("toolCalls") or ():
                if not isinstance(call, dict) or call.get("status") in ("cancelled", "scheduled", "validating"):
                    continue
                name = str(call.get("name") or "tool")
                output, error = _result(call)
                failed = call.get("status") == "error" or bool(error)
                response = {"llmContent": output, "returnDisplay": call.get("resultDisplay")}
                facts = tool_facts(name, call.get("args"), response, cwd, failed=failed or None,
                                   error_text=str(error) if error else None)  # fmt: skip
                base = {"kind": "tool", "agent": AGENT, "session_id": session_id,
                        "time": str(call.get("timestamp") or when), "cwd": cwd, "event": "transcript",
                        "meta": {"tool_use_id": str(call.get("id") or "")}}  # fmt: skip
                out.append(call_observation(base, name, facts))
                answer = None  # a text before a call is not the turn's answer
            text = _text(message.get("content")).strip()
            if text and not message.get("toolCalls"):  # the words before a call are not the turn's answer
                answer = (when, text)
        elif kind == "error":
            close_turn()
            out.append(
                obs("stop", when, error=True, meta={"error": clip(_text(message.get("content")), 200) or "error"})
            )
    close_turn()
    if not out:
        return []
    return [redact_observation(o) for o in [obs("session-start", started or out[0].time, meta=start_meta), *out]]
