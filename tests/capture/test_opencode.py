"""OpenCode: the adapter against payloads our plugin sent from the real OpenCode
(tests/fixtures/payloads/opencode-1.18.33), the sessions of opencode.db, and the plugin itself
run under Node with a stand-in `wiki-memory` (its waits, its fire and forget, what it adds to
the system prompt). The real OpenCode drives it in test_opencode_e2e.py."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from wiki_memory.capture import adapter
from wiki_memory.capture.observation import Observation, PlanItem
from wiki_memory.capture.opencode import prompt_text, read_session
from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.hook import main as hook

PAYLOADS = Path(__file__).parents[1] / "fixtures" / "payloads" / "opencode-1.18.33"
DB_FIXTURE = Path(__file__).parents[1] / "fixtures" / "opencode-1.18.33-db.json"
CAPTURED_IN = "/tmp/agents-play/cap/proj"  # where the fixtures were captured
OPENCODE = adapter.load("opencode")


def payload(name: str, cwd: Path | None = None) -> dict:
    data = json.loads((PAYLOADS / f"{name}.json").read_text())
    if cwd is not None:
        data = json.loads(json.dumps(data).replace(CAPTURED_IN, str(cwd)))
    return data


def parse(name: str, event: str, cwd: Path | None = None) -> list[Observation]:
    return OPENCODE.parse(event, payload(name, cwd))


def one(name: str, event: str, cwd: Path | None = None) -> Observation:
    observations = parse(name, event, cwd)
    assert len(observations) == 1
    return observations[0]


# The adapter -------------------------------------------------------------------------------


def test_each_payload_of_the_real_plugin_becomes_its_observation():
    start = one("session-created", "session.created")
    assert start.kind == "session-start" and start.meta == {"source": "startup", "cli_version": "1.18.33"}
    assert start.session_id == "ses_dcbe7a9c9ffe0zcw6oqYnQ4tdx" and start.cwd == CAPTURED_IN
    assert start.time == "2026-12-02T00:12:19.928Z"  # when OpenCode told the plugin, not when the hook ran
    prompt = one("chat-message", "chat.message")
    assert prompt.text == "Fix the widget total off-by-one in src/widget.py"
    assert prompt.meta == {"agent": "build", "model": "anthropic/claude-sonnet-4-5"}
    failed = one("part-bash-failed", "message.part.updated")
    assert (failed.tool, failed.error, failed.meta["exit_code"]) == ("bash", True, 1)
    assert failed.input.startswith("python3 -c") and "AssertionError: widget total 9 != 10" in failed.output
    assert failed.meta["tool_use_id"] == "toolu_000003"
    passed = one("part-bash", "message.part.updated")
    assert (passed.input, passed.error, passed.meta["exit_code"]) == ("echo checked", False, 0)
    assert one("part-edit", "message.part.updated").files == ("src/widget.py",)
    wrote = one("part-write", "message.part.updated")
    assert wrote.files == ("src/test_widget.py",) and not wrote.error
    plan = one("part-todowrite", "message.part.updated").plan
    assert plan == (
        PlanItem("Add a regression test for widget totals", "pending"),
        PlanItem("Fix the off-by-one", "completed"),
    )
    missing = one("part-read-error", "message.part.updated")
    assert missing.error and "File not found" in missing.output and missing.files == ()
    stop = one("session-idle", "session.idle")
    assert stop.kind == "stop" and stop.text.startswith("I changed src/widget.py")
    for o in (start, prompt, failed, stop):
        assert Observation.from_dict(json.loads(json.dumps(o.to_dict()))) == o


def test_an_error_a_compaction_and_what_records_nothing():
    base = {"session_id": "ses_1", "cwd": "/work/app", "time": 1796170339946}
    error = {"name": "APIError", "data": {"message": "overloaded"}}
    [stop] = OPENCODE.parse("session.error", {**base, "error": error})
    assert stop.kind == "stop" and stop.error and stop.meta["error_details"] == "overloaded"
    assert OPENCODE.parse("session.compacted", base)[0].kind == "compact"
    assert OPENCODE.parse("tool.execute.before", base) == []
    running = {"type": "tool", "tool": "bash", "callID": "c", "state": {"status": "running"}}
    assert OPENCODE.parse("message.part.updated", {**base, "part": {"type": "text", "text": "hi"}}) == []
    assert OPENCODE.parse("message.part.updated", {**base, "part": running})[0].tool == "bash"
    assert OPENCODE.resolve_event("session.idle", {}) == "session.idle"
    assert OPENCODE.resolve_event("SessionIdle", {}) is None  # dotted names only, as the plugin sends them


def test_the_quotes_opencode_run_adds_are_taken_off_the_prompt():
    assert prompt_text([{"type": "text", "text": '"fix the build"'}]) == "fix the build"
    assert prompt_text([{"type": "text", "text": 'say "hi" to "them"'}]) == 'say "hi" to "them"'
    assert prompt_text([{"type": "text", "text": "x", "synthetic": True}]) is None


def test_the_hook_prints_the_context_envelope_and_resolves_the_project_per_call(tmp_path, monkeypatch):
    one_repo, other_repo = tmp_path / "one", tmp_path / "two"
    for repo in (one_repo, other_repo):
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setattr(
        "wiki_memory.hook.startup.session_start_text", lambda project, *a: f"Handoff of {project.root.name}."
    )
    printed = hook.run(
        "opencode", "session.created", json.dumps(payload("session-created", one_repo)).encode(), os.environ
    )
    assert json.loads(printed) == {"context": "Handoff of one."}
    # One OpenCode process, two sessions in two directories: each call goes to its own project.
    chat = payload("chat-message", other_repo)
    assert hook.run("opencode", "chat.message", json.dumps(chat).encode(), os.environ) is None
    first = list(resolve_project(one_repo).journal_dir.glob("*.jsonl"))
    second = list(resolve_project(other_repo).journal_dir.glob("*.jsonl"))
    assert [p.name for p in first] == [p.name for p in second] == ["ses_dcbe7a9c9ffe0zcw6oqYnQ4tdx.jsonl"]
    assert [json.loads(line)["kind"] for line in second[0].read_text().splitlines()] == ["prompt"]


def test_journal_lines_that_landed_out_of_order_are_read_in_opencodes_time_order(code_repo):
    """The plugin's calls run side by side, so the journal's lines can land out of order;
    read alone (SessionStart's on-the-spot summary, consolidation without opencode.db),
    they are put back in the order of OpenCode's own times."""
    from wiki_memory.capture import journal
    from wiki_memory.consolidate.extract import summarize
    from wiki_memory.consolidate.handoff import handoff_for_next_session
    from wiki_memory.consolidate.session import merge_observations
    from wiki_memory.consolidate.session_sources import load_session

    landed = [  # as recorded: the turn's end (session.idle) before its last tool call, the edit first
        ("session-created", "session.created"),
        ("chat-message", "chat.message"),
        ("part-edit", "message.part.updated"),
        ("part-bash-failed", "message.part.updated"),
        ("part-write", "message.part.updated"),
        ("part-todowrite", "message.part.updated"),
        ("part-bash", "message.part.updated"),
        ("session-idle", "session.idle"),
        ("part-read-error", "message.part.updated"),
    ]
    project = resolve_project(code_repo)
    for name, event in landed:  # as the hook appends them (its session.idle would start a consolidation)
        journal.append(project.journal_dir, parse(name, event, code_repo))
    [path] = project.journal_dir.glob("*.jsonl")
    recorded = list(journal.read(path))
    assert [o.time for o in recorded] != sorted(o.time for o in recorded)  # it really is out of order
    ordered = merge_observations(recorded, [])
    assert [o.time for o in ordered] == sorted(o.time for o in recorded)
    assert ordered[-1].kind == "stop" and (ordered[2].tool, ordered[3].tool) == ("bash", "edit")
    # Stably: observations of one instant keep the journal's order.
    tied = [o._replace(time="2026-12-02T00:12:30.000Z") for o in recorded]
    assert merge_observations(tied, []) == tied

    session = load_session(path, with_transcript=False)
    assert session.last_kind == "stop"
    assert not any("stopped mid-task" in line for line in summarize(session).open)
    view = handoff_for_next_session(project, session_id="ses_next")
    assert view is not None and "Goal: Fix the widget total off-by-one" in view.text
    assert "stopped mid-task" not in view.text


# opencode.db -------------------------------------------------------------------------------


def make_db(path: Path, directory: Path) -> str:
    """An opencode.db with the session the fixtures come from (the tables as 1.18.33 made them)."""
    data = json.loads(DB_FIXTURE.read_text().replace(CAPTURED_IN, str(directory)))
    with sqlite3.connect(path) as conn:
        for table in ("session", "message", "part"):
            conn.execute(data["schema"][table])  # its foreign keys name tables not made here: never enforced
            for row in data[table]:
                columns = ", ".join(row)
                conn.execute(
                    f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(row))})", list(row.values())
                )
    conn.close()
    return data["session"][0]["id"]


def test_a_session_read_from_opencode_db(tmp_path, code_repo):
    db = tmp_path / "opencode.db"
    sid = make_db(db, code_repo)
    observations = read_session(db / sid)
    assert read_session(db) == observations  # the database alone: its newest session
    kinds = [o.kind for o in observations]
    assert kinds == ["session-start", "prompt", "tool", "tool", "tool", "tool", "tool", "tool", "stop"]
    start = observations[0]
    assert start.meta["cli_version"] == "1.18.33" and start.meta["model"] == "anthropic/claude-sonnet-4-5"
    assert all(o.cwd == str(code_repo) and o.session_id == sid for o in observations)
    assert observations[1].text == "Fix the widget total off-by-one in src/widget.py"
    failed = observations[2]
    assert failed.error and failed.meta == {"tool_use_id": "toolu_000003", "exit_code": 1}
    assert [o.tool for o in observations[2:8]] == ["bash", "edit", "write", "bash", "todowrite", "read"]
    assert observations[-1].text.startswith("I changed src/widget.py")
    # The hooks' record of the same calls carries the same call ids: consolidation merges them.
    hooked = {one(n, "message.part.updated").meta["tool_use_id"] for n in ("part-bash-failed", "part-edit")}
    assert hooked <= {o.meta.get("tool_use_id") for o in observations}


def test_find_transcript_looks_in_opencode_db_but_not_on_the_hook_path(tmp_path, code_repo, monkeypatch):
    db = tmp_path / "data" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    sid = make_db(db, code_repo)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert OPENCODE.find_transcript(sid, [], search=True) == db / sid
    assert OPENCODE.find_transcript(sid, [], search=False) is None
    assert OPENCODE.find_transcript("ses_missing0000000000000000", [], search=True) is None
    assert OPENCODE.default_transcripts() == [db / sid]
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "elsewhere.db"))
    assert OPENCODE.default_transcripts() == []


def test_import_opencode_files_each_session_under_its_directory(tmp_path, code_repo):
    db = tmp_path / "opencode.db"
    make_db(db, code_repo)
    result = CliRunner().invoke(main, ["import", "opencode", str(db), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    [(pid, pages)] = report["imported"].items()
    assert pid == resolve_project(code_repo).id and pages[0].startswith("sessions/")
    page = (resolve_project(code_repo).wiki / pages[0]).read_text()
    assert "opencode" in page and "sys.exit('AssertionError: widget total 9 != 10')" in page
    again = CliRunner().invoke(main, ["import", "opencode", str(db), "--json"], catch_exceptions=False)
    assert json.loads(again.stdout)["skipped"] == {pid: pages}


def test_an_unreadable_database_is_one_line_not_a_traceback(tmp_path):
    bad = tmp_path / "opencode.db"
    bad.write_text("not a database")
    result = CliRunner().invoke(main, ["import", "opencode", str(bad)])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert f"could not import {bad}: unreadable: {bad}: file is not a database" in result.output


# The plugin, run under Node ---------------------------------------------------------------

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(
    NODE is None, reason="node is not installed: OpenCode runs the plugin in its own runtime; this test uses Node"
)

FAKE_WIKI_MEMORY = """#!{python}
# A stand-in for `wiki-memory hook opencode EVENT`: records the call, answers as the hook does.
import json, os, sys, time
event = sys.argv[3]
record = os.environ["RECORD_DIR"]
data = json.loads(sys.stdin.read() or "{{}}")
with open(os.path.join(record, f"{{time.time_ns()}}-{{os.getpid()}}-{{event}}.json"), "w") as f:
    json.dump({{"argv": sys.argv[1:], "payload": data}}, f)
if os.environ.get("FAKE_MODE") == "hang":
    time.sleep(600)
if event == "session.created":
    print(json.dumps({{"context": "HANDOFF for " + data["cwd"]}}))
elif event == "chat.message":
    print(json.dumps({{"context": "PAGES for " + data["parts"][0]["text"]}}))
elif event == "message.part.updated":
    print(json.dumps({{"context": "GOTCHA for " + data["part"]["state"].get("output", "")}}))
"""

HARNESS = """
import { WikiMemory } from "./plugin.mjs"
const steps = JSON.parse(process.argv[2])
const hooks = await WikiMemory({ directory: "/plugin/dir" })
const results = []
for (const step of steps) {
  if (step.event) await hooks.event({ event: step.event })
  else if (step.sleep) await new Promise((r) => setTimeout(r, step.sleep))
  else {
    const output = step.output || {}
    const started = Date.now()
    await hooks[step.hook](step.input, output)
    results.push({ hook: step.hook, output, ms: Date.now() - started })
  }
}
console.log(JSON.stringify(results))
process.exit(0)
"""


def run_plugin(tmp_path: Path, steps: list[dict], mode: str = "", command: str | None = None, waits=(1500, 1000)):
    """Run the plugin's hooks in Node on `steps`; (hook results, the calls the stand-in recorded)."""
    from wiki_memory.install.opencode import render_plugin

    record = tmp_path / "calls"
    record.mkdir(exist_ok=True)
    fake = tmp_path / "wiki-memory"
    fake.write_text(FAKE_WIKI_MEMORY.format(python=sys.executable))
    fake.chmod(0o755)
    plugin = render_plugin([command or str(fake)])
    plugin = plugin.replace("const START_WAIT_MS = 10000", f"const START_WAIT_MS = {waits[0]}")
    plugin = plugin.replace("const PROMPT_WAIT_MS = 3000", f"const PROMPT_WAIT_MS = {waits[1]}")
    (tmp_path / "plugin.mjs").write_text(plugin)
    (tmp_path / "harness.mjs").write_text(HARNESS)
    env = {**os.environ, "RECORD_DIR": str(record), "FAKE_MODE": mode}
    result = subprocess.run(
        [NODE, str(tmp_path / "harness.mjs"), json.dumps(steps)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), record


def calls(record: Path, count: int, timeout: float = 20) -> list[dict]:
    """The calls the stand-in recorded, once there are `count` (fire and forget: they land later)."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(record.glob("*.json"))
        if len(found) >= count or time.monotonic() > deadline:
            return [json.loads(p.read_text()) for p in found]
        time.sleep(0.05)


def stop_hanging(record: Path) -> None:
    """End the stand-ins left sleeping (each recorded its own pid in its file name)."""
    import signal

    for path in record.glob("*.json"):
        try:
            os.kill(int(path.name.split("-")[1]), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass


SID = "ses_aaaaaaaaaaaaAAAAAAAAAAAAAA"
MODEL = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}


def created(sid: str, directory: str, parent: str | None = None) -> dict:
    info = {"id": sid, "directory": directory, "version": "1.18.33", **({"parentID": parent} if parent else {})}
    return {"event": {"type": "session.created", "properties": {"sessionID": sid, "info": info}}}


def chat(sid: str, text: str) -> dict:
    message = {"id": "msg_u", "role": "user", "model": MODEL, "agent": "build"}
    return {
        "hook": "chat.message",
        "input": {"sessionID": sid},
        "output": {"message": message, "parts": [{"type": "text", "text": text}]},
    }


def transform(sid: str, model_id: str = "claude-sonnet-4-5") -> dict:
    return {
        "hook": "experimental.chat.system.transform",
        "input": {"sessionID": sid, "model": {"id": model_id}},
        "output": {"system": ["You are OpenCode."]},
    }


@needs_node
def test_the_plugin_hands_the_handoff_and_the_prompts_context_to_the_system_prompt(tmp_path):
    steps = [created(SID, "/work/one"), chat(SID, "fix the build"), transform(SID), transform(SID, "claude-haiku-4-5")]
    results, record = run_plugin(tmp_path, steps)
    main_call, side_call = results[1]["output"]["system"], results[2]["output"]["system"]
    assert main_call == ["You are OpenCode.", "HANDOFF for /work/one\n\nPAGES for fix the build"]
    assert side_call == ["You are OpenCode."]  # the title, on the small model: nothing added
    recorded = {c["argv"][2]: c for c in calls(record, 2)}  # two processes at once: either may record first
    assert sorted(recorded) == ["chat.message", "session.created"]
    assert all(c["argv"][:2] == ["hook", "opencode"] for c in recorded.values())
    start, prompt = recorded["session.created"]["payload"], recorded["chat.message"]["payload"]
    assert start["cwd"] == prompt["cwd"] == "/work/one"  # the session's directory, not the plugin's
    assert start["source"] == "startup" and prompt["model"] == MODEL and prompt["agent"] == "build"


@needs_node
def test_the_plugin_forwards_finished_tool_calls_and_the_turns_answer(tmp_path):
    part = {"id": "prt_1", "sessionID": SID, "messageID": "msg_a", "type": "tool", "tool": "bash", "callID": "c1"}
    text = {"id": "prt_2", "sessionID": SID, "messageID": "msg_a", "type": "text", "text": "All done."}
    steps = [
        created(SID, "/work/one"),
        {"event": {"type": "message.updated", "properties": {"info": {"id": "msg_a", "role": "assistant"}}}},
        {"event": {"type": "message.part.updated", "properties": {"part": {**part, "state": {"status": "running"}}}}},
        {"event": {"type": "message.part.updated", "properties": {"part": {**part, "state": {"status": "completed"}}}}},
        {"event": {"type": "message.part.updated", "properties": {"part": {**text, "time": {"end": 1}}}}},
        {"event": {"type": "session.idle", "properties": {"sessionID": SID}}},
    ]
    _results, record = run_plugin(tmp_path, steps)
    recorded = calls(record, 3)
    events = [c["argv"][2] for c in recorded]
    assert sorted(events) == ["message.part.updated", "session.created", "session.idle"]  # no call for "running"
    idle = next(c["payload"] for c in recorded if c["argv"][2] == "session.idle")
    assert idle["text"] == "All done." and idle["session_id"] == SID


@needs_node
def test_a_sub_agents_calls_go_to_its_root_session_and_it_gets_no_handoff(tmp_path):
    child = "ses_bbbbbbbbbbbbBBBBBBBBBBBBBB"
    part = {"id": "prt_9", "sessionID": child, "messageID": "m", "type": "tool", "tool": "read", "callID": "c9"}
    steps = [
        created(SID, "/work/one"),
        created(child, "/work/one", parent=SID),
        {"event": {"type": "message.part.updated", "properties": {"part": {**part, "state": {"status": "completed"}}}}},
        {"event": {"type": "session.idle", "properties": {"sessionID": child}}},
        transform(child),
    ]
    results, record = run_plugin(tmp_path, steps)
    assert results[0]["output"]["system"] == ["You are OpenCode."]
    calls(record, 2)
    time.sleep(0.5)  # nothing more may come
    recorded = {c["argv"][2]: c for c in calls(record, 2)}
    assert sorted(recorded) == ["message.part.updated", "session.created"]
    tool = recorded["message.part.updated"]["payload"]
    assert tool["session_id"] == SID and tool["child"] == child


@needs_node
def test_a_session_the_plugin_did_not_see_start_is_handed_off_when_it_next_calls_the_model(tmp_path):
    steps = [{"event": {"type": "session.updated", "properties": {"info": {"id": SID, "directory": "/w"}}}}]
    results, record = run_plugin(tmp_path, [*steps, transform(SID)])
    assert results[0]["output"]["system"][1] == "HANDOFF for /w"
    assert calls(record, 1)[0]["payload"]["source"] == "resume"


@needs_node
def test_a_hanging_wiki_memory_costs_the_bounded_waits_and_nothing_more(tmp_path):
    steps = [created(SID, "/work/one"), chat(SID, "fix it"), transform(SID), transform(SID)]
    try:
        results, _record = run_plugin(tmp_path, steps, mode="hang", waits=(1500, 1000))
    finally:
        stop_hanging(tmp_path / "calls")
    chat_ms, first_ms, second_ms = (r["ms"] for r in results)
    assert 900 <= chat_ms < 5000  # the prompt's wait
    assert first_ms < 1500  # what is left of the session's wait
    assert second_ms < 1500
    assert all(r["output"].get("system", ["x"]) == ["You are OpenCode."] for r in results[1:])


@needs_node
def test_a_missing_wiki_memory_never_breaks_a_hook(tmp_path):
    steps = [created(SID, "/work/one"), chat(SID, "fix it"), transform(SID)]
    results, _record = run_plugin(tmp_path, steps, command=str(tmp_path / "no" / "wiki-memory"))
    assert results[1]["output"]["system"] == ["You are OpenCode."]
    assert all(r["ms"] < 2000 for r in results)


def tool_part(sid: str, call: str, status: str, output: str, exit_code: int | None = None) -> dict:
    state = {"status": status, "input": {"command": "pytest"}, "output": output}
    if exit_code is not None:
        state["metadata"] = {"exit": exit_code}
    part = {"type": "tool", "tool": "bash", "callID": call, "id": f"prt_{call}", "sessionID": sid, "state": state}
    return {"event": {"type": "message.part.updated", "properties": {"part": part}}}


@needs_node
def test_a_failed_tool_call_brings_its_gotcha_for_the_rest_of_the_turn(tmp_path):
    """A shell command that exited non-zero (OpenCode's "completed" with `metadata.exit`) waits
    for what the hook prints back, and it joins the turn's system prompt from the next call
    on; a command that worked is fire and forget and adds nothing; a new prompt starts afresh."""
    steps = [
        created(SID, "/work/one"),
        chat(SID, "run the tests"),
        tool_part(SID, "c1", "completed", "ok", 0),
        tool_part(SID, "c2", "completed", "KeyError: 'SHOP_DB_URL'", 1),
        transform(SID),
        transform(SID),
        chat(SID, "next"),
        transform(SID),
    ]
    results, record = run_plugin(tmp_path, steps)
    first, second, after = (r["output"]["system"][-1] for r in results if r["hook"] != "chat.message")
    assert first.endswith("GOTCHA for KeyError: 'SHOP_DB_URL'") and "GOTCHA for ok" not in first
    assert second == first
    assert "GOTCHA" not in after
    recorded = [c for c in calls(record, 5) if c["argv"][2] == "message.part.updated"]
    assert sorted(c["payload"]["part"]["callID"] for c in recorded) == ["c1", "c2"]  # both recorded


def test_an_exported_turn_that_failed_keeps_what_the_provider_said(tmp_path):
    """The export's message error carries the provider's words, as the hook's `session.error` does."""
    from wiki_memory.capture.opencode import read_export

    error = {"name": "APIError", "data": {"message": "Extra usage must be enabled to use Opus.", "statusCode": 400}}
    prompt = {"type": "text", "text": "Add a Commands section"}
    export = {
        "info": {"id": "ses_1", "directory": "/w/app", "version": "1.0.107"},
        "messages": [
            {"info": {"id": "m1", "role": "user", "time": {"created": 1}}, "parts": [prompt]},
            {"info": {"id": "m2", "role": "assistant", "time": {"created": 2}, "error": error}, "parts": []},
        ],
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    [stop] = [o for o in read_export(path) if o.kind == "stop"]
    assert stop.error and stop.meta["error"] == "APIError"
    assert stop.meta["error_details"] == "Extra usage must be enabled to use Opus."
