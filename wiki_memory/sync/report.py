"""What a sync did (`SyncReport`): for people (`sync` prints it) and scripts (`--json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiki_memory.store import Edit
from wiki_memory.store.rewrite import Finding
from wiki_memory.sync.rewritten import Adoption

if TYPE_CHECKING:
    from wiki_memory.index import SyncStats


@dataclass
class SyncReport:
    """What a sync did, for people (`sync` prints it) and scripts (`--json`)."""

    remote: str
    url: str
    edits: list[Edit] = field(default_factory=list)  # hand edits committed first
    received_commits: int = 0
    sent_commits: int = 0
    received: list[str] = field(default_factory=list)  # files changed here by what came in
    merged: list[str] = field(default_factory=list)  # changed on both sides, merged line by line
    # (page, copy): a merge keeps this machine's version in the page and the remote's in the
    # copy; an adoption (replaying our commits onto a rewritten history) the other way round,
    # its copies listed in `ours_copied`.
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    ours_copied: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # deleted on one side, edited on the other
    renamed: list[tuple[str, str]] = field(default_factory=list)
    fast_forward: bool = False
    merge_commit: str | None = None
    head: str | None = None
    index: SyncStats | None = None  # the search index's after re-indexing what changed
    index_warning: str | None = None
    secrets: list[Finding] = field(default_factory=list)  # in what came in (left as it was written)
    adopted: Adoption | None = None  # the remote's history was rewritten elsewhere and adopted here
    replaced: str | None = None  # the remote's old `main`, replaced by this machine's rewritten history
    kept_remote_history: bool = False  # the record of a rewrite here was dropped on request
    recovered: str | None = None  # an interrupted `forget` finished or undone first

    @property
    def changed_here(self) -> list[str]:
        paths = list(self.received) + list(self.merged) + [p for pair in self.conflicts for p in pair]
        paths += list(self.kept) + [new for _, new in self.renamed]
        return sorted(set(paths))

    def as_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "url": self.url,
            "head": self.head,
            "edits": [{"commit": e.commit, "subject": e.subject, "paths": list(e.paths)} for e in self.edits],
            "received_commits": self.received_commits,
            "sent_commits": self.sent_commits,
            "fast_forward": self.fast_forward,
            "merge_commit": self.merge_commit,
            "received": self.received,
            "merged": self.merged,
            "conflicts": [
                {"page": p, "copy": c, "copy_holds": "this machine's" if c in self.ours_copied else "remote's"}
                for p, c in self.conflicts
            ],
            "kept": self.kept,
            "renamed": [{"from": a, "to": b} for a, b in self.renamed],
            "index": self.index.as_dict() if self.index is not None else None,
            "index_warning": self.index_warning,
            "secrets": [f.as_dict() for f in self.secrets],
            "adopted": self.adopted.as_dict() if self.adopted is not None else None,
            "replaced": self.replaced,
            "kept_remote_history": self.kept_remote_history,
            "recovered": self.recovered,
        }
