"""Gemini CLI: SessionStart, BeforeAgent (the prompt), AfterTool, AfterAgent (the final
answer in `prompt_response`), PreCompress, SessionEnd.

Its `tool_response` is `{llmContent, returnDisplay, error?}`; its stdout must be JSON
only, so the hook prints nothing but the SessionStart envelope.
"""

from __future__ import annotations

from wiki_memory.capture.adapter import Adapter


class Gemini(Adapter):
    name = "gemini"
    events = {
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


ADAPTER = Gemini()
