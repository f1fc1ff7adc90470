"""Where each line of a handoff came from: the recorded events behind every item it states.

Consolidation keeps, in the handoff page's front matter (`evidence`), for each line it wrote
(goal, done, failed, open, files), the events it was read from: journal lines, transcript
records, tool call ids. `explain` reads the handoffs a session starting now is handed and
pairs each item with its evidence; a line a person wrote or reworded has none, and says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wiki_memory.consolidate.extract import Summary

_SECTIONS = (
    ("Goal", re.compile(r"^(goal|summary|objective)", re.I)),
    ("Done", re.compile(r"^(done|completed|what was done)", re.I)),
    ("Failed or abandoned", re.compile(r"^(fail|abandon|dead ends?)", re.I)),
    ("Open items / next steps", re.compile(r"^(open|next|todo|remaining|questions?)", re.I)),
    ("Files touched", re.compile(r"^files", re.I)),
)


def item_id(text: str) -> str:
    """A short stable name for a line of a handoff (its text, whitespace folded)."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


def evidence_meta(summary: Summary, goal_line: str) -> dict[str, list[str]]:
    """The handoff page's `evidence` front matter: each line's id -> the events it came from."""
    out: dict[str, list[str]] = {}
    # The lines the page shows (its lists stop at 25 items, its files at 60), six events each.
    for line in (*summary.done[:25], *summary.failed[:25], *summary.open[:25]):
        refs = summary.evidence.get(line)
        if refs:
            out[item_id(line)] = list(refs)[:6]
    if goal_line and summary.evidence.get("goal"):
        out[item_id(goal_line)] = list(summary.evidence["goal"])
    for name in summary.files[:60]:
        refs = summary.evidence.get(f"file:{name}")
        if refs:
            out[item_id(f"`{name}`")] = list(refs)[:6]
    return out


@dataclass(frozen=True)
class Item:
    section: str
    text: str
    evidence: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.text, "evidence": list(self.evidence)}


@dataclass(frozen=True)
class Explained:
    """One handed handoff, item by item, with where each item came from."""

    path: str
    agent: str
    session_id: str
    journal: str | None
    items: tuple[Item, ...]
    left_out: tuple[str, ...] = ()  # items a later session finished: not handed
    quiet: bool = False  # a session that did no work (named in a line, not handed in full)
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "agent": self.agent,
            "session_id": self.session_id,
            "journal": self.journal,
            "did_work": not self.quiet,
            "items": [i.as_dict() for i in self.items],
            "left_out": list(self.left_out),
        }


def _section(name: str) -> str | None:
    for label, pattern in _SECTIONS:
        if pattern.match(name.strip()):
            return label
    return None


def items_of(body: str, evidence: Mapping[str, Any]) -> list[Item]:
    """The items of a handoff page's body, each with the evidence its front matter names."""
    items: list[Item] = []
    current: str | None = None
    prose: list[str] = []

    def flush_goal() -> None:
        text = " ".join(" ".join(prose).split())
        if current == "Goal" and text and text != "None recorded.":
            items.append(Item("Goal", text, _refs(evidence, text)))
        prose.clear()

    for line in body.splitlines():
        heading = re.match(r"^##\s+(.+?)\s*$", line)
        if heading:
            flush_goal()
            current = _section(heading.group(1))
            continue
        if current is None:
            continue
        bullet = re.match(r"^\s*[-*]\s+(.*)$", line)
        if current == "Goal":
            if line.strip().startswith("Later requests"):
                flush_goal()
                current = "Later requests"
            elif line.strip():
                prose.append(line.strip())
            elif prose:
                flush_goal()
            continue
        if bullet and bullet.group(1).strip() != "None recorded.":
            text = bullet.group(1).strip()
            items.append(Item(current, text, _refs(evidence, text)))
    flush_goal()
    return [i for i in items if i.section != "Later requests"]


def _refs(evidence: Mapping[str, Any], text: str) -> tuple[str, ...]:
    refs = evidence.get(item_id(text))
    return tuple(str(r) for r in refs) if isinstance(refs, list) else ()


def explain_pages(
    pages: Sequence[tuple[str, Mapping[str, Any], str]],
    closed: Mapping[str, Sequence[str]],
    quiet: Sequence[str],
    journal_of: Any,
) -> list[Explained]:
    """`pages`: (path, front matter, body) of each handed handoff; `closed`: the items left
    out of each (by path); `quiet`: the paths of sessions that did no work; `journal_of`:
    a session id -> its journal path (or None)."""
    out: list[Explained] = []
    for path, meta, body in pages:
        evidence = meta.get("evidence") if isinstance(meta.get("evidence"), dict) else {}
        sid = str(meta.get("session_id") or "")
        out.append(
            Explained(
                path=path,
                agent=str(meta.get("agent") or meta.get("author") or ""),
                session_id=sid,
                journal=journal_of(sid) if sid else None,
                items=tuple(items_of(body, evidence or {})),
                left_out=tuple(closed.get(path) or ()),
                quiet=path in quiet,
            )
        )
    return out


@dataclass(frozen=True)
class Explanation:
    """The handed handoffs, explained (see `explain_pages`)."""

    handoffs: tuple[Explained, ...]

    def text(self) -> str:
        return render(self.handoffs)

    def as_dict(self) -> dict[str, Any]:
        return {"handoffs": [e.as_dict() for e in self.handoffs]}


def render(explained: Sequence[Explained]) -> str:
    """The explanation as text: each handoff, each item, and the events it came from."""
    lines: list[str] = []
    for e in explained:
        head = f"{e.path} ({e.agent or 'unknown'} session {e.session_id or '?'})"
        if e.quiet:
            head += ": did no work; named in one line, not handed in full"
        lines.append(head)
        if e.journal:
            lines.append(f"  journal: {e.journal}")
        section = None
        for item in e.items:
            if item.section != section:
                section = item.section
                lines.append(f"  {section}:")
            where = ", ".join(item.evidence) if item.evidence else "no recorded event (written or reworded by hand)"
            lines.append(f"  - {item.text}")
            lines.append(f"      <- {where}")
        if e.left_out:
            lines.append("  Left out (a later session finished them):")
            lines.extend(f"  - {text}" for text in e.left_out)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n" if lines else "No handoff is handed.\n"
