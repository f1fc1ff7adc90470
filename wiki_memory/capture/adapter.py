"""The interface every agent adapter has, and the registry of agents.

An adapter is the one module in `capture/` that knows an agent, defining a subclass of
`Adapter`. Its hook side:

- `events`: the agent's own hook event names, each mapped to the observation kind it
  produces (`None`: the event is known but records nothing, e.g. PreToolUse);
- `parse(event, payload)`: the payload of one hook call -> observations;
- `envelope(event, text)`: what the hook prints to hand `text` to the agent (at session
  start, and with recalled pages on the events below);
- `recall_prompt_events`: the prompt events whose output can carry context to the model
  (per-prompt recall answers there); `recall_file_events` and `recall_file_tools`: the tool
  events (and tools) on which per-file recall answers, `recall_files(event, payload)` the
  files such a call reads or edits.

Its transcript side (an agent without a reader yet keeps the base's, which find nothing):

- `read_transcript(path)`: one transcript file -> observations, normalised and redacted as
  the hooks' are;
- `find_transcript(session_id, observations)`: the transcript of a session;
- `default_transcripts()`: every transcript the agent keeps on this machine;
- `transcripts_in(path)`: the transcripts a file holds (itself, but one per session for an
  agent that keeps them all in one database).

`AGENTS` names every adapter by its agent name; `load(name)` imports only that one module,
so a hook process pays for one adapter. Standard library only: this is the hook path.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from wiki_memory.capture.observation import Observation, utc_now
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, call_files, clip, first_str, tool_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, ClassVar

    from wiki_memory.capture.toolcalls import ToolFacts

#: agent name -> module in wiki_memory.capture that defines its adapter.
AGENTS: dict[str, str] = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini": "gemini",
    "cursor": "cursor",
    "opencode": "opencode",
}
#: other spellings people type.
ALIASES: dict[str, str] = {
    "claude": "claude-code",
    "claude_code": "claude-code",
    "claudecode": "claude-code",
    "gemini-cli": "gemini",
    "cursor-agent": "cursor",
    "openai-codex": "codex",
    "opencode-ai": "opencode",
}


def agent_name(name: str) -> str | None:
    """The canonical agent name for `name`, or None when it is not an agent we know."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in AGENTS else None


def load(name: str) -> Adapter:
    """The adapter of agent `name` (canonical or alias); KeyError when unknown."""
    canonical = agent_name(name)
    if canonical is None:
        raise KeyError(name)
    module = importlib.import_module(f"wiki_memory.capture.{AGENTS[canonical]}")
    return module.ADAPTER


def named_transcript(observations: Sequence[Observation]) -> Path | None:
    """The transcript the session's hooks named (the last `transcript_path`), if it is a file."""

    named = next((o.meta.get("transcript_path") for o in reversed(observations) if o.meta.get("transcript_path")), None)
    return Path(named) if isinstance(named, str) and Path(named).is_file() else None


def call_observation(base: Mapping[str, Any], tool: str, facts: ToolFacts) -> Observation:
    """The observation of one tool call from its normalised facts; an exit code the call
    reported and the directory it ran in go in `meta`, where the transcript readers put them too."""
    return Observation(**{**base, **facts.observation_fields(tool, base["meta"])})


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


class Adapter:
    """One agent's hook payloads and outputs. Subclasses set the class attributes and
    override `parse` where their payloads differ from the Claude Code shape."""

    name: str = ""
    #: the agent's event name -> observation kind (None: known, records nothing).
    events: ClassVar[Mapping[str, str | None]] = {}
    #: events after which consolidation starts (`startup.after_session`).
    end_events: frozenset[str] = frozenset()
    #: payload keys holding the session id, in order of preference.
    session_keys: tuple[str, ...] = ("session_id",)
    #: prompt events whose output reaches the model as context (per-prompt recall); none: the agent's
    #: prompt hook cannot carry context.
    recall_prompt_events: frozenset[str] = frozenset()
    #: tool events whose output reaches the model as context, and the file tools recall answers for.
    recall_file_events: frozenset[str] = frozenset()
    recall_file_tools: frozenset[str] = frozenset()
    #: tool events that fire before a shell command runs and whose output reaches the model
    #: (the gotcha or procedure the command walks into), and the shell tools' names.
    recall_command_events: frozenset[str] = frozenset()
    recall_command_tools: frozenset[str] = frozenset()
    #: tool events whose output reaches the model after a failed call (the gotcha its error
    #: is about).
    recall_error_events: frozenset[str] = frozenset()

    # -- events ---------------------------------------------------------------------------
    def resolve_event(self, given: str | None, payload: Mapping[str, Any]) -> str | None:
        """The agent's own event name from the argument (any case or kebab-case) or, when
        absent, from the payload's `hook_event_name`; None when it is not one of ours."""
        for candidate in (given, payload.get("hook_event_name")):
            if isinstance(candidate, str) and candidate:
                squashed = _squash(candidate)
                for event in self.events:
                    if _squash(event) == squashed:
                        return event
                if given:
                    return None  # an explicit event we do not know: do not guess from the payload
        return None

    # -- payload facts ----------------------------------------------------------------------
    def session_id(self, payload: Mapping[str, Any]) -> str | None:
        return first_str(payload, self.session_keys)

    def cwd(self, payload: Mapping[str, Any]) -> str | None:
        """The session's working directory (the project is resolved from it)."""
        return first_str(payload, ("cwd",))

    def meta(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Facts every observation of this payload keeps (transcript path, model, turn)."""
        keys = (
            "transcript_path",
            "model",
            "turn_id",
            "tool_use_id",
            "duration_ms",
            "source",
            "reason",
            "trigger",
            "permission_mode",
            "prompt_id",
        )
        return {k: payload[k] for k in keys if isinstance(payload.get(k), (str, int, float)) and payload[k] != ""}

    # -- parsing ----------------------------------------------------------------------------
    def parse(self, event: str, payload: Mapping[str, Any]) -> list[Observation]:
        """Observations for one hook call (Claude Code's payload shape; others override)."""
        kind = self.events.get(event)
        session_id = self.session_id(payload)
        if kind is None or session_id is None:
            return []
        cwd = self.cwd(payload)
        base: dict[str, Any] = {
            "kind": kind,
            "agent": self.name,
            "session_id": session_id,
            "time": utc_now(),
            "cwd": cwd,
            "event": event,
            "meta": self.meta(payload),
        }
        if kind == "prompt":
            return [Observation(**base, text=clip(first_str(payload, ("prompt",))))]
        if kind == "tool":
            return [self.tool_observation(event, payload, base)]
        if kind == "stop":
            error = payload.get("error")
            text = first_str(payload, ("last_assistant_message", "prompt_response", "text"))
            if error:
                details = first_str(payload, ("error_details",))
                base["meta"] = {**base["meta"], "error": str(error), **({"error_details": details} if details else {})}
            return [Observation(**base, text=clip(text, PROMPT_LIMIT), error=bool(error))]
        if kind == "session-end":
            return [Observation(**base, text=first_str(payload, ("reason",)))]
        if kind == "compact":
            instructions = first_str(payload, ("custom_instructions",))
            return [Observation(**base, text=clip(instructions))]
        return [Observation(**base)]

    def tool_observation(self, event: str, payload: Mapping[str, Any], base: dict[str, Any]) -> Observation:
        tool = str(payload.get("tool_name") or "")
        error_text = payload.get("error") if isinstance(payload.get("error"), str) else None
        failed = True if error_text is not None or event.endswith("Failure") else None
        facts = tool_facts(
            tool,
            payload.get("tool_input"),
            payload.get("tool_response"),
            base["cwd"],
            failed=failed,
            error_text=error_text,
        )
        return call_observation(base, tool, facts)

    # -- transcripts ----------------------------------------------------------------------------
    def read_transcript(self, path: Path) -> list[Observation]:
        """The observations of one transcript file of this agent, in order ([]: no reader yet)."""
        return []

    def find_transcript(
        self, session_id: str, observations: Sequence[Observation], *, search: bool = True
    ) -> Path | None:
        """The transcript of a session: the one its hooks named, else (with `search`) one
        looked up where the agent keeps them; None when there is none or no reader."""
        return None

    def default_transcripts(self) -> list[Path]:
        """Every transcript this agent keeps on this machine (what `import` reads by default)."""
        return []

    def transcripts_in(self, path: Path) -> list[Path]:
        """The transcripts a file given to `import` holds: the file itself, unless the agent
        keeps many sessions in one file."""
        return [path]

    # -- recall ---------------------------------------------------------------------------------
    def recall_prompt(self, event: str, payload: Mapping[str, Any]) -> str | None:
        """The prompt per-prompt recall answers, on an event that can carry context."""
        return first_str(payload, ("prompt",)) if event in self.recall_prompt_events else None

    def recall_files(self, event: str, payload: Mapping[str, Any]) -> list[str]:
        """The files a file tool call reads or edits, on an event that can carry context."""
        tool = str(payload.get("tool_name") or "")
        if event not in self.recall_file_events or tool not in self.recall_file_tools:
            return []
        return call_files(tool, payload.get("tool_input"))

    def recall_command(self, event: str, payload: Mapping[str, Any]) -> str | None:
        """The shell command a call is about to run, on an event that can carry context."""
        tool = str(payload.get("tool_name") or "")
        if event not in self.recall_command_events or tool not in self.recall_command_tools:
            return None
        data = payload.get("tool_input")
        command = data.get("command") if isinstance(data, dict) else None
        if isinstance(command, list):  # an argv (`["bash", "-lc", "pytest -x"]`)
            command = command[-1] if len(command) >= 3 and command[1] in ("-c", "-lc") else " ".join(map(str, command))
        return command if isinstance(command, str) and command.strip() else None

    # -- output -------------------------------------------------------------------------------
    def envelope(self, event: str, text: str) -> dict[str, Any]:
        """What the hook prints to hand `text` to the agent (Claude Code's shape)."""
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
