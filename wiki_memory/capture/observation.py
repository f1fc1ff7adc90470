"""What one hook event tells us, normalised across agents."""

from __future__ import annotations

import time
from collections import namedtuple
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


_EMPTY: Mapping[str, Any] = MappingProxyType({})

# Why named tuples and not frozen dataclasses: these are built in every hook process, and
# `dataclasses` imports `inspect` (with `ast` and `dis`), a fifth of a hook's start-up.
# Why two spellings: the hook path does not import `typing` either, so the process builds
# them with `collections.namedtuple`; mypy reads the `typing.NamedTuple`s, field for field the same.
if TYPE_CHECKING:
    from typing import NamedTuple

    class _PlanItem(NamedTuple):
        text: str
        status: str
        id: str | None = None

    class _Observation(NamedTuple):
        kind: str
        agent: str
        session_id: str
        time: str
        cwd: str | None = None
        event: str | None = None
        text: str | None = None
        tool: str | None = None
        input: str | None = None
        output: str | None = None
        error: bool = False
        files: tuple[str, ...] = ()
        plan: tuple[PlanItem, ...] = ()
        meta: Mapping[str, Any] = _EMPTY

else:
    _PlanItem = namedtuple("PlanItem", "text status id", defaults=(None,))
    _Observation = namedtuple(
        "Observation",
        "kind agent session_id time cwd event text tool input output error files plan meta",
        defaults=(None, None, None, None, None, None, False, (), (), _EMPTY),
    )


class PlanItem(_PlanItem):
    """One item of the agent's plan (TodoWrite, TaskCreate/TaskUpdate, update_plan).

    `status` is pending | in_progress | completed | cancelled (normalised), or "" when
    the call named none (an update of the subject only).
    """

    __slots__ = ()


class Observation(_Observation):
    """One thing that happened in a session.

    `text` is the prompt for `prompt`, the final assistant message for `stop`, the reason
    for `session-end`. `input` is a compact form of a tool's input (the command, the file
    path, the pattern); `output` an excerpt of its output (head and tail, truncation
    marked). `meta` holds the rest: transcript_path, model, source, reason, duration_ms,
    turn_id, tool_use_id, exit_code.

    Fields: kind, agent, session_id, time (required); cwd, event (the agent's own event
    name: PostToolUse, afterShellExecution, ...), text, tool, input, output, error (bool),
    files (tuple of paths), plan (tuple of PlanItem), meta (a mapping).
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A compact dict: empty fields are left out of the journal line."""
        data = self._asdict()
        data["files"] = list(self.files)
        data["plan"] = [item._asdict() for item in self.plan]
        data["meta"] = dict(self.meta)
        return {
            k: v
            for k, v in data.items()
            if v not in (None, "", [], {}, False) or k in ("kind", "agent", "session_id", "time")
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Observation:
        plan = tuple(
            PlanItem(str(p.get("text", "")), str(p.get("status", "pending")), p.get("id"))
            for p in data.get("plan") or ()
            if isinstance(p, dict)
        )
        return cls(
            kind=str(data.get("kind", "")),
            agent=str(data.get("agent", "")),
            session_id=str(data.get("session_id", "")),
            time=str(data.get("time", "")),
            cwd=data.get("cwd"),
            event=data.get("event"),
            text=data.get("text"),
            tool=data.get("tool"),
            input=data.get("input"),
            output=data.get("output"),
            error=bool(data.get("error", False)),
            files=tuple(str(f) for f in data.get("files") or ()),
            plan=plan,
            meta=dict(data.get("meta") or {}),
        )


def utc_now() -> str:
    """Millisecond ISO 8601 time in UTC, as journals record it (`2026-11-30T08:12:44.123Z`).

    Built with `time`, not `datetime`: this runs in every hook process, where an import
    costs more than the call.
    """
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
