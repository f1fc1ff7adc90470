"""What a tool call tells us, whichever agent made it: a compact input, an output excerpt,
whether it failed, the files it touched and the plan it carried.

The adapters hand over the agent's own tool name, input and response; this module knows
the tools (Claude Code's Bash/Edit/Write/TaskCreate, Codex's apply_patch and update_plan,
Gemini's run_shell_command/replace/write_todos, Cursor's shell and edit tools) and keeps
the journal line small: an output is cut to its head and tail, never copied whole.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple

from wiki_memory.capture.observation import PlanItem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

OUTPUT_LIMIT = 2048  # characters of a tool's output kept (head and tail)
INPUT_LIMIT = 1024  # characters of a compact input
PROMPT_LIMIT = 16384  # characters of a prompt or final message
CUT_MARGIN = 1024  # characters past a cut that redaction sees before the cut is made

SHELL_TOOLS = {
    "Bash",
    "bash",
    "shell",
    "exec_command",
    "shell_command",
    "run_shell_command",
    "Shell",
    "run_terminal_cmd",
    "local_shell",
}
# Tools whose input names the one file they change, and the key it is under.
FILE_EDIT_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "write_file": "file_path",
    "replace": "file_path",
    "edit_file": "target_file",
    "search_replace": "file_path",
    "write": "file_path",
    "edit": "file_path",
    "delete_file": "target_file",
    "Delete": "file_path",
}
PATCH_TOOLS = {"apply_patch", "ApplyPatch"}
# Input keys worth showing, in order of preference, for tools we do not know by name.
_INPUT_KEYS = (
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "path",
    "absolute_path",
    "target_file",
    "pattern",
    "query",
    "url",
    "description",
    "subject",
    "prompt",
)

# Compiled on first use (see `_regex`): most hook calls need none of them.
_PATTERNS = {
    "patch-file": (r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M),
    "exit-code": (r"(?:Process exited with code|Exit code:?|exit code:?|exited with code|Exit Code:)\s*(-?\d+)", 0),
    # Lines that say a command failed even when no exit code is given (Codex's shell output).
    "failure": (
        r"^(?:Traceback \(most recent call last\):|fatal: |error(?:\[E\d+\])?: |Error: |ERROR[: ]|FAILED\b|"
        r"npm ERR!|E\s{3}\w|panic: |Segmentation fault)"
        r"|: command not found$|: No such file or directory$|: Permission denied$|: cannot access '"
        r"|^=+ .*\b\d+ (?:failed|errors?)\b.* =+$|\bAssertionError\b",
        re.M,
    ),
}
_compiled: dict[str, re.Pattern[str]] = {}


def _regex(name: str) -> re.Pattern[str]:
    if name not in _compiled:
        _compiled[name] = re.compile(*_PATTERNS[name])
    return _compiled[name]


class ToolFacts(namedtuple("ToolFacts", "input output error files plan")):
    """The normalised facts of one tool call: input and output (str or None), error (bool),
    files (tuple of paths), plan (tuple of PlanItem)."""

    __slots__ = ()


def clip(text: str | None, limit: int = PROMPT_LIMIT) -> str | None:
    """`text` cut to `limit` characters, the cut marked; redacted with a margin before the
    cut (as `excerpt` is), so a secret the cut would halve is whole when redaction sees it."""
    if text is None or len(text) <= limit:
        return text
    from wiki_memory.capture.redact import redact

    return redact(text[: limit + CUT_MARGIN])[:limit] + f"\n[... {len(text) - limit:,} more characters cut ...]"


def excerpt(text: str | None, limit: int = OUTPUT_LIMIT) -> str | None:
    """The head and tail of `text` (two thirds head, one third tail), the cut marked.

    Each side is redacted with a margin before it is cut: a secret that straddles a cut
    is still whole when redaction sees it, so no half of it survives.
    """
    if not text:
        return None
    if len(text) <= limit:
        return text
    from wiki_memory.capture.redact import redact

    head_len, tail_len = limit * 2 // 3, limit // 3
    head = redact(text[: head_len + CUT_MARGIN])[:head_len]
    tail = redact(text[-(tail_len + CUT_MARGIN) :])[-tail_len:]
    # Cut at line ends where one is near, so the excerpt reads as whole lines.
    if (nl := head.rfind("\n")) > len(head) - 200:
        head = head[:nl]
    if 0 <= (nl := tail.find("\n")) < 200:
        tail = tail[nl + 1 :]
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n[... {omitted:,} characters omitted ...]\n{tail}"


def as_text(value: Any) -> str:
    """Any tool response as text: strings as they are, content blocks joined, the rest JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") in ("image", "audio", "resource"):
                parts.append(f"[{block.get('type')}]")
            else:
                parts.append(as_text(block))
        return "\n".join(p for p in parts if p)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def relative(path: str, cwd: str | None) -> str:
    """A path inside the working directory, relative to it; others as given."""
    if cwd and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel
    return path


def patch_files(patch: str) -> list[str]:
    """The files an `apply_patch` patch adds, updates, deletes or moves to."""
    return [m.group(1) or m.group(2) for m in _regex("patch-file").finditer(patch)]


def exit_code(text: str) -> int | None:
    """The exit code a shell tool's output reports, if it reports one."""
    m = _regex("exit-code").search(text)
    return int(m.group(1)) if m else None


def looks_failed(text: str) -> bool:
    """Whether shell output reads as a failure (a non-zero exit code, or a failure line)."""
    code = exit_code(text)
    if code is not None:
        return code != 0
    return bool(_regex("failure").search(text))


def compact_input(tool: str, tool_input: Any) -> str | None:
    """The one thing worth keeping of a tool's input: the command, the path, the pattern."""
    if isinstance(tool_input, str):
        return clip(tool_input, INPUT_LIMIT)
    if not isinstance(tool_input, dict):
        return clip(as_text(tool_input), INPUT_LIMIT) or None
    if tool in PATCH_TOOLS:
        patch = _patch_text(tool_input)
        files = patch_files(patch)
        return clip(", ".join(files) if files else patch, INPUT_LIMIT)
    for key in _INPUT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value[2:] if value[:2] in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"]) else value)
        if isinstance(value, str) and value:
            extra = tool_input.get("path") if key == "pattern" else None
            return clip(f"{value} (in {extra})" if isinstance(extra, str) and extra else value, INPUT_LIMIT)
    if tool == "TaskUpdate":
        return clip(" ".join(f"{k}={v}" for k, v in tool_input.items() if isinstance(v, (str, int))), INPUT_LIMIT)
    return clip(as_text(tool_input), INPUT_LIMIT) or None


def _patch_text(tool_input: dict[str, Any]) -> str:
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):  # ["apply_patch", "<patch>"]
            return "\n".join(v for v in value if isinstance(v, str))
    return ""


def touched_files(tool: str, tool_input: Any, cwd: str | None) -> tuple[str, ...]:
    """The files a tool call changed (edit and write tools, patches)."""
    if not isinstance(tool_input, dict):
        return ()
    paths: list[str] = []
    if tool in PATCH_TOOLS:
        paths = patch_files(_patch_text(tool_input))
    elif tool in FILE_EDIT_TOOLS:
        value = tool_input.get(FILE_EDIT_TOOLS[tool]) or tool_input.get("file_path") or tool_input.get("path")
        if isinstance(value, str) and value:
            paths = [value]
    return tuple(dict.fromkeys(relative(p, cwd) for p in paths))


_STATUS = {
    "pending": "pending",
    "todo": "pending",
    "not_started": "pending",
    "in_progress": "in_progress",
    "in-progress": "in_progress",
    "active": "in_progress",
    "completed": "completed",
    "done": "completed",
    "complete": "completed",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "deleted": "deleted",
}


def _status(value: Any, default: str = "pending") -> str:
    return _STATUS.get(str(value).lower(), str(value).lower()) if value else default


def plan_items(tool: str, tool_input: Any, tool_response: Any) -> tuple[PlanItem, ...]:
    """Plan items carried by a planning tool (TodoWrite, TaskCreate/TaskUpdate, update_plan, write_todos)."""
    if not isinstance(tool_input, dict):
        return ()
    if tool in ("TodoWrite", "write_todos", "todo_write"):
        todos = tool_input.get("todos") or ()
        return tuple(
            PlanItem(
                str(t.get("content") or t.get("description") or ""),
                _status(t.get("status")),
                str(t["id"]) if t.get("id") is not None else None,
            )
            for t in todos
            if isinstance(t, dict)
        )
    if tool == "update_plan":
        return tuple(
            PlanItem(str(s.get("step", "")), _status(s.get("status")))
            for s in tool_input.get("plan") or ()
            if isinstance(s, dict)
        )
    if tool == "TaskCreate":
        task = tool_response.get("task") if isinstance(tool_response, dict) else None
        task_id = task.get("id") if isinstance(task, dict) else None
        return (
            PlanItem(
                str(tool_input.get("subject") or tool_input.get("description") or ""),
                "pending",
                str(task_id) if task_id is not None else None,
            ),
        )
    if tool == "TaskUpdate":
        status = tool_input.get("status")
        if status is None and isinstance(tool_response, dict):
            status = (tool_response.get("statusChange") or {}).get("to")
        return (
            PlanItem(
                str(tool_input.get("subject") or ""),
                _status(status, "pending"),
                str(tool_input.get("taskId")) if tool_input.get("taskId") is not None else None,
            ),
        )
    return ()


def tool_facts(
    tool: str,
    tool_input: Any,
    tool_response: Any,
    cwd: str | None,
    failed: bool | None = None,
    error_text: str | None = None,
) -> ToolFacts:
    """Normalise one tool call. `failed` is what the agent said (None: unknown, judge the
    output); `error_text` is its error message when it gave one."""
    output, error = _output(tool, tool_response)
    if error_text:
        output = error_text if not output else f"{error_text}\n{output}"
    if failed is not None:
        error = failed or error
    return ToolFacts(
        compact_input(tool, tool_input),
        excerpt(output),
        error,
        touched_files(tool, tool_input, cwd),
        plan_items(tool, tool_input, tool_response),
    )


def _output(tool: str, response: Any) -> tuple[str, bool]:
    """The text worth an excerpt, and whether the response itself says it failed."""
    if isinstance(response, dict):
        if "stdout" in response or "stderr" in response:  # Claude Code's Bash
            stdout, stderr = str(response.get("stdout") or ""), str(response.get("stderr") or "")
            text = stdout + (f"\n[stderr]\n{stderr}" if stderr and stdout else stderr)
            failed = bool(response.get("interrupted")) or bool(stderr and looks_failed(stderr))
            if response.get("returnCodeInterpretation"):
                text += f"\n[{response['returnCodeInterpretation']}]"
            return text, failed
        if "llmContent" in response or "returnDisplay" in response:  # Gemini CLI
            error = response.get("error")
            text = as_text(
                response.get("llmContent") if response.get("llmContent") is not None else response.get("returnDisplay")
            )
            failed = bool(error) or (tool in SHELL_TOOLS and looks_failed(text))
            if error:
                text = f"{as_text(error)}\n{text}" if text else as_text(error)
            return text, failed
        if isinstance(response.get("content"), list):  # MCP: {"content": [...], "isError": ...}
            return as_text(response["content"]), bool(response.get("isError") or response.get("is_error"))
        if tool in FILE_EDIT_TOOLS:
            # An edit's response repeats the whole file: keep only what happened.
            kind = response.get("type") or (
                "update" if "oldString" in response or "structuredPatch" in response else None
            )
            return (str(kind) if kind else ""), bool(response.get("error"))
        if response.get("type") == "text" and isinstance(response.get("file"), dict):  # Read
            return str(response["file"].get("content") or ""), False
        failed = bool(response.get("is_error") or response.get("isError") or response.get("error"))
        return as_text(response), failed
    text = as_text(response)
    if isinstance(response, list):
        failed = any(isinstance(b, dict) and (b.get("is_error") or b.get("isError")) for b in response)
        return text, failed
    if tool in SHELL_TOOLS or tool in PATCH_TOOLS:
        return text, looks_failed(text)
    return text, False


def first_str(payload: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    """The first non-empty string among `payload[key]` for `keys`."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None
