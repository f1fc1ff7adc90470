"""What sharing with the team tier returns and refuses (see `team_share`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import WikiMemoryError

if TYPE_CHECKING:
    from wiki_memory.memory.team_hosts import Request
    from wiki_memory.store.rewrite import Finding


class ShareRefused(WikiMemoryError):
    """A page to share holds a secret: nothing was pushed."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = tuple(findings)
        where = "; ".join(f"{f.path or 'the message'} line {f.line}: {f.family} ({f.preview})" for f in findings[:5])
        more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
        super().__init__(
            f"not shared: a secret would leave this machine: {where}{more}. Remove it from the page "
            "(`wiki-memory edit`), then share again; nothing was pushed"
        )


@dataclass(frozen=True)
class SharedPage:
    """One page of a proposal: the personal page, where it goes on the team tier, and how
    (`new`, `update` of the team's page with the same id, or `conflict copy` beside
    `beside`, a page of someone else's at the same path)."""

    path: str
    team_path: str
    title: str
    how: str
    beside: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "team_path": self.team_path,
            "title": self.title,
            "how": self.how,
            "beside": self.beside,
        }


@dataclass(frozen=True)
class ShareProposal:
    """What `share` would push: the branch, the team `main` it is based on, the commit
    built on it (in the team clone's objects, no ref moved), the pages, and the diff."""

    branch: str
    base: str | None
    commit: str
    previous: str | None  # the branch's commit on the remote before, when re-sharing
    pages: tuple[SharedPage, ...]
    diff: str
    remote: str  # its URL as shown (a password masked)
    author: str
    message: str
    blobs: dict[str, str] = field(default_factory=dict)  # page id -> the personal blob shared

    def request_body(self) -> str:
        """The text of the pull request that proposes it."""
        lines = [self.message if self.message != self.pages[0].team_path else "", ""]
        lines.append("Proposed with `wiki-memory share` for the team's memory:")
        for page in self.pages:
            extra = f" (beside {page.beside}, someone else's page at that path)" if page.beside else ""
            lines.append(f"- `{page.team_path}`: {page.title} ({page.how}){extra}")
        return "\n".join(lines).strip() + "\n"

    def as_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "base": self.base,
            "commit": self.commit,
            "previous": self.previous,
            "pages": [p.as_dict() for p in self.pages],
            "diff": self.diff,
            "remote": self.remote,
            "author": self.author,
            "message": self.message,
        }


@dataclass(frozen=True)
class ShareResult:
    """A proposal pushed: the branch on the remote, and the request the host's client
    opened (`request`) or the address to open one by hand (`compare`)."""

    proposal: ShareProposal
    compare: str | None
    request: Request | None

    def as_dict(self) -> dict[str, Any]:
        request = self.request
        return {
            **self.proposal.as_dict(),
            "pushed": True,
            "compare": self.compare,
            "request": None
            if request is None
            else {"cli": request.cli, "url": request.url, "error": request.error, "existed": request.existed},
        }


@dataclass(frozen=True)
class ShareCandidate:
    """A personal page worth proposing to the team, and why."""

    path: str
    title: str
    type: str
    sessions: int
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "type": self.type, "sessions": self.sessions, "why": self.why}


@dataclass(frozen=True)
class SharedState:
    """A page shared from here: `proposed` (its branch is not merged yet), `merged` (the
    team's `main` holds it), and whether it `changed` here since."""

    path: str
    team_path: str
    branch: str
    state: str
    changed: bool
    at: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class BranchHandoff:
    """A handoff attached to a code branch in the team tier."""

    branch: str
    team_path: str
    source: str
    commit: str
    author: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))
