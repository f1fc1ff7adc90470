"""Claude Code: its hook payloads and hook output, and its session transcripts.

Hooks, as seen on Claude Code 2.1.197: payloads carry `session_id`, `transcript_path`, `cwd`
and `hook_event_name`; PostToolUse carries `tool_response` (an object for Bash with stdout,
stderr and interrupted; the structured result for MCP tools); a failing tool call fires
PostToolUseFailure with `error` ("Exit code 1\\n..."); plans arrive as TaskCreate /
TaskUpdate calls (TodoWrite in older versions); StopFailure carries `error` and
`error_details`. The hook hands context back in the `hookSpecificOutput` envelope.

Transcripts (`~/.claude/projects/<encoded cwd>/<session>.jsonl`) are one JSON record per
line. `user` and `assistant` records carry a `message`; an assistant message written in
several lines (one content block each) shares its `message.id`, and the lines are merged
back. A tool result's record carries `toolUseResult`, the object a PostToolUse hook gets as
`tool_response`, so a call is normalised here exactly as the hook normalises it. Records
link to their parent by `parentUuid`: when the user rewound and went another way, only the
branch that leads to the last record is the session. Record types this reader does not know
(`file-history-snapshot`, `queue-operation`, `attachment`, `summary`, ...) are skipped.

Sub-agents (the Task tool) write sidechain records (`isSidechain: true`, with their
`agentId`): inline in the main transcript in older versions, in files of their own
(`agent-<id>.jsonl`, or `<session>/subagents/agent-<id>.jsonl`) in newer ones. Inside a main
transcript a sidechain's tool calls are read as the session's, marked with the sub-agent
(`meta.subagent`); its prompt (the task the main agent wrote) and its answers are not the
user's words nor the turn's answer, so they are left out. A file whose every record is a
sidechain is the sub-agent's own session: its task is its prompt, and its session-start
names the sub-agent and the parent session (`subagent`, `parent_session`).

The hook path imports this module on every Claude Code hook call: the transcript reader
imports what only it needs (`hashlib`, the redaction rules) when it runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from wiki_memory.capture import journal
from wiki_memory.capture.adapter import Adapter, named_transcript
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, compact_input, tool_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, ClassVar

AGENT = "claude-code"


class ClaudeCode(Adapter):
    name = AGENT
    events: ClassVar[dict[str, str | None]] = {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "PostToolUse": "tool",
        "PostToolUseFailure": "tool",
        "Stop": "stop",
        "StopFailure": "stop",
        "SubagentStop": None,
        "PreToolUse": None,
        "Notification": None,
        "PermissionRequest": None,
        "PreCompact": "compact",
        "SessionEnd": "session-end",
    }
    end_events = frozenset({"SessionEnd"})
    recall_prompt_events = frozenset({"UserPromptSubmit"})
    # PreToolUse's additionalContext reaches the model before the tool runs.
    recall_file_events = frozenset({"PreToolUse"})
    recall_file_tools = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit"})
    # PreToolUse on Bash: before a command that failed here before; PostToolUseFailure's
    # additionalContext reaches the model with the failed call's result.
    recall_command_events = frozenset({"PreToolUse"})
    recall_command_tools = frozenset({"Bash"})
    recall_error_events = frozenset({"PostToolUseFailure"})

    def read_transcript(self, path: Path) -> list[Observation]:
        return read_transcript(path)

    def find_transcript(
        self, session_id: str, observations: Sequence[Observation], *, search: bool = True
    ) -> Path | None:
        # The hooks name it: Claude Code's file names encode the cwd, nothing to search by.
        return named_transcript(observations)

    def default_transcripts(self) -> list[Path]:
        base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
        return sorted(p for p in base.glob("*/*.jsonl") if p.is_file())


ADAPTER = ClaudeCode()


# Transcripts ---------------------------------------------------------------------------------


def read_transcript(path: str | Path, *, include_sidechains: bool = True) -> list[Observation]:
    """The observations of a Claude Code session transcript (or a sub-agent's), in order,
    redacted; with `include_sidechains` False, without the sub-agents' calls."""

    from wiki_memory.capture.redact import redact_observation, reload_user_patterns  # deferred: out of hook start-up

    path = Path(path)
    reload_user_patterns()
    turns = _Turns(_session_records(path, include_sidechains), path)
    for record in turns.records:
        if record.get("isSidechain") and not turns.subagent_file:
            turns.sidechain(record)
        elif record.get("type") == "assistant":
            turns.assistant(record)
        elif record.get("type") == "user":
            turns.user(record)
    return [redact_observation(o) for o in turns.finish()]


def _session_records(path: Path, include_sidechains: bool) -> list[dict[str, Any]]:
    """The records of the session as it went: the active branch, sidechains only if asked."""

    records = [
        r
        for r in journal.records(path)
        if r.get("type") in ("user", "assistant", "system", "attachment")
        and r.get("uuid")
        and (include_sidechains or not r.get("isSidechain"))
    ]
    # The branch is chosen among the main thread's records; sidechains (sub-agents) run beside
    # it. A sub-agent's own file is all sidechain: its branch is chosen among its records.
    main = [r for r in records if not r.get("isSidechain")]
    branch = _active_branch(main or records)
    if branch is not None:
        records = [r for r in records if r["uuid"] in branch or (main and r.get("isSidechain"))]
    return records


def _is_tool_result(record: dict[str, Any]) -> bool:
    content = (record.get("message") or {}).get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _active_branch(records: list[dict[str, Any]]) -> set[str] | None:
    """The uuids of the branch leading to the last record, or None when nothing branched.

    Two children of one record are a branch (a rewind) unless all but one of them are
    tool results or lines of the same assistant message.
    """
    children: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        parent = r.get("parentUuid")
        if parent:
            children.setdefault(parent, []).append(r)
    branched = False
    for kids in children.values():
        if len(kids) < 2:
            continue
        ids = {(k.get("message") or {}).get("id") for k in kids if not _is_tool_result(k)}
        others = [k for k in kids if not _is_tool_result(k)]
        if len(others) > 1 and not (len(ids) == 1 and None not in ids):
            branched = True
            break
    if not branched:
        return None
    by_uuid = {r["uuid"]: r for r in records if r.get("uuid")}
    chain: set[str] = set()
    current = records[-1] if records else None
    while current is not None and current.get("uuid") not in chain:
        chain.add(current["uuid"])
        parent = current.get("parentUuid") or current.get("logicalParentUuid")
        current = by_uuid.get(parent) if parent else None
    # Tool results hang off the call that made them, beside the path: keep them.
    for r in records:
        if r.get("uuid") not in chain and r.get("parentUuid") in chain and _is_tool_result(r):
            chain.add(r["uuid"])
    return chain


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(block: dict[str, Any]) -> str:
    """A tool result's content as text (a failed call's error message)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _digest(text: Any) -> str:
    import hashlib  # deferred: hashlib loads OpenSSL; only transcripts need it, not the hook

    return hashlib.sha1(str(text).encode("utf-8", "replace")).hexdigest()[:12]


class _Turns:
    """The session read record by record: prompts, tool calls paired with their results,
    and each turn's last assistant text as its answer."""

    def __init__(self, records: list[dict[str, Any]], path: Path):
        self.records, self.path = records, path
        self.session_id = next((str(r["sessionId"]) for r in records if r.get("sessionId")), path.stem)
        self.cwd = next((str(r["cwd"]) for r in records if r.get("cwd")), None)
        # A sub-agent's own file: every record a sidechain. It is a session of its own, named
        # by the sub-agent (its records carry the parent's session id).
        self.subagent_file = bool(records) and all(r.get("isSidechain") for r in records)
        self.parent_session: str | None = None
        if self.subagent_file:
            agent_id = next((str(r["agentId"]) for r in records if r.get("agentId")), None)
            self.parent_session = self.session_id if self.session_id != path.stem else None
            self.agent_id = agent_id or path.stem
            self.session_id = f"agent-{agent_id}" if agent_id else path.stem
        self.out: list[Observation] = []
        self.model: str | None = None
        self.branch: str | None = None
        self.version: str | None = None
        self.calls: dict[str, tuple[dict[str, Any], str]] = {}  # tool_use id -> (block, time)
        self.call_agents: dict[str, str] = {}  # tool_use id -> the sub-agent that made the call
        self.seen_blocks: dict[str, set[str]] = {}  # message id -> blocks already taken (merged lines)
        # The latest assistant text of the turn: (time, text, message id).
        self.last_text: tuple[str, str, str] | None = None
        self.text_after_tools = False  # no tool call came after that text: it is the turn's answer

    def obs(self, kind: str, time: str, **fields: Any) -> Observation:
        return Observation(kind, AGENT, self.session_id, time, cwd=self.cwd, event="transcript", **fields)

    def _note(self, record: dict[str, Any]) -> str:
        self.branch = record.get("gitBranch") or self.branch
        self.version = record.get("version") or self.version
        return str(record.get("timestamp") or "")

    def assistant(self, record: dict[str, Any]) -> None:
        time = self._note(record)
        message = record.get("message") or {}
        if record.get("isApiErrorMessage"):
            # The model's request failed ("Request timed out", "API Error: 529 ..."): the turn
            # ended without an answer, as the StopFailure hook reports it live.
            self.close_turn()
            error = " ".join(str(b.get("text", "")) for b in _blocks(message) if b.get("type") == "text").strip()
            self.out.append(self.obs("stop", time, error=True, meta={"error": clip(error, 200) or "error"}))
            return
        if message.get("model") not in (None, "<synthetic>"):
            self.model = message["model"]
        key = str(message.get("id") or record["uuid"])
        taken = self.seen_blocks.setdefault(key, set())
        texts = []
        for block in _blocks(message):
            digest = _digest(json.dumps(block, sort_keys=True, default=str))
            if digest in taken:
                continue
            taken.add(digest)
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                texts.append(str(block["text"]).strip())
                self.text_after_tools = True
            elif block.get("type") == "tool_use" and block.get("id"):
                self.calls[str(block["id"])] = (block, time)
                self.text_after_tools = False
        if texts:
            # Lines of one message add up; a new message replaces the text.
            if self.last_text and self.last_text[2] == key:
                self.last_text = (self.last_text[0], self.last_text[1] + "\n\n" + "\n\n".join(texts), key)
            else:
                self.last_text = (time, "\n\n".join(texts), key)

    def sidechain(self, record: dict[str, Any]) -> None:
        """A sub-agent's record inside the main transcript: its calls and their results are
        the session's, marked with the sub-agent; its task and its answers are not the
        user's prompt nor the turn's answer."""
        time = self._note(record)
        agent = str(record.get("agentId") or "sidechain")
        message = record.get("message") or {}
        for block in _blocks(message):
            if record.get("type") == "assistant" and block.get("type") == "tool_use" and block.get("id"):
                self.calls[str(block["id"])] = (block, time)
                self.call_agents[str(block["id"])] = agent
            elif record.get("type") == "user" and block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                call, call_time = self.calls.pop(call_id, ({"name": "tool", "input": {}}, time))
                observation = self.tool(call, block, record.get("toolUseResult"), time or call_time, call_id)
                self.out.append(observation._replace(meta={**observation.meta, "subagent": agent}, plan=()))

    def user(self, record: dict[str, Any]) -> None:
        """A prompt, or the results of tool calls."""
        time = self._note(record)
        if record.get("isMeta"):
            return
        if record.get("isCompactSummary"):
            self.out.append(self.obs("compact", time))
            return
        prompt_parts = []
        for block in _blocks(record.get("message") or {}):
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                call, call_time = self.calls.pop(call_id, ({"name": "tool", "input": {}}, time))
                self.out.append(self.tool(call, block, record.get("toolUseResult"), time or call_time, call_id))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                prompt_parts.append(str(block["text"]).strip())
        text = "\n\n".join(prompt_parts)
        if text and not text.startswith("[Request interrupted by user"):
            self.close_turn()
            self.out.append(self.obs("prompt", time, text=clip(text, PROMPT_LIMIT)))

    def tool(self, call: dict[str, Any], block: dict[str, Any], result: Any, time: str, call_id: str) -> Observation:
        """One answered call, normalised as the hook normalises it: `toolUseResult` is what
        PostToolUse carries as `tool_response`, and a failed call's result what
        PostToolUseFailure carries as `error`."""
        tool = str(call.get("name") or "tool")
        data = _dict(call.get("input"))
        if block.get("is_error"):
            facts = tool_facts(tool, data, None, self.cwd, failed=True, error_text=_result_text(block))
        else:
            response = result if isinstance(result, (dict, list)) else block.get("content")
            facts = tool_facts(tool, data, response, self.cwd)
        meta: dict[str, Any] = {"tool_use_id": call_id}
        if isinstance(result, dict) and result.get("interrupted"):
            meta["interrupted"] = True
        fields = facts.observation_fields(tool, meta)
        if tool == "Edit" and not facts.error:
            # Kept to tell when a later edit undoes this one.
            fields["meta"]["edit"] = [_digest(data.get("old_string", "")), _digest(data.get("new_string", ""))]
        return self.obs("tool", time, **fields)

    def close_turn(self) -> None:
        if self.last_text and self.text_after_tools:
            self.out.append(self.obs("stop", self.last_text[0], text=clip(self.last_text[1], PROMPT_LIMIT)))
        self.last_text, self.text_after_tools = None, False

    def finish(self) -> list[Observation]:
        """Everything read, in order, after the session-start that names the model and branch."""
        self.close_turn()
        out = self.out
        # Calls whose results never came: the session stopped in the middle of them.
        for call_id, (call, call_time) in self.calls.items():
            tool = str(call.get("name") or "tool")
            data = _dict(call.get("input"))
            meta: dict[str, Any] = {"tool_use_id": call_id, "no_result": True}
            if call_id in self.call_agents:
                meta["subagent"] = self.call_agents[call_id]
            out.append(self.obs("tool", call_time, tool=tool, input=compact_input(tool, data), meta=meta))
        out.sort(key=lambda o: o.time)
        first = str(self.records[0].get("timestamp") or "") if self.records else ""
        start: dict[str, Any] = {"source": "transcript", "transcript_path": str(self.path)}
        if self.model:
            start["model"] = self.model
        if self.branch and self.branch != "HEAD":
            start["branch"] = self.branch
        if self.version:
            start["cli_version"] = self.version
        if self.subagent_file:
            start["subagent"] = self.agent_id
            if self.parent_session:
                start["parent_session"] = self.parent_session
        if self.records or out:
            out.insert(0, self.obs("session-start", out[0].time if out else first, meta=start))
        return out
