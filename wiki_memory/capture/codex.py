"""Codex: Claude Code's hook shapes plus `model` and `turn_id`.

Seen on Codex 0.171.0: `tool_response` is a string; the shell tool arrives as
`tool_name: "Bash"` with `tool_input.command` and no exit code (a failure is told from the
output); `apply_patch` carries the patch text in `tool_input.command` (the files touched
are in it); `update_plan` carries the plan with statuses. SessionEnd exists and gets at
most 3 s.
"""

from __future__ import annotations

from wiki_memory.capture.adapter import Adapter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class Codex(Adapter):
    name = "codex"
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


ADAPTER = Codex()
