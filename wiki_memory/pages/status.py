"""A page's lifecycle status, and which statuses keep a page from being handed to an agent.

Standard library only: the hook path (SessionStart, recall) reads it without the page model.
"""

from __future__ import annotations

#: `active`: current; `stale`: may no longer hold (its code drifted, or someone said so);
#: `wrong`: it misled someone; `superseded`: replaced (`superseded_by` names the page);
#: `archived`: withdrawn.
STATUSES: tuple[str, ...] = ("active", "stale", "wrong", "superseded", "archived")

#: Never handed to an agent unless asked for: not at SessionStart, not by default search,
#: not by recall. A stale page is still handed out, with its note.
HIDDEN: frozenset[str] = frozenset({"wrong", "superseded", "archived"})


def normal(status: object) -> str:
    """A status as every reader compares it: `Wrong`, `wrong `, `ARCHIVED` are `wrong` and
    `archived`; none (or blank) is `active`. An unknown status is kept, lowercased (the
    lifecycle check names it)."""
    text = " ".join(str(status).split()).lower() if status is not None else ""
    return text or "active"


def handed_out(status: str | None) -> bool:
    """May a page of this status be handed to an agent unasked? (No status reads as active.)"""
    return normal(status) not in HIDDEN
