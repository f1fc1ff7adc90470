"""Distillation with an LLM, opt-in: an agent CLI as the model (a fake `claude`, `codex`,
`gemini` on PATH that speaks like the real ones) and an API (the fake servers of
`fake_llm`); every failure (timeout, refusal, malformed answer, spent budget) falls back to
the evidence's pages, and the CLI runs with our hooks disabled."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import consolidate_session, git
from fake_llm import FakeLLM
from journals import Session, set_config

from wiki_memory.config import home, resolve_project
from wiki_memory.memory import Memory

FAKE_CLI = r'''#!{python}
"""A fake agent CLI: records how it was run, then answers as MODE says."""
import json, os, re, sys, time
name = os.path.basename(sys.argv[0])
prompt = sys.stdin.read() if ("-" in sys.argv or name == "claude") else sys.argv[-1]
log = os.environ["FAKE_CLI_LOG"]
with open(log, "a") as f:
    f.write(json.dumps({{"name": name, "argv": sys.argv[1:], "cwd": os.getcwd(), "pid": os.getpid(),
                        "disabled": os.environ.get("WIKI_MEMORY_DISABLE"), "prompt": prompt}}) + "\n")
mode = os.environ.get("FAKE_CLI_MODE", "ok")
if mode == "sleep":
    time.sleep(60)
if mode == "exit":
    print("not signed in", file=sys.stderr)
    sys.exit(1)
shown = re.findall(r"decisions/[\w.-]+\.md", prompt.split("Existing pages close to this session")[-1])
answer = {{
    "pages": [
        {{"type": "decision", "title": "Orders are paginated with a cursor",
          "body": "The orders endpoint pages with an opaque cursor, not offsets.", "update": None}},
        {{"type": "fact", "title": "Pagination note", "body": "Cursor pagination also applies to refunds.",
          "update": shown[0] if shown else None}},
        {{"type": "decision", "title": "Delete the old page", "body": "x", "update": "decisions/not-shown.md"}},
    ],
    "contradictions": [{{"pages": shown[:2], "why": "one says offsets, one says cursors"}}],
}}
text = json.dumps(answer)
if mode == "garbage":
    text = "Sure! Here are my thoughts on the session: it went well."
if name == "claude":
    if mode == "refuse":
        refusal = "I can't help with that."
        print(json.dumps({{"type": "result", "subtype": "success", "is_error": True, "result": refusal}}))
    else:
        print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": text,
                          "usage": {{"input_tokens": 700, "output_tokens": 120}}}}))
elif name == "codex":
    out = sys.argv[sys.argv.index("-o") + 1]
    open(out, "w").write(text)
    print(json.dumps({{"type": "item.completed", "item": {{"type": "agent_message", "text": text}}}}))
    print(json.dumps({{"type": "turn.completed", "usage": {{"input_tokens": 600, "output_tokens": 100}}}}))
else:
    print(json.dumps({{"response": text, "stats": {{"models": {{"gemini-x": {{"tokens": {{"total": 650}}}}}}}}}}))
'''


@pytest.fixture
def project(code_repo: Path):
    return resolve_project(code_repo)


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`claude`, `codex` and `gemini` on PATH, logging each call to the returned file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "gemini"):
        script = bin_dir / name
        script.write_text(FAKE_CLI.format(python=sys.executable))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "cli-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return log


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def session(project, sid: str = "s-llm-0001") -> str:
    s = Session(project, sid).start().prompt("Add cursor pagination to the orders endpoint")
    s.edit("src/orders.py").bash("uv run pytest -q", "8 passed").stop("Orders now page with a cursor.").end().write()
    return sid


def existing_pages(project) -> None:
    with Memory(project) as memory:
        memory.write("Orders endpoint pagination", "Orders page with offsets.", "decision")
        memory.write("Refunds endpoint pagination", "Refunds page with offsets too.", "decision")


def consolidate_log() -> str:
    path = home() / "logs" / "consolidate.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("backend", ["claude", "codex", "gemini"])
def test_an_agent_cli_as_the_model_proposes_pages_and_additions_and_never_deletes(project, fake_cli, backend):
    existing_pages(project)
    set_config(f'[distill]\nllm = "{backend}"\nbudget = 6000\n')
    consolidate_session(project, session(project))
    (call,) = calls(fake_cli)
    # Our hooks off inside the CLI, no project files in its way, no tools, no MCP servers.
    assert call["disabled"] == "1" and "wiki-memory-distill-" in call["cwd"]
    if backend == "claude":
        assert call["argv"][:5] == ["-p", "--output-format", "json", "--tools", ""]
        assert "--strict-mcp-config" in call["argv"] and "--no-session-persistence" in call["argv"]
    if backend == "codex":
        assert call["argv"][:6] == ["exec", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "--json"]
    assert "Add cursor pagination to the orders endpoint" in call["prompt"]
    assert "[procedure] How to run the tests" in call["prompt"]  # what the evidence found
    assert "decisions/orders-endpoint-pagination.md" in call["prompt"]  # the closest pages
    wiki = project.wiki
    new = (wiki / "decisions/orders-are-paginated-with-a-cursor.md").read_text()
    assert "llm-proposed" in new and "distilled: llm" in new and "opaque cursor" in new
    assert (wiki / "procedures/how-to-run-the-tests.md").exists()  # the evidence's page stands
    shown = "decisions/orders-endpoint-pagination.md"
    updated = (wiki / shown).read_text()
    assert "Orders page with offsets." in updated and "## Added from claude-code:sllm0001" in updated
    assert not (wiki / "decisions/not-shown.md").exists() and not (wiki / "decisions/delete-the-old-page.md").exists()
    assert (wiki / "decisions/refunds-endpoint-pagination.md").exists()  # nothing deleted
    log = consolidate_log()
    assert f"LLM distillation with {backend}:" in log and "tokens" in log
    assert f"distilled (llm:{backend}, " in log
    with Memory(project) as memory:
        flags = memory.review().of_kind("flag")
    assert [set(f.paths) for f in flags] == [{shown, "decisions/refunds-endpoint-pagination.md"}]


@pytest.mark.parametrize("mode", ["sleep", "refuse", "garbage", "exit"])
def test_every_failure_of_the_cli_falls_back_to_the_evidence(project, fake_cli, monkeypatch, mode):
    monkeypatch.setenv("FAKE_CLI_MODE", mode)
    set_config('[distill]\nllm = "claude"\ntimeout = 1\n')
    started = time.monotonic()
    consolidate_session(project, session(project))
    assert time.monotonic() - started < 20
    assert (project.wiki / "procedures/how-to-run-the-tests.md").exists()
    assert not (project.wiki / "decisions").exists()
    log = consolidate_log()
    assert "LLM distillation with claude failed" in log and "distilled (evidence (llm failed)" in log
    if mode == "sleep":
        assert "no answer from claude within 1 s" in log
        pid = calls(fake_cli)[0]["pid"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # killed with its process group, not left running


def test_the_token_budget_is_per_session_and_never_spent_twice(project, fake_cli):
    set_config('[distill]\nllm = "claude"\nbudget = 1800\n')
    sid = session(project)
    consolidate_session(project, sid)
    assert len(calls(fake_cli)) == 1  # 820 tokens spent
    consolidate_session(project, sid, force=True)
    assert len(calls(fake_cli)) == 1  # 980 left: less than a call needs
    assert "llm budget of 1800 tokens spent" in consolidate_log()
    assert len(calls(fake_cli)[0]["prompt"]) < 1800 * 3.5


def test_no_llm_unless_configured_and_never_with_llm_false(project, fake_cli):
    consolidate_session(project, session(project))
    set_config('[distill]\nllm = "claude"\n')
    consolidate_session(project, session(project, "s-llm-0002"), llm=False)
    assert calls(fake_cli) == []


class TwoPromptLLM(FakeLLM):
    """One server for the LLM consolidation and the LLM distillation: each gets its answer."""

    distill_reply = ""

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if "durable knowledge about the" in json.dumps(body):
            saved, self.reply = self.reply, self.distill_reply
            try:
                return super()._answer(path, body)
            finally:
                self.reply = saved
        return super()._answer(path, body)


def _api_config(server: TwoPromptLLM, timeout: int = 10) -> None:
    set_config(
        f'[consolidate]\nprovider = "openai"\nmodel = "m"\nbase_url = "{server.base_url}"\napi_key_env = ""\n'
        f'timeout = {timeout}\n[distill]\nllm = "api"\ntimeout = {timeout}\n'
    )


CONSOLIDATION = json.dumps({"goal": "Add cursor pagination", "title": "cursor pagination", "pages": []})
DISTILL = json.dumps(
    {"pages": [{"type": "gotcha", "title": "Cursor tokens expire after an hour", "body": "Seen in the logs."}]}
)


def test_an_api_as_the_model_and_its_failures(project):
    with TwoPromptLLM("openai") as server:
        server.reply, server.distill_reply = CONSOLIDATION, DISTILL
        _api_config(server)
        consolidate_session(project, session(project))
        assert (project.wiki / "gotchas/cursor-tokens-expire-after-an-hour.md").exists()
        assert "distilled (llm:api, 20 tokens)" in consolidate_log()

        server.refuse = True
        consolidate_session(project, session(project, "s-api-refuse"))
        assert "s-api-refuse: LLM distillation with api failed (the model refused" in consolidate_log()

        server.refuse, server.distill_reply = False, "not json at all"
        consolidate_session(project, session(project, "s-api-garbage"))
        assert "s-api-garbage: LLM distillation with api failed (the model's answer holds no JSON" in consolidate_log()

    with TwoPromptLLM("openai") as slow:
        slow.reply, slow.distill_reply, slow.delay = CONSOLIDATION, DISTILL, 3
        _api_config(slow, timeout=1)
        consolidate_session(project, session(project, "s-api-slow0"))
        assert "s-api-slow0: LLM distillation with api failed (no answer from" in consolidate_log()
    # Each failure still wrote the evidence's pages, and no page the model did not get to propose.
    assert sorted(p.name for p in (project.wiki / "gotchas").glob("*.md")) == ["cursor-tokens-expire-after-an-hour.md"]
    assert "llm:api" not in git(project.wiki, "log", "-1", "--format=%B")
