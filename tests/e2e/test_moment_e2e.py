"""End to end with the real agent CLIs: memory at the moment of action.

Claude Code (and Codex) run with their hooks installed by `wiki-memory install`, against fake
model servers that record every request. A gotcha exists: the model runs its failing command,
and the gotcha arrives in the model's request for that turn (PreToolUse on the shell); the
error comes back after SessionStart already showed the page, and the page arrives again
(PostToolUseFailure); an unrelated command brings nothing; after a compaction the handoff
and the session so far arrive again. A hook that fails or times out lets the command run
unchanged.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_clis import run_claude, run_codex, write_codex_config
from click.testing import CliRunner
from fake_models import FakeAnthropic, FakeResponses, bash, text

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.pages import gotcha_body
from wiki_memory.memory import Memory
from wiki_memory.pages import Page
from wiki_memory.store import Author

GOTCHA = "gotchas/tests-need-shop-db-url.md"
META = {
    "distilled": "gotcha",
    "signature": "KeyError: 'SHOP_DB_URL'",
    "fix": {
        "command": "python3 check.py",
        "dir": ".",
        "files": ["tests/conftest.py"],
        "explanation": "check.py reads SHOP_DB_URL, which the test environment did not set.",
    },
    "occurrences": [{"date": "2026-11-30", "by": "claude-code", "session": "abc", "fixed": True}],
}
# The failing command, for real: it prints the error the gotcha is about and exits 1.
CHECK = (
    "import os, sys\nif 'SHOP_DB_URL' not in os.environ:\n    print(\"E   KeyError: 'SHOP_DB_URL'\")\n    sys.exit(1)\n"
)


def _install(*args: str) -> None:
    result = CliRunner().invoke(main, ["install", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _strings(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _memory(repo: Path, handoff: bool = True) -> None:
    (repo / "check.py").write_text(CHECK)
    with Memory(resolve_project(repo)) as memory:
        memory.store(create=True).write_many(
            [Page.new("Tests need SHOP_DB_URL", "gotcha", gotcha_body("Tests need SHOP_DB_URL", META), extra=META)],
            Author.agent("test"),
        )
        memory.reindex(embed=False)
        if handoff:
            memory.handoff_write(
                "Moving the checkout to the new payment provider; the refunds endpoint is left.",
                next_steps=["Port the refunds endpoint to the new provider client"],
            )


def _count(request: Any, marker: str) -> int:
    return _strings(request.body.get("messages") or request.body.get("input")).count(marker)


def test_claude_code_hands_the_gotcha_before_its_command_and_again_when_it_recurs(agent_clis, code_repo):
    home = Path.home()
    _memory(code_repo)
    _install("claude-code")
    script = [
        bash("python3 check.py", "Running the check."),
        bash("python3 check.py --verbose", "Once more."),
        bash("ls", "Listing."),
        text("Done."),
    ]
    with FakeAnthropic(script) as model:
        result = run_claude(agent_clis, ["-p", "run the check"], cwd=code_repo, home=home, base_url=model.url)
        assert result.returncode == 0, result.stderr[-2000:]
    turns = model.turn_requests
    assert len(turns) == 4

    def blocks(turn: Any) -> tuple[int, int, int]:
        return (
            _count(turn, "before `python3 check.py`"),
            _count(turn, "this error was met before"),
            _count(turn, "<wiki-memory recall"),
        )

    # SessionStart showed the gotcha already (it hands gotchas), with the handoff.
    first = _strings(turns[0].body)
    assert GOTCHA in first and "Moving the checkout" in first
    assert [blocks(t) for t in turns] == [
        (0, 0, 0),
        (1, 1, 2),  # before the command ran, and after its error: the gotcha, each time
        (1, 1, 2),  # the same command and error again: once per page on a command, once per signature
        (1, 1, 2),  # `ls`: nothing
    ]
    after = _strings(turns[1].body["messages"])
    assert f"- {GOTCHA}:" in after and "tests/conftest.py" in after


def test_claude_code_after_a_compaction_hands_the_handoff_and_the_session_so_far(agent_clis, code_repo):
    home = Path.home()
    _memory(code_repo)
    _install("claude-code")
    session = str(uuid.uuid4())
    script = [bash("python3 check.py", "Running the check."), text("It failed.")]
    with FakeAnthropic(script, default=text("Summary of the conversation so far.")) as model:
        result = run_claude(agent_clis, ["-p", "run the shop check", "--session-id", session], cwd=code_repo,
                            home=home, base_url=model.url)  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
        compact = run_claude(agent_clis, ["-p", "/compact", "--resume", session], cwd=code_repo, home=home,
                             base_url=model.url)  # fmt: skip
        assert compact.returncode == 0, compact.stderr[-2000:]
        result = run_claude(agent_clis, ["-p", "what next?", "--resume", session], cwd=code_repo, home=home,
                            base_url=model.url)  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
    project = resolve_project(code_repo)
    journal = [json.loads(line) for line in (project.journal_dir / f"{session}.jsonl").read_text().splitlines()]
    assert any(o["kind"] == "compact" for o in journal)  # PreCompact ran: the checkpoint
    assert (project.home / "consolidate" / "checkpoints" / f"{session}.json").is_file()
    last = _strings(model.turn_requests[-1].body)
    assert "<wiki-memory this session so far" in last and "run the shop check" in last
    assert "Moving the checkout" in last  # the handoff again


@pytest.mark.parametrize("fault", ["fails", "hangs"])
def test_a_command_hook_that_fails_or_times_out_lets_the_command_run(agent_clis, code_repo, fault):
    home = Path.home()
    _memory(code_repo, handoff=False)
    _install("claude-code")
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    [group] = [g for g in data["hooks"]["PreToolUse"] if "Bash" in g["matcher"]]
    handler = group["hooks"][0]
    # A hook that crashes, or one that outlives its timeout: the command runs unchanged.
    handler["command"] = "exit 1" if fault == "fails" else f"sleep 30; {handler['command']}"
    handler["timeout"] = 2
    settings.write_text(json.dumps(data))
    marker = code_repo / "ran.txt"
    script = [bash(f"echo ran > {marker}; python3 check.py", "Running."), text("Done.")]
    with FakeAnthropic(script) as model:
        run = run_claude(agent_clis, ["-p", "run the check"], cwd=code_repo, home=home, base_url=model.url)
    assert run.returncode == 0, run.stderr[-2000:]
    assert marker.read_text().strip() == "ran"
    after = _strings(model.turn_requests[-1].body["messages"])
    assert "KeyError: 'SHOP_DB_URL'" in after and "before `" not in after


def test_codex_hands_the_gotcha_before_its_shell_command(agent_clis, code_repo, tmp_path):
    home, codex_home = Path.home(), tmp_path / "codex-home"
    _memory(code_repo, handoff=False)
    with FakeResponses([bash("python3 check.py", "Running the check."), text("It failed.")]) as model:
        write_codex_config(codex_home, model.url)
        _install_env("codex", "--codex", str(agent_clis.codex), env={"CODEX_HOME": str(codex_home)})
        args = ["exec", "--skip-git-repo-check", "run the check"]
        result = run_codex(agent_clis, args, cwd=code_repo, home=home, codex_home=codex_home)
        assert result.returncode == 0, result.stderr[-2000:]
    after = _strings(model.turn_requests[-1].body.get("input"))
    assert "before `python3 check.py`" in after
    # Codex's PostToolUse after the failed command: the error's gotcha too.
    assert "this error was met before" in after


def _install_env(*args: str, env: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["install", *args], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
