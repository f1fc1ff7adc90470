"""The session page, the handoff page, and a handoff page as the text a new session reads.

Standard library only. The text a new session reads is rendered from the handoff *page*
(its front matter and sections), not from the summary it was written from, so that a
person's edit of a handoff page is what the next agent is told.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wiki_memory.consolidate.commands import shown as shown_command
from wiki_memory.consolidate.extract import Summary, clean, plan_lines
from wiki_memory.consolidate.session import Session, iso, short_id, time_key
from wiki_memory.pages.fence import inline

NONE = "None recorded."


def agent_slug(agent: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", (agent or "agent").lower()).strip("-") or "agent"


def session_page_path(session: Session) -> str:
    date = session.date
    return f"sessions/{date[:4]}/{date[5:7]}/{date}-{agent_slug(session.agent)}-{session.key}.md"


def handoff_page_path(session: Session) -> str:
    date = session.date
    return f"handoffs/{date[:4]}/{date[5:7]}/{date}-{agent_slug(session.agent)}-{session.key}.md"


def when(stamp: str | None) -> str:
    """`2026-11-30 08:41 UTC`, or the text as given when it is not a time."""
    seconds = time_key(stamp)
    if not seconds:
        return stamp or "unknown time"
    text = iso(seconds)
    return f"{text[:10]} {text[11:16]} UTC"


def _duration(session: Session) -> str:
    seconds = int(time_key(session.end) - time_key(session.start)) if session.start and session.end else 0
    if seconds <= 0:
        return ""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def _bullets(items: Iterable[str], limit: int | None = None, *, keep_last: int = 0) -> str:
    """A Markdown list; past `limit` items, the first and the last `keep_last` with a count between."""
    items = [item for item in items if item]
    if limit is not None and len(items) > limit:
        head = items[: limit - keep_last]
        tail = items[len(items) - keep_last :] if keep_last else []
        items = head + [f"… {len(items) - len(head) - len(tail)} more"] + tail
    lines = [f"- {item}" for item in items]
    return "\n".join(lines) if lines else NONE


def title_words(goal: str, limit: int = 70) -> str:
    text = clean(goal, limit).rstrip(" …")
    return text or "no stated goal"


@dataclass(frozen=True)
class HandoffContent:
    """The sections of a handoff, however they were written (extracted, by an LLM, by hand)."""

    goal: str
    done: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    open: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()
    related: tuple[str, ...] = ()  # memory pages (paths)


def goal_line(summary: Summary) -> str:
    """The goal in the user's words, with the slash commands and persona or custom prompts the
    session ran named as such (their text is never the goal)."""
    goal = clean(summary.goal, 1000)
    # A goal that is a command run ("Ran /erk:plan-implement 8371") names it already.
    others = [name for name in summary.invoked if not re.match(rf"Ran {re.escape(name)}(\s|:|$)", goal)]
    if not others:
        return goal
    ran = ", ".join(others)
    return f"{goal} (the session ran {ran})" if goal else f"The session ran {ran}; no request in the user's own words."


def content_from_summary(summary: Summary) -> HandoffContent:
    return HandoffContent(
        goal=goal_line(summary),
        done=summary.done,
        failed=summary.failed,
        open=summary.open,
        files=summary.files,
        requests=tuple(clean(r, 300) for r in summary.requests[-5:]),
        related=summary.memory,
    )


def handoff_body(content: HandoffContent, session_page: str | None, transcript: str | None = None) -> str:
    goal = content.goal or "No goal was stated (the session had no prompt of substance)."
    if content.requests:
        goal += "\n\nLater requests:\n\n" + _bullets(content.requests)
    where = []
    if session_page:
        where.append(f"Session record: [[{session_page}]]")
    where.extend(f"Memory: [[{path}]]" for path in content.related)
    if transcript:
        where.append(f"Transcript (on the machine that ran it): `{transcript}`")
    sections = {
        "Goal": goal,
        "Done": _bullets(content.done, 25),
        "Failed or abandoned approaches": _bullets(content.failed, 25),
        "Open items / next steps": _bullets(content.open, 25),
        "Files touched": _bullets((f"`{f}`" for f in content.files), 60),
        "Where to look": _bullets(where),
    }
    return "\n\n".join(f"## {name}\n\n{text}" for name, text in sections.items()) + "\n"


def session_body(summary: Summary, handoff_page: str | None, llm_summary: str | None = None) -> str:
    """The session page: the facts of the session, for a person or an agent digging deeper."""
    s = summary.session
    rows = [
        ("agent", s.agent + (f" ({s.model})" if s.model else "")),
        ("session", f"`{s.session_id}`"),
        ("branch", f"`{s.branch}`" if s.branch else ""),
        ("directory", f"`{s.cwd}`" if s.cwd else ""),
        ("started", when(s.start) + (f" ({s.source})" if s.source and s.source != "transcript" else "")),
        (
            "ended",
            when(s.end)
            + (f" ({s.end_reason})" if s.end_reason else "")
            + ("" if s.ended else " (last event; no session end was recorded)"),
        ),
        ("duration", _duration(s)),
        ("handoff", f"[[{handoff_page}]]" if handoff_page else ""),
    ]
    parts = ["| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows if v)]
    if llm_summary:
        parts.append(f"## Summary\n\n{llm_summary.strip()}")
    goal = _quote(summary.goal) if summary.goal else "No request in the user's own words."
    if summary.invoked:
        goal += f"\n\nThe session ran {', '.join(summary.invoked)}."
    parts.append(f"## Goal\n\n{goal}")
    if summary.requests:
        parts.append("## Later requests\n\n" + _bullets((clean(r, 500) for r in summary.requests), 25, keep_last=20))
    if s.plan:
        parts.append("## Plan\n\n" + _bullets(plan_lines(s.plan), 40))
    if summary.edits:
        parts.append(
            "## Files touched\n\n"
            + _bullets((f"`{f}` ({n} edit{'s' if n != 1 else ''})" for f, n in summary.edits.items()), 60)
        )
    if summary.reads:
        shown = summary.reads[:25]
        more = f"\n- … and {len(summary.reads) - 25} more" if len(summary.reads) > 25 else ""
        parts.append("## Files read\n\n" + _bullets(f"`{f}`" for f in shown) + more)
    if summary.commands:
        lines = []
        for run in summary.commands[:80]:
            mark = "ok" if run.ok else run.outcome
            detail = f": {run.error}" if run.error and not run.ok else ""
            lines.append(f"`{shown_command(run.command, 200)}` ({mark}){detail}")
        more = f"\n- … and {len(summary.commands) - 80} more" if len(summary.commands) > 80 else ""
        parts.append("## Commands\n\n" + _bullets(lines) + more)
    if summary.stories:
        parts.append("## Failures and what followed\n\n" + _bullets(summary.stories, 30, keep_last=10))
    if summary.failed:
        parts.append("## Failed or abandoned\n\n" + _bullets(summary.failed, 30))
    if summary.open:
        parts.append("## Left open\n\n" + _bullets(summary.open, 30))
    if summary.memory:
        parts.append("## Memory\n\n" + _bullets(f"[[{p}]]" for p in summary.memory))
    if summary.final:
        parts.append("## Final answer\n\n" + _quote(summary.final[:4000]))
    parts.append("## Counts\n\n" + _counts(summary))
    if s.transcript_path:
        parts.append(f"Transcript (on the machine that ran it): `{s.transcript_path}`")
    return "\n\n".join(parts) + "\n"


def _quote(text: str) -> str:
    lines = text.strip().splitlines()
    return "\n".join(f"> {line}" if line.strip() else ">" for line in lines)


def _counts(summary: Summary) -> str:
    s = summary.session
    by_tool: dict[str, int] = {}
    for step in s.steps:
        by_tool[step.tool] = by_tool.get(step.tool, 0) + 1
    tools = ", ".join(f"{name} {n}" for name, n in sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0])))
    errors = sum(1 for step in s.steps if step.error)
    items = [
        f"prompts: {len(s.real_prompts)}",
        f"tool calls: {len(s.steps)}" + (f" ({tools})" if tools else ""),
        f"errors: {errors}",
        f"files edited: {len(summary.edits)}",
        f"commands: {len(summary.commands)}",
        f"events: {s.events}",
    ]
    if s.compactions:
        items.append(f"compactions: {s.compactions}")
    return "\n".join(f"- {item}" for item in items)


# A handoff page as what the next session reads -----------------------------------------------


def _sections(body: str) -> dict[str, str]:
    found: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in body.splitlines():
        m = re.match(r"^##\s+(.+?)\s*#*\s*$", line)
        if m:
            if current is not None:
                found[current] = "\n".join(lines).strip()
            current, lines = m.group(1).strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        found[current] = "\n".join(lines).strip()
    return found


def _plain(text: str) -> str:
    """Markdown links as their targets; no page-only decoration."""
    text = re.sub(r"\[\[([^\]|]+)\|([^\]]+)\]\]", r"\2 (\1)", text)
    text = re.sub(r"\[\[([^\]]+)\]\]", r"\1", text)
    return text


def _items(text: str) -> tuple[list[str], str]:
    """(bullet items, the prose before them) of a section."""
    bullets: list[str] = []
    prose: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped == NONE:
            continue
        m = re.match(r"^([-*•]|\d+[.)])\s+(.*)$", stripped)
        if m:
            bullets.append(_plain(m.group(2)).strip())
        elif line.startswith(("  ", "\t")) and bullets:
            bullets[-1] += " " + _plain(stripped)
        else:
            prose.append(_plain(stripped))
    return bullets, " ".join(prose)


# Section names as a handoff page may spell them -> the label the next session reads.
_LABELS = [
    (re.compile(r"^(goal|summary|objective)", re.I), "Goal"),
    (re.compile(r"^done|^completed|^what was done", re.I), "Done"),
    (re.compile(r"^fail|^abandon|^dead ends?", re.I), "Failed or abandoned"),
    (re.compile(r"^(open|next|todo|remaining)", re.I), "Open items / next steps"),
    (re.compile(r"^questions?|^open questions", re.I), "Open questions"),
    (re.compile(r"^files", re.I), "Files touched"),
    (re.compile(r"^where to look|^related|^see also", re.I), "Where to look"),
]


def _label(name: str) -> str:
    if re.match(r"^open questions", name, re.I):
        return "Open questions"
    for pattern, label in _LABELS:
        if pattern.match(name):
            return label
    return name


def handoff_header(meta: Mapping[str, Any], path: str) -> str:
    """The first two lines of a handoff as handed out: who, when, where its record is. Each
    value from front matter is one line and defused (`pages.fence.inline`)."""

    agent = inline(meta.get("agent") or "an agent", 80)
    sid = inline(meta.get("session_id") or "", 80)
    if meta.get("handoff_kind") == "explicit":
        who = agent if meta.get("agent") else inline(meta.get("author") or "a person", 80)
        at = inline(when(str(meta.get("ended") or meta.get("created") or "")), 40)
        line = f"From a handoff written by {who} at {at}"
        if sid:
            line += f", session {short_id(sid)}"
    else:
        line = f"From {agent}" + (f", session {short_id(sid)}" if sid else "")
        line += f", ended {inline(when(str(meta.get('ended') or meta.get('updated') or '')), 40)}"
        if meta.get("in_progress"):
            line = line.replace(", ended ", ", last active ")
    if meta.get("branch"):
        line += f" on branch {inline(meta['branch'], 120)}"
    if meta.get("in_progress"):
        line += " (no session end was recorded: it may still be running)"
    record = inline(meta.get("session_page") or "", 300)
    line += f"\n(full record: {record})" if record else f"\n(handoff page: {inline(path, 300)})"
    return line


_CUT = re.compile(r"^… (\d+) more$")


def handoff_text(meta: Mapping[str, Any], body: str, path: str, *, compact: bool = False, max_items: int = 10) -> str:
    """A handoff page as plain text: a header, then its sections as short labelled lists."""
    out = [handoff_header(meta, path)]
    sections = _sections(body)
    if not sections and body.strip():
        # A hand-written handoff without sections: its text is the handoff.
        out.append(clean(_plain(re.sub(r"^#.*$", "", body, flags=re.M)), 1500))
        return "\n\n".join(out)
    limit = 3 if compact else max_items
    width = 240 if compact else 400
    record = str(meta.get("session_page") or "")
    for name, text in sections.items():
        label = _label(name)
        if compact and label not in ("Goal", "Open items / next steps", "Failed or abandoned", "Files touched"):
            continue
        bullets, prose = _items(text)
        if label == "Goal":
            prose = re.sub(r"\s*Later requests:\s*$", "", prose)
            goal = clean(prose, 300 if compact else 800)
            if not goal and not bullets:
                continue
            lines = [f"Goal: {goal}" if goal else "Goal:"]
            if bullets and not compact:
                lines.append("Later requests:")
                lines.extend(f"- {clean(b, 300)}" for b in bullets[-4:])
            out.append("\n".join(lines))
            continue
        if label == "Files touched":
            files = [b.strip("`") for b in bullets] or ([prose] if prose else [])
            if files:
                shown = files[: 12 if compact else 30]
                more = f" and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
                out.append(f"Files touched: {', '.join(shown)}{more}")
            continue
        if label == "Where to look":
            links = [b for b in bullets if record not in b or not record]
            links = [re.sub(r"^(Memory|Session record):\s*", "", b) for b in links if not b.startswith("Transcript")]
            if links:
                out.append("Related memory: " + ", ".join(links[:8]))
            continue
        items = bullets + ([prose] if prose and not bullets else [])
        # The page's own "… N more" (a list cut when it was written) is a count, not an item.
        cut = next((int(m.group(1)) for m in (_CUT.match(item) for item in items) if m), 0)
        items = [item for item in items if not _CUT.match(item)]
        if not items:
            continue
        shown = [f"- {clean(item, width)}" for item in items[:limit]]
        if len(items) > limit:
            kept = f" ({cut} more were not kept)" if cut else ""
            shown.append(f"- … {len(items) - limit} more in {path}{kept}")
        elif cut:
            shown.append(f"- … {cut} more were not kept")
        out.append(f"{label}:\n" + "\n".join(shown))
    return "\n\n".join(out)


def explicit_body(
    summary: str,
    done: Sequence[str],
    failed: Sequence[str],
    next_steps: Sequence[str],
    open_questions: Sequence[str],
    files: Sequence[str],
) -> str:
    sections = [
        ("Summary", summary.strip()),
        ("Done", _bullets(done)),
        ("Failed or abandoned approaches", _bullets(failed)),
        ("Next steps", _bullets(next_steps)),
        ("Open questions", _bullets(open_questions)),
        ("Files touched", _bullets(f"`{f}`" for f in files)),
    ]
    return "\n\n".join(f"## {name}\n\n{text}" for name, text in sections) + "\n"


__all__ = [
    "HandoffContent",
    "content_from_summary",
    "explicit_body",
    "handoff_body",
    "handoff_page_path",
    "handoff_text",
    "session_body",
    "session_page_path",
    "title_words",
    "when",
]
