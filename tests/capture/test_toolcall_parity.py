"""One tool call reads the same in the journal (through the hook) and from the transcript.

Each captured hook payload is run through the real hook runner (adapter, redaction, journal),
and the same call is written as the agent writes it in its transcript (Claude Code: the
`tool_use` block and its `tool_result`, with `toolUseResult`; Codex: the rollout's call and
its output, behind the header Codex puts there) and read back by the transcript reader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wiki_memory.capture import journal
from wiki_memory.capture.claude_code import read_transcript
from wiki_memory.capture.codex import read_rollout
from wiki_memory.capture.observation import Observation
from wiki_memory.config import resolve_project
from wiki_memory.hook import main as hook

PAYLOADS = Path(__file__).parents[1] / "fixtures" / "payloads"
CLAUDE = PAYLOADS / "claude-code-2.1.197"
CODEX = PAYLOADS / "codex-0.171.0"
FIELDS = ("input", "output", "error", "files", "plan")


def captured(path: Path, cwd: Path, **changes: object) -> dict:
    """A captured payload, moved to `cwd` (its working directory and the paths under it)."""
    raw = json.loads(path.read_text())
    text = json.dumps(raw).replace(raw["cwd"], str(cwd))
    return {**json.loads(text), **changes}


def through_the_hook(agent: str, payload: dict) -> Observation:
    assert hook.run(agent, None, json.dumps(payload).encode(), os.environ) is None
    project = resolve_project(payload["cwd"])
    [observation] = journal.read(journal.journal_file(project.journal_dir, payload["session_id"]))
    return observation


def facts(observation: Observation) -> dict:
    return {name: getattr(observation, name) for name in FIELDS}


def claude_transcript(tmp_path: Path, payload: dict) -> Path:
    """The call of a PostToolUse(Failure) payload as Claude Code writes it in its transcript."""

    def record(uuid: str, parent: str | None, role: str, content: list, **extra: object) -> str:
        message = {"role": role, "content": content}
        if role == "assistant":
            message.update(id=f"msg_{uuid}", model="claude-test")
        stamp = f"2026-11-30T10:00:0{uuid[1:]}.000Z"
        return json.dumps(
            {
                "type": role,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": payload["session_id"],
                "cwd": payload["cwd"],
                "timestamp": stamp,
                "message": message,
                **extra,
            }
        )

    call_id, failed = payload["tool_use_id"], payload["hook_event_name"] == "PostToolUseFailure"
    use = {"type": "tool_use", "id": call_id, "name": payload["tool_name"], "input": payload["tool_input"]}
    response = payload.get("tool_response")
    if failed:
        result = {"type": "tool_result", "tool_use_id": call_id, "is_error": True, "content": payload["error"]}
        side = "Error: " + payload["error"]
    else:
        # What the model reads (prose for structured results); the hook's object rides beside it.
        shown = response if isinstance(response, str) else "(the result as the model reads it)"
        result, side = {"type": "tool_result", "tool_use_id": call_id, "content": shown}, response
    lines = [
        record("u1", None, "user", [{"type": "text", "text": "Do the thing"}]),
        record("u2", "u1", "assistant", [use]),
        record("u3", "u2", "user", [result], toolUseResult=side),
    ]
    path = tmp_path / f"{payload['session_id']}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def the_tool(observations: list[Observation]) -> Observation:
    [tool] = [o for o in observations if o.kind == "tool"]
    return tool


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in CLAUDE.glob("post-tool-use*.json")),
)
def test_a_claude_code_call_reads_the_same_from_the_hook_and_the_transcript(name, code_repo, tmp_path):
    payload = captured(CLAUDE / name, code_repo)
    from_hook = through_the_hook("claude-code", payload)
    from_transcript = the_tool(read_transcript(claude_transcript(tmp_path, payload)))
    assert facts(from_transcript) == facts(from_hook)
    assert from_transcript.tool == from_hook.tool == payload["tool_name"]
    assert from_transcript.meta.get("exit_code") == from_hook.meta.get("exit_code")


def test_the_bash_call_and_its_failure_in_detail(code_repo, tmp_path):
    ok = captured(CLAUDE / "post-tool-use-bash.json", code_repo)
    assert facts(the_tool(read_transcript(claude_transcript(tmp_path, ok)))) == {
        "input": "echo hello from the tool && ls",
        "output": "hello from the tool",
        "error": False,
        "files": (),
        "plan": (),
    }
    failed = captured(CLAUDE / "post-tool-use-failure-bash-exit-1.json", code_repo)
    call = the_tool(read_transcript(claude_transcript(tmp_path, failed)))
    assert call.error and call.output == "Exit code 1\napp.py:1:def add(a, b):" and call.meta["exit_code"] == 1
    assert through_the_hook("claude-code", failed).meta["exit_code"] == 1


def test_both_paths_redact_the_same_fields_the_same_way(code_repo, tmp_path):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    payload = captured(
        CLAUDE / "post-tool-use-bash.json",
        code_repo,
        tool_input={"command": f"GITHUB_TOKEN={token} ./deploy.sh"},
        tool_response={"stdout": "deployed with postgres://admin:hunter2secret@db/prod", "stderr": ""},
    )
    from_hook = through_the_hook("claude-code", payload)
    from_transcript = the_tool(read_transcript(claude_transcript(tmp_path, payload)))
    assert facts(from_transcript) == facts(from_hook)
    assert "./deploy.sh" in from_hook.input and "REDACTED" in from_hook.input and "REDACTED" in from_hook.output
    assert token not in json.dumps(from_hook.to_dict()) and "hunter2secret" not in json.dumps(from_hook.to_dict())


def codex_rollout(tmp_path: Path, payload: dict, call: dict, output: object) -> Path:
    """One call and its output in a rollout as Codex 0.171 writes it."""
    stamp = "2026-11-30T09:36:5{}.000Z".format

    def rec(n: int, kind: str, body: dict) -> str:
        return json.dumps({"timestamp": stamp(n), "type": kind, "payload": body})

    output_kind = "custom_tool_call_output" if call["type"] == "custom_tool_call" else "function_call_output"
    lines = [
        rec(0, "session_meta", {"id": payload["session_id"], "cwd": payload["cwd"], "cli_version": "0.171.0"}),
        rec(1, "event_msg", {"type": "user_message", "message": "Do the thing"}),
        rec(2, "response_item", {**call, "call_id": payload["tool_use_id"]}),
        rec(3, "response_item", {"type": output_kind, "call_id": payload["tool_use_id"], "output": output}),
    ]
    path = tmp_path / f"rollout-2026-11-30T09-36-49-{payload['session_id']}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_codex_apply_patch_reads_the_same_from_the_hook_and_the_rollout(code_repo, tmp_path):
    payload = captured(CODEX / "post-tool-use-apply-patch.json", code_repo)
    patch = payload["tool_input"]["command"]
    call = {"type": "custom_tool_call", "name": "apply_patch", "input": patch}
    from_rollout = the_tool(read_rollout(codex_rollout(tmp_path, payload, call, payload["tool_response"])))
    from_hook = through_the_hook("codex", payload)
    assert facts(from_rollout) == facts(from_hook)
    assert from_hook.input == "notes.txt" and from_hook.files == ("notes.txt",) and not from_hook.error
    # Codex's header is cut from the output, and its exit code kept, whichever way the call came.
    assert from_hook.output == "Success. Updated the following files:\nA notes.txt\n"
    assert from_rollout.meta["exit_code"] == from_hook.meta["exit_code"] == 0


def test_a_failing_codex_shell_call_reads_the_same_from_the_hook_and_the_rollout(code_repo, tmp_path):
    payload = captured(CODEX / "post-tool-use-bash-failed.json", code_repo)
    command = payload["tool_input"]["command"]
    call = {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": command})}
    header = "Chunk ID: 7f3a21\nWall time: 0.01 seconds\nProcess exited with code 2\nOriginal token count: 18\n"
    header += "Output:\n"
    from_rollout = the_tool(read_rollout(codex_rollout(tmp_path, payload, call, header + payload["tool_response"])))
    from_hook = through_the_hook("codex", payload)
    assert facts(from_rollout) == facts(from_hook)
    assert from_hook.error and from_hook.input == command and "No such file or directory" in from_hook.output
    # The hook is not told the exit code (the output says the call failed); the rollout is.
    assert from_rollout.meta["exit_code"] == 2 and "exit_code" not in from_hook.meta


def test_a_codex_plan_reads_the_same_from_the_hook_and_the_rollout(code_repo, tmp_path):
    payload = captured(CODEX / "post-tool-use-update-plan.json", code_repo)
    call = {"type": "function_call", "name": "update_plan", "arguments": json.dumps(payload["tool_input"])}
    from_rollout = the_tool(read_rollout(codex_rollout(tmp_path, payload, call, payload["tool_response"])))
    from_hook = through_the_hook("codex", payload)
    assert facts(from_rollout) == facts(from_hook)
    assert [(p.text, p.status) for p in from_hook.plan] == [("write notes", "completed"), ("run tests", "pending")]
