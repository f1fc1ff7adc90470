"""Gemini CLI: SessionStart, BeforeAgent (the prompt), AfterTool, AfterAgent (the final
answer in `prompt_response`), PreCompress, SessionEnd.

Its `tool_response` is `{llmContent, returnDisplay, error?}`; its stdout must be JSON
only, so the hook prints nothing but the SessionStart envelope.
"""

from __future__ import annotations

from wiki_memory.capture.adapter import Adapter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar


class Gemini(Adapter):
    name = "gemini"
    events: ClassVar[dict[str, str | None]] = {
        "SessionStart": "session-start",
        "BeforeAgent": "prompt",
        "AfterTool": "tool",
        "AfterAgent": "stop",
        "PreCompress": "compact",
        "SessionEnd": "session-end",
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


ADAPTER = Gemini()
