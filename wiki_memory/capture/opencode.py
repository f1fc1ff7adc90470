"""OpenCode: the payloads of our plugin and the hook output, and the sessions in opencode.db.

OpenCode has no command hooks: `install/opencode_plugin.js`, a plugin in OpenCode's plugin
folder, runs `wiki-memory hook opencode EVENT` with a JSON payload on stdin. Every payload
carries `session_id`, `cwd` (the session's own directory), `time` (milliseconds, when
OpenCode told the plugin) and:

- `session.created`: `source` (`startup`, or `resume` for a session the plugin did not see
  created) and `info` (OpenCode's session: `version`, `title`, ...). The hook prints the
  handoff as `{"context": ...}`; the plugin adds it to the system prompt.
- `chat.message`: `parts` (the prompt's text parts), `model` (`providerID`, `modelID`),
  `agent`. Whatever context the hook prints for it is added to that turn's system prompt.
- `message.part.updated`: a finished tool `part` (`tool`, `callID`, `state` with `input`,
  `output` or `error`, `metadata.exit` for bash); `child` names the sub-agent's session
  when the call was a sub-agent's.
- `session.idle`: the turn is over; `text` is its last assistant message. OpenCode has no
  session-end event, so consolidation starts here, after every turn.
- `session.error`: `error` (`name`, `data.message`); `session.compacted`: nothing more.

As seen on OpenCode 1.18.33: tools are `bash` (`command`; `metadata.exit` is the exit
code), `edit` (`filePath`, `oldString`, `newString`), `write` (`filePath`, `content`),
`read`, `glob`, `grep`, `list`, `todowrite` (`todos`: `content`, `status`, `priority`),
`task`, `webfetch`, `apply_patch` (`patchText`, for OpenAI models); `opencode run "a b"`
sends its words quoted (`"a b"`), which the prompt loses here.

Sessions are kept in SQLite (`$XDG_DATA_HOME/opencode/opencode.db`, or `OPENCODE_DB`):
`session` (id, directory, parent_id, version, times), `message` and `part` (their `data`
JSON). One database holds every session, so a session's transcript is named
`<database>/<session id>`; `read_transcript` takes that or the database itself (its newest
session), or the JSON `opencode export` prints (`info`: the session; `messages`: each with
its `info` and `parts`, as the database keeps them). The hook path imports this module on
every call: `sqlite3` is imported only where a database is read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from urllib.parse import quote

from wiki_memory.capture.adapter import Adapter, call_observation
from wiki_memory.capture.observation import Observation, utc_now
from wiki_memory.capture.toolcalls import PROMPT_LIMIT, clip, first_str, tool_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, ClassVar

AGENT = "opencode"
SESSION_PREFIX = "ses_"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def stamp(ms: Any) -> str | None:
    """Milliseconds since the epoch as the journal's UTC time, or None."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms <= 0:
        return None
    seconds = ms / 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(ms) % 1000:03d}Z"


def prompt_text(parts: Any) -> str | None:
    """The user's words from a message's text parts; the quotes `opencode run` puts around
    an argument with spaces are taken off."""
    if not isinstance(parts, list):
        return None
    texts = [
        str(p.get("text") or "")
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic") and p.get("text")
    ]
    text = "\n\n".join(t for t in texts if t.strip()).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        text = text[1:-1]
    return text or None


def model_name(model: Any) -> str | None:
    """`provider/model` from OpenCode's `{providerID, modelID}`."""
    if isinstance(model, dict) and model.get("modelID"):
        return f"{model.get('providerID') or ''}/{model['modelID']}".lstrip("/")
    return model if isinstance(model, str) and model else None


def tool_part_facts(part: Mapping[str, Any], cwd: str | None) -> tuple[str, Any]:
    """(tool name, normalised facts) of a finished tool part."""
    tool = str(part.get("tool") or "tool")
    state = _dict(part.get("state"))
    metadata = _dict(state.get("metadata"))
    exit_code = metadata.get("exit")
    error = state.get("error") if isinstance(state.get("error"), str) else None
    facts = tool_facts(
        tool,
        state.get("input"),
        state.get("output") if isinstance(state.get("output"), str) else None,
        cwd,
        failed=True if state.get("status") == "error" else None,
        error_text=error,
        exit_code=exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
    )
    return tool, facts


class OpenCode(Adapter):
    name = AGENT
    events: ClassVar[dict[str, str | None]] = {
        "session.created": "session-start",
        "chat.message": "prompt",
        "message.part.updated": "tool",
        "session.idle": "stop",
        "session.error": "stop",
        "session.compacted": "compact",
        "tool.execute.before": None,
        "tool.execute.after": None,
    }
    end_events = frozenset({"session.idle"})
    session_keys = ("session_id", "sessionID")
    # The plugin waits (boundedly) for what chat.message prints and adds it to that turn's
    # system prompt. Per-file recall would need tool.execute.after forwarded: not yet.
    recall_prompt_events = frozenset({"chat.message"})
    # A failed tool call: the plugin waits for what the hook prints and adds it to the turn.
    recall_error_events = frozenset({"message.part.updated"})

    def resolve_event(self, given: str | None, payload: Mapping[str, Any]) -> str | None:
        # OpenCode's names are dotted: matched as given, not squashed.
        event = given or payload.get("hook_event_name")
        return event if isinstance(event, str) and event in self.events else None

    def meta(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: payload[k] for k in ("source", "agent") if isinstance(payload.get(k), str) and payload[k]}
        if model := model_name(payload.get("model")):
            meta["model"] = model
        info = _dict(payload.get("info"))
        if isinstance(info.get("version"), str):
            meta["cli_version"] = info["version"]
        return meta

    def parse(self, event: str, payload: Mapping[str, Any]) -> list[Observation]:
        kind = self.events.get(event)
        session_id = self.session_id(payload)
        if kind is None or session_id is None:
            return []
        base: dict[str, Any] = {
            "kind": kind,
            "agent": AGENT,
            "session_id": session_id,
            "time": stamp(payload.get("time")) or utc_now(),
            "cwd": self.cwd(payload),
            "event": event,
            "meta": self.meta(payload),
        }
        if kind == "prompt":
            return [Observation(**base, text=clip(prompt_text(payload.get("parts")), PROMPT_LIMIT))]
        if kind == "tool":
            part = _dict(payload.get("part"))
            if part.get("type") != "tool":
                return []
            base["meta"] = {**base["meta"], "tool_use_id": str(part.get("callID") or part.get("id") or "")}
            if isinstance(payload.get("child"), str):
                base["meta"]["subagent_session"] = payload["child"]
            tool, facts = tool_part_facts(part, base["cwd"])
            return [call_observation(base, tool, facts)]
        if kind == "stop" and event == "session.error":
            error = _dict(payload.get("error"))
            data = _dict(error.get("data"))
            details = first_str(data, ("message",))
            base["meta"] = {**base["meta"], "error": str(error.get("name") or "error")}
            if details:
                base["meta"]["error_details"] = details
            return [Observation(**base, error=True)]
        if kind == "stop":
            return [Observation(**base, text=clip(first_str(payload, ("text",)), PROMPT_LIMIT))]
        return [Observation(**base)]

    def recall_prompt(self, event: str, payload: Mapping[str, Any]) -> str | None:
        """The words of the message's text parts (OpenCode's prompt has no `prompt` key)."""
        return prompt_text(payload.get("parts")) if event in self.recall_prompt_events else None

    def envelope(self, event: str, text: str) -> dict[str, Any]:
        """What the plugin reads back: `context` goes into the system prompt."""
        return {"context": text}

    # -- transcripts: opencode.db -------------------------------------------------------------
    def read_transcript(self, path: Path) -> list[Observation]:
        return read_session(path)

    def find_transcript(
        self, session_id: str, observations: Sequence[Observation], *, search: bool = True
    ) -> Path | None:
        if not search or not session_id.startswith(SESSION_PREFIX):
            return None  # the hook path opens no database
        for db in databases():
            if session_ids(db, session_id):
                return db / session_id
        return None

    def default_transcripts(self) -> list[Path]:
        return [db / sid for db in databases() for sid in session_ids(db)]

    def transcripts_in(self, path: Path) -> list[Path]:
        """A database holds many sessions: one transcript name each."""
        ids = session_ids(path) if path.is_file() else []
        # A file that lists no session is read as one, to say why it is not.
        return [path / sid for sid in ids] or [path]


ADAPTER = OpenCode()


# opencode.db ---------------------------------------------------------------------------------


def data_dir() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "opencode"


def databases() -> list[Path]:
    """OpenCode's session databases on this machine (`OPENCODE_DB`, else every channel's)."""

    named = os.environ.get("OPENCODE_DB")
    if named and named != ":memory:":
        path = Path(named) if os.path.isabs(named) else data_dir() / named
        return [path] if path.is_file() else []
    return sorted(p for p in data_dir().glob("opencode*.db") if p.is_file())


def _connect(db: Path) -> Any:
    import sqlite3  # deferred: only to read an OpenCode session, not in a hook

    # Read only: OpenCode may be writing it (WAL), and a reader never blocks it.
    return sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True, timeout=5)


def session_ids(db: Path, only: str | None = None) -> list[str]:
    """The top-level sessions of a database, oldest first (sub-agents' sessions are left out);
    with `only`, that session if it is there."""
    import sqlite3  # deferred: only to read an OpenCode session, not in a hook

    try:
        with _connect(db) as conn:
            if only is not None:
                rows = conn.execute("SELECT id FROM session WHERE id = ?", (only,)).fetchall()
            else:
                rows = conn.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created").fetchall()
    except sqlite3.Error:
        return []
    return [str(r[0]) for r in rows]


def _split(path: Path) -> tuple[Path, str | None]:
    """(database, session id) of a transcript name; a database alone names its newest session."""
    if path.name.startswith(SESSION_PREFIX) and not path.is_file():
        return path.parent, path.name
    return path, None


def _is_export(path: Path) -> bool:
    """Whether `path` is a JSON file (an export), not a database."""
    try:
        with open(path, "rb") as f:
            return f.read(64).lstrip().startswith(b"{")
    except OSError:
        return False


def read_export(path: Path) -> list[Observation]:
    """The observations of a session that `opencode export` wrote as JSON, in order, redacted."""
    from wiki_memory.capture.redact import redact_observation, reload_user_patterns  # deferred: out of hook start-up

    reload_user_patterns()
    data = _json(path.read_text(encoding="utf-8"))
    info, messages = _dict(data.get("info")), data.get("messages")
    if not info.get("id") or not isinstance(messages, list):
        return []
    start_meta: dict[str, Any] = {"source": "transcript", "transcript_path": str(path)}
    if info.get("version"):
        start_meta["cli_version"] = info["version"]
    if info.get("parentID"):
        start_meta["parent_session"] = info["parentID"]
        start_meta["subagent"] = info["id"]
    reader = _Session(str(info["id"]), info.get("directory"), start_meta)
    for message in messages:
        if not isinstance(message, dict):
            continue
        data = _dict(message.get("info"))
        created = _dict(data.get("time")).get("created") or 0
        parts = []
        for part in message.get("parts") or ():
            if isinstance(part, dict):
                when = _dict(_dict(part.get("state")).get("time")).get("end") or _dict(part.get("time")).get("end")
                parts.append((when or created, part))
        reader.message(data, created, parts)
    return [redact_observation(o) for o in reader.finish(stamp(_dict(info.get("time")).get("created")) or "")]


def read_session(path: Path) -> list[Observation]:
    """The observations of one OpenCode session (`<database>/<session id>`, or an export), in
    order, redacted."""
    import sqlite3  # deferred: only to read an OpenCode session, not in a hook

    from wiki_memory.capture.redact import redact_observation, reload_user_patterns  # deferred: out of hook start-up

    if path.is_file() and _is_export(path):
        return read_export(path)
    db, session_id = _split(path)
    reload_user_patterns()
    try:
        with _connect(db) as conn:
            if session_id is None:
                newest = conn.execute(
                    "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created DESC LIMIT 1"
                ).fetchone()
                if newest is None:
                    return []
                session_id = str(newest[0])
            row = conn.execute(
                "SELECT directory, version, time_created FROM session WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return []
            messages = conn.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                (session_id,),
            ).fetchall()
            parts = conn.execute(
                "SELECT message_id, time_created, data FROM part WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
    except sqlite3.DatabaseError as e:
        raise OSError(f"{db}: {e}") from None
    reader = _Session(session_id, row[0], {"source": "transcript", "transcript_path": str(db / session_id)})
    if row[1]:
        reader.start_meta["cli_version"] = row[1]
    by_message: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for message_id, created, data in parts:
        by_message.setdefault(str(message_id), []).append((created, _json(data)))
    for message_id, created, data in messages:
        reader.message(_json(data), created, by_message.get(str(message_id), []))
    return [redact_observation(o) for o in reader.finish(stamp(row[2]) or "")]


def _json(text: Any) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class _Session:
    """A session read message by message: prompts, finished tool calls, and each turn's
    last assistant text as its answer."""

    def __init__(self, session_id: str, cwd: str | None, start_meta: dict[str, Any]) -> None:
        self.session_id, self.cwd, self.start_meta = session_id, cwd, start_meta
        self.out: list[Observation] = []
        self.answer: tuple[str, str] | None = None  # (time, text) of the turn's last assistant message

    def obs(self, kind: str, when: str, **fields: Any) -> Observation:
        return Observation(kind, AGENT, self.session_id, when, cwd=self.cwd, event="transcript", **fields)

    def message(self, data: dict[str, Any], created: int, parts: list[tuple[int, dict[str, Any]]]) -> None:
        when = stamp(created) or ""
        if data.get("role") == "user":
            if any(p.get("type") == "compaction" for _, p in parts):
                self.out.append(self.obs("compact", when))
                return
            text = prompt_text([p for _, p in parts])
            if text:
                self.close_turn()
                self.out.append(self.obs("prompt", when, text=clip(text, PROMPT_LIMIT)))
                if model := model_name(data.get("model")):
                    self.start_meta.setdefault("model", model)
            return
        if data.get("role") != "assistant" or data.get("summary") is True:
            return  # a compaction's summary is not the turn's answer
        texts = []
        for part_created, part in parts:
            if part.get("type") == "tool" and part.get("state", {}).get("status") in ("completed", "error"):
                self.out.append(self.tool(part, stamp(part_created) or when))
            elif part.get("type") == "text" and not part.get("synthetic") and str(part.get("text") or "").strip():
                texts.append(str(part["text"]).strip())
        if texts:
            self.answer = (stamp((data.get("time") or {}).get("completed")) or when, "\n\n".join(texts))
        if isinstance(data.get("error"), dict):
            error = data["error"]
            meta = {"error": str(error.get("name") or "error")}
            details = first_str(_dict(error.get("data")), ("message",))
            if details:
                meta["error_details"] = details  # (as the hook's `session.error` has it)
            self.out.append(self.obs("stop", when, error=True, meta=meta))

    def tool(self, part: dict[str, Any], when: str) -> Observation:
        tool, facts = tool_part_facts(part, self.cwd)
        base = {"kind": "tool", "agent": AGENT, "session_id": self.session_id, "time": when, "cwd": self.cwd}
        meta = {"tool_use_id": str(part.get("callID") or part.get("id") or "")}
        return call_observation({**base, "event": "transcript", "meta": meta}, tool, facts)

    def close_turn(self) -> None:
        if self.answer is not None:
            self.out.append(self.obs("stop", self.answer[0], text=clip(self.answer[1], PROMPT_LIMIT)))
        self.answer = None

    def finish(self, started: str) -> list[Observation]:
        self.close_turn()
        if not self.out:
            return []
        self.out.sort(key=lambda o: o.time)
        return [self.obs("session-start", started or self.out[0].time, meta=self.start_meta), *self.out]
