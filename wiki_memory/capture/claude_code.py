"""Claude Code: hook payloads (`session_id`, `transcript_path`, `cwd`, `hook_event_name`)
and the `hookSpecificOutput` envelope.

Seen on Claude Code 2.1.197: PostToolUse carries `tool_response` (an object for Bash with
stdout, stderr and interrupted; the structured result for MCP tools); a failing tool call
fires PostToolUseFailure with `error` ("Exit code 1\n..."); plans arrive as TaskCreate /
TaskUpdate calls (TodoWrite in older versions); StopFailure carries `error` and
`error_details`.
"""

from __future__ import annotations

from wiki_memory.capture.adapter import Adapter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class ClaudeCode(Adapter):
    name = "claude-code"
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


ADAPTER = ClaudeCode()
