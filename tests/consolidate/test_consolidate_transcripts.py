"""The transcript readers against real Claude Code and Codex session files, and crafted edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED, consolidate_session, git
from journals import Session

from wiki_memory.capture import journal
from wiki_memory.capture.claude_code import read_transcript
from wiki_memory.capture.codex import read_rollout
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.extract import relative, summarize
from wiki_memory.consolidate.session import build_session
from wiki_memory.consolidate.session_sources import load_session
from wiki_memory.memory import import_transcripts

TRANSCRIPTS = SHARED / "data" / "transcripts"
CLAUDE = sorted(TRANSCRIPTS.glob("claude_code__*.jsonl"))
CODEX = sorted(TRANSCRIPTS.glob("codex__*.jsonl"))
needs_shared = pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"the shared transcripts are not at {TRANSCRIPTS}")


def claude_facts(path: Path) -> tuple[set[str], set[str], str]:
    """What the transcript itself says: files edited (successfully), commands run, the cwd."""
    uses: dict[str, dict] = {}
    errors: set[str] = set()
    answered: set[str] = set()
    cwd = ""
    for line in path.read_text().splitlines():
        record = json.loads(line)
        cwd = cwd or record.get("cwd", "")
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses[block["id"]] = block
            elif block.get("type") == "tool_result":
                answered.add(block["tool_use_id"])
                if block.get("is_error"):
                    errors.add(block["tool_use_id"])
    edited = {
        u["input"]["file_path"]
        for i, u in uses.items()
        if u["name"] in ("Edit", "Write", "MultiEdit") and i in answered and i not in errors
    }
    commands = {u["input"]["command"] for u in uses.values() if u["name"] == "Bash"}
    return edited, commands, cwd


@needs_shared
@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.stem.split("__")[-1])
def test_claude_session_pages_name_the_edited_files_and_the_commands(path: Path, tmp_path: Path):
    edited, commands, cwd = claude_facts(path)
    project = resolve_project(tmp_path)
    report = import_transcripts("claude-code", [path], project=project)
    [page_path] = report.imported[project.id]
    page = (project.wiki / page_path).read_text()
    for name in edited:
        assert f"`{relative(name, cwd)}`" in page, name
    commands_section = page.split("## Commands\n", 1)[1].split("\n## ", 1)[0] if commands else ""
    for command in commands:
        assert " ".join(command.split())[:60] in " ".join(commands_section.split()), command
    session = build_session(read_transcript(path))
    assert page_path.startswith(f"sessions/{session.date[:4]}/{session.date[5:7]}/{session.date}-claude-code-")
    assert f"session_id: {session.session_id}" in page


@needs_shared
def test_claude_reader_merges_lines_of_one_message_and_pairs_results():
    path = TRANSCRIPTS / "claude_code__agentcmd__full-session-three.jsonl"
    session = build_session(read_transcript(path))
    assert session.session_id == "cfa1e878-62b5-4e40-b281-bbf9b250d766"
    assert session.model == "claude-sonnet-4-5-20250929" and session.branch == "main"
    # Three tool calls written as three lines of one assistant message, answered by three results.
    bash = [s.input for s in session.steps if s.tool == "Bash"]
    assert "ls -la" in bash and any(c.startswith("find . -maxdepth 3") for c in bash)
    assert [p.text for p in session.real_prompts] == ["Hey", "Can you audit this codebase?"]
    # The file ends with calls that never got a result: the session stopped mid-task.
    summary = summarize(session)
    assert summary.goal == "Can you audit this codebase?"  # "Hey" is a greeting, not the goal
    assert summary.mid_task and any("stopped mid-task" in line for line in summary.open)
    assert any(line.startswith("[pending] ") and "Check for security issues" in line for line in summary.open)
    assert "[in progress] Review package.json and dependencies" in summary.open


@needs_shared
def test_claude_failure_then_fix_from_a_real_session():
    session = build_session(read_transcript(TRANSCRIPTS / "claude_code__agentcmd__full-session-four.jsonl"))
    summary = summarize(session)
    fixed = [line for line in summary.done if "pnpm test NavUser.test.tsx" in line]
    assert fixed and "failed at first" in fixed[0] and "then passed" in fixed[0]
    assert not any("pnpm test" in line for line in summary.failed + summary.open)
    assert set(summary.files) == {
        "apps/app/src/client/components/NavUser.tsx",
        "apps/app/src/client/components/NavUser.test.tsx",
        "apps/app/src/client/components/AppSidebar.tsx",
    }


@needs_shared
def test_claude_rejected_plan_is_an_abandoned_approach():
    session = build_session(read_transcript(TRANSCRIPTS / "claude_code__agentcmd__full-session-two.jsonl"))
    summary = summarize(session)
    assert any(line.startswith('The user rejected the proposed plan: Move the "+" button') for line in summary.failed)
    assert summary.files == ("apps/app/src/client/components/CommandMenu.tsx",)
    assert "Completely outside the search bar entirely" in summary.requests


def _claude_record(uuid: str, parent: str | None, kind: str, content, **extra) -> str:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("mid", f"msg_{uuid}"), model="claude-test")
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "sess-crafted",
            "cwd": "/work/app",
            "timestamp": f"2026-11-30T10:00:{int(uuid[1:]):02d}.000Z",
            "gitBranch": "main",
            "message": message,
            **extra,
        }
    )


def test_claude_reader_follows_the_active_branch_reads_sidechains_and_skips_unknown_records(tmp_path: Path):
    lines = [
        json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}),
        _claude_record("u1", None, "user", "Rename the config loader"),
        _claude_record(
            "u2",
            "u1",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Edit",
                    "input": {"file_path": "/work/app/old_try.py", "old_string": "a", "new_string": "b"},
                }
            ],
        ),
        _claude_record("u3", "u2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        # The user rewound to u1 and asked differently: u2..u3 are an abandoned branch.
        _claude_record("u4", "u1", "assistant", [{"type": "text", "text": "Let me look first."}], mid="msg_m"),
        _claude_record(
            "u5",
            "u4",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "make test"}}],
            mid="msg_m",
        ),
        _claude_record(
            "u6",
            "u5",
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "is_error": True,
                    "content": "Exit code 2\nFAILED test_loader",
                }
            ],
        ),
        _claude_record(
            "u7",
            "u6",
            "assistant",
            [{"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "/work/app/notes.md"}}],
            isSidechain=True,
        ),
        json.dumps({"type": "queue-operation", "operation": "enqueue", "content": "x"}),
        json.dumps({"type": "some-future-record", "uuid": "zz", "data": [1, 2]}),
        "this line is not JSON",
        _claude_record("u8", "u6", "assistant", [{"type": "text", "text": "The loader test fails; see above."}]),
        json.dumps({"type": "last-prompt", "lastPrompt": "Rename the config loader", "leafUuid": "u8"}),
    ]
    path = tmp_path / "sess-crafted.jsonl"
    path.write_text("\n".join(lines) + "\n")
    observations = read_transcript(path)
    session = build_session(observations)
    # The rewound Edit is gone; the sidechain's Read is the sub-agent's call, marked as such.
    assert [s.tool for s in session.steps] == ["Bash", "Read"]
    assert [o.meta.get("subagent") for o in observations if o.kind == "tool"] == [None, "sidechain"]
    assert session.steps[0].error and session.steps[0].exit_code == 2
    assert session.final_answer == "The loader test fails; see above."
    without = build_session(read_transcript(path, include_sidechains=False))
    assert [s.tool for s in without.steps] == ["Bash"]


@needs_shared
def test_codex_rollouts_from_the_shared_samples():
    synthetic = build_session(read_rollout(TRANSCRIPTS / "codex__claude-code-log__synthetic_rollout-2026-01-02.jsonl"))
    assert synthetic.session_id == "11111111-1111-4111-8111-111111111111"
    assert synthetic.model == "synthetic-model" and synthetic.cwd == "/workspace/synthetic-project"
    tools = {s.tool: s for s in synthetic.steps}
    assert tools["exec_command"].input == "find . -maxdepth 1 -type f" and not tools["exec_command"].error
    assert tools["apply_patch"].files == ("gamma.txt",)
    assert "mcp__synthetic__lookup" in tools
    assert synthetic.final_answer == "The synthetic files are alpha.txt and beta.txt."
    assert [p.text for p in synthetic.prompts] == ["List the synthetic files."]  # not twice
    real = build_session(read_rollout(TRANSCRIPTS / "codex__agent-history__real_session-01_redacted.jsonl"))
    assert real.model == "gpt-5.5" and [p.text for p in real.prompts] == ["[REDACTED_PROMPT]"]
    assert real.final_answer == "[REDACTED_ASSISTANT_TEXT]"


def codex_rollout(tmp_path: Path, session_id: str = "01a22bcf-417c-7f01-aca0-77b109a14191") -> Path:
    """A rollout in the layout Codex 0.171 writes (seen with `codex exec`)."""

    def rec(t: int, kind: str, payload: dict) -> str:
        return json.dumps({"timestamp": f"2026-11-30T09:35:{t:02d}.000Z", "type": kind, "payload": payload})

    lines = [
        rec(
            0,
            "session_meta",
            {"id": session_id, "cwd": "/work/app", "cli_version": "0.171.0", "git": {"branch": "feat/notes"}},
        ),
        rec(1, "turn_context", {"cwd": "/work/app", "model": "gpt-5.5"}),
        rec(
            1,
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>",
                    }
                ],
            },
        ),
        rec(2, "world_state", {"full": True}),
        rec(
            2,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "make notes"}]},
        ),
        rec(
            2,
            "event_msg",
            {
                "type": "item_completed",
                "item": {"type": "UserMessage", "content": [{"type": "text", "text": "make notes"}]},
            },
        ),
        rec(
            3,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "call_a",
                "arguments": json.dumps({"cmd": "pytest -q"}),
            },
        ),
        rec(
            4,
            "event_msg",
            {
                "type": "item_completed",
                "item": {"type": "CommandExecution", "id": "call_a", "exit_code": 3, "aggregated_output": "boom\n"},
            },
        ),
        rec(
            4,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_a",
                "output": "Chunk ID: ffe129\nWall time: 0.29 seconds\nProcess exited with code 3\n"
                "Original token count: 2\nOutput:\nE   ValueError: boom\n",
            },
        ),
        rec(
            5,
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "call_b",
                "input": (
                    "*** Begin Patch\n*** Add File: notes.txt\n+hello\n"
                    "*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch\n"
                ),
            },
        ),
        rec(
            6,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_b",
                "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.",
            },
        ),
        rec(
            7,
            "response_item",
            {
                "type": "function_call",
                "name": "update_plan",
                "call_id": "call_c",
                "arguments": json.dumps(
                    {
                        "plan": [
                            {"step": "write notes", "status": "completed"},
                            {"step": "add tests", "status": "pending"},
                        ]
                    }
                ),
            },
        ),
        rec(7, "response_item", {"type": "function_call_output", "call_id": "call_c", "output": "Plan updated"}),
        rec(8, "response_item", {"type": "reasoning", "summary": [], "encrypted_content": "xxx"}),
        rec(
            9,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Wrote notes.txt. Next: add tests."}],
            },
        ),
        rec(9, "event_msg", {"type": "task_complete", "last_agent_message": "Wrote notes.txt. Next: add tests."}),
        rec(9, "token_usage_record", {"usage": {}}),
    ]
    path = tmp_path / f"rollout-2026-11-30T09-35-00-{session_id}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_codex_reader_current_layout(tmp_path: Path):
    session = build_session(read_rollout(codex_rollout(tmp_path)))
    assert session.branch == "feat/notes" and session.model == "gpt-5.5"
    assert [p.text for p in session.prompts] == ["make notes"]
    shell, patch, _plan = session.steps
    assert shell.error and shell.exit_code == 3 and shell.output.startswith("E   ValueError: boom")
    assert patch.files == ("notes.txt", "src/app.py") and not patch.error
    assert [(i.text, i.status) for i in session.plan] == [("write notes", "completed"), ("add tests", "pending")]
    summary = summarize(session)
    assert "[pending] add tests" in summary.open
    assert any("`pytest -q` failed (exit 3): E ValueError: boom" in line for line in summary.failed)
    assert "Stated next step: Next: add tests." in summary.open


def test_journal_and_rollout_merge_the_exit_code_codex_hooks_lack(code_repo: Path, tmp_path: Path):
    project = resolve_project(code_repo)
    sid = "01a22bcf-417c-7f01-aca0-77b109a14191"
    rollout = codex_rollout(tmp_path, sid)
    s = Session(project, sid, agent="codex", cwd="/work/app", start="2026-11-30T09:34:50")
    s.start(transcript_path=str(rollout)).prompt("make notes")
    # What Codex's PostToolUse hook gives: the output, no exit code, so no error flag.
    s.tool("Bash", "pytest -q", "E   ValueError: boom", tool_use_id="call_a")
    s.stop("Wrote notes.txt. Next: add tests.").end("other").write()
    session = load_session(journal.journal_file(project.journal_dir, sid))
    assert [st.tool for st in session.steps] == ["exec_command", "apply_patch", "update_plan"]
    assert session.steps[0].error and session.ended and session.end_reason == "other"
    outcome = consolidate_session(project, sid)
    handoff = (project.wiki / outcome.handoff).read_text()
    assert "`pytest -q` failed (exit 3)" in handoff and "`notes.txt`" in handoff
    # A time-ordered (UUIDv7) id is named by its random tail: Codex ids share their head for a minute.
    assert outcome.handoff == "handoffs/2026/11/2026-11-30-codex-09a14191.md"


@pytest.mark.usefixtures("embedding_model")  # the import embeds what it wrote
def test_import_is_idempotent_and_files_sessions_by_their_working_directory(tmp_path: Path, code_repo: Path):
    rollout = codex_rollout(tmp_path)
    text = rollout.read_text().replace("/work/app", str(code_repo))
    rollout.write_text(text)
    first = import_transcripts("codex", [rollout])
    project = resolve_project(code_repo)
    assert list(first.imported) == [project.id]
    assert git(project.wiki, "log", "--format=%s").splitlines()[0] == "import: 1 codex session"
    # The import indexed and embedded its page: the next search has nothing left to embed.
    from wiki_memory.index import Index

    with Index.open(project) as index:
        assert index.head == git(project.wiki, "rev-parse", "HEAD").strip()
        assert index.pending_count() == 0 and first.embedded[project.id] > 0
        found = [r.path for r in index.search("session", k=5, mode="fts")]
        assert set(found) == {*first.imported[project.id], *first.handoffs.values()}
    again = import_transcripts("codex", [rollout])
    assert again.imported == {} and again.skipped == {project.id: first.imported[project.id]}
    assert git(project.wiki, "log", "--format=%s").count("import:") == 1
    # The newest imported session's handoff is what the next session is handed.
    [handoff] = (project.wiki / "handoffs").rglob("*.md")
    assert first.handoffs == {project.id: str(handoff.relative_to(project.wiki))}
    assert "session" in git(project.wiki, "show", "--stat", "HEAD")


def test_secrets_in_a_transcript_never_reach_the_pages(tmp_path: Path):
    from journals import set_config

    set_config("[redact]\npatterns = ['corp-[0-9a-f]{16}']\n")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    lines = [
        _claude_record("u1", None, "user", "Deploy with the key corp-0123456789abcdef please"),
        _claude_record(
            "u2",
            "u1",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": f"GITHUB_TOKEN={token} ./deploy.sh"},
                }
            ],
        ),
        _claude_record(
            "u3",
            "u2",
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "deployed with postgres://admin:hunter2secret@db/prod",
                }
            ],
        ),
        _claude_record("u4", "u3", "assistant", [{"type": "text", "text": "Deployed."}]),
    ]
    path = tmp_path / "sess-secret.jsonl"
    path.write_text("\n".join(lines) + "\n")
    project = resolve_project(tmp_path)
    report = import_transcripts("claude-code", [path], project=project)
    [page_path] = report.imported[project.id]
    page = (project.wiki / page_path).read_text()
    assert "./deploy.sh" in page and "REDACTED" in page
    for secret in (token, "hunter2secret", "corp-0123456789abcdef"):
        assert secret not in page
        assert secret not in git(project.wiki, "log", "-p")


def test_each_agent_module_finds_and_lists_its_own_transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from wiki_memory.capture.adapter import load
    from wiki_memory.capture.observation import Observation

    sid = "01a22bcf-417c-7f01-aca0-77b109a14191"
    day = tmp_path / "codex-home" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    rollout = codex_rollout(day, sid)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    claude_dir = tmp_path / "claude-config" / "projects" / "-work-app"
    claude_dir.mkdir(parents=True)
    (claude_dir / "sess-1.jsonl").write_text(_claude_record("u1", None, "user", "hello") + "\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    unnamed = [Observation("session-start", "codex", sid, "2026-11-30T09:35:00.000Z")]
    codex = load("codex")
    # The hooks named no transcript: looked up under CODEX_HOME, except on the hook path (no search).
    assert codex.find_transcript(sid, unnamed) == rollout
    assert codex.find_transcript(sid, unnamed, search=False) is None
    named = [unnamed[0]._replace(meta={"transcript_path": str(rollout)})]
    assert codex.find_transcript("another-id", named, search=False) == rollout
    assert codex.default_transcripts() == [rollout]
    assert [o.kind for o in codex.read_transcript(rollout)][:2] == ["session-start", "prompt"]
    claude = load("claude")
    assert claude.default_transcripts() == [claude_dir / "sess-1.jsonl"]
    assert claude.find_transcript("sess-1", unnamed) is None  # Claude Code's hooks always name it
    # Gemini's hooks look up no transcript (their journal is complete), Cursor has no reader:
    # neither finds one, nor reads another agent's file as its own.
    for agent in ("gemini", "cursor"):
        adapter = load(agent)
        assert adapter.find_transcript(sid, named) is None and adapter.default_transcripts() == []
        assert adapter.read_transcript(rollout) == []
