"""`wiki-memory hook AGENT [EVENT]`: one hook call, from stdin to the session's journal.

The run, in order: read the payload (bounded), find the event, let the agent's adapter turn
it into observations, redact them, append them to the journal of the project resolved from
the payload's `cwd`; on SessionStart print the handoff in the agent's envelope; on a prompt,
or a file tool call, print the memory pages recall finds for it (`hook/recall.py`); on the
session's end start consolidation. Every step runs inside one guard: whatever goes wrong
(bad JSON, an unknown agent, a full disk, a bug of ours), the hook prints nothing the agent
could misread, logs one line under `WIKI_MEMORY_HOME/logs/`, and exits 0.

Imports: the standard library, `config`, `capture` and the light parts of `consolidate`
only (start-up time is the budget): this process sits above capture and consolidation.
"""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, BinaryIO

    from wiki_memory.capture.observation import Observation
    from wiki_memory.config import Project


DISABLE_VAR = "WIKI_MEMORY_DISABLE"  # set (not "0"): every hook call records nothing and prints nothing
MAX_PAYLOAD = 64 * 1024 * 1024  # bytes read from stdin; a larger payload is drained and skipped
#: SessionStart sources that mean the agent's context was just compacted (Claude Code: `compact`).
COMPACTED_SOURCES = ("compact",)


class Skip(Exception):
    """A hook call that records nothing, for a reason worth one log line."""


def main(
    argv: list[str] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run one hook call; always returns 0 (the agent must never see us fail)."""
    argv = list(sys.argv[2:] if argv is None else argv)
    env = os.environ if env is None else env
    agent = argv[0] if argv else ""
    event = argv[1] if len(argv) > 1 else None
    started = time.monotonic()
    try:
        if stdin is None:
            stdin = sys.stdin.buffer if sys.stdin is not None and not sys.stdin.isatty() else None
        raw = read_payload(stdin)
        if env.get(DISABLE_VAR, "").strip() not in ("", "0"):
            # Trigger: an agent CLI that wiki-memory itself runs as a model (LLM distillation).
            # Why: its hooks are ours too; recording it would start a consolidation from inside one.
            return 0
        output = run(agent, event, raw, env)
        if output is not None:
            out = stdout or sys.stdout.buffer
            out.write(output)
            out.flush()
    except Skip as e:
        log(env, agent, event, str(e), started)
    except BaseException as e:  # noqa: BLE001 - the guard: nothing may reach the agent
        if isinstance(e, KeyboardInterrupt):
            return 0
        log(env, agent, event, f"{type(e).__name__}: {e}", started)
    return 0


def read_payload(stdin: BinaryIO | None) -> bytes:
    """All of stdin up to MAX_PAYLOAD; a larger payload is drained (so the agent's write
    never fails on a closed pipe) and refused."""
    if stdin is None:
        return b""
    chunks, size = [], 0
    while True:
        chunk = stdin.read(1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size <= MAX_PAYLOAD:
            chunks.append(chunk)
    if size > MAX_PAYLOAD:
        raise Skip(f"payload of {size:,} bytes is over the {MAX_PAYLOAD:,}-byte limit; skipped")
    return b"".join(chunks)


def parse_payload(raw: bytes) -> dict[str, Any]:
    """The payload as a dict, or Skip."""
    if not raw.strip():
        raise Skip("empty payload")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise Skip(f"payload is not JSON ({type(e).__name__} at {getattr(e, 'pos', '?')})") from None
    if not isinstance(payload, dict):
        raise Skip(f"payload is a JSON {type(payload).__name__}, not an object")
    return payload


def run(agent: str, event: str | None, raw: bytes, env: Mapping[str, str]) -> bytes | None:
    """Record one hook call; returns what to print (SessionStart's handoff, recalled pages) or None."""
    from wiki_memory import config
    from wiki_memory.capture import adapter as adapters
    from wiki_memory.hook import startup

    try:
        adapter = adapters.load(agent)
    except KeyError:
        raise Skip(f"unknown agent {agent!r} (known: {', '.join(adapters.AGENTS)})") from None
    payload = parse_payload(raw)
    name = adapter.resolve_event(event, payload)
    if name is None:
        raise Skip(f"unknown event {event or payload.get('hook_event_name')!r} for {adapter.name}")
    observations = adapter.parse(name, payload)
    session_id = adapter.session_id(payload)
    if session_id is None:
        raise Skip(f"{name} payload has no session id")
    cwd = adapter.cwd(payload)
    project = config.resolve_project(cwd if cwd and os.path.isdir(cwd) else None, env)
    if observations:
        journal_redacted(project, observations, env)
    kinds = {o.kind for o in observations}
    if "compact" in kinds:
        from wiki_memory.hook import compaction

        compaction.checkpoint(project, session_id)
    if project.warning and "session-start" in kinds:
        log(env, agent, name, project.warning, time.monotonic())  # `doctor` shows it too
    if any(o.kind == "tool" and "wiki" in f"{o.tool} {o.input}".lower() for o in observations):
        from wiki_memory.hook import recall

        recall.note_own_writes(project, session_id, observations)
    if "session-start" in kinds:
        from wiki_memory.hook import recall

        source = payload.get("source") if isinstance(payload.get("source"), str) else None
        if source in COMPACTED_SOURCES:
            from wiki_memory.hook import compaction
            from wiki_memory.recall import seen

            # The model's context lost what was handed before: all of it may come again.
            seen.reset(project, session_id)
        text = startup.with_branch_handoff(
            project, startup.session_start_text(project, adapter.name, session_id, source)
        )
        if source in COMPACTED_SOURCES:
            own = compaction.session_so_far(project, session_id)
            text = "\n\n".join(t for t in (text, own) if t) or None
        from wiki_memory.hook import health

        broken = health.line(project, session_id, env)
        text = "\n\n".join(t for t in (text, broken) if t) or None
        recall.after_session_start(project, session_id, text, env)
        if text:
            recall.record_start(adapter, name, project, session_id, cwd, text, env)
            return (json.dumps(adapter.envelope(name, text)) + "\n").encode("utf-8")
    texts: list[str] = []
    if name in adapter.recall_command_events:
        from wiki_memory.hook import moment

        texts.append(moment.before_command(adapter, name, payload, project, session_id, env) or "")
    if name in adapter.recall_error_events and any(o.error for o in observations):
        from wiki_memory.hook import moment

        texts.append(moment.after_error(adapter, name, observations, project, session_id, env) or "")
    if name in adapter.recall_prompt_events or name in adapter.recall_file_events:
        from wiki_memory.hook import recall

        texts.append(recall.answer(adapter, name, payload, project, session_id, env) or "")
    if name in adapter.end_events:
        startup.after_session(project, adapter.name, session_id)
    text = "\n".join(t for t in texts if t)
    if text:
        return (json.dumps(adapter.envelope(name, text)) + "\n").encode("utf-8")
    return None


def journal_redacted(project: Project, observations: Sequence[Observation], env: Mapping[str, str]) -> None:
    """Append `observations` to the session's journal, each redacted first (with the
    `[redact]` settings in force): nothing reaches the journal unredacted."""
    from wiki_memory import config
    from wiki_memory.capture import journal, redact

    redact.configure(config.load_settings(env).redact)
    journal.append(project.journal_dir, [redact.redact_observation(o) for o in observations])


def log(env: Mapping[str, str], agent: str, event: str | None, message: str, started: float) -> None:
    """One line in the hook log (`logs/hooks.log`): the agent, the event, the time taken; never raises."""
    from wiki_memory import logs

    elapsed = (time.monotonic() - started) * 1000
    logs.write("hooks", f"{agent or '-'} {event or '-'} {elapsed:.0f}ms {message}", env)
