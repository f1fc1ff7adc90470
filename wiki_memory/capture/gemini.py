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
"""

from __future__ import annotations

import re

from wiki_memory.capture.adapter import Adapter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar

    from wiki_memory.capture.observation import Observation

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


ADAPTER = Gemini()
