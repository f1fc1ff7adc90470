"""Handoffs and distilled pages judged on real sessions, labelled by hand (issue 25).

Every labelled session (`scripts/data/sessions/<part>/*.json`, schema in the README there)
runs twice, each time in a throwaway WIKI_MEMORY_HOME and code directory, the sessions of
one repository in order in the same home (so a later session meets what the earlier ones
left):

- `hook`: the transcript's events replayed as the agent's own hook payloads through the real
  hook entry point (`wiki_memory.hook.main.main`, what `wiki-memory hook AGENT EVENT` runs),
  SessionStart to SessionEnd; the consolidation SessionEnd starts runs synchronously (the
  worker's own code, timed) instead of in a detached process;
- `import`: `wiki-memory import` (the library call under it) of the session file.

After each session, the handoff the next session would be handed (`Memory.handoff()`, what
`wiki-memory handoff` prints) and the pages distilled so far are scored against the labels:

- handoff items (the lines under Done / Failed / Open and the like): right (matches a label
  of its own section), wrong (matches a label of another section, e.g. a resolved problem
  listed as failed, or a `must_not_say`), invented (matches no label: printed in full, for a
  person to judge; `judgements.json` records verdicts), missed (labels not found);
- the goal line: right when every `goal.match` string occurs;
- distilled pages: correct (match a `facts` label), wrong (match `not_facts`, or judged so),
  unjudged (printed); labels found / total per kind.

A label's `match` strings must all occur in the line (case-insensitive); "a|b" is either.
The session files are not in the repository: `--corpus DIR` (default `../corpus/files` next
to the checkout) holds them; see scripts/data/sessions/README.md for where each comes from.

    python scripts/eval_sessions.py --part tune
    python scripts/eval_sessions.py --part all --json bench-results/sessions.json
    python scripts/eval_sessions.py --part smoke --only hook
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "scripts" / "data" / "sessions"
PARTS = ("smoke", "tune", "holdout", "holdout2", "holdout3", "holdout4", "holdout5")
ITEM_KINDS = ("done", "failed", "open", "resolved_problems")
FACT_KINDS = ("gotcha", "procedure", "preference", "decision", "fact")
#: the session files: `../corpus/files` next to the checkout (or next to its worktrees' folder).
DEFAULT_CORPUS = next(
    (p / "corpus" / "files" for p in (REPO.parent, REPO.parent.parent) if (p / "corpus" / "files").is_dir()),
    REPO.parent / "corpus" / "files",
)
SHARED_TRANSCRIPTS = next(
    (p / "shared" / "data" / "transcripts" for p in REPO.parents if (p / "shared" / "data" / "transcripts").is_dir()),
    REPO.parent / "shared" / "data" / "transcripts",
)


# Labels and matching ----------------------------------------------------------------------------


def load_labels(part: str, labels_dir: Path = DATA) -> list[dict[str, Any]]:
    """The label files of a part (`all`: tune and holdout), each with its `part`."""
    parts = ("tune", "holdout") if part == "all" else (part,)
    out = []
    for name in parts:
        for path in sorted((labels_dir / name).glob("*.json")):
            label = json.loads(path.read_text(encoding="utf-8"))
            label.setdefault("part", name)
            out.append(label)
    return out


def load_judgements(path: Path = DATA / "judgements.json") -> dict[tuple[str, str], dict[str, str]]:
    """(session id, exact text) -> {"verdict", "reason"}: a person's verdict on a printed line."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(str(j["session"]), str(j["text"])): j for j in data.get("judgements", [])}


def matches(match: Sequence[str], text: str) -> bool:
    """Every string of `match` occurs in `text` (case-insensitive); "a|b" is either."""
    low = text.lower()
    return bool(match) and all(any(alt.strip().lower() in low for alt in m.split("|") if alt.strip()) for m in match)


# The handoff, read back ---------------------------------------------------------------------------

SECTIONS = (  # a heading -> the section it is (first match wins)
    (re.compile(r"^goal", re.I), "goal"),
    (re.compile(r"later requests|^requests", re.I), "requests"),
    (re.compile(r"resolved|fixed|recovered", re.I), "resolved"),
    (re.compile(r"fail|abandon|unresolved|error", re.I), "failed"),
    (re.compile(r"open|next|todo|remaining|left|pending|interrupt|unanswered", re.I), "open"),
    (re.compile(r"^done|complete|what was done|accomplished|changes made", re.I), "done"),
    (re.compile(r"^files", re.I), "files"),
)
#: the label kinds a line of a section may match and be right.
OWN = {
    "done": ("done", "resolved_problems"),
    "failed": ("failed",),
    "open": ("open",),
    "resolved": ("resolved_problems", "done"),
}
HEADER = re.compile(r"^From (\S+), session (\S+?)[,\s]")
PAGES = re.compile(r"^(Preferences|Procedures|Decisions|Gotchas|Facts|Notes)\b[^:]*:\s*$")
HEADING = re.compile(r"^([A-Z][^:]{0,70}):\s*(.*)$")


@dataclass
class Block:
    """One handoff in the text a session starts with."""

    header: str = ""
    goal: str | None = None
    items: list[tuple[str, str]] = field(default_factory=list)  # (section, line)
    files: list[str] = field(default_factory=list)
    text: str = ""


def section_of(heading: str) -> str:
    for pattern, name in SECTIONS:
        if pattern.search(heading):
            return name
    return "other"


def parse_handoff(text: str) -> list[Block]:
    """The handoff blocks of a SessionStart text, newest first, each with its goal, its items
    by section and its files; the text after the handoffs (preferences, notes) is left out."""
    blocks: list[Block] = []
    current: Block | None = None
    section = "other"
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("</") or PAGES.match(line):
            break  # the pages after the handoffs
        if HEADER.match(line):
            current = Block(header=line)
            blocks.append(current)
            section = "other"
            continue
        if current is None:
            if not line.strip() or line.startswith("<"):
                continue
            current = Block()  # a handoff written without a header
            blocks.append(current)
        current.text += line + "\n"
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(("- ", "* ")) or re.match(r"^\d+\. ", stripped):
            item = re.sub(r"^(?:[-*]|\d+\.)\s+", "", stripped)
            if section == "files":
                current.files.extend(_files(item))
            elif section in OWN or section == "requests":
                current.items.append((section, item))
            continue
        heading = HEADING.match(stripped)
        if heading and not line.startswith(" "):
            section = section_of(heading.group(1))
            rest = heading.group(2).strip()
            if section == "goal":
                current.goal = rest
            elif section == "files" and rest:
                current.files.extend(_files(rest))
            elif rest and section in OWN:
                current.items.append((section, rest))
            continue
        if section == "goal" and current.goal is not None:
            current.goal = f"{current.goal} {stripped}".strip()
    return blocks


def _files(text: str) -> list[str]:
    text = re.sub(r"\s*\(\+?\d+ more\)\s*$", "", text)
    return [f.strip(" `") for f in text.split(",") if f.strip(" `")]


# Scoring -------------------------------------------------------------------------------------------


@dataclass
class Score:
    """The figures of one session (or a total)."""

    right: int = 0
    wrong: int = 0
    invented: int = 0
    missed: int = 0
    context: int = 0  # later requests quoted: the user's own words, not judged
    ok_unlabelled: int = 0
    goal_right: int = 0
    goal_total: int = 0
    displaced: int = 0  # a no-work session's handoff shown first
    files_right: int = 0
    files_extra: int = 0
    files_missed: int = 0
    pages_correct: int = 0
    pages_useless: int = 0
    pages_wrong: int = 0
    pages_unjudged: int = 0
    found: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    sessions: int = 0
    failed_imports: int = 0
    lines: list[str] = field(default_factory=list)  # what a person should look at

    def add(self, other: Score) -> None:
        for name in (
            "right wrong invented missed context ok_unlabelled goal_right goal_total displaced files_right "
            "files_extra files_missed pages_correct pages_useless pages_wrong pages_unjudged seconds sessions "
            "failed_imports"
        ).split():
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.found.update(other.found)
        self.total.update(other.total)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("found", "total", "lines")}
        out["found"] = dict(self.found)
        out["total"] = dict(self.total)
        out["items_found"] = (
            f"{sum(self.found[k] for k in ITEM_KINDS[:3])}/{sum(self.total[k] for k in ITEM_KINDS[:3])}"
        )
        return out


def score_block(
    label: Mapping[str, Any], block: Block | None, judgements: Mapping[tuple[str, str], Mapping[str, str]]
) -> Score:
    """Score one session's handoff block against its label."""
    score = Score()
    sid = str(label["id"])
    for kind in ITEM_KINDS[:3]:
        score.total[kind] += len(label.get(kind) or ())
    if not label.get("no_work"):
        score.goal_total = 1
    if block is None:
        score.missed = sum(score.total[k] for k in ITEM_KINDS[:3])
        return score
    if not label.get("no_work") and block.goal is not None:
        goal = label.get("goal") or {}
        bad = any(matches(m.get("match") or (), block.goal) for m in label.get("must_not_say") or ())
        if matches(goal.get("match") or (), block.goal) and not bad:
            score.goal_right = 1
        else:
            score.lines.append(f"goal wrong: {block.goal!r} (label: {goal.get('text')!r})")
    found: dict[str, set[int]] = defaultdict(set)
    for section, line in block.items:
        if section == "requests":
            score.context += 1
            for kind in ("done", "open"):
                for n, item in enumerate(label.get(kind) or ()):
                    if matches(item.get("match") or (), line):
                        found[kind].add(n)
            continue
        verdict = judgements.get((sid, line), {}).get("verdict")
        if any(matches(m.get("match") or (), line) for m in label.get("must_not_say") or ()):
            score.wrong += 1
            score.lines.append(f"wrong ({section}, must not say): {line}")
            continue
        own = [
            (kind, n)
            for kind in OWN[section]
            for n, item in enumerate(label.get(kind) or ())
            if matches(item.get("match") or (), line)
        ]
        other = [
            kind
            for kind in ITEM_KINDS
            if kind not in OWN[section]
            for item in label.get(kind) or ()
            if matches(item.get("match") or (), line)
        ]
        if own:
            score.right += 1
            for kind, n in own:
                found[kind].add(n)
        elif other:
            score.wrong += 1
            score.lines.append(f"wrong ({section}, is {'/'.join(sorted(set(other)))}): {line}")
        elif verdict == "ok-unlabelled":
            score.ok_unlabelled += 1
        else:
            score.invented += 1
            score.lines.append(f"invented ({section}): {line}")
    for kind in ITEM_KINDS:
        score.found[kind] += len(found[kind])
    score.total["resolved_problems"] += len(label.get("resolved_problems") or ())
    score.missed = sum(score.total[k] - score.found[k] for k in ITEM_KINDS[:3])
    for kind in ITEM_KINDS:
        for n, item in enumerate(label.get(kind) or ()):
            if n not in found[kind]:
                score.lines.append(f"missed ({kind}): {item.get('text')}")
    touched = [str(f) for f in label.get("files_touched") or ()]
    shown = [f for f in block.files if f]
    hit = {t for t in touched for f in shown if _same_file(f, t)}
    score.files_right = sum(1 for f in shown if any(_same_file(f, t) for t in touched))
    score.files_extra = len(shown) - score.files_right
    score.files_missed = len(set(touched) - hit)
    return score


def _same_file(shown: str, labelled: str) -> bool:
    a, b = shown.strip("`/ ").lower(), labelled.strip("`/ ").lower()
    return bool(a and b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def score_pages(
    label: Mapping[str, Any],
    pages: Mapping[str, str],
    repo_labels: Sequence[Mapping[str, Any]],
    judgements: Mapping[tuple[str, str], Mapping[str, str]],
) -> Score:
    """Score the pages a session's distillation wrote (`pages`: path -> text) and count the
    facts of the label found in them."""
    score = Score()
    sid = str(label["id"])
    facts = [f for lab in repo_labels for f in lab.get("facts") or ()]
    not_facts = [f for lab in repo_labels for f in lab.get("not_facts") or ()]
    for path, text in sorted(pages.items()):
        verdict = judgements.get((sid, path), {}).get("verdict")
        if verdict == "wrong" or any(matches(f.get("match") or (), text) for f in not_facts):
            score.pages_wrong += 1
            score.lines.append(f"page wrong: {path}")
        elif verdict == "useless":
            score.pages_useless += 1
        elif verdict == "correct" or any(matches(f.get("match") or (), text) for f in facts):
            score.pages_correct += 1
        else:
            score.pages_unjudged += 1
            body = " ".join(text.split("\n---", 2)[-1].split())[:300]
            score.lines.append(f"page unjudged: {path}: {body}")
    return score


def facts_found(label: Mapping[str, Any], pages: Mapping[str, str]) -> tuple[Counter, Counter]:
    """(found, total) of the label's facts by kind, in the pages."""
    found: Counter = Counter()
    total: Counter = Counter()
    for fact in label.get("facts") or ():
        kind = str(fact.get("kind") or "fact")
        total[f"fact:{kind}"] += 1
        if any(matches(fact.get("match") or (), text) for text in pages.values()):
            found[f"fact:{kind}"] += 1
    return found, total


# Running the sessions -----------------------------------------------------------------------------


@dataclass
class Session:
    label: dict[str, Any]
    path: Path
    observations: list[Any]
    start: str
    cwd: str | None
    session_id: str


def corpus_file(label: Mapping[str, Any], corpus: Path) -> Path | None:
    for folder in (corpus, SHARED_TRANSCRIPTS):
        path = folder / str(label["file"])
        if path.is_file():
            return path
    return None


def read_session(label: dict[str, Any], path: Path) -> Session:
    from wiki_memory.capture.adapter import load
    from wiki_memory.consolidate.session import build_session

    observations = load(label["agent"]).read_transcript(path)
    built = build_session(observations) if observations else None
    return Session(
        label,
        path,
        observations,
        (built.start if built else "") or "",
        built.cwd if built else None,
        built.session_id if built else path.stem,
    )


class Home:
    """A throwaway WIKI_MEMORY_HOME, HOME and code directory for one repository's sessions."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.code = base / "code"
        self.code.mkdir(parents=True)
        (base / "home").mkdir()
        self.env = {
            "HOME": str(base / "home"),
            "WIKI_MEMORY_HOME": str(base / "wm-home"),
            "GIT_AUTHOR_NAME": "Pat Person",
            "GIT_AUTHOR_EMAIL": "pat@example.com",
            "GIT_COMMITTER_NAME": "Pat Person",
            "GIT_COMMITTER_EMAIL": "pat@example.com",
        }
        (self.code / "README.md").write_text("# project\n")
        for args in (("init", "-q", "-b", "main"), ("add", "."), ("commit", "-qm", "first")):
            subprocess.run(["git", *args], cwd=self.code, env={**os.environ, **self.env}, check=True)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def copy(self, session: Session) -> Path:
        """The session file with its working directory made the code directory, so the
        project, and the files' paths, are this home's."""
        target = self.base / "transcripts" / session.path.name
        target.parent.mkdir(exist_ok=True)
        data = session.path.read_bytes()
        if session.cwd and len(session.cwd) > 1:
            data = data.replace(session.cwd.encode(), str(self.code).encode())
        target.write_bytes(data)
        return target

    def project(self) -> Any:
        from wiki_memory.config import resolve_project

        return resolve_project(self.code)

    def wiki_pages(self) -> dict[str, str]:
        """path -> text of every durable page (not sessions, handoffs or the wiki's own files)."""
        wiki = self.project().wiki
        if not wiki.is_dir():
            return {}
        out = {}
        for path in wiki.rglob("*.md"):
            rel = path.relative_to(wiki).as_posix()
            if rel.startswith(("sessions/", "handoffs/", ".")) or "/" not in rel:
                continue
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
        return out

    def handoff_text(self) -> str:
        from wiki_memory.memory import Memory

        with Memory(self.project()) as memory:
            view = memory.handoff()
        return (view.text or "") if view is not None else ""

    def session_page(self, session_id: str) -> str | None:
        wiki = self.project().wiki
        for path in sorted(wiki.glob("sessions/*/*/*.md")) if wiki.is_dir() else ():
            head = path.read_text(encoding="utf-8", errors="replace")[:2000]
            if f"session_id: {session_id}\n" in head or f"session_id: '{session_id}'\n" in head:
                return path.relative_to(wiki).as_posix()
        return None


def replay_payloads(agent: str, observations: Sequence[Any], cwd: str, transcript: Path) -> list[tuple[str, dict]]:
    """The hook calls the agent would have made for these observations: (event, payload)."""
    from wiki_memory.capture.toolcalls import EDIT_TOOLS, READ_TOOLS

    sid = next((o.session_id for o in observations), "session")
    calls: list[tuple[str, dict]] = []
    names = {
        "claude-code": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"),
        "codex": ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"),
        "gemini": ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"),
        "opencode": ("session.created", "chat.message", None, "message.part.updated", "session.idle", None),
    }[agent]
    start, prompt_event, pre, post, stop, end = names

    def base(event: str, o: Any) -> dict[str, Any]:
        # `_time`: when it happened, for the hook's clock (taken off before the call).
        payload: dict[str, Any] = {
            "session_id": sid,
            "cwd": cwd,
            "hook_event_name": event,
            "_time": o.time if o else "",
        }
        if agent == "opencode":
            from wiki_memory.consolidate.session import time_key

            payload["time"] = int(time_key(o.time) * 1000) if o is not None and o.time else None
        elif agent != "opencode":
            payload["transcript_path"] = str(transcript)
        return payload

    def tool_input(o: Any) -> dict[str, Any]:
        tool = str(o.tool or "").lower()
        if o.plan:  # the plan as the planning tool carried it
            if tool == "update_plan":
                return {"plan": [{"step": p.text, "status": p.status} for p in o.plan]}
            if tool in ("taskcreate", "taskupdate"):
                p = o.plan[0]
                return {"subject": p.text, "status": p.status or None, "taskId": p.id}
            return {"todos": [{"content": p.text, "status": p.status, "id": p.id} for p in o.plan]}
        files = [f if f.startswith("/") else f"{cwd}/{f}" for f in o.files]
        if (tool in EDIT_TOOLS or tool in READ_TOOLS) and files:
            key = "filePath" if agent == "opencode" else "file_path"
            return {key: files[0]}
        return {"command": o.input or ""}

    last_prompt = ""
    first = observations[0] if observations else None
    calls.append((start, {**base(start, first), "source": "startup", **({"info": {}} if agent == "opencode" else {})}))
    for o in observations:
        if o.kind == "prompt":
            last_prompt = o.text or ""
            if agent == "opencode":
                calls.append((prompt_event, {**base(prompt_event, o), "parts": [{"type": "text", "text": o.text}]}))
            else:
                calls.append((prompt_event, {**base(prompt_event, o), "prompt": o.text}))
        elif o.kind == "tool":
            data = tool_input(o)
            tool = "Bash" if agent == "codex" and o.tool in ("shell", "exec_command", "local_shell") else o.tool
            if pre:
                calls.append((pre, {**base(pre, o), "tool_name": tool, "tool_input": data}))
            code = o.meta.get("exit_code")
            call_id = str(o.meta.get("tool_use_id") or "")
            if agent == "claude-code":
                if o.error:
                    event = "PostToolUseFailure"
                    payload = {"error": f"Exit code {code}\n{o.output or ''}" if code else (o.output or "error")}
                else:
                    event, payload = post, {"tool_response": o.output or ""}
                calls.append((event, {**base(event, o), "tool_name": tool, "tool_input": data, "tool_use_id": call_id,
                                      **payload}))  # fmt: skip
            elif agent == "codex":
                calls.append((post, {**base(post, o), "tool_name": tool, "tool_input": data, "tool_use_id": call_id,
                                     "tool_response": o.output or ""}))  # fmt: skip
            elif agent == "gemini":
                content = o.output or ""
                if o.error and str(tool).lower() in ("run_shell_command", "shell"):
                    content = f"Output: {content}\nExit Code: {code or 1}"
                response: dict[str, Any] = {"llmContent": content, "returnDisplay": o.output or ""}
                if o.error and str(tool).lower() not in ("run_shell_command", "shell"):
                    response["error"] = o.output or "error"
                calls.append(
                    (post, {**base(post, o), "tool_name": tool, "tool_input": data, "tool_response": response})
                )
            else:
                state: dict[str, Any] = {"status": "error" if o.error else "completed", "input": data}
                state["error" if o.error else "output"] = o.output or ""
                if code is not None:
                    state["metadata"] = {"exit": code}
                part = {"type": "tool", "tool": o.tool, "callID": call_id, "state": state}
                calls.append((post, {**base(post, o), "part": part}))
        elif o.kind == "stop" and not o.error:
            if agent == "gemini":
                calls.append((stop, {**base(stop, o), "prompt": last_prompt, "prompt_response": o.text or ""}))
            elif agent == "opencode":
                calls.append((stop, {**base(stop, o), "text": o.text or ""}))
            else:
                calls.append((stop, {**base(stop, o), "last_assistant_message": o.text or ""}))
        elif o.kind == "compact" and agent == "claude-code":
            calls.append(("PreCompact", {**base("PreCompact", o), "trigger": "auto"}))
    if end:
        calls.append((end, {**base(end, observations[-1] if observations else None), "reason": "other"}))
    return calls


def run_hooks(home: Home, session: Session, timings: dict[str, float]) -> str | None:
    """Replay a session through the hook entry point; returns why it could not, or None."""
    from wiki_memory.hook import background, worker
    from wiki_memory.hook import main as hook

    copy = home.copy(session)
    from wiki_memory.capture.adapter import load

    observations = load(session.label["agent"]).read_transcript(copy)
    if not observations:
        return "no session records"
    payloads = replay_payloads(session.label["agent"], observations, str(home.code), copy)

    def run_worker(project: Any, args: Sequence[str]) -> int | None:
        """What a hook starts in the background (SessionEnd's consolidation, SessionStart's
        pending work) runs here, to its end, before the next hook call; a session's is timed."""
        began = time.perf_counter()
        worker.main([background.project_arg(project), *args])
        if args[0] == "session":
            timings[args[1]] = time.perf_counter() - began
        return None

    # A hook stamps what it records with the time of the call (Claude Code's payloads carry
    # none): the replay's calls happen when the transcript says they did, as live ones do.
    from wiki_memory.capture import adapter

    now = {"time": ""}
    original_spawn, original_clock = background.spawn, adapter.utc_now
    background.spawn = run_worker  # type: ignore[assignment]
    adapter.utc_now = lambda: now["time"] or original_clock()  # type: ignore[assignment]
    try:
        for event, payload in payloads:
            now["time"] = str(payload.pop("_time", "") or "")
            stdin = io.BytesIO(json.dumps(payload).encode())
            hook.main([session.label["agent"], event], stdin, io.BytesIO(), os.environ)
    finally:
        background.spawn, adapter.utc_now = original_spawn, original_clock  # type: ignore[assignment]
    return None


def run_import(home: Home, session: Session, extra: Sequence[Session], timings: dict[str, float]) -> str | None:
    from wiki_memory.memory import import_transcripts

    files = [home.copy(session), *(home.copy(s) for s in extra)]
    began = time.perf_counter()
    report = import_transcripts(session.label["agent"], files, project=home.project())
    timings[session.session_id] = time.perf_counter() - began
    failed = [f"{Path(p).name}: {r}" for p, r in report.failed]
    return "; ".join(failed) or None


def evaluate(
    labels: Sequence[dict[str, Any]],
    corpus: Path,
    modes: Sequence[str],
    judgements: Mapping[tuple[str, str], Mapping[str, str]],
    say: Any = print,
) -> dict[str, Any]:
    """Run and score every labelled session; returns the figures by mode and session."""
    by_repo: dict[str, list[Session]] = defaultdict(list)
    results: dict[str, Any] = {"missing": [], "modes": {}}
    for label in labels:
        path = corpus_file(label, corpus)
        if path is None:
            results["missing"].append(label["id"])
            continue
        by_repo[str(label.get("repo") or label["id"])].append(read_session(label, path))
    children = {s.label.get("parent") for group in by_repo.values() for s in group if s.label.get("parent")}
    for mode in modes:
        total = Score()
        per_session: dict[str, Any] = {}
        failures: list[str] = []
        for _repo, group in sorted(by_repo.items()):
            group.sort(key=lambda s: (s.start, s.label["id"]))
            repo_labels = [s.label for s in group]
            with tempfile.TemporaryDirectory(prefix="wm-eval-sessions-", ignore_cleanup_errors=True) as tmp:
                home = Home(Path(tmp))
                with home.active():
                    timings: dict[str, float] = {}
                    for session in group:
                        sid = session.label["id"]
                        before = home.wiki_pages()
                        parent = session.label.get("parent")
                        if mode == "import" and parent and any(s.label["id"] == parent for s in group):
                            host = next(s for s in group if s.label["id"] == parent)
                            session_key = host.session_id  # imported with its parent: scored on the parent's
                        else:
                            session_key = session.session_id
                            extra = [s for s in group if s.label.get("parent") == sid] if sid in children else []
                            try:
                                if mode == "hook":
                                    error = run_hooks(home, session, timings)
                                else:
                                    error = run_import(home, session, extra, timings)
                            except Exception as e:  # noqa: BLE001 - one session's failure is a figure, not the end
                                error = f"{type(e).__name__}: {e}"
                            if error:
                                failures.append(f"{sid}: {error}")
                        after = home.wiki_pages()
                        written = {p: t for p, t in after.items() if before.get(p) != t}
                        score = score_session(home, session, session_key, written, repo_labels, judgements)
                        score.seconds = timings.get(session_key, 0.0) if session_key == session.session_id else 0.0
                        score.sessions = 1
                        score.failed_imports = int(any(f.startswith(f"{sid}:") for f in failures))
                        total.add(score)
                        per_session[sid] = {"part": session.label.get("part"), **score.as_dict(), "notes": score.lines}
                        say(_session_line(mode, sid, score))
                        for line in score.lines:
                            say(f"    {line}")
        results["modes"][mode] = {"total": total.as_dict(), "sessions": per_session, "failures": failures}
    return results


def score_session(
    home: Home,
    session: Session,
    session_key: str,
    written: Mapping[str, str],
    repo_labels: Sequence[Mapping[str, Any]],
    judgements: Mapping[tuple[str, str], Mapping[str, str]],
) -> Score:
    """Score what a session starting now is handed, and the pages the session wrote or
    changed (`written`); facts are looked for in every page there is by then."""
    label = session.label
    text = home.handoff_text()
    blocks = parse_handoff(text)
    page = home.session_page(session_key)
    key = Path(page).stem.rsplit("-", 1)[-1] if page else None
    mine = next((b for b in blocks if (page and page in b.text) or (key and key in b.header)), None)
    score = score_block(label, mine, judgements)
    if label.get("no_work") and blocks and mine is not None and blocks[0] is mine and len(blocks) > 1:
        score.displaced = 1
        score.lines.append("a no-work session's handoff comes first")
    pages = home.wiki_pages()
    page_score = score_pages(label, written, repo_labels, judgements)
    found, total = facts_found(label, pages)
    score.add(page_score)
    score.lines.extend(page_score.lines)
    for fact in label.get("facts") or ():
        if not any(matches(fact.get("match") or (), text) for text in pages.values()):
            where = f"file {fact['file']}" if fact.get("source") == "file" and fact.get("file") else "event"
            score.lines.append(f"missed fact ({fact.get('kind') or 'fact'}, {where}): {fact.get('text')}")
    score.found.update(found)
    score.total.update(total)
    return score


def _session_line(mode: str, sid: str, s: Score) -> str:
    goal = "n/a" if not s.goal_total else ("right" if s.goal_right else "WRONG")
    facts = sum(v for k, v in s.found.items() if k.startswith("fact:"))
    facts_total = sum(v for k, v in s.total.items() if k.startswith("fact:"))
    return (
        f"[{mode}] {sid}: goal {goal}; items right {s.right}, wrong {s.wrong}, invented {s.invented}, "
        f"missed {s.missed}; pages correct {s.pages_correct}, wrong {s.pages_wrong}, unjudged {s.pages_unjudged}; "
        f"facts {facts}/{facts_total}; {s.seconds:.2f} s"
    )


def summary_lines(results: Mapping[str, Any]) -> list[str]:
    out = []
    for mode, data in results["modes"].items():
        t = data["total"]
        items_total = sum(t["total"].get(k, 0) for k in ITEM_KINDS[:3])
        items_found = sum(t["found"].get(k, 0) for k in ITEM_KINDS[:3])
        facts_total = sum(v for k, v in t["total"].items() if k.startswith("fact:"))
        facts_found_n = sum(v for k, v in t["found"].items() if k.startswith("fact:"))
        written = t["pages_correct"] + t["pages_useless"] + t["pages_wrong"] + t["pages_unjudged"]
        out += [
            f"== {mode}: {t['sessions']} sessions ==",
            f"goal right: {t['goal_right']}/{t['goal_total']}",
            f"handoff items: right {t['right']}, wrong {t['wrong']}, invented {t['invented']}, "
            f"ok-unlabelled {t['ok_unlabelled']}, quoted requests {t['context']}; missed {t['missed']}",
            f"labelled done/failed/open items found: {items_found}/{items_total} "
            + " ".join(f"{k} {t['found'].get(k, 0)}/{t['total'].get(k, 0)}" for k in ITEM_KINDS),
            f"files touched: right {t['files_right']}, not labelled {t['files_extra']}, missed {t['files_missed']}",
            f"no-work sessions that displaced the handoff: {t['displaced']}",
            f"pages written or changed: {written}, correct {t['pages_correct']}, "
            f"useless {t['pages_useless']}, wrong {t['pages_wrong']}, unjudged {t['pages_unjudged']}",
            f"labelled facts found: {facts_found_n}/{facts_total} "
            + " ".join(
                f"{k[5:]} {t['found'].get(k, 0)}/{t['total'].get(k, 0)}" for k in (f"fact:{n}" for n in FACT_KINDS)
            ),
            f"sessions that failed to run: {len(data['failures'])}" + "".join(f"\n  {f}" for f in data["failures"]),
            f"consolidation / import time: total {t['seconds']:.1f} s, "
            f"mean {t['seconds'] / max(t['sessions'], 1):.2f} s",
        ]
    return out


def import_check(corpus: Path, manifest: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Does every session file of the corpus import? (each alone, in a throwaway home)"""
    ok, failed = [], []
    from wiki_memory.memory import import_transcripts

    for entry in manifest:
        path = corpus / str(entry["file"])
        if not path.is_file():
            continue
        with tempfile.TemporaryDirectory(prefix="wm-eval-import-", ignore_cleanup_errors=True) as tmp:
            home = Home(Path(tmp))
            with home.active():
                try:
                    report = import_transcripts(str(entry["agent"]), [path], project=home.project())
                    problem = "; ".join(r for _, r in report.failed)
                    if not problem and not report.imported and not report.empty:
                        problem = "nothing imported"
                except Exception as e:  # noqa: BLE001
                    problem = f"{type(e).__name__}: {e}"
        (failed if problem else ok).append(f"{entry['id']}: {problem}" if problem else str(entry["id"]))
    return {"imported": len(ok), "failed": failed}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="tune", choices=(*PARTS, "all"))
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default: {DEFAULT_CORPUS}")
    parser.add_argument("--labels", type=Path, default=DATA, help="the folder holding <part>/*.json")
    parser.add_argument("--only", choices=("hook", "import"), help="run one way only")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--quiet", action="store_true", help="print the totals only")
    parser.add_argument("--repo", help="only the sessions of repositories whose name contains this")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "scripts"))
    from evalkit import setup_model_env

    setup_model_env()
    os.environ.setdefault("WIKI_MEMORY_EMBED_MODEL_PATH", "")
    labels = [lab for lab in load_labels(args.part, args.labels) if not args.repo or args.repo in str(lab.get("repo"))]
    if not labels:
        print(f"no labels for part {args.part} in {args.labels}", file=sys.stderr)
        return 2
    modes = (args.only,) if args.only else ("hook", "import")
    say = (lambda line: None) if args.quiet else print
    began = time.time()
    results = evaluate(labels, args.corpus, modes, load_judgements(args.labels / "judgements.json"), say)
    manifest_path = args.labels / "manifest.json"
    if manifest_path.is_file():
        manifest = [
            e
            for e in json.loads(manifest_path.read_text())
            if (args.part == "all" or e.get("part") == args.part) and (not args.repo or args.repo in str(e.get("repo")))
        ]
        results["import_check"] = import_check(args.corpus, manifest)
    results["part"] = args.part
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results["load"] = os.getloadavg()[0]
    results["wall_seconds"] = round(time.time() - began, 1)
    for line in summary_lines(results):
        print(line)
    if results["missing"]:
        print(f"labels without their session file in {args.corpus}: {', '.join(results['missing'])}")
    if "import_check" in results:
        check = results["import_check"]
        print(f"session files that import: {check['imported']}/{check['imported'] + len(check['failed'])}")
        for line in check["failed"]:
            print(f"  could not import {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
