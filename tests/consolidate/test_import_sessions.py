"""`wiki-memory import` as a session: the newest imported session's handoff, sub-agents'
transcripts (alone and with their parent), and every agent's session files, in the shapes the
agents write them (built here, record by record, as the agents' own code writes them)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.session import build_session
from wiki_memory.memory import Memory, import_transcripts


def _claude(uuid: str, parent: str | None, kind: str, content, *, t: int, cwd: str, sid: str = "sess-main", **extra):
    message: dict = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("mid", f"msg_{uuid}"), model="claude-test")
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": sid,
            "cwd": cwd,
            "version": "2.0.29",
            "gitBranch": "main",
            "timestamp": f"2026-11-{t // 3600 + 10:02d}T{t // 60 % 60:02d}:{t % 60:02d}:00.000Z",
            "message": message,
            **extra,
        }
    )


def _use(tid: str, name: str, data: dict) -> list[dict]:
    return [{"type": "tool_use", "id": tid, "name": name, "input": data}]


def _result(tid: str, text: str, error: bool = False) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}]


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def claude_session(folder: Path, sid: str, prompt: str, file: str, *, t: int, cwd: str) -> Path:
    """A main Claude Code session: a prompt, an edit of `file`, an answer."""
    return _write(
        folder / f"{sid}.jsonl",
        [
            _claude("u1", None, "user", prompt, t=t, cwd=cwd, sid=sid),
            _claude(
                "u2",
                "u1",
                "assistant",
                _use(f"{sid}-e", "Edit", {"file_path": f"{cwd}/{file}", "old_string": "a", "new_string": "b"}),
                t=t + 1,
                cwd=cwd,
                sid=sid,
            ),
            _claude("u3", "u2", "user", _result(f"{sid}-e", "ok"), t=t + 2, cwd=cwd, sid=sid),
            _claude(
                "u4", "u3", "assistant", [{"type": "text", "text": f"Done: {file} edited."}], t=t + 3, cwd=cwd, sid=sid
            ),
        ],
    )


@pytest.mark.usefixtures("embedding_model")
def test_import_writes_the_handoff_of_the_newest_session(tmp_path: Path, code_repo: Path):
    cwd = str(code_repo)
    old = claude_session(tmp_path / "t", "sess-old", "Rename the loader in loader.py", "loader.py", t=100, cwd=cwd)
    new = claude_session(tmp_path / "t", "sess-new", "Add retries to fetch.py please", "fetch.py", t=7300, cwd=cwd)
    report = import_transcripts("claude-code", [new, old])
    project = resolve_project(code_repo)
    assert len(report.imported[project.id]) == 2
    [handoff] = (project.wiki / "handoffs").rglob("*.md")
    assert report.handoffs == {project.id: str(handoff.relative_to(project.wiki))}
    assert "session_id: sess-new" in handoff.read_text()
    # The import's one commit holds the sessions and the handoff.
    [commit] = [c for c in git(project.wiki, "log", "--format=%H %s").splitlines() if " import: " in c]
    written = git(project.wiki, "show", "--name-only", "--format=", commit.split()[0]).split()
    assert str(handoff.relative_to(project.wiki)) in written and len(written) == 3
    # The next session is handed the newest imported session, not "No handoff yet".
    with Memory(project) as memory:
        view = memory.handoff()
    assert view is not None and view.text and "fetch.py" in view.text and "No handoff yet" not in view.text
    assert list(view.handoffs) == [report.handoffs[project.id]]


def _subagent_lines(cwd: str, parent_sid: str) -> list[str]:
    """A sub-agent's records, as Claude Code writes them: every one a sidechain, with the
    parent's session id and the sub-agent's id; its task is the first user record."""
    side = {"isSidechain": True, "agentId": "a1b2c3d4"}
    return [
        _claude("s1", None, "user", "Update the changelog for the release", t=20, cwd=cwd, sid=parent_sid, **side),
        _claude(
            "s2",
            "s1",
            "assistant",
            _use("side-w", "Write", {"file_path": f"{cwd}/CHANGELOG.md", "content": "# 1.2\n"}),
            t=21,
            cwd=cwd,
            sid=parent_sid,
            **side,
        ),
        _claude("s3", "s2", "user", _result("side-w", "File created"), t=22, cwd=cwd, sid=parent_sid, **side),
        _claude(
            "s4",
            "s3",
            "assistant",
            [{"type": "text", "text": "Changelog updated."}],
            t=23,
            cwd=cwd,
            sid=parent_sid,
            **side,
        ),
    ]


def _parent_lines(cwd: str, sid: str, *, inline_side: bool) -> list[str]:
    lines = [
        _claude("u1", None, "user", "Prepare the 1.2 release", t=10, cwd=cwd, sid=sid),
        _claude(
            "u2",
            "u1",
            "assistant",
            _use(
                "task-1",
                "Task",
                {
                    "description": "changelog",
                    "prompt": "Update the changelog for the release",
                    "subagent_type": "general-purpose",
                },
            ),
            t=11,
            cwd=cwd,
            sid=sid,
        ),
    ]
    if inline_side:  # older Claude Code versions wrote the sub-agent's records into the main transcript
        lines += _subagent_lines(cwd, sid)
    lines += [
        _claude("u3", "u2", "user", _result("task-1", "Changelog updated."), t=30, cwd=cwd, sid=sid),
        _claude("u4", "u3", "assistant", [{"type": "text", "text": "Release prepared."}], t=31, cwd=cwd, sid=sid),
    ]
    return lines


@pytest.mark.usefixtures("embedding_model")
def test_a_subagent_transcript_imports_alone(tmp_path: Path):
    cwd = str(tmp_path / "code")
    sub = _write(tmp_path / "t" / "sess-p" / "subagents" / "agent-a1b2c3d4.jsonl", _subagent_lines(cwd, "sess-p"))
    project = resolve_project(tmp_path)
    report = import_transcripts("claude-code", [sub], project=project)
    assert not report.failed, report.failed
    [page_path] = report.imported[project.id]
    page = (project.wiki / page_path).read_text()
    assert "Update the changelog for the release" in page and "`CHANGELOG.md`" in page
    assert "session_id: agent-a1b2c3d4" in page


@pytest.mark.usefixtures("embedding_model")
@pytest.mark.parametrize("inline_side", [False, True], ids=["separate", "also-inline"])
def test_a_subagent_transcript_joins_its_parent_once(tmp_path: Path, inline_side: bool):
    cwd = str(tmp_path / "code")
    parent = _write(tmp_path / "t" / "sess-p.jsonl", _parent_lines(cwd, "sess-p", inline_side=inline_side))
    sub = _write(tmp_path / "t" / "sess-p" / "subagents" / "agent-a1b2c3d4.jsonl", _subagent_lines(cwd, "sess-p"))
    project = resolve_project(tmp_path)
    from wiki_memory.consolidate.importer import find_transcripts

    assert set(find_transcripts([tmp_path / "t"])) == {parent, sub}  # a folder brings its sub-agents' files
    report = import_transcripts("claude-code", find_transcripts([tmp_path / "t"]), project=project)
    [page_path] = report.imported[project.id]  # one session: the sub-agent's work is the parent's
    page = (project.wiki / page_path).read_text()
    assert "session_id: sess-p" in page and "`CHANGELOG.md`" in page
    # Counted once, however many files hold the call.
    from wiki_memory.capture.claude_code import read_transcript

    merged = build_session(
        [o for o in read_transcript(parent) if o.kind != "tool" or o.meta.get("subagent") is None]
        + [o for o in read_transcript(sub) if o.kind == "tool"]
    )
    assert [s.tool for s in merged.steps].count("Write") == 1
    assert "Prepare the 1.2 release" in page and "Update the changelog" not in page.split("## ", 2)[1]


def test_sidechain_records_inside_a_main_transcript_are_read(tmp_path: Path):
    from wiki_memory.capture.claude_code import read_transcript

    cwd = str(tmp_path / "code")
    path = _write(tmp_path / "sess-p.jsonl", _parent_lines(cwd, "sess-p", inline_side=True))
    observations = read_transcript(path)
    writes = [o for o in observations if o.tool == "Write"]
    assert [o.meta.get("subagent") for o in writes] == ["a1b2c3d4"]
    # The sub-agent's task and answer are not the user's prompt nor the turn's answer.
    assert [o.text for o in observations if o.kind == "prompt"] == ["Prepare the 1.2 release"]
    assert [o.text for o in observations if o.kind == "stop"] == ["Release prepared."]
    session = build_session(observations)
    assert any(f.endswith("CHANGELOG.md") for s in session.steps for f in s.files)


# Gemini CLI -----------------------------------------------------------------------------------


def _gemini_call(cid: str, name: str, args: dict, output: str, status: str = "success", **extra) -> dict:
    return {
        "id": cid,
        "name": name,
        "args": args,
        "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}],
        "status": status,
        "timestamp": "2026-12-02T00:13:05.000Z",
        "displayName": name,
        **extra,
    }


def gemini_jsonl(chats: Path, cwd: str) -> Path:
    """A session file as Gemini CLI 0.61's ChatRecordingService appends it: metadata, messages
    (a message written again under its id replaces the first), `$set` updates, a `$rewindTo`."""
    failing = _gemini_call(
        "c1",
        "run_shell_command",
        {"command": "python -m pytest -q"},
        "<untrusted_context>\nOutput: ModuleNotFoundError: No module named 'shop'\nExit Code: 1\n"
        "Process Group PGID: 1\n</untrusted_context>",
        status="success",
    )
    edit = _gemini_call("c2", "replace", {"file_path": f"{cwd}/shop/cart.py", "old_string": "a", "new_string": "b"},
                        "Successfully modified file")  # fmt: skip
    records = [
        {"sessionId": "9f8e7d6c-0000-4000-8000-000000000001", "projectHash": "ab" * 32,
         "startTime": "2026-12-02T00:13:00.000Z", "lastUpdated": "2026-12-02T00:13:00.000Z", "kind": "main"},
        {"id": "m0", "timestamp": "2026-12-02T00:13:01.000Z", "type": "user", "content": [{"text": "say hi"}]},
        {"$rewindTo": "m0"},  # the user rewound: that prompt is gone
        {"id": "m1", "timestamp": "2026-12-02T00:13:02.000Z", "type": "user",
         "content": [{"text": "Fix the cart total in shop/cart.py"}]},
        {"id": "m2", "timestamp": "2026-12-02T00:13:03.000Z", "type": "gemini", "content": "Running the tests.",
         "model": "gemini-2.5-pro", "thoughts": []},
        {"id": "m2", "timestamp": "2026-12-02T00:13:03.000Z", "type": "gemini", "content": "Running the tests.",
         "model": "gemini-2.5-pro", "toolCalls": [failing, edit]},
        {"$set": {"lastUpdated": "2026-12-02T00:13:06.000Z"}},
        {"id": "m3", "timestamp": "2026-12-02T00:13:07.000Z", "type": "gemini", "content": "The cart total is fixed.",
         "model": "gemini-2.5-pro"},
    ]  # fmt: skip
    return _write(chats / "session-2026-12-02T00-13-9f8e7d6c.jsonl", [json.dumps(r) for r in records])


def test_gemini_session_files_are_read_like_its_hooks(tmp_path: Path):
    from wiki_memory.capture.adapter import load

    gemini = load("gemini")
    project_dir = tmp_path / "gemini-home" / ".gemini" / "tmp" / "shop"
    (project_dir).mkdir(parents=True)
    (project_dir / ".project_root").write_text("/work/shop\n")
    path = gemini_jsonl(project_dir / "chats", "/work/shop")
    observations = gemini.read_transcript(path)
    assert [o.kind for o in observations] == ["session-start", "prompt", "tool", "tool", "stop"]
    assert observations[0].meta["model"] == "gemini-2.5-pro" and observations[0].cwd == "/work/shop"
    assert observations[1].text == "Fix the cart total in shop/cart.py"  # the rewound prompt is gone
    shell, edit = observations[2], observations[3]
    assert shell.error and shell.meta["exit_code"] == 1 and "No module named 'shop'" in (shell.output or "")
    assert "<untrusted_context>" not in (shell.output or "")
    assert not edit.error and edit.files == ("shop/cart.py",)
    assert observations[4].text == "The cart total is fixed."
    # The same session as one JSON object (older versions), and as a /chat save checkpoint.
    meta, *messages = [json.loads(line) for line in path.read_text().splitlines()]
    legacy = {**meta, "messages": [m for m in messages if m.get("id") in ("m1", "m3")]}
    legacy["messages"].insert(1, next(m for m in reversed(messages) if m.get("id") == "m2"))
    old = tmp_path / "session-2025-09-18T02-45-9f8e7d6c.json"
    old.write_text(json.dumps(legacy))
    assert [o.kind for o in gemini.read_transcript(old)] == [o.kind for o in observations]
    checkpoint = tmp_path / "checkpoint-release.json"
    checkpoint.write_text(
        json.dumps(
            [
                {"role": "user", "parts": [{"text": "Fix the cart total in shop/cart.py"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command",
                                                              "args": {"command": "pytest -q"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                                 "response": {"output": "1 passed"}}}]},
                {"role": "model", "parts": [{"text": "All green."}]},
            ]
        )
    )  # fmt: skip
    kinds = [(o.kind, o.tool or o.text) for o in gemini.read_transcript(checkpoint)]
    assert kinds == [
        ("session-start", None),
        ("prompt", "Fix the cart total in shop/cart.py"),
        ("tool", "run_shell_command"),
        ("stop", "All green."),
    ]


@pytest.mark.usefixtures("embedding_model")
def test_gemini_sessions_import_from_the_cli(tmp_path: Path, code_repo: Path, monkeypatch: pytest.MonkeyPatch):
    from wiki_memory.cli import main

    chats = tmp_path / "g" / ".gemini" / "tmp" / "shop" / "chats"
    path = gemini_jsonl(chats, str(code_repo))
    (chats.parent / ".project_root").write_text(str(code_repo))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    result = CliRunner().invoke(main, ["import", "gemini", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    project = resolve_project(code_repo)
    [page] = report["imported"][project.id]
    assert "shop/cart.py" in (project.wiki / page).read_text()
    assert report["handoffs"][project.id].startswith("handoffs/")
    assert f"transcript: {path}" in (project.wiki / page).read_text()


# Codex rollouts of several versions, OpenCode exports, files that are not sessions ---------------


def codex_rollouts(folder: Path, cwd: str) -> list[Path]:
    """Three rollouts as three Codex versions wrote them."""
    first = [  # spring 2025: bare response items after a line with the session's id
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-05-13T10:00:00.000Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the failing test"}]},
        {"record_type": "state"},
        {"type": "function_call", "name": "shell", "call_id": "call_1",
         "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]})},
        {"type": "function_call_output", "call_id": "call_1",
         "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1}})},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The test fails."}]},
    ]  # fmt: skip

    def wrap(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2025-09-25T15:12:{second:02d}.000Z", "type": kind, "payload": payload}

    middle = [  # autumn 2025: wrapped records, shell as `shell` with a list, exit codes in events
        wrap("session_meta", {"id": "019982b8-3422-79e0-8b3b-05abaf4f3c3e", "cwd": cwd, "cli_version": "0.40.0"}, 0),
        wrap("event_msg", {"type": "user_message", "message": "make the build pass"}, 1),
        wrap("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
             "arguments": json.dumps({"command": ["bash", "-lc", "make build"], "workdir": cwd})}, 2),
        wrap("event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 2}, 3),
        wrap("response_item", {"type": "function_call_output", "call_id": "c1",
             "output": "make: *** [build] Error 2"}, 3),
        wrap("response_item", {"type": "local_shell_call", "call_id": "c2", "status": "completed",
             "action": {"type": "exec", "command": ["bash", "-lc", "make build"]}}, 4),
        wrap("event_msg", {"type": "exec_command_end", "call_id": "c2", "exit_code": 0}, 5),
        wrap("response_item", {"type": "function_call_output", "call_id": "c2", "output": "ok"}, 5),
        wrap("event_msg", {"type": "task_complete", "last_agent_message": "The build passes."}, 6),
    ]  # fmt: skip
    newest = [  # 2026: exec_command with `cmd`, apply_patch as a custom tool call
        wrap("session_meta", {"id": "01a22bcf-417c-7f01-aca0-77b109a14191", "cwd": cwd, "cli_version": "0.171.0"}, 0),
        wrap("event_msg", {"type": "user_message", "message": "add a notes file"}, 1),
        wrap("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p1", "input":
             "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"}, 2),
        wrap("response_item", {"type": "custom_tool_call_output", "call_id": "p1",
             "output": json.dumps({"output": "Success. Updated the following files:\nA notes.txt\n",
                                   "metadata": {"exit_code": 0}})}, 3),
        wrap("response_item", {"type": "function_call", "name": "exec_command", "call_id": "x1",
             "arguments": json.dumps({"cmd": "cat notes.txt"})}, 4),
        wrap("response_item", {"type": "function_call_output", "call_id": "x1",
             "output": "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nhello\n"}, 5),
        wrap("event_msg", {"type": "task_complete", "last_agent_message": "Added notes.txt."}, 6),
    ]  # fmt: skip
    names = ("rollout-2025-05-13T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
             "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
             "rollout-2026-11-30T09-35-00-01a22bcf-417c-7f01-aca0-77b109a14191.jsonl")  # fmt: skip
    return [
        _write(folder / n, [json.dumps(r) for r in records])
        for n, records in zip(names, (first, middle, newest), strict=True)
    ]


def test_codex_rollouts_of_three_versions_are_read(tmp_path: Path):
    from wiki_memory.capture.codex import read_rollout

    first, middle, newest = (build_session(read_rollout(p)) for p in codex_rollouts(tmp_path, "/work/app"))
    assert first.session_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e" and first.cwd == "/work/app"
    assert [p.text for p in first.real_prompts] == ["fix the failing test"]
    assert [(s.input, s.error, s.exit_code) for s in first.steps] == [("pytest -q", True, 1)]
    assert [(s.input, s.error, s.exit_code) for s in middle.steps] == [
        ("make build", True, 2),
        ("make build", False, 0),
    ]
    assert [s.tool for s in newest.steps] == ["apply_patch", "exec_command"]
    assert newest.steps[0].files == ("notes.txt",) and not newest.steps[1].error


def opencode_export(path: Path, cwd: str) -> Path:
    """What `opencode export <session>` prints: the session's info, its messages with parts."""
    data = {
        "info": {"id": "ses_abc123", "directory": cwd, "version": "1.18.33", "title": "cart",
                 "time": {"created": 1764634380000, "updated": 1764634390000}},
        "messages": [
            {"info": {"id": "msg_1", "sessionID": "ses_abc123", "role": "user", "time": {"created": 1764634381000},
                      "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4"}},
             "parts": [{"id": "prt_1", "type": "text", "text": "Fix the cart total in cart.py"}]},
            {"info": {"id": "msg_2", "sessionID": "ses_abc123", "role": "assistant",
                      "time": {"created": 1764634382000, "completed": 1764634389000}},
             "parts": [
                 {"id": "prt_2", "type": "tool", "tool": "edit", "callID": "call_e",
                  "state": {"status": "completed", "input": {"filePath": f"{cwd}/cart.py", "oldString": "a",
                            "newString": "b"}, "output": "", "time": {"start": 1764634383000, "end": 1764634384000}}},
                 {"id": "prt_3", "type": "tool", "tool": "bash", "callID": "call_b",
                  "state": {"status": "completed", "input": {"command": "pytest -q"}, "output": "1 passed",
                            "metadata": {"exit": 0}, "time": {"start": 1764634385000, "end": 1764634386000}}},
                 {"id": "prt_4", "type": "text", "text": "Fixed; the tests pass."},
             ]},
        ],
    }  # fmt: skip
    path.write_text(json.dumps(data))
    return path


@pytest.mark.usefixtures("embedding_model")
def test_every_agents_session_files_import_and_other_files_get_one_line(tmp_path: Path, code_repo: Path):
    from wiki_memory.cli import main

    cwd = str(code_repo)
    runner = CliRunner()

    def run(*args: str) -> dict:
        result = runner.invoke(main, ["--project", cwd, "import", *args, "--json"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    project = resolve_project(code_repo)
    rollouts = run("codex", *map(str, codex_rollouts(tmp_path / "codex", cwd)))
    assert len(rollouts["imported"][project.id]) == 3 and not rollouts["failed"]
    export = run("opencode", str(opencode_export(tmp_path / "ses_abc123.json", cwd)))
    [page] = export["imported"][project.id]
    assert "`cart.py`" in (project.wiki / page).read_text()
    chats = tmp_path / "gem" / "chats"
    gemini_jsonl(chats, cwd)
    (chats.parent / "logs.json").write_text("[]")  # a folder is searched for session files only
    gemini = run("gemini", str(chats.parent))
    assert len(gemini["imported"][project.id]) == 1 and not gemini["failed"]
    # Not a session of the agent named: one line each, nothing written, no traceback.
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [1, 2, {"type": "user", "content": {"weird": true}}]')
    database = tmp_path / "other.db"
    sqlite3.connect(database).execute("CREATE TABLE t (x)").connection.close()
    for agent, path in (("claude-code", notes), ("gemini", broken), ("opencode", database), ("codex", broken)):
        result = runner.invoke(main, ["--project", cwd, "import", agent, str(path)])
        assert result.exit_code == 0 and result.exception is None, result.output
        [line] = [line for line in result.output.splitlines() if str(path) in line]
        assert line.startswith(f"could not import {path}: "), line
        assert f"not a {agent} transcript" in line or "no such table: session" in line, line
        assert "Traceback" not in result.output


@pytest.mark.usefixtures("embedding_model")
def test_a_gemini_subagent_chat_joins_its_parent(tmp_path: Path):
    chats = tmp_path / "chats"
    parent = gemini_jsonl(chats, "/work/shop")
    parent_id = json.loads(parent.read_text().splitlines()[0])["sessionId"]
    write = _gemini_call("w1", "write_file", {"file_path": "/work/shop/docs/cart.md", "content": "# Cart\n"}, "ok")
    records = [
        {"sessionId": "sub-7", "projectHash": "ab" * 32, "startTime": "2026-12-02T00:13:04.000Z", "kind": "subagent",
         "directories": ["/work/shop"]},
        {"id": "s1", "timestamp": "2026-12-02T00:13:04.000Z", "type": "user", "content": "Document the cart"},
        {"id": "s2", "timestamp": "2026-12-02T00:13:05.000Z", "type": "gemini", "content": "", "toolCalls": [write]},
    ]  # fmt: skip
    sub = _write(chats / parent_id / "sub-7.jsonl", [json.dumps(r) for r in records])
    project = resolve_project(tmp_path)
    report = import_transcripts("gemini", [parent, sub], project=project)
    [page_path] = report.imported[project.id]
    page = (project.wiki / page_path).read_text()
    assert f"session_id: {parent_id}" in page and "`docs/cart.md`" in page and "`shop/cart.py`" in page
    alone = import_transcripts("gemini", [sub], project=resolve_project(tmp_path / "other"))
    assert not alone.failed and len(alone.imported[resolve_project(tmp_path / "other").id]) == 1
