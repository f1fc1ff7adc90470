"""End to end with the real Claude Code CLI: a session ends, its consolidation distils it
with `claude -p` as the model (the agent CLI as the LLM), and that inner `claude` never runs
our hooks: no journal, no consolidation of its own, no second distillation.

Both the outer session and the inner `claude -p` talk to one fake Anthropic server on
127.0.0.1; the inner one is told apart by the distillation prompt it carries."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from agent_clis import run_claude
from click.testing import CliRunner
from conftest import git
from fake_models import FakeAnthropic, RecordedRequest, Reply, bash, text
from journals import set_config

from wiki_memory.cli import main
from wiki_memory.config import home, resolve_project

ANSWER = {
    "pages": [
        {
            "type": "decision",
            "title": "Widget totals are computed with integer cents",
            "body": "Totals add integer cents; floats rounded wrongly (the session's test showed 9 != 10).",
        }
    ],
    "contradictions": [],
}


class DistillingModel(FakeAnthropic):
    """The outer session's script, and the distillation's answer for the inner `claude -p`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.distill_requests: list[RecordedRequest] = []

    def _record(self, request: RecordedRequest, is_turn: bool) -> Reply:
        if "durable knowledge about the" in json.dumps(request.body):
            with self._lock:
                self.requests.append(request)
                self.distill_requests.append(request)
            return text(json.dumps(ANSWER))
        return super()._record(request, is_turn)


def _logs() -> str:
    folder = home() / "logs"
    return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(folder.glob("*.log")))


def _wait_for(what: str, timeout: float = 120) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        path = home() / "logs" / "consolidate.log"
        if path.exists() and what in path.read_text():
            return path.read_text()
        time.sleep(0.2)
    raise AssertionError(f"{what!r} never appeared; logs:\n{_logs()}")


def test_the_agent_cli_as_model_never_runs_our_hooks_recursively(agent_clis, code_repo):
    result = CliRunner().invoke(main, ["install", "claude-code"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    set_config(f'[distill]\nllm = "claude"\nprogram = "{agent_clis.claude}"\ntimeout = 120\n')
    with DistillingModel(
        [bash("python3 -c \"print('12 passed in 0.31s')\"", "Running the tests."), text("The tests pass.")]
    ) as model:
        result = run_claude(
            agent_clis,
            ["-p", "Make widget totals use integer cents"],
            cwd=code_repo,
            home=Path.home(),
            base_url=model.url,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        log = _wait_for("distilled (llm:claude")
        time.sleep(3)  # time for anything the inner claude might (wrongly) have started
    project = resolve_project(code_repo)
    # The real claude ran as the model, once, with no tools to call.
    assert len(model.distill_requests) == 1, _logs()
    assert not model.distill_requests[0].get("tools")
    page = project.wiki / "decisions/widget-totals-are-computed-with-integer-cents.md"
    assert page.exists() and "llm-proposed" in page.read_text()
    # Nothing recorded the inner claude: one journal (the outer session's) in any project,
    # one consolidation, one distillation.
    journals = sorted(p.name for p in (home() / "projects").glob("*/journal/*.jsonl"))
    assert len(journals) == 1, journals
    assert log.count("): sessions/") == 1 and log.count("distilled (") == 1, log
    assert len(list((home() / "projects").glob("*/wiki"))) == 1
    distill = git(project.wiki, "log", "--format=%an|%s", "--grep", "distill:").splitlines()
    assert len(distill) == 1 and distill[0].startswith("claude-code|distill: claude-code session ")
