"""The team tier: a second wiki beside the personal one, a clone of the team's shared git
repository (`Project.team()`), joined, synced and left here.

- `team_join(URL)` clones it (or, when the remote is empty, makes the team wiki and pushes
  it), `team_leave()` removes the local clone and its index (never the remote; refused
  while it holds commits the remote does not have), `team_status()` says where it stands.
- `sync_tiers()` (what `wiki-memory sync` runs) syncs the personal wiki with its remote and
  the team tier with `origin`, by the same machinery: a page changed on both sides is
  merged, or both versions are kept.
- After each sync (and each change made here on the team tier) the team's provenance is
  worked out again from its history (`memory.provenance`: each page's author, whether
  someone other than its author merged it), with the small SessionStart context of the
  team's durable pages; the hook path reads both (`recall.tier`).

A team page is addressed as `team:<path>` (`read`, `mark`): writes go to the personal wiki
unless a reference names the team tier.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiki_memory.config import Project
from wiki_memory.errors import NotFoundError, WikiMemoryError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.rules import InputError, utf8
from wiki_memory.recall import tier

if TYPE_CHECKING:
    from wiki_memory.sync import SyncReport

REMOTE = "origin"


@dataclass(frozen=True)
class TeamStatus:
    """Where the team tier stands: joined or not, its remote, its pages (reviewed or not),
    commits not pushed yet, its last sync, and `[team] recall`."""

    joined: bool
    url: str | None = None
    wiki: str | None = None
    head: str | None = None
    pages: int = 0
    reviewed: int = 0
    unpushed: int = 0
    recall: str = tier.DEFAULT_RECALL
    last_sync: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "joined": self.joined,
            "url": self.url,
            "wiki": self.wiki,
            "head": self.head,
            "pages": self.pages,
            "reviewed": self.reviewed,
            "unpushed": self.unpushed,
            "recall": self.recall,
            "last_sync": self.last_sync,
        }


@dataclass(frozen=True)
class TierSync:
    """What `sync_tiers` did on each tier (None: that tier was not synced)."""

    personal: SyncReport | None
    team: SyncReport | None


class Teams:
    """The team tier's operations (see the module docstring). `open_memory` opens the
    memory of another project (the team tier's): a `Memory`, or a lighter front such as
    `Searching` for a front end that only searches."""

    def __init__(self, context: MemoryContext, open_memory: Callable[[Project], Any]) -> None:
        self.context = context
        self.project = context.project
        self.open_memory = open_memory
        self._team: Any = None

    @property
    def is_team_tier(self) -> bool:
        return self.project.home.name == "team" and self.project.id.endswith(".team")

    @property
    def joined(self) -> bool:
        """This is a personal wiki whose project joined a team tier."""
        return self.project.has_team() and not self.is_team_tier

    def team(self) -> Any:
        """The team tier's own memory (a NotFoundError when the project joined no team)."""
        if not self.project.has_team():
            raise NotFoundError("this project joined no team: `wiki-memory team join URL` connects one")
        if self._team is None:
            self._team = self.open_memory(self.project.team())
        return self._team

    def team_ref(self, ref: str) -> str | None:
        """The reference inside the team tier when `ref` names a page of it (`team:<path>`),
        else None (a page of this wiki)."""
        return tier.bare(ref) if tier.is_team(ref) and not self.is_team_tier else None

    def close(self) -> None:
        """The team tier's memory closed, if it was opened."""
        team, self._team = self._team, None
        if team is not None:
            team.close()

    # Joining and leaving -------------------------------------------------------------

    def team_join(self, url: str) -> TeamStatus:
        """Join the team whose shared wiki is at `url` (any git URL: a bare repository's
        path, file://, http(s)://, ssh): clone it, or, when the remote is empty, make the
        team wiki and push it. Joining the same URL again only syncs."""
        from wiki_memory.sync import (  # deferred: dulwich; `wiki-memory search` starts without the store
            add_remote,
            list_remotes,
        )
        from wiki_memory.sync.remotes import (
            check_url,  # deferred: dulwich; `wiki-memory search` starts without the store
        )

        utf8("url", url)
        if not url.strip():
            raise InputError("give the team's git URL (`wiki-memory team join git@github.com:acme/team-memory.git`)")
        if self.is_team_tier:
            raise InputError("the team tier cannot join a team of its own")
        url = check_url(url.strip())
        team_project = self.project.team()
        if self.project.has_team():
            current = [r.url for r in list_remotes(self.team().store()) if r.name == REMOTE]
            if current and current[0] != url:
                raise WikiMemoryError(
                    f"this project is in a team already ({current[0]}); `wiki-memory team leave` first"
                )
            self.team_sync()
            return self.team_status()
        fresh = not team_project.home.exists()
        joined: Any = self.open_memory(team_project)
        try:
            add_remote(joined.store(create=True), REMOTE, url)
            joined.sync(REMOTE)
        except BaseException:
            joined.close()
            # Nothing half-joined is left behind: the next `join` starts clean.
            shutil.rmtree(team_project.wiki, ignore_errors=True)
            if fresh:
                shutil.rmtree(team_project.home, ignore_errors=True)
            raise
        self._team = joined
        self.refresh_team()
        return self.team_status()

    def team_leave(self, *, force: bool = False) -> str:
        """Leave the team: remove the local clone and its index (the remote is never
        touched). Refused while the clone holds commits the remote does not have, unless
        `force`. Returns the folder removed."""
        if not self.project.has_team():
            raise NotFoundError("this project joined no team")
        status = self.team_status()
        if status.unpushed and not force:
            raise WikiMemoryError(
                f"the team tier holds {status.unpushed} commit{'s' if status.unpushed != 1 else ''} the team's "
                "remote does not have: `wiki-memory sync` sends them (or `team leave --force` drops them)"
            )
        self.close()
        self.context.close()
        home = self.project.team().home
        shutil.rmtree(home)
        return str(home)

    def team_status(self) -> TeamStatus:
        """Where the team tier stands (cheap: no network)."""
        from wiki_memory.sync import (  # deferred: dulwich; `wiki-memory search` starts without the store
            list_remotes,
            sync_state,
        )

        mode = tier.recall_mode()
        if not self.project.has_team():
            return TeamStatus(False, recall=mode)
        team = self.team()
        store = team.store()
        remotes = [r for r in list_remotes(store) if r.name == REMOTE]
        head = store.head()
        known = _provenance_counts(self.project.team())
        return TeamStatus(
            True,
            url=remotes[0].shown if remotes else None,
            wiki=str(team.wiki),
            head=head.decode() if head else None,
            pages=known[0],
            reviewed=known[1],
            unpushed=_unpushed(store, head),
            recall=mode,
            last_sync=sync_state(store).get(REMOTE, {}),
        )

    # Syncing ---------------------------------------------------------------------------

    def team_sync(self, **options: Any) -> SyncReport:
        """Sync the team tier with the team's remote (fetch, merge page by page, push), then
        work out its provenance again. `options` as `sync` takes them (after a `forget` on
        the team tier: `replace_remote_history`)."""
        team = self.team()
        try:
            report: SyncReport = team.sync(REMOTE, **options)
            return report
        finally:
            self.refresh_team()

    def refresh_team(self) -> None:
        """The team tier's provenance and SessionStart context, worked out again from its
        history (nothing to do when the team wiki has not moved since the last time)."""
        from wiki_memory.memory import provenance  # deferred: dulwich; `wiki-memory search` starts without the store

        if not self.project.has_team():
            return
        team = self.team()
        try:
            store = team.store()
        except NotFoundError:
            return
        provenance.refresh(team.project, store, team.index)


def _unpushed(store: Any, head: bytes | None) -> int:
    """Commits of the team wiki the remote's `main` (as last fetched) does not have."""
    if head is None:
        return 0
    from dulwich.objects import ObjectID  # deferred: dulwich; `wiki-memory search` starts without the store

    try:
        tracked = store.repo.refs[f"refs/remotes/{REMOTE}/main".encode()]
    except KeyError:
        tracked = None
    walker = store.repo.get_walker(include=[ObjectID(head)], exclude=[ObjectID(tracked)] if tracked else None)
    return sum(1 for _ in walker)


def _provenance_counts(team_project: Any) -> tuple[int, int]:
    rows = tier.select(team_project, "SELECT count(*), coalesce(sum(reviewed), 0) FROM pages")
    return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)
