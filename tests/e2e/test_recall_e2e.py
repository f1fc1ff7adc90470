"""End to end with the real agent CLIs: recall in a session of several prompts.

Claude Code, Codex and Gemini CLI run with their hooks installed by `wiki-memory install`,
against fake model servers that record every request. One session, resumed prompt after prompt: an
acknowledgement adds nothing; the page relevant to the second prompt arrives in the model's
request for that turn, and not again on the third; a read (Claude Code) or a patch (Codex)
of an anchored file brings that file's page once. A hook that fails, or runs out of time,
lets the prompt through unchanged.
"""

from __future__ import annotations

import html
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_clis import run_claude, run_codex, run_gemini, write_codex_config, write_gemini_settings
from click.testing import CliRunner
from fake_models import FakeAnthropic, FakeGemini, FakeResponses, text, tool_call

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.memory import Memory
from wiki_memory.pages import Page
from wiki_memory.store import Author

PROCEDURE = "procedures/run-the-login-tests-against-the-fake-identity-provider.md"
FACT = "facts/session-cookies-are-signed-with-the-rotating-key.md"
OPEN = "<wiki-memory recall"


def _install(*args: str, env: dict[str, str] | None = None) -> None:
    result = CliRunner().invoke(main, ["install", *args], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _strings(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _memory(repo: Path) -> None:
    """Two pages SessionStart does not hand over (a procedure and a fact; it hands decisions
    and gotchas), the fact anchored to src/auth/client.py."""
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "client.py").write_text("def login():\n    return sign(cookie)\n")
    with Memory(resolve_project(repo)) as memory:
        memory.store(create=True).write_many(
            [
                Page.new(
                    "Run the login tests against the fake identity provider",
                    "procedure",
                    "**When**: the login tests fail with 401 Unauthorized on a laptop.\n\n**Steps**: start the fake "
                    "identity provider with `make idp-up` (port 8181), then run `pytest tests/test_login.py`.",
                ),
                Page.new(
                    "Session cookies are signed with the rotating key",
                    "fact",
                    "The session cookie is signed in `src/auth/client.py` with the key from `AUTH_SIGNING_KEY`; "
                    "keys rotate every 30 days.",
                    extra={"anchors": ["src/auth/client.py"]},
                ),
            ],
            Author.agent("test"),
        )
        memory.reindex(embed=False)


def _count(request: Any, marker: str) -> int:
    """How often `marker` is in what a turn request hands the model (history included: each
    request carries the whole conversation, so a block handed once is counted once from then on)."""
    return _strings(request.body.get("messages") or request.body.get("input")).count(marker)


def _blocks(turns: list[Any], *pages: str) -> list[tuple[int, ...]]:
    """Per turn request: the recall blocks in it, then the entries of each page in them."""
    return [(_count(t, OPEN), *(_count(t, page + ":") for page in pages)) for t in turns]


def test_claude_code_recalls_once_per_prompt_and_per_file(agent_clis, code_repo):
    home = Path.home()
    _memory(code_repo)
    _install("claude-code")
    session = str(uuid.uuid4())
    client = str(code_repo / "src" / "auth" / "client.py")
    script = [
        text("Hello."),
        text("Let me look at the login tests."),
        tool_call("Read", {"file_path": client}),
        tool_call("Read", {"file_path": client}),
        text("The cookie signing looks right."),
    ]
    prompts = [
        ["-p", "ok", "--session-id", session],
        ["-p", "the login tests fail with 401 Unauthorized right now", "--resume", session],
        ["-p", "they fail with a 401 on CI as well, check how the login signs things", "--resume", session],
    ]
    with FakeAnthropic(script) as model:
        for args in prompts:
            result = run_claude(agent_clis, args, cwd=code_repo, home=home, base_url=model.url)
            assert result.returncode == 0, result.stderr[-2000:]
    turns = model.turn_requests
    assert len(turns) == 5
    assert _blocks(turns, PROCEDURE, FACT) == [
        (0, 0, 0),  # "ok": an acknowledgement adds nothing
        (1, 1, 0),  # the second prompt's page arrives in that turn's request
        (1, 1, 0),  # the third prompt shares its words: nothing handed again
        (2, 1, 1),  # the Read of the anchored file brings its page
        (2, 1, 1),  # the second Read of it brings nothing
    ]
    second = _strings(turns[1].body["messages"])
    assert "make idp-up" in second and "</wiki-memory recall>" in second
    assert "about src/auth/client.py" in _strings(turns[3].body["messages"])


def test_codex_recalls_through_user_prompt_submit_and_apply_patch(agent_clis, code_repo, tmp_path):
    home, codex_home = Path.home(), tmp_path / "codex-home"
    _memory(code_repo)
    patch = (
        "*** Begin Patch\n*** Update File: src/auth/client.py\n@@\n-def login():\n+def login(user):\n*** End Patch\n"
    )
    script = [
        text("Hello."),
        text("Let me look at the login tests."),
        tool_call("apply_patch", {"input": patch}),
        text("Patched."),
    ]
    with FakeResponses(script) as model:
        write_codex_config(codex_home, model.url)
        _install("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        runs = [
            ["exec", "--skip-git-repo-check", "ok"],
            ["exec", "--skip-git-repo-check", "resume", "--last", "the login tests fail with 401 Unauthorized now"],
            ["exec", "--skip-git-repo-check", "resume", "--last", "they fail with a 401 on CI too, fix the login"],
        ]
        for args in runs:
            result = run_codex(agent_clis, args, cwd=code_repo, home=home, codex_home=codex_home)
            assert result.returncode == 0, result.stderr[-2000:]
    assert _blocks(model.turn_requests, PROCEDURE, FACT) == [(0, 0, 0), (1, 1, 0), (1, 1, 0), (2, 1, 1)]


@pytest.mark.parametrize("fault", ["fails", "hangs"])
def test_a_failing_or_slow_prompt_hook_lets_the_prompt_through(agent_clis, code_repo, fault):
    home = Path.home()
    _memory(code_repo)
    _install("claude-code")
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    group = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    # A hook that crashes, or one that outlives its timeout: Claude Code goes on without it.
    group["command"] = "exit 1" if fault == "fails" else f"sleep 30; {group['command']}"
    group["timeout"] = 2
    settings.write_text(json.dumps(data))
    prompt = "the login tests fail with 401 Unauthorized right now"
    with FakeAnthropic([text("On it.")]) as model:
        result = run_claude(agent_clis, ["-p", prompt], cwd=code_repo, home=home, base_url=model.url, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    seen = _strings(model.turn_requests[0].body["messages"])
    assert prompt in seen and OPEN not in seen


def test_gemini_recalls_before_the_agent_and_after_a_read(agent_clis, code_repo):
    """Gemini CLI: BeforeAgent hands the prompt's page into the turn's request; AfterTool on a
    read of the anchored file appends that file's page to the tool's result; an
    acknowledgement, in a session of its own, gets nothing."""
    home = Path.home()
    _memory(code_repo)
    _install("gemini")
    write_gemini_settings(home, trusted=[code_repo])
    client = str(code_repo / "src" / "auth" / "client.py")
    model_args = ["-m", "gemini-2.5-pro"]
    with FakeGemini([text("Fine.")]) as ack_model:
        result = run_gemini(agent_clis, [*model_args, "-p", "ok"], cwd=code_repo, home=home, base_url=ack_model.url)
    assert result.returncode == 0, result.stderr[-3000:]
    with FakeGemini([tool_call("read_file", {"file_path": client}), text("The signing looks right.")]) as model:
        prompt = "the login tests fail with 401 Unauthorized right now"
        result = run_gemini(agent_clis, [*model_args, "-p", prompt], cwd=code_repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr[-3000:]

    # Gemini CLI escapes < and > in a hook's context before the model sees it.
    assert "wiki-memory recall" not in _strings(ack_model.turn_requests[0].body["contents"])
    first, second = (html.unescape(_strings(t.body["contents"])) for t in model.turn_requests)
    assert first.count(OPEN) == 1 and PROCEDURE + ":" in first and "make idp-up" in first
    assert FACT + ":" not in first  # the prompt is about the tests, not the cookie
    assert second.count(OPEN) == 2 and FACT + ":" in second and "about src/auth/client.py" in second
