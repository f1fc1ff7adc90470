"""Codex: its hook payloads and hook output, and its rollout files.

Hooks, as seen on Codex 0.171.0: Claude Code's shapes plus `model` and `turn_id`;
`tool_response` is a string; the shell tool arrives as `tool_name: "Bash"` with
`tool_input.command` and no exit code (a failure is told from the output); `apply_patch`
carries the patch text in `tool_input.command` (the files touched are in it) and its output
behind Codex's "Exit code / Wall time / Output:" header; `update_plan` carries the plan with
statuses. SessionEnd exists and gets at most 3 s.

Rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) are one
`{"timestamp", "type", "payload"}` per line. What the reader uses:

- `session_meta`: the session id, working directory, CLI version, git branch;
- `turn_context`: the model;
- the user's prompts: `event_msg` `user_message` (or, in versions that do not write it,
  `item_completed` `UserMessage`, or `response_item` user messages that are not
  environment context);
- `response_item` `function_call` / `function_call_output` and `custom_tool_call` /
  `custom_tool_call_output` (`apply_patch`), paired by `call_id`; `local_shell_call`;
- exit codes from the output ("Process exited with code 3", "Exit code: 1", `metadata`),
  from `exec_command_end` events, or from `item_completed` `CommandExecution` items: the
  hooks carry none, so the rollout is where a failed command's exit code comes from;
- the assistant's messages and `task_complete` (the end of a turn).

Anything else (`reasoning`, `token_count`, `world_state`, types not invented yet) is skipped.
The hook path imports this module on every Codex hook call: the reader imports what only it
needs (the redaction rules, the prompt classifier) when it runs.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from wiki_memory.capture import journal
from wiki_memory.capture.adapter import Adapter, named_transcript
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, compact_input, tool_facts, touched_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, ClassVar

AGENT = "codex"


class Codex(Adapter):
    name = AGENT
    events: ClassVar[dict[str, str | None]] = {
        "SessionStart": "session-start",
        "UserPromptSubmit": "prompt",
        "PostToolUse": "tool",
        "Stop": "stop",
        "PreCompact": "compact",
        "PostCompact": None,
        "PreToolUse": None,
        "PermissionRequest": None,
        "SubagentStart": None,
        "SubagentStop": None,
        "SessionEnd": "session-end",
    }
    end_events = frozenset({"SessionEnd"})
    recall_prompt_events = frozenset({"UserPromptSubmit"})
    # Codex reads files through the shell; its PreToolUse fires for `apply_patch` (edits).
    recall_file_events = frozenset({"PreToolUse"})
    recall_file_tools = frozenset({"apply_patch"})
    # The shell tool reaches hooks as `Bash`; a failure is known only from PostToolUse's output.
    recall_command_events = frozenset({"PreToolUse"})
    recall_command_tools = frozenset({"Bash", "shell", "exec_command", "local_shell"})
    recall_error_events = frozenset({"PostToolUse"})

    def read_transcript(self, path: Path) -> list[Observation]:
        return read_rollout(path)

    def find_transcript(
        self, session_id: str, observations: Sequence[Observation], *, search: bool = True
    ) -> Path | None:
        named = named_transcript(observations)
        return named if named is not None or not search else find_rollout(session_id)

    def default_transcripts(self) -> list[Path]:
        home = codex_home()
        found = list((home / "sessions").glob("*/*/*/rollout-*.jsonl")) + list(
            home.glob("archived_sessions/rollout-*.jsonl")
        )
        return sorted(p for p in found if p.is_file())


ADAPTER = Codex()


# Rollouts ------------------------------------------------------------------------------------


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def find_rollout(session_id: str, home: str | Path | None = None) -> Path | None:
    """The rollout file of a Codex session, looked up by its id under `sessions/`."""

    sessions = Path(home or codex_home()) / "sessions"
    if not session_id or not sessions.is_dir():
        return None
    # Newest days first: the session being consolidated is almost always recent.
    for day in sorted(sessions.glob("*/*/*"), reverse=True)[:60]:
        for candidate in day.glob(f"rollout-*{session_id}.jsonl"):
            return candidate
    return None


def read_rollout(path: str | Path) -> list[Observation]:
    """The observations of a Codex rollout file, in order, redacted."""

    from wiki_memory.capture.redact import redact_observation, reload_user_patterns  # deferred: out of hook start-up

    path = Path(path)
    reload_user_patterns()
    rollout = _Rollout([r for r in map(_wrapped, journal.records(path)) if r is not None], path)
    for record in rollout.records:
        payload, time = record["payload"], str(record.get("timestamp") or "")
        if record.get("type") == "event_msg":
            rollout.event(payload, time)
        elif record.get("type") == "response_item":
            rollout.response(payload, time)
        elif record.get("type") == "compacted":
            rollout.out.append(rollout.obs("compact", time))
    return [redact_observation(o) for o in rollout.finish()]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _wrapped(record: dict[str, Any]) -> dict[str, Any] | None:
    """A record in the `{"timestamp", "type", "payload"}` shape. The first rollouts (Codex
    0.1, spring 2025) wrote the response items bare, after a first line with the session's
    `id` and `timestamp`, and `{"record_type": "state"}` lines, which are skipped."""
    if isinstance(record.get("payload"), dict):
        return record
    if record.get("record_type"):
        return None
    if "type" not in record and record.get("id") and record.get("timestamp"):
        return {"timestamp": record["timestamp"], "type": "session_meta", "payload": record}
    if isinstance(record.get("type"), str):
        return {"timestamp": record.get("timestamp") or "", "type": "response_item", "payload": record}
    return None


def _environment_cwd(content: Any) -> str | None:
    """The working directory an `<environment_context>` message names (rollouts whose
    session_meta does not)."""

    match = re.search(r"<environment_context>.*?<cwd>([^<\n]+)</cwd>", _texts(content, ("input_text", "text")), re.S)
    return match.group(1).strip() if match else None


def _instructions_given(text: str, cwd: str | None = None) -> tuple[str, str] | None:
    """(the file's path, its text) of the turn in which Codex hands the model a project's
    `AGENTS.md` (`# AGENTS.md instructions for DIR` then the file between tags; before
    version 0.5, `<user_instructions>` holding the user's own file, then `--- project-doc ---`
    and the project's, or the project's alone), else None."""
    older = re.match(r"<user_instructions>\s*(.*?)\s*(</user_instructions>|$)", text.lstrip(), re.S)
    if older is not None:
        body = older.group(1)
        # The user's own instructions (~/.codex) come first: only the project's doc is its.
        body = body.split("--- project-doc ---", 1)[1] if "--- project-doc ---" in body else body
        if not body.strip() or not cwd:
            return None
        return f"{cwd.rstrip('/')}/AGENTS.md", body.strip()
    match = re.match(
        r"# (AGENTS(?:\.override)?\.md) instructions for (\S[^\n]*)\n+<INSTRUCTIONS>\n?(.*?)</INSTRUCTIONS>",
        text.lstrip(),
        re.S,
    )
    body = _SKILLS_BLOCK.sub("", match.group(3)) if match else ""
    if match is None or not body.strip():
        return None
    return f"{match.group(2).strip().rstrip('/')}/{match.group(1)}", body.strip()


# The skills list Codex itself appends to the project's AGENTS.md in the same block ("## Skills",
# then its own fixed words "A skill is a set of local instructions ...", to the block's end).
_SKILLS_BLOCK = re.compile(r"(?ms)^#+\s*Skills\s*\n+A skill is a set of local instructions\b.*\Z")


def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") in kinds and b.get("text")
    )


_REFUSED = re.compile(r"(exec command|patch) rejected by user\b", re.IGNORECASE)
_ABORTED = re.compile(r"aborted by user\b", re.IGNORECASE)
_SANDBOX = re.compile(r"failed in sandbox\b", re.IGNORECASE)
# The Codex IDE extension's frame around the user's words: what the editor showed (`# Context
# from my IDE setup:`, the active file and open tabs), then `## My request for Codex:` and
# the words. The frame is the editor's, not the user's.
_IDE_FRAME = re.compile(r"\A\s*(?:# Context from my IDE setup:.*?)?^## My request for Codex:[ \t]*\n?", re.S | re.M)


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


class _Rollout:
    """A rollout read record by record: prompts, calls paired with their outputs, and each
    turn's answer (`task_complete`, else its last assistant message)."""

    def __init__(self, records: list[dict[str, Any]], path: Path):
        self.records, self.path = records, path
        self.session_id = "-".join(path.stem.split("-")[-5:])  # rollout-<time>-<uuid>: the uuid, until session_meta
        self.cwd: str | None = None
        self.meta: dict[str, Any] = {"source": "transcript", "transcript_path": str(path)}
        self.exit_codes: dict[str, int] = {}
        self.failed_patches: set[str] = set()
        self.have = {"event_user": False, "item_user": False}
        for record in records:
            self._scan(record.get("type"), record["payload"])
        self.out: list[Observation] = []
        self.calls: dict[str, tuple[str, Any, str]] = {}  # call id -> (tool name, input, time)
        self.last_text: tuple[str, str] | None = None
        self.text_after_tools = False
        self.turn_closed = False

    def _scan(self, kind: Any, p: dict[str, Any]) -> None:
        """What the first pass learns: who, where, which model, and every exit code and
        failed patch, wherever in the file Codex wrote them."""
        if kind == "session_meta":
            self.session_id = str(p.get("id") or p.get("session_id") or self.session_id)
            self.cwd = p.get("cwd") or self.cwd
            if p.get("cli_version"):
                self.meta["cli_version"] = p["cli_version"]
            git = _dict(p.get("git"))
            if git.get("branch"):
                self.meta["branch"] = git["branch"]
        elif kind == "turn_context":
            self.cwd = self.cwd or p.get("cwd")
            if p.get("model"):
                self.meta["model"] = p["model"]
        elif kind == "response_item" and p.get("type") == "message" and p.get("role") == "user" and not self.cwd:
            self.cwd = _environment_cwd(p.get("content"))
        elif kind == "event_msg":
            ptype, item = p.get("type"), _dict(p.get("item"))
            if ptype == "user_message":
                self.have["event_user"] = True
            elif ptype == "exec_command_end" and p.get("call_id") and isinstance(p.get("exit_code"), int):
                self.exit_codes[str(p["call_id"])] = p["exit_code"]
            elif ptype == "patch_apply_end" and p.get("call_id") and p.get("success") is False:
                self.failed_patches.add(str(p["call_id"]))
            elif ptype == "item_completed" and item.get("type") == "UserMessage":
                self.have["item_user"] = True
            elif ptype == "item_completed" and item.get("type") == "CommandExecution":
                if isinstance(item.get("exit_code"), int):
                    self.exit_codes[str(item.get("id"))] = item["exit_code"]
            elif ptype == "item_completed" and item.get("type") == "FileChange" and item.get("status") == "failed":
                self.failed_patches.add(str(item.get("id")))

    def obs(self, kind: str, time: str, **fields: Any) -> Observation:
        return Observation(kind, AGENT, self.session_id, time, cwd=self.cwd, event="transcript", **fields)

    def close_turn(self, final: str | None, time: str) -> None:
        text = final or (self.last_text[1] if self.last_text and self.text_after_tools else None)
        if text and not self.turn_closed:
            when = time if final else (self.last_text[0] if self.last_text else time)
            self.out.append(self.obs("stop", when, text=clip(text, PROMPT_LIMIT)))
        self.turn_closed = True
        self.last_text, self.text_after_tools = None, False

    def prompt(self, text: str, time: str) -> None:
        from wiki_memory.capture.prompts import is_meta_prompt  # deferred: prompts loads dataclasses

        given = _instructions_given(text, self.cwd)
        if given is not None:
            # The project's AGENTS.md as Codex handed it to the model: kept as what the
            # session was given (the distiller reads its sections), never as a prompt.
            path, body = given
            self.out.append(self.obs("tool", time, tool="instructions", input=path, output=clip(body, PROMPT_LIMIT)))
            return
        frame = _IDE_FRAME.match(text)
        text = text[frame.end() :] if frame else text
        # (What the extension framed went to the model: a request, even one that reads like a
        # command typed into the CLI, `/specify --help`.)
        if text.strip() and (frame is not None or not is_meta_prompt(text)):
            if self.last_text is not None:
                self.close_turn(None, time)
            self.turn_closed = False
            self.out.append(self.obs("prompt", time, text=clip(text.strip(), PROMPT_LIMIT)))

    def event(self, p: dict[str, Any], time: str) -> None:
        ptype = p.get("type")
        if ptype == "user_message":
            self.prompt(str(p.get("message") or ""), time)
        elif ptype == "agent_message" and str(p.get("message") or "").strip():
            self.last_text, self.text_after_tools = (time, str(p["message"]).strip()), True
        elif ptype == "task_complete":
            self.close_turn(str(p.get("last_agent_message") or "").strip() or None, time)
        elif ptype == "turn_aborted":
            for call_id, (name, data, call_time) in self.calls.items():
                meta = {"tool_use_id": call_id, "interrupted": True, "no_result": True}
                self.out.append(self.obs("tool", call_time, tool=name, input=compact_input(name, data), meta=meta))
            self.calls.clear()
            self.turn_closed = True
        elif ptype == "item_completed" and not self.have["event_user"]:
            item = p.get("item") or {}
            if item.get("type") == "UserMessage":
                self.prompt(_texts(item.get("content"), ("text", "input_text")), time)

    def response(self, p: dict[str, Any], time: str) -> None:
        ptype = p.get("type")
        if ptype == "message":
            text = _texts(p.get("content"), ("input_text", "text")) if p.get("role") == "user" else ""
            if p.get("role") == "user" and not self.have["event_user"] and not self.have["item_user"]:
                self.prompt(text, time)
            elif text and _instructions_given(text, self.cwd) is not None:
                self.prompt(text, time)  # only ever recorded here, not as an event
            elif p.get("role") == "assistant":
                text = _texts(p.get("content"), ("output_text", "text")).strip()
                if text:
                    self.last_text, self.text_after_tools = (time, text), True
        elif ptype in ("function_call", "custom_tool_call"):
            raw = p.get("arguments") if ptype == "function_call" else p.get("input")
            data: Any = raw
            if isinstance(raw, str) and ptype == "function_call":
                try:
                    data = json.loads(raw)
                except ValueError:
                    data = raw
            self.calls[str(p.get("call_id") or p.get("id") or len(self.calls))] = (
                str(p.get("name") or "tool"),
                data,
                time,
            )
            self.text_after_tools = False
        elif ptype == "local_shell_call":
            action = _dict(p.get("action"))
            command = action.get("command") or (action.get("exec") or {}).get("command")
            self.calls[str(p.get("call_id") or p.get("id") or len(self.calls))] = (
                "local_shell",
                {"command": command},
                time,
            )
            self.text_after_tools = False
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            call_id = str(p.get("call_id") or "")
            name, data, _call_time = self.calls.pop(call_id, ("tool", {}, time))
            self.out.append(self.tool(name, data, p.get("output"), time, call_id))

    def tool(self, name: str, data: Any, output: Any, time: str, call_id: str) -> Observation:
        """One answered call, normalised as the hook normalises it; the exit code Codex
        recorded beside the output (its hooks carry none) settles whether it failed."""
        text, code = _unwrap(output)
        # Codex answers a call the user refused with its own words and no exit code: the
        # command never ran, so it neither passed nor changed anything.
        # So is one its sandbox stopped (`failed in sandbox: ... killed by a signal`) or the
        # user stopped while it ran (`aborted by user after 33.4s`): neither passed.
        said = text.strip()
        refused = _REFUSED.match(said) is not None
        aborted = _ABORTED.match(said) is not None
        facts = tool_facts(
            name,
            data,
            text,
            self.cwd,
            failed=True if call_id in self.failed_patches or refused or aborted or _SANDBOX.match(said) else None,
            exit_code=self.exit_codes.get(call_id, code),
        )
        meta = {"tool_use_id": call_id, **({"interrupted": True} if aborted else {})}
        return self.obs("tool", time, **facts.observation_fields(name, meta))

    def finish(self) -> list[Observation]:
        """Everything read, in order, after the session-start that names the model and branch."""
        if self.last_text is not None and not self.turn_closed:
            self.close_turn(None, self.last_text[0])
        out = self.out
        # Calls whose results never came: the session stopped in the middle of them.
        for call_id, (name, data, call_time) in self.calls.items():
            out.append(
                self.obs(
                    "tool",
                    call_time,
                    tool=name,
                    input=compact_input(name, data),
                    files=touched_files(name, data, self.cwd),
                    meta={"tool_use_id": call_id, "no_result": True},
                )
            )
        out.sort(key=lambda o: o.time)
        if self.records:
            start = next((str(r.get("timestamp")) for r in self.records if r.get("timestamp")), "")
            out.insert(0, self.obs("session-start", start, meta=self.meta))
        return out
