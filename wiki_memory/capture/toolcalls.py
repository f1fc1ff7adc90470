"""What a tool call tells us, whichever agent made it and however we heard of it: a compact
input, an output excerpt, whether it failed and with which exit code, the files it touched,
the plan it carried, and what kind of call it was.

The one normaliser of tool calls: the hook adapters hand over the agent's own tool name,
input and response, and the transcript readers hand over the same three read from the
transcript, so that one call reads the same in the journal and from the transcript. This
module knows the tools (Claude Code's Bash/Edit/Write/TaskCreate, Codex's shell, apply_patch
and update_plan, Gemini's run_shell_command/replace/write_todos, Cursor's shell and edit
tools, OpenCode's bash/edit/write/todowrite/apply_patch) and keeps the journal line small:
an output is cut to its head and tail, never copied whole. How a command's output says it
ended (an exit code, failure lines) is `exit_status`'s. Standard library only: this is the hook path.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple

from wiki_memory.capture.exit_status import command_output, has_failure_line, looks_failed, read_exit_code
from wiki_memory.capture.observation import PlanItem
from wiki_memory.capture.plan_calls import plan_items
from wiki_memory.capture.shell import edited_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

OUTPUT_LIMIT = 2048  # characters of a tool's output kept (head and tail)
INPUT_LIMIT = 1024  # characters of a compact input
PROMPT_LIMIT = 16384  # characters of a prompt or final message
CUT_MARGIN = 1024  # characters past a cut that redaction sees before the cut is made

# What a tool does, by its name (lower-cased) in any agent. Anything else is "other".
COMMAND_TOOLS = frozenset(
    "bash exec_command shell local_shell shell_command run_shell_command run_terminal_cmd terminal powershell "
    "container.exec bashoutput write_stdin".split()
)
PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})
EDIT_TOOLS = PATCH_TOOLS | frozenset(
    "edit write multiedit notebookedit write_file replace edit_file str_replace_editor str_replace_based_edit_tool "
    "create_file search_replace delete_file delete".split()
)
READ_TOOLS = frozenset(
    "read glob grep ls read_file read_many_files list_directory glob_tool search_file_content codebase_search "
    "file_search grep_search list_dir webfetch websearch web_fetch web_search google_web_search view_image "
    "notebookread taskget tasklist taskoutput tool_search toolsearch".split()
)
PLAN_TOOLS = frozenset({"todowrite", "taskcreate", "taskupdate", "update_plan", "write_todos", "todo_write"})
# Tools that send the whole plan each time; the others (TaskCreate, TaskUpdate) change one item.
FULL_PLAN_TOOLS = frozenset({"todowrite", "update_plan", "write_todos", "todo_write"})
ASK_TOOLS = frozenset({"askuserquestion", "exitplanmode", "request_user_input", "ask_followup_question"})
AGENT_TOOLS = frozenset({"task", "agent", "multi_agent_v1", "spawn_agent"})

# Where a shell tool's input names the directory its command runs in (Codex's `workdir`,
# Gemini's `directory` or `dir_path`), when it is not the session's own.
_WORKDIR_KEYS = ("workdir", "cwd", "working_directory", "directory", "dir_path")
# Where an edit tool names its file, in order of preference.
_FILE_KEYS = ("file_path", "notebook_path", "target_file", "path", "filePath")
# Input keys worth showing for other tools: paths, then a few words of prose.
_PATH_KEYS = ("file_path", "notebook_path", "path", "filePath", "absolute_path", "target_file")
_PROSE_KEYS = ("subject", "description", "query", "url", "prompt", "title", "plan", "questions")

# Compiled on first use (see `_regex`): most hook calls need none of them.
_PATTERNS = {
    "patch-file": (r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M),
    # How a tool that is not a command says, in text, that it failed (Codex's MCP and function calls).
    "tool-error": (r"\s*(?:error|unsupported call|failed|tool call failed)\b", re.I),
}
_compiled: dict[str, re.Pattern[str]] = {}


def _regex(name: str) -> re.Pattern[str]:
    if name not in _compiled:
        _compiled[name] = re.compile(*_PATTERNS[name])
    return _compiled[name]


if TYPE_CHECKING:
    from typing import NamedTuple

    class _ToolFacts(NamedTuple):
        input: str | None
        output: str | None
        error: bool
        files: tuple[str, ...]
        plan: tuple[PlanItem, ...]
        exit_code: int | None = None
        workdir: str | None = None
        asked: str | None = None
        escalated: bool = False

else:
    _ToolFacts = namedtuple(
        "ToolFacts",
        "input output error files plan exit_code workdir asked escalated",
        defaults=(None, None, None, False),
    )


class ToolFacts(_ToolFacts):
    """The normalised facts of one tool call: input and output (str or None), error (bool),
    files (tuple of paths), plan (tuple of PlanItem), exit_code (int or None), workdir (the
    directory the call said its command runs in, str or None), asked (what a sub-agent was
    asked to do, its prompt's start: the command it was to run is there), escalated (the
    command asked to run outside the agent's sandbox)."""

    __slots__ = ()

    def observation_fields(self, tool: str, meta: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of the call's observation: `meta` with the exit code the call reported
        and the directory it ran in added, where the hooks and the transcript readers both put them."""
        meta = dict(meta)
        if self.exit_code is not None:
            meta["exit_code"] = self.exit_code
        if self.workdir:
            meta["workdir"] = self.workdir
        if self.asked:
            meta["asked"] = self.asked
        if self.escalated:
            meta["escalated"] = True
        return {
            "tool": tool,
            "input": self.input,
            "output": self.output,
            "error": self.error,
            "files": self.files,
            "plan": self.plan,
            "meta": meta,
        }


def tool_kind(name: str | None, files: Sequence[str] = ()) -> str:
    """command | edit | read | plan | ask | agent | memory | other."""
    low = (name or "").lower()
    if "wiki-memory" in low or "wiki_memory" in low:
        return "memory"
    for kind, names in (
        ("command", COMMAND_TOOLS),
        ("edit", EDIT_TOOLS),
        ("plan", PLAN_TOOLS),
        ("read", READ_TOOLS),
        ("ask", ASK_TOOLS),
        ("agent", AGENT_TOOLS),
    ):
        if low in names:
            return kind
    return "edit" if files else "other"


def _runs_commands(tool: str) -> bool:
    """A shell or a patch: its output says how it ended (an exit code, failure lines)."""
    low = tool.lower()
    return low in COMMAND_TOOLS or low in PATCH_TOOLS


# Text --------------------------------------------------------------------------------------


#: The mark `clip` leaves where it cut: what follows was not kept.
CUT_MARK = re.compile(r"\[\.\.\. [\d,]+ more characters cut \.\.\.\]")


def clip(text: str | None, limit: int = PROMPT_LIMIT) -> str | None:
    """`text` cut to `limit` characters, the cut marked; redacted with a margin before the
    cut (as `excerpt` is), so a secret the cut would halve is whole when redaction sees it."""
    if text is None or len(text) <= limit:
        return text
    from wiki_memory.capture.redact import redact  # deferred: out of hook start-up

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
    from wiki_memory.capture.redact import redact  # deferred: out of hook start-up

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


def first_str(payload: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    """The first non-empty string among `payload[key]` for `keys`."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# Input, files, plan ------------------------------------------------------------------------


def compact_input(tool: str, tool_input: Any) -> str | None:
    """The one thing worth keeping of a tool's input: the files a patch touches, the
    command, the path, the pattern, a few words of its description."""
    if tool.lower() in PATCH_TOOLS and (files := patch_files(_patch_text(tool_input))):
        return clip(", ".join(files), INPUT_LIMIT)
    if isinstance(tool_input, str):
        return clip(tool_input.strip(), INPUT_LIMIT) or None
    if not isinstance(tool_input, dict):
        return clip(as_text(tool_input), INPUT_LIMIT) or None
    if command := _command(tool_input):
        return clip(command, INPUT_LIMIT)
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return clip(value, INPUT_LIMIT)
    if isinstance(tool_input.get("pattern"), str):
        where = tool_input.get("path") or tool_input.get("glob") or ""
        return clip(f"{tool_input['pattern']}" + (f" in {where}" if where else ""), INPUT_LIMIT)
    for key in _PROSE_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return clip(" ".join(value.split()), INPUT_LIMIT)
    return clip(_structured_input(tool, tool_input), INPUT_LIMIT)


def _command(tool_input: Mapping[str, Any]) -> str:
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, list):
            parts = [str(v) for v in value]
            # ["bash", "-lc", "make test"] is `make test`.
            value = " ".join(parts[2:] if len(parts) >= 3 and parts[1] in ("-lc", "-c") else parts)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _structured_input(tool: str, tool_input: Mapping[str, Any]) -> str:
    """An input of no known key in a few words: a plan's size, the first question, its fields."""
    if tool == "TaskUpdate":
        return " ".join(f"{k}={v}" for k, v in tool_input.items() if isinstance(v, (str, int)))
    if isinstance(tool_input.get("todos"), list):
        return f"{len(tool_input['todos'])} plan items"
    questions = tool_input.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], dict):
        return " ".join(str(questions[0].get("question", "")).split())
    if isinstance(tool_input.get("plan"), list):
        return f"{len(tool_input['plan'])} plan steps"
    return as_text(tool_input)


def _patch_text(tool_input: Any) -> str:
    if isinstance(tool_input, str):  # Codex's custom tool call: the patch itself
        return tool_input
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", "input", "patch", "patchText"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):  # ["apply_patch", "<patch>"]
            return "\n".join(v for v in value if isinstance(v, str))
    return ""


def patch_files(patch: str) -> list[str]:
    """The files an `apply_patch` patch adds, updates, deletes or moves to, in order."""
    found: dict[str, None] = {}
    for m in _regex("patch-file").finditer(patch):
        found[(m.group(1) or m.group(2)).strip()] = None
    return [name for name in found if name]


def call_workdir(tool: str, tool_input: Any) -> str | None:
    """The directory a shell call says its command runs in (`{"command": [...], "workdir":
    "/repo/app"}`), as the call gives it; None when it names none."""
    if tool.lower() not in COMMAND_TOOLS or not isinstance(tool_input, dict):
        return None
    value = first_str(tool_input, _WORKDIR_KEYS)
    return (value.strip() or None) if value else None


def touched_files(tool: str, tool_input: Any, cwd: str | None) -> tuple[str, ...]:
    """The files a tool call changed (edit and write tools, patches, and shell commands that
    write files: `sed -i`, `> f`, a heredoc, `apply_patch` inside `bash -lc`, `mv`, `rm`...),
    relative to `cwd`; a command run in the directory its call names, as if after `cd` there."""
    low = tool.lower()
    paths: list[str] = []
    if low in COMMAND_TOOLS:
        command = (
            tool_input if isinstance(tool_input, str) else _command(tool_input) if isinstance(tool_input, dict) else ""
        )
        if command and (workdir := call_workdir(tool, tool_input)):
            command = "cd '" + workdir.replace("'", "'\\''") + "' && " + command
        return edited_files(command, cwd) if command else ()
    if low in PATCH_TOOLS:
        paths = patch_files(_patch_text(tool_input))
    elif low in EDIT_TOOLS and isinstance(tool_input, dict) and tool_input.get("command") != "view":
        value = first_str(tool_input, _FILE_KEYS)
        paths = [value] if value else []
    return tuple(dict.fromkeys(relative(p, cwd) for p in paths))


def call_files(tool: str, tool_input: Any) -> list[str]:
    """The files a tool call is about to read or change, as the call names them (a patch's
    files; a read or edit tool's path), before it runs."""
    if tool.lower() in PATCH_TOOLS:
        return patch_files(_patch_text(tool_input))
    if isinstance(tool_input, dict):
        value = first_str(tool_input, (*_FILE_KEYS, "absolute_path"))
        return [value] if value else []
    return []


# The whole call --------------------------------------------------------------------------


def tool_facts(
    tool: str,
    tool_input: Any,
    tool_response: Any,
    cwd: str | None,
    failed: bool | None = None,
    error_text: str | None = None,
    exit_code: int | None = None,
) -> ToolFacts:
    """Normalise one tool call. `failed` is what the agent said (True: it failed; None:
    unknown, judge the output); `error_text` its error message when it gave one;
    `exit_code` the exit code it reported beside the output (it settles success)."""
    output, error, code = _output(tool, tool_response)
    if exit_code is not None:
        code, error = exit_code, exit_code != 0
    if error_text:
        output = error_text if not output else f"{error_text}\n{output}"
        if code is None and _runs_commands(tool):
            code = read_exit_code(error_text)
    if failed:
        error = True
    return ToolFacts(
        compact_input(tool, tool_input),
        excerpt(output),
        error,
        touched_files(tool, tool_input, cwd),
        plan_items(tool, tool_input, tool_response) if not error else (),
        code,
        call_workdir(tool, tool_input),
        _asked(tool, tool_input),
        escalated(tool_input),
    )


def escalated(tool_input: Any) -> bool:
    """Did the call ask to run outside the agent's sandbox, with the permissions it withholds?
    (Codex's `sandbox_permissions: "require_escalated"`, older `with_escalated_permissions`;
    Claude Code's `dangerouslyDisableSandbox`.) A later run's success then says the sandbox was
    what had stopped the command."""
    if not isinstance(tool_input, dict):
        return False
    return (
        tool_input.get("sandbox_permissions") == "require_escalated"
        or tool_input.get("with_escalated_permissions") is True
        or tool_input.get("dangerouslyDisableSandbox") is True
    )


ASKED_LIMIT = 600  # characters of a sub-agent's prompt kept


def _asked(tool: str, tool_input: Any) -> str | None:
    """The start of the prompt a sub-agent was given (Task, spawn_agent)."""
    if tool.lower() not in AGENT_TOOLS or not isinstance(tool_input, dict):
        return None
    prompt = tool_input.get("prompt") or tool_input.get("message")
    return clip(prompt.strip(), ASKED_LIMIT) if isinstance(prompt, str) and prompt.strip() else None


def _output(tool: str, response: Any) -> tuple[str, bool, int | None]:
    """The text worth an excerpt, whether the response itself says it failed, and the
    exit code it reports."""
    if isinstance(response, dict):
        return _structured_output(tool, response)
    text = as_text(response)
    if isinstance(response, list):
        failed = any(isinstance(b, dict) and (b.get("is_error") or b.get("isError")) for b in response)
        return text, failed, None
    if _runs_commands(tool):
        text, code = command_output(text)
        failed = code != 0 if code is not None else has_failure_line(text)
        return text, failed, code
    return text, bool(_regex("tool-error").match(text)), None


def _structured_output(tool: str, response: Mapping[str, Any]) -> tuple[str, bool, int | None]:
    if "stdout" in response or "stderr" in response:  # Claude Code's Bash
        stdout, stderr = str(response.get("stdout") or ""), str(response.get("stderr") or "")
        text = stdout + (f"\n[stderr]\n{stderr}" if stderr and stdout else stderr)
        failed = bool(response.get("interrupted")) or bool(stderr and looks_failed(stderr))
        if response.get("returnCodeInterpretation"):
            text += f"\n[{response['returnCodeInterpretation']}]"
        return text, failed, None
    if "llmContent" in response or "returnDisplay" in response:  # Gemini CLI
        error = response.get("error")
        content = response.get("llmContent")
        text = as_text(content if content is not None else response.get("returnDisplay"))
        code = read_exit_code(text) if _runs_commands(tool) else None
        failed = bool(error) or (_runs_commands(tool) and looks_failed(text))
        if error:
            text = f"{as_text(error)}\n{text}" if text else as_text(error)
        return text, failed, code
    if isinstance(response.get("content"), list):  # MCP: {"content": [...], "isError": ...}
        return as_text(response["content"]), bool(response.get("isError") or response.get("is_error")), None
    if tool.lower() in EDIT_TOOLS:
        # An edit's response repeats the whole file: keep only what happened.
        kind = response.get("type") or ("update" if "oldString" in response or "structuredPatch" in response else None)
        return (str(kind) if kind else ""), bool(response.get("error")), None
    if isinstance(response.get("file"), dict) and response.get("type"):  # Read: the text, not an image's bytes
        if response["type"] == "text":
            return str(response["file"].get("content") or ""), False, None
        return f"[{response['type']}]", False, None
    failed = bool(response.get("is_error") or response.get("isError") or response.get("error"))
    return as_text(response), failed, None
