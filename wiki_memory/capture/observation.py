"""What one hook event tells us, normalised across agents."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

KINDS = ("session-start", "prompt", "tool", "stop", "compact", "session-end")


@dataclass(frozen=True)
class PlanItem:
    """One item of the agent's plan (TodoWrite, TaskCreate/TaskUpdate, update_plan)."""

    text: str
    status: str  # pending | in_progress | completed (as the agent said, normalised)
    id: str | None = None


@dataclass(frozen=True)
class Observation:
    """One thing that happened in a session.

    `text` is the prompt for `prompt`, the final assistant message for `stop`, the reason
    for `session-end`. `input` is a compact form of a tool's input (the command, the file
    path, the pattern); `output` an excerpt of its output (head and tail, truncation
    marked). `meta` holds the rest: transcript_path, model, source, reason, duration_ms,
    turn_id, tool_use_id.
    """

    kind: str
    agent: str
    session_id: str
    time: str
    cwd: str | None = None
    event: str | None = None  # the agent's own event name (PostToolUse, afterShellExecution, ...)
    text: str | None = None
    tool: str | None = None
    input: str | None = None
    output: str | None = None
    error: bool = False
    files: tuple[str, ...] = ()
    plan: tuple[PlanItem, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A compact dict: empty fields are left out of the journal line."""
        data = asdict(self)
        data["files"] = list(self.files)
        data["plan"] = [asdict(item) for item in self.plan]
        data["meta"] = dict(self.meta)
        return {k: v for k, v in data.items() if v not in (None, "", [], {}, False) or k in
                ("kind", "agent", "session_id", "time")}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Observation":
        plan = tuple(PlanItem(str(p.get("text", "")), str(p.get("status", "pending")), p.get("id"))
                     for p in data.get("plan") or () if isinstance(p, dict))
        return cls(
            kind=str(data.get("kind", "")), agent=str(data.get("agent", "")),
            session_id=str(data.get("session_id", "")), time=str(data.get("time", "")),
            cwd=data.get("cwd"), event=data.get("event"), text=data.get("text"), tool=data.get("tool"),
            input=data.get("input"), output=data.get("output"), error=bool(data.get("error", False)),
            files=tuple(str(f) for f in data.get("files") or ()), plan=plan,
            meta=dict(data.get("meta") or {}),
        )


def utc_now() -> str:
    """Millisecond ISO 8601 time in UTC, as journals record it (`2026-11-30T08:12:44.123Z`).

    Built with `time`, not `datetime`: this runs in every hook process, where an import
    costs more than the call.
    """
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
