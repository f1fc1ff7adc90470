"""What a distiller proposes: a page to create, or facts to merge into the page it
duplicates. The memory layer decides which (see `dedup`) and writes it (see `pages`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: kind -> the page type it makes.
KINDS = {
    "procedure": "procedure",
    "gotcha": "gotcha",
    "gotcha-hit": "gotcha",  # a known failure hit again: only ever updates its page
    "preference": "preference",
    "decision": "decision",
    "fact": "fact",  # what a manifest the session read says
    "proposal": "",  # an LLM's proposal: its own type
    "instructions": "",  # a section of the project's instruction file: the type of its shape
}


@dataclass(frozen=True)
class Candidate:
    """One distilled fact about the project, with its evidence.

    `key` says what makes two candidates the same page: a procedure's purpose, a gotcha's
    error signature, a statement's words, a manifest's path. `facts` is what the page is rendered from and what
    merges into an existing page. `anchors` are the code files it is about, relative to the
    project's root. `create` False: it may only update a page that exists."""

    kind: str
    type: str
    title: str
    key: str
    source: str  # agent:session
    date: str  # YYYY-MM-DD
    facts: Mapping[str, Any] = field(default_factory=dict)
    anchors: tuple[str, ...] = ()
    reason: str = ""
    create: bool = True
    tags: tuple[str, ...] = ()

    @property
    def agent(self) -> str:
        return self.source.split(":", 1)[0]

    def text(self) -> str:
        """The words that stand for it in a duplicate check: its title and its main fact."""
        main = self.facts.get("statement") or self.facts.get("signature") or self.facts.get("body") or ""
        return f"{self.title}\n{main}".strip()


def proposed(evidence: Any, kind: str, *, date: str | None = None, **fields: Any) -> Candidate:
    """A candidate of `kind` (of the page type `KINDS` gives it) found in what `evidence` read:
    its source, and its date unless `date` says when the fact was stated or read."""
    return Candidate(
        kind=kind, type=KINDS[kind], source=evidence.source, date=evidence.date if date is None else date, **fields
    )
