"""Crafted session journals for the consolidation tests, written with the real journal code."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from wiki_memory.capture import journal
from wiki_memory.capture.observation import Observation, PlanItem
from wiki_memory.config import Project, home

__all__ = ["PlanItem", "Session", "age", "codex_rollout", "set_config", "wiki_pages"]


class Session:
    """Builds one session's observations, a minute apart by default, and appends them."""

    def __init__(
        self,
        project: Project,
        session_id: str,
        *,
        agent: str = "claude-code",
        cwd: str | None = None,
        start: str = "2026-11-30T08:00:00",
    ):
        self.project = project
        self.session_id = session_id
        self.agent = agent
        self.cwd = cwd or (str(project.root) if project.root else "/tmp")
        self.clock = datetime.fromisoformat(start).replace(tzinfo=timezone.utc)
        self.items: list[Observation] = []
        self.calls = 0

    def _obs(self, kind: str, **kw: Any) -> Session:
        self.clock += timedelta(seconds=kw.pop("after", 60))
        stamp = self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        self.items.append(
            Observation(kind=kind, agent=self.agent, session_id=self.session_id, time=stamp, cwd=self.cwd, **kw)
        )
        return self

    def start(self, source: str = "startup", **meta: Any) -> Session:
        return self._obs("session-start", meta={"source": source, **meta})

    def prompt(self, text: str) -> Session:
        return self._obs("prompt", text=text)

    def tool(
        self,
        tool: str,
        input: str = "",
        output: str = "",
        *,
        error: bool = False,
        files: tuple[str, ...] = (),
        plan: tuple[PlanItem, ...] = (),
        **meta: Any,
    ) -> Session:
        self.calls += 1
        return self._obs(
            "tool",
            tool=tool,
            input=input,
            output=output,
            error=error,
            files=files,
            plan=plan,
            meta={"tool_use_id": f"call_{self.calls}", **meta},
        )

    def bash(self, command: str, output: str = "", *, error: bool = False) -> Session:
        return self.tool("Bash", command, output, error=error)

    def edit(self, path: str) -> Session:
        full = path if path.startswith("/") else f"{self.cwd}/{path}"
        return self.tool("Edit", full, "ok", files=(full,))

    def todo(self, *items: tuple[str, str]) -> Session:
        return self.tool(
            "TodoWrite", f"{len(items)} plan items", "ok", plan=tuple(PlanItem(text, status) for text, status in items)
        )

    def stop(self, text: str) -> Session:
        return self._obs("stop", text=text)

    def end(self, reason: str = "prompt_input_exit") -> Session:
        return self._obs("session-end", meta={"reason": reason})

    def write(self, *, age_seconds: float = 60) -> Path:
        """Append to the journal, then make it look `age_seconds` old (settled)."""
        path = journal.append(self.project.journal_dir, self.items)
        assert path is not None
        self.items = []
        age(path, age_seconds)
        return path


def age(path: Path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def set_config(text: str) -> None:
    path = home() / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def wiki_pages(project: Project, folder: str) -> dict[str, tuple[dict[str, Any], str]]:
    """The pages of one folder of the project's wiki: file name -> (front matter, body)."""
    from wiki_memory.pages import parse_page

    base = project.wiki / folder
    out = {}
    for path in sorted(base.glob("*.md")) if base.exists() else []:
        page = parse_page(path.read_text(encoding="utf-8"), str(path.relative_to(project.wiki)))
        out[path.name] = (dict(page.meta), page.body)
    return out


def codex_rollout(
    folder: Path, cwd: Path, calls: list[tuple[dict[str, Any], str]], *, prompt: str, answer: str, session_id: str
) -> Path:
    """A Codex rollout (autumn 2025 shape): a prompt, then each (arguments, output) as a shell
    call and its output, then the final answer."""

    def wrap(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
        return {"timestamp": f"2026-11-30T09:35:{second:02d}.000Z", "type": kind, "payload": payload}

    records = [
        wrap("session_meta", {"id": session_id, "cwd": str(cwd), "cli_version": "0.44.0"}, 0),
        wrap("event_msg", {"type": "user_message", "message": prompt}, 1),
    ]
    for n, (arguments, output) in enumerate(calls):
        call = {"type": "function_call", "name": "shell", "arguments": json.dumps(arguments), "call_id": f"c{n}"}
        records.append(wrap("response_item", call, 2 + 2 * n))
        out = {"type": "function_call_output", "call_id": f"c{n}", "output": output}
        records.append(wrap("response_item", out, 3 + 2 * n))
    records.append(wrap("event_msg", {"type": "task_complete", "last_agent_message": answer}, 40))
    path = folder / f"rollout-2026-11-30T09-35-00-{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path
