"""An agent CLI the user is already signed in to, used as the model: `claude -p`, `codex
exec`, `gemini -p`. No API key is needed: the CLI brings its own sign-in.

Each runs once per call, in an empty temporary directory (it reads none of the project's
files or instructions), with no tools, no MCP servers and no session kept where the CLI
allows it, and with `WIKI_MEMORY_DISABLE=1` in its environment: the CLI's own hooks (ours,
if the user installed them) then record nothing and start no consolidation, so a
consolidation never starts another one. A call that outlives its timeout is killed with its
whole process group.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from wiki_memory.consolidate.llm import LLMError

BACKENDS = ("claude", "codex", "gemini")
DISABLE_VAR = "WIKI_MEMORY_DISABLE"


def _command(backend: str, program: str, model: str | None, out_file: str) -> tuple[list[str], bool]:
    """(argv, prompt on stdin?) for one backend."""
    if backend == "claude":
        argv = [program, "-p", "--output-format", "json", "--tools", "", "--strict-mcp-config",
                "--no-session-persistence", "--max-turns", "1"]  # fmt: skip
        return argv + (["--model", model] if model else []), True
    if backend == "codex":
        argv = [program, "exec", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "--json",
                "-o", out_file]  # fmt: skip
        return argv + (["-m", model] if model else []) + ["-"], True
    argv = [program, "--output-format", "json"] + (["-m", model] if model else [])
    return argv + ["-p"], False


def run(
    backend: str,
    prompt: str,
    *,
    program: str | None = None,
    model: str | None = None,
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
) -> tuple[str, int]:
    """(the model's answer, tokens spent: 0 when the CLI does not say) for one prompt."""
    if backend not in BACKENDS:
        raise LLMError(f"unknown agent CLI {backend!r}: one of {', '.join(BACKENDS)}")
    found = shutil.which(program or backend)
    if found is None:
        raise LLMError(f"`{program or backend}` is not on PATH")
    with tempfile.TemporaryDirectory(prefix="wiki-memory-distill-") as workdir:
        out_file = os.path.join(workdir, "answer.txt")
        argv, on_stdin = _command(backend, found, model, out_file)
        if not on_stdin:
            argv.append(prompt)
        full_env = {**(env if env is not None else os.environ), DISABLE_VAR: "1"}
        stdout, stderr, code = _run(argv, prompt if on_stdin else "", workdir, full_env, timeout)
        if code != 0:
            detail = " ".join((stderr or stdout).split())[-300:]
            raise LLMError(f"`{backend}` exited with {code}: {detail or 'no output'}")
        if backend == "claude":
            return _claude_answer(stdout)
        if backend == "codex":
            return _codex_answer(stdout, out_file)
        return _gemini_answer(stdout)


def _run(argv: Sequence[str], stdin: str, cwd: str, env: Mapping[str, str], timeout: float) -> tuple[str, str, int]:
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: a timeout kills what it started too
        )
    except OSError as e:
        raise LLMError(f"cannot start {argv[0]}: {e}") from None
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()
        process.communicate()
        raise LLMError(f"no answer from {os.path.basename(argv[0])} within {timeout:g} s") from None
    return stdout, stderr, process.returncode


def _claude_answer(stdout: str) -> tuple[str, int]:
    """`claude -p --output-format json`: one result object."""
    data = _last_json_object(stdout)
    if data.get("is_error") or data.get("subtype") not in (None, "success"):
        raise LLMError(f"claude answered with an error: {str(data.get('result') or data.get('subtype'))[:200]}")
    result = data.get("result")
    if not isinstance(result, str) or not result.strip():
        raise LLMError("claude's answer has no result text")
    return result, _tokens(data.get("usage"))


def _tokens(usage: Any) -> int:
    """input + output tokens of a usage object (0 when it says nothing)."""
    if not isinstance(usage, dict):
        return 0
    return sum(v for k in ("input_tokens", "output_tokens") if isinstance(v := usage.get(k), int))


def _codex_answer(stdout: str, out_file: str) -> tuple[str, int]:
    """`codex exec --json -o FILE`: events on stdout, the last message in FILE."""
    tokens = 0
    text = ""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        usage = event.get("usage")
        if event.get("type") == "turn.completed" and isinstance(usage, dict):
            tokens += sum(
                int(usage.get(k) or 0) for k in ("input_tokens", "output_tokens") if isinstance(usage.get(k), int)
            )
        if event.get("type") == "turn.failed" or event.get("type") == "error":
            raise LLMError(f"codex failed: {str(event.get('error') or event.get('message'))[:200]}")
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            text = item["text"]
    try:
        with open(out_file, encoding="utf-8") as f:
            text = f.read() or text
    except OSError:
        pass
    if not text.strip():
        raise LLMError("codex gave no answer")
    return text, tokens


def _gemini_answer(stdout: str) -> tuple[str, int]:
    """`gemini --output-format json`: {"response": ..., "stats": ..., "error": ...}."""
    data = _last_json_object(stdout)
    if data.get("error"):
        raise LLMError(f"gemini answered with an error: {str(data['error'])[:200]}")
    response = data.get("response")
    if not isinstance(response, str) or not response.strip():
        raise LLMError("gemini's answer has no response text")
    return response, _gemini_tokens(data.get("stats"))


def _gemini_tokens(stats: Any) -> int:
    total = 0
    models = stats.get("models") if isinstance(stats, dict) else None
    for model in (models or {}).values() if isinstance(models, dict) else ():
        tokens = model.get("tokens") if isinstance(model, dict) else None
        if isinstance(tokens, dict) and isinstance(tokens.get("total"), int):
            total += tokens["total"]
    return total


def _last_json_object(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
        for line in reversed(text.splitlines()):
            try:
                data = json.loads(line)
                break
            except ValueError:
                continue
    if isinstance(data, list):  # a stream of messages: the result is the last
        data = data[-1] if data else None
    if not isinstance(data, dict):
        raise LLMError("the CLI's output is not the JSON it was asked for")
    return data
