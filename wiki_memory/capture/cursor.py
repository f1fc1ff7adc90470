"""Cursor: camelCase events, `conversation_id`, `workspace_roots`, snake_case outputs.

sessionStart hands context back as `{"additional_context": ...}`; beforeSubmitPrompt
carries `prompt`; postToolUse `tool_name`, `tool_input`, `tool_output`; the shell and
edit events (afterShellExecution: `command`, `output`; afterFileEdit: `file_path`) are
read too when a user wires them; afterAgentResponse carries the final `text`; stop its
`status` (completed, aborted, error); sessionEnd its `reason`.
"""

from __future__ import annotations

import json

from wiki_memory.capture.adapter import Adapter, call_observation
from wiki_memory.capture.observation import Observation
from wiki_memory.capture.toolcalls import tool_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar


class Cursor(Adapter):
    name = "cursor"
    events: ClassVar[dict[str, str | None]] = {
        "sessionStart": "session-start",
        "beforeSubmitPrompt": "prompt",
        "postToolUse": "tool",
        "postToolUseFailure": "tool",
        "afterShellExecution": "tool",
        "afterMCPExecution": "tool",
        "afterFileEdit": "tool",
        "afterAgentResponse": "stop",
        "stop": "stop",
        "preCompact": "compact",
        "sessionEnd": "session-end",
        "beforeShellExecution": None,
        "beforeMCPExecution": None,
        "beforeReadFile": None,
        "preToolUse": None,
        "afterAgentThought": None,
        "subagentStart": None,
        "subagentStop": None,
    }
    end_events = frozenset({"sessionEnd"})
    session_keys = ("conversation_id", "session_id")

    def cwd(self, payload: Mapping[str, Any]) -> str | None:
        roots = payload.get("workspace_roots")
        if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
            return roots[0]
        return super().cwd(payload)

    def meta(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        meta = super().meta(payload)
        for key in ("generation_id", "status", "cursor_version", "loop_count", "final_status", "error_message"):
            if isinstance(payload.get(key), (str, int)) and payload[key] != "":
                meta[key] = payload[key]
        return meta

    def parse(self, event: str, payload: Mapping[str, Any]) -> list[Observation]:
        observations = super().parse(event, payload)
        if event == "stop" and observations:
            status = str(payload.get("status") or "")
            observations = [o._replace(error=status == "error") for o in observations]
        return observations

    def tool_observation(self, event: str, payload: Mapping[str, Any], base: dict[str, Any]) -> Observation:
        tool_input: Any
        if event == "afterShellExecution":
            tool, tool_input, response = "Shell", {"command": payload.get("command")}, payload.get("output")
        elif event == "afterFileEdit":
            tool, tool_input, response = "Edit", {"file_path": payload.get("file_path")}, None
        elif event == "afterMCPExecution":
            tool, tool_input = str(payload.get("tool_name") or "mcp"), payload.get("tool_input")
            response = payload.get("result_json")
        else:
            tool, tool_input = str(payload.get("tool_name") or ""), payload.get("tool_input")
            response = payload.get("tool_output", payload.get("tool_response"))
        if isinstance(tool_input, str):  # Cursor sends some inputs as JSON text
            try:
                tool_input = json.loads(tool_input)
            except ValueError:
                pass
        error_text = payload.get("error_message") if isinstance(payload.get("error_message"), str) else None
        failed = True if event == "postToolUseFailure" else None
        facts = tool_facts(tool, tool_input, response, base["cwd"], failed=failed, error_text=error_text)
        return call_observation(base, tool, facts)

    def envelope(self, event: str, text: str) -> dict[str, Any]:
        return {"additional_context": text}


ADAPTER = Cursor()
