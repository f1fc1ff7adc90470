"""Claude Code transcripts (`~/.claude/projects/<encoded cwd>/<session>.jsonl`) as observations.

The file is one JSON record per line. `user` and `assistant` records carry a `message`;
an assistant message written in several lines (one content block each) shares its
`message.id`, and the lines are merged back. Records link to their parent by
`parentUuid`: when the user rewound and went another way, only the branch that leads to
the last record is the session. Sidechains (sub-agents) are skipped unless asked for, and
record types this reader does not know (`file-history-snapshot`, `queue-operation`,
`attachment`, `summary`, ...) are skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wiki_memory.capture import journal
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.redact import redact_observation, reload_user_patterns
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, compact_input, tool_facts

AGENT = "claude-code"


def _records(path: Path) -> Iterator[dict[str, Any]]:
    return journal.records(path)


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
    return hashlib.sha1(str(text).encode("utf-8", "replace")).hexdigest()[:12]


def read_transcript(path: str | Path, *, include_sidechains: bool = False) -> list[Observation]:
    """The observations of a Claude Code session transcript, in order."""
    path = Path(path)
    reload_user_patterns()
    records = [
        r
        for r in _records(path)
        if r.get("type") in ("user", "assistant", "system", "attachment")
        and r.get("uuid")
        and (include_sidechains or not r.get("isSidechain"))
    ]
    # The branch is chosen among the main thread's records; sidechains (sub-agents) run beside it.
    branch = _active_branch([r for r in records if not r.get("isSidechain")])
    if branch is not None:
        records = [r for r in records if r["uuid"] in branch or r.get("isSidechain")]

    session_id = next((str(r["sessionId"]) for r in records if r.get("sessionId")), path.stem)
    cwd = next((str(r["cwd"]) for r in records if r.get("cwd")), None)

    def obs(kind: str, time: str, **kw: Any) -> Observation:
        return Observation(kind=kind, agent=AGENT, session_id=session_id, time=time, cwd=cwd, event="transcript", **kw)

    out: list[Observation] = []
    model = git_branch = version = None
    calls: dict[str, tuple[dict[str, Any], str]] = {}  # tool_use id -> (block, time)
    seen_blocks: dict[str, set[str]] = {}  # message id -> blocks already taken (merged lines)
    # The latest assistant text of the turn: (time, text, message id).
    last_text: tuple[str, str, str] | None = None
    text_after_tools = False  # no tool call came after that text: it is the turn's answer

    def close_turn() -> None:
        nonlocal last_text, text_after_tools
        if last_text and text_after_tools:
            out.append(obs("stop", last_text[0], text=clip(last_text[1], PROMPT_LIMIT)))
        last_text, text_after_tools = None, False

    for r in records:
        if r.get("type") not in ("user", "assistant"):
            continue
        message = r.get("message") or {}
        time = str(r.get("timestamp") or "")
        git_branch = r.get("gitBranch") or git_branch
        version = r.get("version") or version
        if r["type"] == "assistant":
            model = message.get("model") if message.get("model") not in (None, "<synthetic>") else model
            key = str(message.get("id") or r["uuid"])
            taken = seen_blocks.setdefault(key, set())
            texts = []
            for block in _blocks(message):
                digest = _digest(json.dumps(block, sort_keys=True, default=str))
                if digest in taken:
                    continue
                taken.add(digest)
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    texts.append(str(block["text"]).strip())
                    text_after_tools = True
                elif block.get("type") == "tool_use" and block.get("id"):
                    calls[str(block["id"])] = (block, time)
                    text_after_tools = False
            if texts:
                # Lines of one message add up; a new message replaces the text.
                if last_text and last_text[2] == key:
                    last_text = (last_text[0], last_text[1] + "\n\n" + "\n\n".join(texts), key)
                else:
                    last_text = (time, "\n\n".join(texts), key)
            continue
        # A user record: a prompt, or the results of tool calls.
        if r.get("isMeta"):
            continue
        if r.get("isCompactSummary"):
            out.append(obs("compact", time))
            continue
        prompt_parts = []
        for block in _blocks(message):
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                call, call_time = calls.pop(call_id, ({"name": "tool", "input": {}}, time))
                out.append(_tool_observation(obs, call, block, r.get("toolUseResult"), time or call_time, call_id, cwd))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                prompt_parts.append(str(block["text"]).strip())
        if prompt_parts:
            text = "\n\n".join(prompt_parts)
            if text.startswith("[Request interrupted by user"):
                continue
            close_turn()
            out.append(obs("prompt", time, text=clip(text, PROMPT_LIMIT)))
    close_turn()
    # Calls whose results never came: the session stopped in the middle of them.
    for call_id, (call, call_time) in calls.items():
        data = call.get("input") if isinstance(call.get("input"), dict) else {}
        tool = str(call.get("name") or "tool")
        out.append(
            obs(
                "tool",
                call_time,
                tool=tool,
                input=compact_input(tool, data),
                meta={"tool_use_id": call_id, "no_result": True},
            )
        )
    out.sort(key=lambda o: o.time)
    start_time = out[0].time if out else (str(records[0].get("timestamp") or "") if records else "")
    meta = {"source": "transcript", "transcript_path": str(path)}
    if model:
        meta["model"] = model
    if git_branch and git_branch != "HEAD":
        meta["branch"] = git_branch
    if version:
        meta["cli_version"] = version
    if records or out:
        out.insert(0, obs("session-start", start_time, meta=meta))
    return [redact_observation(o) for o in out]


def _tool_observation(
    obs: Any, call: dict[str, Any], block: dict[str, Any], extra: Any, time: str, call_id: str, cwd: str | None
) -> Observation:
    """One answered call, normalised as the hook normalises it: `toolUseResult` is what
    PostToolUse carries as `tool_response`, and a failed call's result what
    PostToolUseFailure carries as `error`."""
    tool = str(call.get("name") or "tool")
    data = call.get("input") if isinstance(call.get("input"), dict) else {}
    if block.get("is_error"):
        facts = tool_facts(tool, data, None, cwd, failed=True, error_text=_result_text(block))
    else:
        response = extra if isinstance(extra, (dict, list)) else block.get("content")
        facts = tool_facts(tool, data, response, cwd)
    meta: dict[str, Any] = {"tool_use_id": call_id}
    if isinstance(extra, dict) and extra.get("interrupted"):
        meta["interrupted"] = True
    if facts.exit_code is not None:
        meta["exit_code"] = facts.exit_code
    if tool == "Edit" and not facts.error:
        # Kept to tell when a later edit undoes this one.
        meta["edit"] = [_digest(data.get("old_string", "")), _digest(data.get("new_string", ""))]
    return obs(
        "tool",
        time,
        tool=tool,
        input=facts.input,
        output=facts.output,
        error=facts.error,
        files=facts.files,
        plan=facts.plan,
        meta=meta,
    )
