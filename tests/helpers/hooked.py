"""Sessions recorded through the real hook entry point (`wiki-memory hook claude-code EVENT`),
as Claude Code makes the calls: what consolidation then reads is a real journal."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from wiki_memory.hook import main as hook


class Hooked:
    """One Claude Code session, driven call by call through `hook.main`."""

    def __init__(self, cwd: Path, session_id: str) -> None:
        self.cwd = cwd
        self.session_id = session_id
        self.calls = 0

    def call(self, event: str, **payload: Any) -> bytes:
        body = {
            "session_id": self.session_id,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            "transcript_path": "",
            **payload,
        }
        out = io.BytesIO()
        assert hook.main(["claude-code", event], stdin=io.BytesIO(json.dumps(body).encode()), stdout=out) == 0
        return out.getvalue()

    def start(self, source: str = "startup") -> str:
        """SessionStart; the context it hands the agent ("" when none)."""
        out = self.call("SessionStart", source=source)
        if not out.strip():
            return ""
        return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])

    def prompt(self, text: str) -> Hooked:
        self.call("UserPromptSubmit", prompt=text)
        return self

    def tool(self, name: str, tool_input: dict[str, Any], response: Any = None, *, error: str | None = None) -> Hooked:
        self.calls += 1
        common = {"tool_name": name, "tool_input": tool_input, "tool_use_id": f"toolu_{self.calls:04d}"}
        if error is not None:
            self.call("PostToolUseFailure", **common, error=error)
        else:
            self.call("PostToolUse", **common, tool_response=response if response is not None else {})
        return self

    def bash(self, command: str, stdout: str = "", *, exit_code: int = 0, stderr: str = "") -> Hooked:
        """A Bash call: a non-zero exit arrives as PostToolUseFailure, as Claude Code sends it."""
        if exit_code:
            text = "\n".join(t for t in (stderr, stdout) if t)
            return self.tool("Bash", {"command": command}, error=f"Exit code {exit_code}\n{text}")
        return self.tool("Bash", {"command": command}, {"stdout": stdout, "stderr": stderr, "interrupted": False})

    def edit(self, path: str, old: str = "a", new: str = "b") -> Hooked:
        full = str(self.cwd / path)
        return self.tool(
            "Edit",
            {"file_path": full, "old_string": old, "new_string": new},
            {"filePath": full, "oldString": old, "newString": new},
        )

    def read(self, path: str) -> Hooked:
        full = str(self.cwd / path)
        return self.tool("Read", {"file_path": full}, {"type": "text", "file": {"filePath": full, "content": "x"}})

    def stop(self, text: str) -> Hooked:
        self.call("Stop", last_assistant_message=text, stop_hook_active=False)
        return self
