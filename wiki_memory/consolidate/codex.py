"""Codex rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) as observations.

Each line is `{"timestamp", "type", "payload"}`. What this reader uses:

- `session_meta`: the session id, working directory, CLI version, git branch;
- `turn_context`: the model;
- the user's prompts: `event_msg` `user_message` (or, in versions that do not write it,
  `item_completed` `UserMessage`, or `response_item` user messages that are not
  environment context);
- `response_item` `function_call` / `function_call_output` and `custom_tool_call` /
  `custom_tool_call_output` (`apply_patch`), paired by `call_id`; `local_shell_call`;
- exit codes from the output text ("Process exited with code 3", "Exit code: 1"), from
  `exec_command_end` events, or from `item_completed` `CommandExecution` items;
- the assistant's messages and `task_complete` (the end of a turn).

Anything else (`reasoning`, `token_count`, `world_state`, types not invented yet) is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wiki_memory.capture import journal
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.prompts import is_meta_prompt
from wiki_memory.capture.redact import redact_observation, reload_user_patterns
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, compact_input, tool_facts, touched_files

AGENT = "codex"


def _records(path: Path) -> Iterator[dict[str, Any]]:
    return (data for data in journal.records(path) if isinstance(data.get("payload"), dict))


def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") in kinds and b.get("text")
    )


def _unwrap(output: Any) -> tuple[str, int | None]:
    """(text, exit code) of a call's output, in any of the shapes Codex has written: text,
    content blocks, `{"output", "metadata": {"exit_code"}}` (as an object or as JSON text)."""
    code: int | None = None
    if isinstance(output, list):
        output = _texts(output, ("output_text", "input_text", "text"))
    if isinstance(output, dict):
        code = (output.get("metadata") or {}).get("exit_code") if isinstance(output.get("metadata"), dict) else None
        output = output.get("output") or output.get("content") or ""
    text = str(output or "")
    if text.startswith("{") and '"output"' in text:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return _unwrap(parsed)
    return text, code if isinstance(code, int) else None


def read_rollout(path: str | Path) -> list[Observation]:
    """The observations of a Codex rollout file, in order."""
    path = Path(path)
    reload_user_patterns()
    records = list(_records(path))
    session_id = "-".join(path.stem.split("-")[-5:])  # rollout-<time>-<uuid>: the uuid, until session_meta
    cwd: str | None = None
    meta: dict[str, Any] = {"source": "transcript", "transcript_path": str(path)}
    exit_codes: dict[str, int] = {}
    failed_patches: set[str] = set()
    have = {"event_user": False, "item_user": False}
    for r in records:
        p, kind = r["payload"], r.get("type")
        if kind == "session_meta":
            session_id = str(p.get("id") or p.get("session_id") or session_id)
            cwd = p.get("cwd") or cwd
            if p.get("cli_version"):
                meta["cli_version"] = p["cli_version"]
            git = p.get("git") if isinstance(p.get("git"), dict) else {}
            if git.get("branch"):
                meta["branch"] = git["branch"]
        elif kind == "turn_context":
            cwd = cwd or p.get("cwd")
            if p.get("model"):
                meta["model"] = p["model"]
        elif kind == "event_msg":
            ptype = p.get("type")
            if ptype == "user_message":
                have["event_user"] = True
            elif ptype == "exec_command_end" and p.get("call_id") and isinstance(p.get("exit_code"), int):
                exit_codes[str(p["call_id"])] = p["exit_code"]
            elif ptype == "patch_apply_end" and p.get("call_id") and p.get("success") is False:
                failed_patches.add(str(p["call_id"]))
            elif ptype == "item_completed" and isinstance(p.get("item"), dict):
                item = p["item"]
                if item.get("type") == "UserMessage":
                    have["item_user"] = True
                elif item.get("type") == "CommandExecution" and isinstance(item.get("exit_code"), int):
                    exit_codes[str(item.get("id"))] = item["exit_code"]
                elif item.get("type") == "FileChange" and item.get("status") == "failed":
                    failed_patches.add(str(item.get("id")))

    def obs(kind: str, time: str, **kw: Any) -> Observation:
        return Observation(kind=kind, agent=AGENT, session_id=session_id, time=time, cwd=cwd, event="transcript", **kw)

    out: list[Observation] = []
    calls: dict[str, tuple[str, Any, str]] = {}  # call id -> (tool name, input, time)
    last_text: tuple[str, str] | None = None
    text_after_tools = False
    turn_closed = False

    def close_turn(final: str | None, time: str) -> None:
        nonlocal last_text, text_after_tools, turn_closed
        text = final or (last_text[1] if last_text and text_after_tools else None)
        if text and not turn_closed:
            out.append(
                obs("stop", time if final else (last_text[0] if last_text else time), text=clip(text, PROMPT_LIMIT))
            )
        turn_closed = True
        last_text, text_after_tools = None, False

    def prompt(text: str, time: str) -> None:
        nonlocal turn_closed
        if text.strip() and not is_meta_prompt(text):
            if last_text is not None:
                close_turn(None, time)
            turn_closed = False
            out.append(obs("prompt", time, text=clip(text.strip(), PROMPT_LIMIT)))

    for r in records:
        p, kind, time = r["payload"], r.get("type"), str(r.get("timestamp") or "")
        ptype = p.get("type")
        if kind == "event_msg":
            if ptype == "user_message":
                prompt(str(p.get("message") or ""), time)
            elif ptype == "agent_message" and str(p.get("message") or "").strip():
                last_text, text_after_tools = (time, str(p["message"]).strip()), True
            elif ptype == "task_complete":
                close_turn(str(p.get("last_agent_message") or "").strip() or None, time)
            elif ptype == "turn_aborted":
                for call_id, (name, data, call_time) in list(calls.items()):
                    out.append(
                        obs(
                            "tool",
                            call_time,
                            tool=name,
                            input=compact_input(name, data),
                            meta={"tool_use_id": call_id, "interrupted": True, "no_result": True},
                        )
                    )
                    del calls[call_id]
                turn_closed = True
            elif ptype == "item_completed" and not have["event_user"]:
                item = p.get("item") or {}
                if item.get("type") == "UserMessage":
                    prompt(_texts(item.get("content"), ("text", "input_text")), time)
        elif kind == "response_item":
            if ptype == "message":
                role = p.get("role")
                if role == "user" and not have["event_user"] and not have["item_user"]:
                    prompt(_texts(p.get("content"), ("input_text", "text")), time)
                elif role == "assistant":
                    text = _texts(p.get("content"), ("output_text", "text")).strip()
                    if text:
                        last_text, text_after_tools = (time, text), True
            elif ptype in ("function_call", "custom_tool_call"):
                name = str(p.get("name") or "tool")
                raw = p.get("arguments") if ptype == "function_call" else p.get("input")
                data: Any = raw
                if isinstance(raw, str) and ptype == "function_call":
                    try:
                        data = json.loads(raw)
                    except ValueError:
                        data = raw
                calls[str(p.get("call_id") or p.get("id") or len(calls))] = (name, data, time)
                text_after_tools = False
            elif ptype == "local_shell_call":
                action = p.get("action") if isinstance(p.get("action"), dict) else {}
                command = action.get("command") or (action.get("exec") or {}).get("command")
                calls[str(p.get("call_id") or p.get("id") or len(calls))] = ("local_shell", {"command": command}, time)
                text_after_tools = False
            elif ptype in ("function_call_output", "custom_tool_call_output"):
                call_id = str(p.get("call_id") or "")
                name, data, call_time = calls.pop(call_id, ("tool", {}, time))
                out.append(_tool(obs, name, data, p.get("output"), time, call_id, cwd, exit_codes, failed_patches))
        elif kind == "compacted":
            out.append(obs("compact", time))
    if last_text is not None and not turn_closed:
        close_turn(None, last_text[0])
    for call_id, (name, data, call_time) in calls.items():
        out.append(
            obs(
                "tool",
                call_time,
                tool=name,
                input=compact_input(name, data),
                files=touched_files(name, data, cwd),
                meta={"tool_use_id": call_id, "no_result": True},
            )
        )
    out.sort(key=lambda o: o.time)
    start = next((str(r.get("timestamp")) for r in records if r.get("timestamp")), "")
    if records:
        out.insert(0, obs("session-start", start, meta=meta))
    return [redact_observation(o) for o in out]


def _tool(
    obs: Any,
    name: str,
    data: Any,
    output: Any,
    time: str,
    call_id: str,
    cwd: str | None,
    exit_codes: dict[str, int],
    failed_patches: set[str],
) -> Observation:
    """One answered call, normalised as the hook normalises it; the exit code Codex
    recorded beside the output (its hooks carry none) settles whether it failed."""
    text, code = _unwrap(output)
    facts = tool_facts(
        name,
        data,
        text,
        cwd,
        failed=True if call_id in failed_patches else None,
        exit_code=exit_codes.get(call_id, code),
    )
    meta: dict[str, Any] = {"tool_use_id": call_id}
    if facts.exit_code is not None:
        meta["exit_code"] = facts.exit_code
    return obs(
        "tool",
        time,
        tool=name,
        input=facts.input,
        output=facts.output,
        error=facts.error,
        files=facts.files,
        plan=facts.plan,
        meta=meta,
    )


def find_rollout(session_id: str, codex_home: str | Path | None = None) -> Path | None:
    """The rollout file of a Codex session, looked up by its id under `sessions/`."""
    home = Path(codex_home or os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    sessions = home / "sessions"
    if not session_id or not sessions.is_dir():
        return None
    # Newest days first: the session being consolidated is almost always recent.
    for day in sorted(sessions.glob("*/*/*"), reverse=True)[:60]:
        for candidate in day.glob(f"rollout-*{session_id}.jsonl"):
            return candidate
    return None
