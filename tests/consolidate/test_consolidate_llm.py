"""LLM consolidation against fake OpenAI-compatible and Anthropic servers on 127.0.0.1 (real HTTP)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from fake_llm import FakeLLM
from journals import Session, set_config

from wiki_memory.config import home, resolve_project

GOOD = {
    "title": "Login test flake fixed by refreshing before the retry",
    "goal": "Stop test_login_refresh from failing one run in ten with a 401.",
    "done": ["Moved the token refresh ahead of the retry in src/auth/client.py; 50 runs passed."],
    "failed": ["Raising the retry delay to 2 s did not help (still 5 failures in 50)."],
    "open": ["src/auth/admin_client.py has the same ordering and was not changed."],
    "summary": "The session traced the 401 to a retry that reused an expired token, fixed the order, and "
    "confirmed it with 50 consecutive runs.",
    "pages": [
        {
            "type": "gotcha",
            "title": "JWT refresh must happen before the retry",
            "body": "A retry after a 401 reuses the expired token unless the refresh runs first.",
            "tags": ["auth", "flaky-tests"],
        },
        {"type": "essay", "title": "Not a durable page type", "body": "ignored"},
    ],
}


@pytest.fixture
def project(code_repo: Path):
    project = resolve_project(code_repo)
    s = Session(project, "llm-sess-0001").start().prompt("Fix the flaky login test (401 one run in ten)")
    s.bash("pytest -k login --count 50", "E   AssertionError: 401 != 200", error=True)
    s.bash("export API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 && true", "")
    s.edit("src/auth/client.py").bash("pytest -k login --count 50", "50 passed")
    s.stop("Fixed: refresh before retry.").end().write()
    return project


def configure(server: FakeLLM, provider: str, timeout: float = 5) -> None:
    set_config(
        f'[consolidate]\nprovider = "{provider}"\nmodel = "test-model"\nbase_url = "{server.base_url}"\n'
        f'api_key_env = "WM_TEST_LLM_KEY"\ntimeout = {timeout}\n'
    )


def log_text() -> str:
    path = home() / "logs" / "consolidate.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_good_output_words_the_pages_and_proposes_durable_ones(project, provider, monkeypatch):
    monkeypatch.setenv("WM_TEST_LLM_KEY", "sk-test-key")
    with FakeLLM(provider) as server:
        server.reply = json.dumps(GOOD) if provider == "openai" else "```json\n" + json.dumps(GOOD) + "\n```"
        configure(server, provider)
        outcome = consolidate_session(project, "llm-sess-0001")
    assert outcome.status == "committed" and outcome.mode == f"llm:{provider}:test-model"
    [request] = server.requests
    if provider == "openai":
        assert request["path"] == "/v1/chat/completions"
        assert request["headers"]["authorization"] == "Bearer sk-test-key"
        messages = request["body"]["messages"]
        assert [m["role"] for m in messages] == ["system", "user"]
        prompt = messages[1]["content"]
        assert request["body"]["response_format"] == {"type": "json_object"}
    else:
        assert request["path"] == "/v1/messages"
        assert request["headers"]["x-api-key"] == "sk-test-key"
        assert request["headers"]["anthropic-version"] == "2023-06-01"
        prompt = request["body"]["messages"][0]["content"]
        assert "JSON" in request["body"]["system"]
    assert request["body"]["model"] == "test-model"
    # The model reads the session, fenced as data.
    assert "Fix the flaky login test" in prompt and "pytest -k login --count 50" in prompt
    assert "<session-record>" in prompt and "src/auth/client.py" in prompt
    handoff = (project.wiki / outcome.handoff).read_text()
    assert "Stop test_login_refresh from failing one run in ten" in handoff
    assert "Raising the retry delay to 2 s did not help" in handoff
    assert "`src/auth/client.py`" in handoff  # files stay the recorded facts
    assert "[[gotchas/jwt-refresh-must-happen-before-the-retry.md]]" in handoff
    session_page = (project.wiki / outcome.pages[0]).read_text()
    assert "## Summary" in session_page and "expired token" in session_page
    assert "## Commands" in session_page  # the extractive facts stay on the session page
    gotcha = (project.wiki / "gotchas/jwt-refresh-must-happen-before-the-retry.md").read_text()
    assert "sources: ['claude-code:llmsess0']" in gotcha or "claude-code:llmsess0" in gotcha
    assert "llm-proposed" in gotcha and "[[sessions/2026/11/2026-11-30-claude-code-llmsess0.md]]" in gotcha
    assert not (project.wiki / "notes").exists()  # the invalid proposal was dropped
    shown = git(project.wiki, "show", "--name-only", "--format=", "HEAD").split()
    assert len(shown) == 3  # session, handoff and the gotcha: one commit


def test_the_model_gets_redacted_text_only(project, monkeypatch):
    monkeypatch.setenv("WM_TEST_LLM_KEY", "k")
    with FakeLLM("openai") as server:
        server.reply = json.dumps(GOOD)
        configure(server, "openai")
        consolidate_session(project, "llm-sess-0001")
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in json.dumps(server.requests[0]["body"])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("failure", ["malformed", "not-json", "refusal", "timeout", "http-500", "no-key"])
def test_any_failure_falls_back_to_the_extractive_pages_and_says_so(project, provider, failure, monkeypatch):
    if failure != "no-key":
        monkeypatch.setenv("WM_TEST_LLM_KEY", "k")
    else:
        monkeypatch.delenv("WM_TEST_LLM_KEY", raising=False)
    with FakeLLM(provider) as server:
        server.reply = {
            "malformed": json.dumps({"goal": 42, "done": "not a list"}),
            "not-json": "Sure! Here is the summary you asked for.",
        }.get(failure, json.dumps(GOOD))
        server.refuse = failure == "refusal"
        server.delay = 3 if failure == "timeout" else 0
        server.status = 500 if failure == "http-500" else 200
        configure(server, provider, timeout=0.5)
        outcome = consolidate_session(project, "llm-sess-0001")
    if failure == "no-key" and provider == "openai":
        # A local OpenAI-compatible server (Ollama, LM Studio) needs no key: the request goes out keyless.
        assert outcome.mode == "llm:openai:test-model"
        assert "authorization" not in server.requests[0]["headers"]
        return
    assert outcome.status == "committed" and outcome.mode == "extractive (llm failed)"
    handoff = (project.wiki / outcome.handoff).read_text()
    assert "Fix the flaky login test" in handoff and "`pytest -k login --count 50` failed at first" in handoff
    assert not (project.wiki / "gotchas").exists()
    line = [line for line in log_text().splitlines() if "LLM consolidation" in line][-1]
    assert "failed" in line and f"{provider}:test-model" in line and "extractive" in line
    expected = {
        "malformed": "'goal'",
        "not-json": "no JSON object",
        "refusal": "refused",
        "timeout": "within 0.5 s",
        "http-500": "HTTP 500",
        "no-key": "WM_TEST_LLM_KEY",
    }[failure]
    assert expected in line


def test_no_llm_flag_and_a_misconfigured_provider(project, monkeypatch):
    from wiki_memory.errors import WikiMemoryError

    with FakeLLM("openai") as server:
        server.reply = json.dumps(GOOD)
        configure(server, "openai")
        outcome = consolidate_session(project, "llm-sess-0001", llm=False)
        assert outcome.mode == "extractive" and server.requests == []
    set_config('[consolidate]\nprovider = "gemini"\nmodel = "x"\n')
    with pytest.raises(WikiMemoryError, match="provider = 'gemini'"):
        consolidate_session(project, "llm-sess-0001", llm=True, force=True)
    # From a hook (no flag), a bad config falls back and is logged, never raised.
    outcome = consolidate_session(project, "llm-sess-0001", force=True)
    assert outcome.mode == "extractive" and "misconfigured" in log_text()
    set_config("")
    with pytest.raises(WikiMemoryError, match="--llm needs a provider"):
        consolidate_session(project, "llm-sess-0001", llm=True, force=True)
    assert os.environ.get("WM_TEST_LLM_KEY") is None


def test_openai_compatible_is_the_openai_chat_api_at_any_base_url():
    """`provider = "openai-compatible"`, as `[index]` says it, is the chat completions API
    of any server (a local model), at the base URL given."""
    from wiki_memory.config import Settings
    from wiki_memory.consolidate.llm import llm_config

    section = {"provider": "openai-compatible", "model": "qwen2.5-coder:7b", "base_url": "http://127.0.0.1:8080/v1/"}
    config = llm_config(Settings({"consolidate": section}))
    assert config is not None
    assert (config.provider, config.base_url, config.api_key_env) == (
        "openai",
        "http://127.0.0.1:8080/v1",
        "OPENAI_API_KEY",
    )
