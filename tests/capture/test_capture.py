"""Adapters against payloads captured from the real CLIs (tests/fixtures/payloads), the
normalisation of tool calls, and what the hook runner prints and starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wiki_memory.capture import adapter, journal
from wiki_memory.capture.observation import Observation, PlanItem
from wiki_memory.capture.toolcalls import command_output, compact_input, excerpt, looks_failed, patch_files, tool_facts
from wiki_memory.config import resolve_project
from wiki_memory.hook import main as hook
from wiki_memory.logs import path as log_path

PAYLOADS = Path(__file__).parents[1] / "fixtures" / "payloads"
CLAUDE = PAYLOADS / "claude-code-2.1.197"
CODEX = PAYLOADS / "codex-0.171.0"
GEMINI = PAYLOADS / "gemini-0.61.0"
AGENT_OF = {CLAUDE: "claude-code", CODEX: "codex", GEMINI: "gemini"}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def parse(agent: str, payload: dict, event: str | None = None) -> list[Observation]:
    a = adapter.load(agent)
    name = a.resolve_event(event, payload)
    assert name is not None, payload.get("hook_event_name")
    return a.parse(name, payload)


def one(agent: str, payload: dict, event: str | None = None) -> Observation:
    observations = parse(agent, payload, event)
    assert len(observations) == 1
    return observations[0]


EXPECTED_KIND = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "PostToolUse": "tool",
    "PostToolUseFailure": "tool",
    "Stop": "stop",
    "StopFailure": "stop",
    "PreCompact": "compact",
    "SessionEnd": "session-end",
    "BeforeAgent": "prompt",
    "AfterTool": "tool",
    "AfterAgent": "stop",
}


CAPTURED = [p for folder in AGENT_OF for p in sorted(folder.glob("*.json")) if p.stem != "pre-compress"]


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_captured_payload_becomes_one_observation_of_its_kind(path):
    agent = AGENT_OF[path.parent]
    payload = load(path)
    o = one(agent, payload)
    assert o.kind == EXPECTED_KIND[payload["hook_event_name"]]
    assert o.agent == agent and o.session_id == payload["session_id"] and o.cwd == payload["cwd"]
    assert o.event == payload["hook_event_name"]
    assert o.meta["transcript_path"] == payload["transcript_path"]
    # Round trip through the journal's own format.
    assert Observation.from_dict(json.loads(json.dumps(o.to_dict()))) == o


def test_claude_code_bash_success_and_failure():
    ok = one("claude-code", load(CLAUDE / "post-tool-use-bash.json"))
    assert (ok.tool, ok.input, ok.output, ok.error) == (
        "Bash",
        "echo hello from the tool && ls",
        "hello from the tool",
        False,
    )
    assert ok.meta["tool_use_id"] == "toolu_000002" and ok.meta["duration_ms"] == 150
    failed = one("claude-code", load(CLAUDE / "post-tool-use-failure-bash-exit-1.json"))
    assert failed.error and failed.tool == "Bash"
    assert failed.output.startswith("Exit code 1") and "def add" in failed.output


def test_claude_code_file_tools_record_the_files_touched_not_their_content():
    write = one("claude-code", load(CLAUDE / "post-tool-use-write.json"))
    assert write.files == ("notes.txt",) and write.output == "create"
    edit = one("claude-code", load(CLAUDE / "post-tool-use-edit.json"))
    assert edit.files == ("app.py",) and edit.output == "update"
    assert "originalFile" not in json.dumps(edit.to_dict())
    read = one("claude-code", load(CLAUDE / "post-tool-use-read.json"))
    assert read.files == () and "return a - b" in read.output


def test_claude_code_plan_from_task_create_and_task_update():
    created = one("claude-code", load(CLAUDE / "post-tool-use-task-create.json"))
    assert created.plan == (PlanItem("Fix add()", "pending", "1"),)
    started = one("claude-code", load(CLAUDE / "post-tool-use-task-update.json"))
    assert started.plan == (PlanItem("", "in_progress", "1"),)
    done = one("claude-code", load(CLAUDE / "post-tool-use-task-update-completed.json"))
    assert done.plan == (PlanItem("", "completed", "1"),)


def test_claude_code_todowrite_plan():
    payload = {
        **load(CLAUDE / "post-tool-use-bash.json"),
        "tool_name": "TodoWrite",
        "tool_input": {
            "todos": [
                {"content": "write notes", "status": "completed", "activeForm": "x"},
                {"content": "run tests", "status": "in_progress", "activeForm": "y"},
            ]
        },
        "tool_response": {"oldTodos": [], "newTodos": []},
    }
    assert one("claude-code", payload).plan == (
        PlanItem("write notes", "completed"),
        PlanItem("run tests", "in_progress"),
    )


def test_claude_code_mcp_tool_output_as_string_and_as_content_blocks():
    mcp = one("claude-code", load(CLAUDE / "post-tool-use-mcp.json"))
    assert mcp.tool == "mcp__echo__shout" and "HELLO MCP" in mcp.output
    blocks = {
        **load(CLAUDE / "post-tool-use-mcp.json"),
        "tool_response": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBOR"},
            {"type": "text", "text": "second"},
        ],
    }
    assert one("claude-code", blocks).output == "first\n[image]\nsecond"
    failed = {**blocks, "tool_response": {"content": [{"type": "text", "text": "boom"}], "isError": True}}
    assert one("claude-code", failed).error


def test_claude_code_stop_stop_failure_compact_and_session_events():
    stop = one("claude-code", load(CLAUDE / "stop.json"))
    assert stop.kind == "stop" and stop.text == "All done: notes written." and not stop.error
    failure = one("claude-code", load(CLAUDE / "stop-failure.json"))
    assert failure.kind == "stop" and failure.error and failure.meta["error"] == "invalid_request"
    assert "prompt is too long" in failure.meta["error_details"]
    compact = one("claude-code", load(CLAUDE / "pre-compact.json"))
    assert compact.kind == "compact" and compact.meta["trigger"] == "manual"
    assert one("claude-code", load(CLAUDE / "session-start-resume.json")).meta["source"] == "resume"
    assert one("claude-code", load(CLAUDE / "session-start-compact.json")).meta["source"] == "compact"
    end = one("claude-code", load(CLAUDE / "session-end.json"))
    assert end.kind == "session-end" and end.text == "other"


def test_codex_shell_failure_is_told_from_the_output():
    ok = one("codex", load(CODEX / "post-tool-use-bash.json"))
    assert (ok.tool, ok.input, ok.error) == ("Bash", "echo hello from codex && ls", False)
    assert ok.meta["turn_id"] and ok.meta["model"] == "gpt-5.5"
    failed = one("codex", load(CODEX / "post-tool-use-bash-failed.json"))
    assert failed.error and "No such file or directory" in failed.output


def test_codex_apply_patch_files_and_update_plan():
    patch = one("codex", load(CODEX / "post-tool-use-apply-patch.json"))
    assert patch.tool == "apply_patch" and patch.files == ("notes.txt",) and not patch.error
    plan = one("codex", load(CODEX / "post-tool-use-update-plan.json"))
    assert plan.plan == (PlanItem("write notes", "completed"), PlanItem("run tests", "pending"))
    assert one("codex", load(CODEX / "stop.json")).text == "All done: notes written."
    assert one("codex", load(CODEX / "user-prompt-submit.json")).text == "Write the notes please"


def test_patch_files_cover_add_update_delete_and_move():
    patch = (
        "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: src/b.py\n*** Move to: src/c.py\n@@\n-x\n+y\n"
        "*** Delete File: d.txt\n*** End Patch\n"
    )
    assert patch_files(patch) == ["a.py", "src/b.py", "src/c.py", "d.txt"]


@pytest.mark.parametrize(
    "tool,tool_input,expected",
    [
        ("exec_command", {"cmd": ["bash", "-lc", "make test"]}, "make test"),
        ("shell", {"command": ["zsh", "-lc", "pytest -q"]}, "pytest -q"),
        ("Bash", {"command": "  ls -la  ", "description": "List"}, "ls -la"),
        ("apply_patch", "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch", "a.py"),
        ("Grep", {"pattern": "def parse", "glob": "*.py"}, "def parse in *.py"),
        ("Read", {"file_path": "/work/app/a.py", "offset": 3}, "/work/app/a.py"),
        ("TaskCreate", {"subject": "Fix add()", "description": "add returns a - b"}, "Fix add()"),
        ("TaskUpdate", {"taskId": "1", "status": "completed"}, "taskId=1 status=completed"),
        ("TodoWrite", {"todos": [{"content": "a"}, {"content": "b"}]}, "2 plan items"),
        ("update_plan", {"plan": [{"step": "a", "status": "pending"}]}, "1 plan steps"),
        ("AskUserQuestion", {"questions": [{"question": "Split  it\nup?", "options": []}]}, "Split it up?"),
        ("ExitPlanMode", {"plan": "## Plan\n\n1. Do   it"}, "## Plan 1. Do it"),
        ("mcp__x__y", {"limit": 3}, '{"limit": 3}'),
    ],
)
def test_compact_input_names_what_the_call_was_about(tool, tool_input, expected):
    assert compact_input(tool, tool_input) == expected


def test_codex_output_header_is_cut_and_its_exit_code_read():
    header = "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 3\nOriginal token count: 2\nOutput:\n"
    assert command_output(header + "E   boom\n") == ("E   boom\n", 3)
    assert command_output("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.") == ("Success.", 0)
    # Output that merely mentions "Output:" keeps it.
    assert command_output("Build Output:\nok") == ("Build Output:\nok", None)
    # The line Codex writes before an output it cut is its framing, not the output.
    assert command_output("Total output lines: 245\n\n# TinyCalc\n\nA calculator.") == (
        "# TinyCalc\n\nA calculator.",
        None,
    )
    shell = tool_facts("exec_command", {"cmd": "make"}, header + "E   boom\n", None)
    assert shell.error and shell.exit_code == 3 and shell.output == "E   boom\n"
    # An exit code the agent reported beside the output settles it, whatever the output says.
    quiet = tool_facts("exec_command", {"cmd": "grep -r error"}, "src/a.c: error: handled\n", None, exit_code=0)
    assert not quiet.error


def test_a_task_update_without_a_status_keeps_the_items_status_and_an_image_is_not_its_bytes():
    rename = tool_facts("TaskUpdate", {"taskId": "1", "subject": "Tidy the CLI"}, {"success": True}, None)
    assert rename.plan == (PlanItem("Tidy the CLI", "", "1"),)
    image = tool_facts("Read", {"file_path": "a.png"}, {"type": "image", "file": {"base64": "iVBOR" * 500}}, None)
    assert image.output == "[image]"
    # A failed plan call carries no plan: it did not change the plan.
    failed = tool_facts("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]}, None, None, failed=True)
    assert failed.error and failed.plan == ()


# Gemini CLI: payloads as Gemini CLI 0.61.0 sent them (tests/e2e/test_gemini_e2e.py drives it).
# Cursor: no CLI to capture from here; fields as its hook reference gives them.
GEMINI_BASE = {
    "session_id": "g-1",
    "transcript_path": "/tmp/g.json",
    "cwd": "/work/app",
    "timestamp": "2026-11-30T08:00:00Z",
}
CURSOR_BASE = {
    "conversation_id": "c-1",
    "generation_id": "gen-1",
    "workspace_roots": ["/work/app"],
    "cursor_version": "1.7.0",
    "transcript_path": None,
}


def test_gemini_events():
    start = one("gemini", {**GEMINI_BASE, "hook_event_name": "SessionStart", "source": "startup"})
    assert start.kind == "session-start" and start.meta["source"] == "startup"
    prompt = one("gemini", {**GEMINI_BASE, "hook_event_name": "BeforeAgent", "prompt": "fix the build"})
    assert prompt.kind == "prompt" and prompt.text == "fix the build"
    # A headless run puts the SessionStart context before the user's words: not the goal.
    handed = {"prompt": "<hook_context><wiki-memory handoff>\nGoal: x\n</wiki-memory handoff></hook_context>\n\nfix it"}
    assert one("gemini", {**GEMINI_BASE, "hook_event_name": "BeforeAgent", **handed}).text == "fix it"
    shell = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "make test"},
            "tool_response": {
                "llmContent": "<untrusted_context>\nOutput: boom\nExit Code: 2\nProcess Group PGID: 8141\n"
                "</untrusted_context>",
                "returnDisplay": "boom",
            },
        },
    )
    assert (shell.input, shell.error, shell.meta["exit_code"]) == ("make test", True, 2)
    assert shell.output == "Output: boom\nExit Code: 2"
    passed = {"llmContent": "<untrusted_context>\nOutput: ok\nProcess Group PGID: 8142\n</untrusted_context>"}
    shell_ok = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "make"},
            "tool_response": passed,
        },
    )
    assert not shell_ok.error and shell_ok.output == "Output: ok"
    edit = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterTool",
            "tool_name": "replace",
            "tool_input": {"file_path": "/work/app/src/main.py", "old_string": "a", "new_string": "b"},
            "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": ""},
        },
    )
    assert edit.files == ("src/main.py",) and not edit.error
    todos = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterTool",
            "tool_name": "write_todos",
            "tool_input": {"todos": [{"description": "a", "status": "cancelled"}]},
            "tool_response": {"llmContent": "ok"},
        },
    )
    assert todos.plan == (PlanItem("a", "cancelled"),)
    failed = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterTool",
            "tool_name": "read_file",
            "tool_input": {"absolute_path": "/nope"},
            "tool_response": {"llmContent": "", "error": {"message": "File not found"}},
        },
    )
    assert failed.error and "File not found" in failed.output
    stop = one(
        "gemini",
        {
            **GEMINI_BASE,
            "hook_event_name": "AfterAgent",
            "prompt": "fix",
            "prompt_response": "Fixed.",
            "stop_hook_active": False,
        },
    )
    assert stop.kind == "stop" and stop.text == "Fixed."
    # Gemini CLI fires PreCompress before every model request: it tells nothing.
    assert parse("gemini", {**GEMINI_BASE, "hook_event_name": "PreCompress", "trigger": "auto"}) == []
    assert one("gemini", {**GEMINI_BASE, "hook_event_name": "SessionEnd", "reason": "exit"}).text == "exit"


def test_gemini_payloads_of_the_real_cli():
    failed = one("gemini", load(GEMINI / "after-tool-shell-failed.json"))
    assert failed.tool == "run_shell_command" and failed.error and failed.meta["exit_code"] == 1
    assert failed.output == "Output: ValueError: trailing comma\nExit Code: 1"
    wrote = one("gemini", load(GEMINI / "after-tool-write-file.json"))
    assert wrote.files == ("src/parser.py",) and not wrote.error
    assert one("gemini", load(GEMINI / "after-tool-replace.json")).files == ("src/widget.py",)
    todos = one("gemini", load(GEMINI / "after-tool-write-todos.json"))
    assert todos.plan == (PlanItem("Write the parser", "completed"), PlanItem("Handle quoted fields", "pending"))
    handed = one("gemini", load(GEMINI / "before-agent-after-session-start-context.json"))
    assert handed.text == "Write a CSV parser in src/parser.py"
    assert parse("gemini", load(GEMINI / "pre-compress.json")) == []


def test_cursor_events():
    start = one("cursor", {**CURSOR_BASE, "hook_event_name": "sessionStart", "session_id": "c-1"})
    assert start.kind == "session-start" and start.session_id == "c-1" and start.cwd == "/work/app"
    prompt = one(
        "cursor", {**CURSOR_BASE, "hook_event_name": "beforeSubmitPrompt", "prompt": "add tests", "attachments": []}
    )
    assert prompt.text == "add tests"
    tool = one(
        "cursor",
        {
            **CURSOR_BASE,
            "hook_event_name": "postToolUse",
            "tool_name": "Shell",
            "tool_input": {"command": "npm test"},
            "tool_output": "npm ERR! Test failed",
        },
    )
    assert (tool.tool, tool.input, tool.error) == ("Shell", "npm test", True)
    shell = one(
        "cursor",
        {**CURSOR_BASE, "hook_event_name": "afterShellExecution", "command": "ls", "output": "a\nb", "duration": 12},
    )
    assert (shell.input, shell.output) == ("ls", "a\nb")
    edit = one(
        "cursor",
        {
            **CURSOR_BASE,
            "hook_event_name": "afterFileEdit",
            "file_path": "/work/app/x.ts",
            "edits": [{"old_string": "a", "new_string": "b"}],
        },
    )
    assert edit.files == ("x.ts",)
    answer = one("cursor", {**CURSOR_BASE, "hook_event_name": "afterAgentResponse", "text": "Added 3 tests."})
    assert answer.kind == "stop" and answer.text == "Added 3 tests."
    stop = one("cursor", {**CURSOR_BASE, "hook_event_name": "stop", "status": "error", "loop_count": 0})
    assert stop.kind == "stop" and stop.error and stop.meta["status"] == "error"
    end = one("cursor", {**CURSOR_BASE, "hook_event_name": "sessionEnd", "session_id": "c-1", "reason": "user_close"})
    assert end.kind == "session-end" and end.text == "user_close"


@pytest.mark.parametrize(
    "given,expected",
    [
        ("PostToolUse", "PostToolUse"),
        ("post-tool-use", "PostToolUse"),
        ("posttooluse", "PostToolUse"),
        ("POST_TOOL_USE", "PostToolUse"),
        (None, "UserPromptSubmit"),
        ("no-such-event", None),
    ],
)
def test_event_names_in_any_spelling(given, expected):
    payload = {"session_id": "s", "hook_event_name": "UserPromptSubmit"}
    assert adapter.load("claude-code").resolve_event(given, payload) == expected


def test_cursor_kebab_case_and_agent_aliases():
    assert adapter.load("cursor").resolve_event("before-submit-prompt", {}) == "beforeSubmitPrompt"
    assert adapter.load("claude").name == "claude-code" and adapter.agent_name("gemini-cli") == "gemini"
    with pytest.raises(KeyError):
        adapter.load("vim")


def test_known_events_that_record_nothing():
    pre = {**load(CLAUDE / "post-tool-use-bash.json"), "hook_event_name": "PreToolUse"}
    assert parse("claude-code", pre) == []


def test_output_excerpt_keeps_head_and_tail_and_marks_the_cut():
    text = "\n".join(f"line {i:05d}" for i in range(100_000))
    cut = excerpt(text)
    assert len(cut) <= 2100 and cut.startswith("line 00000\n") and cut.endswith("line 99999")
    assert "characters omitted" in cut
    assert excerpt("short") == "short" and excerpt("") is None


def test_prompts_are_kept_up_to_16_kb():
    payload = {**load(CLAUDE / "user-prompt-submit.json"), "prompt": "x" * 40_000}
    text = one("claude-code", payload).text
    assert text.startswith("x" * 16384) and "more characters cut" in text and len(text) < 16500
    payload["prompt"] = "y" * 16384
    assert one("claude-code", payload).text == "y" * 16384


@pytest.mark.parametrize(
    "output,failed",
    [
        ("Process exited with code 2\nOutput:\n", True),
        ("Exit code: 0\nOutput:\nok", False),
        ("Traceback (most recent call last):\n  File x\nValueError: bad", True),
        ("bash: foo: command not found", True),
        ("==== 3 failed, 10 passed in 2.1s ====", True),
        ("all good\n", False),
        ("fatal: not a git repository", True),
    ],
)
def test_shell_failure_heuristics(output, failed):
    assert looks_failed(output) is failed


# -- the runner in process: what it writes, prints and starts -------------------------------------------


def run_hook(agent: str, payload: dict, event: str | None = None) -> bytes | None:
    import os

    return hook.run(agent, event, json.dumps(payload).encode(), os.environ)


def session_start(agent: str, cwd: Path) -> dict:
    if agent == "cursor":
        return {**CURSOR_BASE, "workspace_roots": [str(cwd)], "hook_event_name": "sessionStart", "session_id": "c-1"}
    return {
        "session_id": "s-1",
        "transcript_path": "/t.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_session_start_prints_the_handoff_in_the_hookspecificoutput_envelope(agent, code_repo, monkeypatch):
    calls = []

    def handoff(project, agent_name, session_id, source):
        calls.append((project.id, agent_name, session_id, source))
        return "Goal: fix the flaky login test."

    monkeypatch.setattr("wiki_memory.hook.startup.session_start_text", handoff)
    printed = run_hook(agent, session_start(agent, code_repo))
    assert json.loads(printed) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "Goal: fix the flaky login test."}
    }
    assert calls == [(resolve_project(code_repo).id, agent, "s-1", "startup")]


def test_cursor_session_start_prints_additional_context(code_repo, monkeypatch):
    monkeypatch.setattr("wiki_memory.hook.startup.session_start_text", lambda *a: "Goal: ship it.")
    assert json.loads(run_hook("cursor", session_start("cursor", code_repo))) == {
        "additional_context": "Goal: ship it."
    }


def test_session_start_without_a_handoff_prints_nothing(code_repo):
    assert run_hook("claude-code", session_start("claude-code", code_repo)) is None


def test_session_end_starts_consolidation_of_the_project_resolved_from_the_payload_cwd(
    code_repo, tmp_path, monkeypatch
):
    calls = []
    monkeypatch.setattr(
        "wiki_memory.hook.startup.after_session",
        lambda project, agent, session_id: calls.append((project.root, agent, session_id)),
    )
    monkeypatch.chdir(tmp_path)  # the hook's own cwd is elsewhere: the payload's cwd decides
    payload = {**load(CLAUDE / "session-end.json"), "cwd": str(code_repo)}
    assert run_hook("claude-code", payload) is None
    assert calls == [(code_repo, "claude-code", payload["session_id"])]
    path = journal.journal_file(resolve_project(code_repo).journal_dir, payload["session_id"])
    assert [o.kind for o in journal.read(path)] == ["session-end"]
    # Stop is not the end of a Claude Code session.
    run_hook("claude-code", {**load(CLAUDE / "stop.json"), "cwd": str(code_repo)})
    assert len(calls) == 1


def test_a_failing_handoff_is_logged_and_prints_nothing(code_repo, monkeypatch, capsysbinary):
    import io

    def broken(*args):
        raise RuntimeError("index is corrupt")

    monkeypatch.setattr("wiki_memory.hook.startup.session_start_text", broken)
    out = io.BytesIO()
    code = hook.main(
        ["claude-code"], stdin=io.BytesIO(json.dumps(session_start("claude-code", code_repo)).encode()), stdout=out
    )
    assert code == 0 and out.getvalue() == b""
    assert "RuntimeError: index is corrupt" in log_path("hooks").read_text()
    # The observation was written before the handoff was asked for.
    path = journal.journal_file(resolve_project(code_repo).journal_dir, "s-1")
    assert [o.kind for o in journal.read(path)] == ["session-start"]
