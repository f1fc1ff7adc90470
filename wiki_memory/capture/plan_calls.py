"""The plan a planning tool's call carries (Claude Code's TodoWrite, TaskCreate and TaskUpdate,
Codex's update_plan, Gemini's write_todos, OpenCode's todowrite), each item's status in one
spelling. Standard library only: this is the hook path.
"""

from __future__ import annotations

from wiki_memory.capture.observation import PlanItem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def normalize_status(status: Any) -> str:
    """completed | in_progress | pending | cancelled, from any agent's spelling."""
    low = str(status or "").strip().lower().replace("-", "_").replace(" ", "_")
    if low in ("completed", "complete", "done", "finished", "success", "succeeded"):
        return "completed"
    if low in ("in_progress", "inprogress", "active", "doing", "running", "started"):
        return "in_progress"
    if low in ("cancelled", "canceled", "deleted", "removed", "abandoned", "skipped"):
        return "cancelled"
    return "pending"


def plan_items(tool: str, tool_input: Any, tool_response: Any) -> tuple[PlanItem, ...]:
    """Plan items carried by a planning tool (TodoWrite, TaskCreate/TaskUpdate, update_plan, write_todos).

    A TaskUpdate that names no status (a new subject only) has status "": the item keeps its own.
    """
    if not isinstance(tool_input, dict):
        return ()
    if tool in ("TodoWrite", "write_todos", "todo_write", "todowrite"):
        todos = [t for t in tool_input.get("todos") or () if isinstance(t, dict)]
        items = (
            PlanItem(
                str(t.get("content") or t.get("description") or t.get("activeForm") or ""),
                normalize_status(t.get("status")),
                str(t["id"]) if t.get("id") is not None else None,
            )
            for t in todos
        )
        return tuple(item for item in items if item.text)
    if tool == "update_plan":
        steps = [s for s in tool_input.get("plan") or () if isinstance(s, dict) and s.get("step")]
        return tuple(PlanItem(str(s["step"]), normalize_status(s.get("status"))) for s in steps)
    if tool == "TaskCreate":
        task = tool_response.get("task") if isinstance(tool_response, dict) else None
        task_id = task.get("id") if isinstance(task, dict) else None
        text = str(tool_input.get("subject") or tool_input.get("description") or "")
        created = normalize_status(tool_input.get("status"))
        return (PlanItem(text, created, str(task_id) if task_id is not None else None),) if text else ()
    if tool == "TaskUpdate":
        status = tool_input.get("status")
        if status is None and isinstance(tool_response, dict):
            status = (tool_response.get("statusChange") or {}).get("to")
        task_id = tool_input.get("taskId")
        return (
            PlanItem(
                str(tool_input.get("subject") or ""),
                normalize_status(status) if status else "",
                str(task_id) if task_id is not None else None,
            ),
        )
    return ()
