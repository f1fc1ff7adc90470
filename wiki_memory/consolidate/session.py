"""One account of a session, built from observations (the journal's, a transcript's, or both).

Standard library only: SessionStart builds accounts of sessions that ended but were not
consolidated yet, on the hook path.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from itertools import pairwise
from typing import Any

from wiki_memory.capture.observation import Observation, PlanItem
from wiki_memory.capture.plan_calls import normalize_status
from wiki_memory.capture.prompts import COMMAND, EXPANSION, META, PERSONA, USER, classify_turns, is_meta_prompt
from wiki_memory.capture.toolcalls import FULL_PLAN_TOOLS, tool_kind


@lru_cache(maxsize=8192)
def time_key(stamp: str | None) -> float:
    """Seconds since the epoch for an ISO 8601 time; 0 when it cannot be read."""
    if not stamp:
        return 0.0
    try:
        parsed = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_GREETING = re.compile(
    r"^\s*(hi|hey|hello|yo|hola|good (morning|afternoon|evening)|thanks?( you)?|ok(ay)?|"
    r"continue|go on|go ahead|yes|no|y|n)\s*[.!?]*\s*$",
    re.IGNORECASE,
)


def is_trivial_prompt(text: str) -> bool:
    """A greeting or a bare go-ahead: a real prompt, but not a goal."""
    return bool(_GREETING.match(text))


# What a tool's result says when the user refused the call.
_REFUSED = re.compile(
    r"user (doesn't|does not|did not|didn't) want to proceed|rejected by (the )?user|user rejected|user denied",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Step:
    """One tool call of a session, with what came of it."""

    index: int
    time: str
    tool: str
    kind: str
    input: str
    output: str
    error: bool
    files: tuple[str, ...] = ()
    plan: tuple[PlanItem, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    seq: int = 0  # its place among the session's events

    @property
    def rejected(self) -> bool:
        """The user refused the call (a permission prompt answered no, a rejected plan)."""
        if self.meta.get("rejected"):
            return True
        return bool(self.error and _REFUSED.search(self.output)) or self.not_permitted

    @property
    def not_permitted(self) -> bool:
        """The agent's permission settings refused the call (it never ran): not a failure of
        what it would have done."""
        return bool(
            self.error
            and re.search(r"permission to use \S+ (has been|was) (auto-)?denied", self.output[:300], re.IGNORECASE)
        )

    @property
    def interrupted(self) -> bool:
        return bool(self.meta.get("interrupted"))

    @property
    def exit_code(self) -> int | None:
        value = self.meta.get("exit_code")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def no_result(self) -> bool:
        """The call was made but its result never arrived (the session stopped first)."""
        return bool(self.meta.get("no_result"))


@dataclass(frozen=True)
class Prompt:
    time: str
    text: str
    ref: str = ""  # where it was recorded (a journal line, a transcript record)
    seq: int = 0  # its place among the session's events (times can tie to the millisecond)


# A block of markup an agent wraps around what it adds to a user turn (`<ide_opened_file>`,
# `<task-notification>`, `<system-reminder>`): plumbing, not the user's words.
_PLUMBING = re.compile(r"^\s*<([a-z][\w-]*)\b[^>]*>.*?</\1>\s*", re.DOTALL)
_PLUMBING_END = re.compile(r"\s*<([a-z][\w-]*)\b[^>]*>(?:(?!<\1\b).)*?</\1>\s*$", re.DOTALL)
# An instruction document with a slot for the user's input (a custom prompt or command such as
# spec-kit's: "## User Input\n\n```text\n$ARGUMENTS\n```"): what fills the slot is the user's.
_INPUT_SLOT = re.compile(
    r"^#{1,6}\s*(?:the\s+)?(?:user(?:'s)?\s+)?(?:input|arguments?|request)\s*:?\s*\n+"
    r"(?:```[\w-]*\n(?P<fenced>.*?)\n```|(?P<para>[^#\n][^\n]*(?:\n[^#\n][^\n]*)*))",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)


def without_plumbing(text: str) -> str:
    """A user turn without the markup blocks an agent adds before or after the user's words."""
    text = text or ""
    while (m := _PLUMBING.match(text)) is not None:
        text = text[m.end() :]
    while (m := _PLUMBING_END.search(text)) is not None and m.start() > 0:
        text = text[: m.start()]
    return "" if _PLUMBING.fullmatch(text) else text.strip()


def slot_input(text: str) -> str | None:
    """The user's input in the slot of an instruction document (see `_INPUT_SLOT`), when the
    turn is such a document (long, with headings) and the slot is filled."""
    if len(text) < 200 or len(re.findall(r"^#{1,6}\s+\S", text, re.M)) < 2:
        return None
    m = _INPUT_SLOT.search(text)
    if m is None:
        return None
    words = (m.group("fenced") or m.group("para") or "").strip()
    if not words or re.fullmatch(r"\$\w+|\{\{?\w+\}?\}|<\w+>", words):
        return None  # an empty slot: the template itself
    return words


@dataclass(frozen=True)
class Turn:
    """A user turn read for what it is: the user's own words, a slash command (and its
    expansion), a persona prompt, or plumbing. `words` is what the user wrote themselves
    ("" when nothing: a persona, an expansion without input, plumbing)."""

    prompt: Prompt
    kind: str  # user | command | expansion | persona | meta
    command: str = ""
    words: str = ""
    failed: str = ""  # for a command: the error it printed (`<local-command-stderr>`)


_LOCAL_OUTPUT = re.compile(r"^\s*<local-command-(stdout|stderr)>(.*?)(</local-command-\1>|$)", re.DOTALL)


def read_turns(prompts: Sequence[Prompt], after_work: Sequence[bool] | None = None) -> list[Turn]:
    """What each user turn is (see `Turn`), in order; `after_work`: for each, whether the agent
    made a call or answered since the turn before it."""
    kinds = classify_turns([p.text for p in prompts], [time_key(p.time) for p in prompts], after_work)
    turns: list[Turn] = []
    for n, (prompt, kind) in enumerate(zip(prompts, kinds, strict=True)):
        words = kind.words
        name = kind.command
        kind_name = kind.kind
        if kind_name == META:
            # A record the harness put before the user's own words (`<ide_opened_file>` then
            # the question) in one turn: the words after it are the user's.
            first = _PLUMBING.match(prompt.text)
            tag = first.group(1) if first else ""
            rest = without_plumbing(prompt.text) if first else ""
            if rest and not rest.startswith("<") and not re.search(r"notification|reminder|command", tag):
                kind_name, words = USER, rest
        slot = slot_input(prompt.text) if kind_name in (USER, EXPANSION, PERSONA) else None
        if slot is not None:
            kind_name, words = EXPANSION, slot
        elif kind_name == USER:
            first = _PLUMBING.match(prompt.text)
            # A turn that opens with a notice (`<task-notification>`, `<system-reminder>`) is
            # written by the agent's harness, whatever follows it.
            words = "" if first and re.search(r"notification|reminder", first.group(1)) else without_plumbing(words)
            if not words:
                kind_name = META
        elif kind_name in (COMMAND, EXPANSION):
            words = without_plumbing(words)
        failed = ""
        if kind_name == COMMAND and n + 1 < len(prompts):
            output = _LOCAL_OUTPUT.match(prompts[n + 1].text)
            if output and output.group(1) == "stderr":
                failed = " ".join(output.group(2).split())[:300]
        turns.append(Turn(prompt, kind_name, name, words, failed))
    return turns


@dataclass(frozen=True)
class Answer:
    """The assistant's last message of a turn (a Stop)."""

    time: str
    text: str
    ref: str = ""
    seq: int = 0


@dataclass
class Session:
    """Everything consolidation knows about one session, in order."""

    agent: str
    session_id: str
    cwd: str | None = None
    model: str | None = None
    branch: str | None = None
    start: str | None = None
    end: str | None = None
    source: str | None = None  # startup | resume | clear | compact | transcript
    end_reason: str | None = None
    transcript_path: str | None = None
    prompts: list[Prompt] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    failed_replies: list[Answer] = field(default_factory=list)  # turns ended by the agent's own error
    plan: list[PlanItem] = field(default_factory=list)
    ended: bool = False  # a session-end was recorded
    compactions: int = 0
    events: int = 0
    last_kind: str | None = None  # the kind of the last observation that was not lifecycle

    page_key: str | None = None  # names its pages; the short id unless that is taken
    # Files (absolute paths) whose state in the code repository changed between the session's
    # start and its consolidation (any tool), and those still uncommitted; None: not compared.
    repo_changed: tuple[str, ...] | None = None
    repo_uncommitted: tuple[str, ...] | None = None
    repo_ignored: tuple[str, ...] = ()  # files it changed that the repository's ignore rules keep out

    @property
    def short_id(self) -> str:
        return short_id(self.session_id)

    @property
    def key(self) -> str:
        return self.page_key or self.short_id

    @property
    def real_prompts(self) -> list[Prompt]:
        return [p for p in self.prompts if not is_meta_prompt(p.text)]

    @property
    def turns(self) -> list[Turn]:
        """Every user turn read for what it is (see `read_turns`); read once per set of events."""
        cached = self.__dict__.get("_turns")
        size = (len(self.prompts), len(self.steps), len(self.answers))
        if cached is None or cached[0] != size:
            done = sorted([s.seq for s in self.steps] + [a.seq for a in self.answers])
            # Whether the agent made a call or answered between a turn and the one before it.
            after_work = [False] + [
                (i := bisect_right(done, a.seq)) < len(done) and done[i] < b.seq for a, b in pairwise(self.prompts)
            ]
            cached = (size, read_turns(self.prompts, after_work))
            self.__dict__["_turns"] = cached
        return list(cached[1])

    @property
    def final_answer(self) -> str | None:
        return self.answers[-1].text if self.answers else None

    @property
    def date(self) -> str:
        """The session's start date (UTC, YYYY-MM-DD) that names its pages."""
        stamp = self.start or self.end
        if stamp and time_key(stamp):
            return iso(time_key(stamp))[:10]
        return "1970-01-01"


_OPENCODE_ID = re.compile(r"^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


def short_id(session_id: str) -> str:
    """Eight characters that tell sessions apart: the head of a random id, the tail of a
    time-ordered one (UUIDv7 ids, Codex's, share their head for a minute at a time; so do
    OpenCode's `ses_<time><random>` ids, for hours)."""
    m = _UUID.match(session_id or "")
    if (m and m.group(1) in ("1", "6", "7")) or _OPENCODE_ID.match(session_id or ""):
        return session_id[-8:].lower()
    clean = re.sub(r"[^A-Za-z0-9]", "", session_id or "")
    return (clean[:8] or "unknown").lower()


def key_candidates(session_id: str) -> list[str]:
    """Ever longer keys for a session's page names, should a shorter one be taken."""
    clean = re.sub(r"[^A-Za-z0-9]", "", session_id or "").lower() or "unknown"
    keys = [short_id(session_id)]
    for key in (clean[-12:] if keys[0] == clean[-8:] else clean[:12], clean[:40]):
        if key not in keys:
            keys.append(key)
    return keys


def _apply_plan(plan: list[PlanItem], tool: str | None, items: Sequence[PlanItem]) -> list[PlanItem]:
    """The plan after one plan tool call: a whole new list, or one item created or updated."""
    low = (tool or "").lower()
    if low in FULL_PLAN_TOOLS or low not in ("taskcreate", "taskupdate"):
        return [PlanItem(i.text, normalize_status(i.status), i.id) for i in items if i.text]
    plan = list(plan)
    for item in items:
        status = normalize_status(item.status) if (item.status or "").strip() else ""
        found = next(
            (
                n
                for n, old in enumerate(plan)
                if (item.id and old.id == item.id) or (not item.id and item.text and old.text == item.text)
            ),
            None,
        )
        if found is None:
            if item.text and status != "cancelled":
                plan.append(PlanItem(item.text, status or "pending", item.id))
            continue
        old = plan[found]
        if status == "cancelled":
            del plan[found]
            continue
        # An update that names no status (a new subject only) keeps the old one.
        plan[found] = PlanItem(item.text or old.text, status or old.status, old.id or item.id)
    return plan


def ref_of(o: Observation) -> str:
    """Where an observation was recorded, as a reader can find it again: its journal line,
    its transcript record, its tool call id; else its time."""
    meta = o.meta or {}
    for key, label in (("line", "journal line"), ("uuid", "record"), ("record", "record"), ("tool_use_id", "call")):
        value = meta.get(key)
        if value not in (None, ""):
            return f"{label} {value}"
    return f"{o.kind} at {o.time}" if o.time else o.kind


def step_ref(step: Step) -> str:
    """Where a tool call was recorded (its journal line, its call id; else its time)."""
    meta = step.meta or {}
    if meta.get("line"):
        return f"journal line {meta['line']}"
    for key in ("uuid", "record"):
        if meta.get(key):
            return f"record {meta[key]}"
    if meta.get("tool_use_id"):
        return f"call {meta['tool_use_id']}"
    return f"{step.tool} at {step.time}"


def build_session(
    observations: Iterable[Observation], *, agent: str | None = None, session_id: str | None = None
) -> Session:
    """Fold observations (in order) into a Session."""
    obs = list(observations)
    first = obs[0] if obs else None
    session = Session(
        agent=agent or (first.agent if first else "") or "agent",
        session_id=session_id or (first.session_id if first else "") or "unknown",
    )
    first_ts = last_ts = None
    for o in obs:
        session.events += 1
        if o.time:
            ts = time_key(o.time)
            if first_ts is None or ts < first_ts:
                session.start, first_ts = o.time, ts
            if last_ts is None or ts >= last_ts:
                session.end, last_ts = o.time, ts
        if o.cwd and not session.cwd:
            session.cwd = o.cwd
        meta = o.meta or {}
        for key, attr in (("model", "model"), ("branch", "branch"), ("transcript_path", "transcript_path")):
            if meta.get(key):
                setattr(session, attr, str(meta[key]))
        if o.kind == "session-start":
            session.source = session.source or meta.get("source")
        elif o.kind == "prompt":
            if o.text and o.text.strip():
                session.prompts.append(Prompt(o.time, o.text.strip(), ref_of(o), session.events))
                session.last_kind = "prompt"
        elif o.kind == "tool":
            kind = tool_kind(o.tool, o.files)
            session.steps.append(
                Step(
                    len(session.steps),
                    o.time,
                    o.tool or "tool",
                    kind,
                    o.input or "",
                    o.output or "",
                    bool(o.error),
                    tuple(o.files),
                    tuple(o.plan),
                    dict(meta),
                    session.events,
                )
            )
            if o.plan and not o.error:
                session.plan = _apply_plan(session.plan, o.tool, o.plan)
            session.last_kind = "tool"
        elif o.kind == "stop":
            if o.error:
                # The turn ended in an error of the agent itself (the model's request failed):
                # no answer, and what it said is kept as a failure.
                said = ": ".join(str(meta[k]) for k in ("error", "error_details") if meta.get(k)) or (o.text or "error")
                session.failed_replies.append(Answer(o.time, said, ref_of(o), session.events))
            elif o.text and o.text.strip():
                session.answers.append(Answer(o.time, o.text.strip(), ref_of(o), session.events))
            session.last_kind = "stop"
        elif o.kind == "compact":
            session.compactions += 1
        elif o.kind == "session-end":
            session.ended = True
            session.end_reason = meta.get("reason") or o.text or session.end_reason
    return session


# Merging a journal with a transcript ---------------------------------------------------------


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())[:200]


def in_time_order(observations: Iterable[Observation]) -> list[Observation]:
    """The observations by time; those of one instant (and one whose time cannot be read,
    which takes the time before it) keep their order."""
    keyed: list[tuple[float, int, Observation]] = []
    last = 0.0
    for n, o in enumerate(observations):
        last = time_key(o.time) or last
        keyed.append((last, n, o))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [o for _, _, o in keyed]


def merge_observations(journal: Sequence[Observation], transcript: Sequence[Observation]) -> list[Observation]:
    """One ordered list from what the hooks recorded and what the transcript holds.

    The transcript is the complete record (every call with its exit code: Codex's hooks
    do not carry one), so it is the base; the journal adds the lifecycle (start source,
    end reason) and anything the transcript lacks (a call made after it was last
    written, a prompt it does not show). Tool calls match on their call id.

    A journal read alone is put in time order, stably: OpenCode's plugin runs its calls side
    by side, so its lines can land out of order, each with OpenCode's own `time`.
    """
    if not transcript:
        return in_time_order(journal)
    if not journal:
        return list(transcript)
    seen_ids = {o.meta.get("tool_use_id") for o in transcript if o.kind == "tool" and o.meta.get("tool_use_id")}
    seen_prompts = {_norm(o.text) for o in transcript if o.kind == "prompt"}
    has_stops = any(o.kind == "stop" for o in transcript)
    last_transcript = max((time_key(o.time) for o in transcript), default=0.0)
    merged = list(transcript)
    for o in journal:
        if o.kind == "tool":
            call_id = o.meta.get("tool_use_id")
            if call_id and call_id in seen_ids:
                continue
            if not call_id and time_key(o.time) <= last_transcript:
                continue  # an unnamed call the transcript already covers
        elif o.kind == "prompt":
            if _norm(o.text) in seen_prompts:
                continue
        elif o.kind == "stop" and has_stops and time_key(o.time) <= last_transcript + 5:
            continue
        merged.append(o)
    order = {id(o): n for n, o in enumerate(merged)}
    # Lifecycle first and last: a session-start sorts before, a session-end after, its peers.
    rank = {"session-start": 0, "session-end": 2}
    merged.sort(key=lambda o: (time_key(o.time) or 0.0, rank.get(o.kind, 1), order[id(o)]))
    return merged


def stamp_ms(value: str | None) -> str:
    """A time in UTC to the millisecond (`2026-11-30T08:41:02.123Z`): sessions that end in the
    same second still have an order."""
    seconds = time_key(value)
    if not seconds:
        return value or ""
    return iso(seconds)[:-1] + f".{int(seconds * 1000) % 1000:03d}Z"
