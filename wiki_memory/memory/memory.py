"""`Memory`: one project's memory, the library every front end calls.

    from wiki_memory.memory import Actor, EditRequest, Memory
    with Memory.at("~/src/widgets") as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http"])
        for hit in memory.search("how often do we retry").results:
            print(hit.path, hit.snippet)
        memory.edit("Retry policy", "append", text="Except for 429s.", actor=Actor("codex", "s1"))
        # the same edit as one value, as the CLI and the MCP server carry it:
        memory.apply_edit(EditRequest("Retry policy", "append", text="Except for 429s."))

It opens (or, on the first write, creates) the project's store and keeps its search
index attached, and owns every memory operation with its rules: the CLI, the MCP server,
the hook process and the web viewer parse their input, call one method and render what
it returns. Not thread-safe: one thread per Memory (the MCP server runs each project on a
thread of its own).

`Memory` is a facade over parts, one per module of this package, each a plain class given
the one shared `MemoryContext` (the project, its store, its index) and, where it needs
another part, that part (wired in `Memory.__init__`, the one place that says who uses
whom). Each method of `Memory` is its part's method under the same name, signature and
docstring; a flow that spans parts (a consolidation, then distillation, the automatic
sync and the exports) is written out in the part that owns it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from wiki_memory.config import Project, resolve_project
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.distilling import Distilling
from wiki_memory.memory.history import Browsing
from wiki_memory.memory.indexing import IndexUpkeep
from wiki_memory.memory.page_problems import PageProblems
from wiki_memory.memory.pagetext import PageTexts
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.recalling import Recalling
from wiki_memory.memory.recent import Recent
from wiki_memory.memory.records import Actor, Written
from wiki_memory.memory.searching import Searching
from wiki_memory.memory.secrets import Secrets
from wiki_memory.memory.sessions import Sessions
from wiki_memory.memory.share_records import BranchHandoff, ShareCandidate, SharedState, ShareProposal, ShareResult
from wiki_memory.memory.status_changes import StatusChanges
from wiki_memory.memory.status_review import StatusReview
from wiki_memory.memory.syncing import Syncing
from wiki_memory.memory.team import Teams
from wiki_memory.memory.team_share import TeamShare
from wiki_memory.memory.writing import PERSON, EditRequest, Writing

if TYPE_CHECKING:
    from wiki_memory.index import Index
    from wiki_memory.store import Store

P = ParamSpec("P")
R = TypeVar("R")


def _on(part: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Memory, P], R]:
    """`Memory`'s method that calls `method` on the part in the attribute `part`: the same
    name, signature and docstring (`inspect.signature` and `help` show the part's)."""

    @functools.wraps(method)
    def call(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(self, part), *args, **kwargs)

    return call


class Memory:
    """One project's memory (see the module docstring); `Memory(project)` or `Memory.at(dir)`."""

    def __init__(self, project: Project) -> None:
        self.project = project
        context = self._context = MemoryContext(project)
        # The parts, each given the context and the parts it calls (never the whole memory).
        self._teams = Teams(context, type(self))
        self._searching = Searching(context, self._teams)
        self._problems = PageProblems(context)
        self._reading = Reading(context, self._teams, self._problems)
        self._browsing = Browsing(context, self._reading)
        self._texts = PageTexts(context, self._reading)
        self._writing = Writing(context, self._reading)
        self._status = StatusChanges(context, self._reading, self._teams)
        self._review = StatusReview(context, self._problems)
        self._distilling = Distilling(context, self._status)
        self._indexing = IndexUpkeep(context)
        self._secrets = Secrets(context, self._reading, self._teams, self._indexing)
        self._syncing = Syncing(context, self._secrets, self._teams)
        self._sessions = Sessions(context, self._distilling, self._syncing)
        self._recalling = Recalling(context)
        self._recent = Recent(context)

    @classmethod
    def at(cls, directory: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Memory:
        """The memory of the project of `directory` (default: the working directory)."""
        return cls(resolve_project(directory, env))

    # The context: the project's store and index, opened on first use ----------------------

    @property
    def wiki(self) -> Path:
        return self._context.wiki

    @property
    def exists(self) -> bool:
        """Does the project have a wiki yet?"""
        return self._context.exists

    def store(self, *, create: bool = False) -> Store:
        """The project's store; with `create`, the wiki (and `project.json`) is made on first
        use, else a project with no wiki yet is NoMemoryError."""
        return self._context.store(create=create)

    @property
    def index(self) -> Index | None:
        """The search index, opened on first use and attached to the store (every commit
        through it is indexed at once); None when it cannot be opened (`index_error` says
        why): the index is derived data, and memory is written without it."""
        return self._context.index

    @property
    def index_error(self) -> str | None:
        """Why the index could not be opened, if it could not."""
        return self._context.index_error

    @property
    def index_is_open(self) -> bool:
        return self._context.index_is_open

    def require_index(self) -> Index:
        return self._context.require_index()

    def close(self) -> None:
        self._teams.close()
        self._context.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # Search and reading ------------------------------------------------------------------

    search = _on("_searching", Searching.search)
    drift_notes = _on("_searching", Searching.drift_notes)
    find = _on("_reading", Reading.find)
    resolve_rev = _on("_reading", Reading.resolve_rev)
    read = _on("_reading", Reading.read)
    shown_body = _on("_reading", Reading.shown_body)
    raw_bytes = _on("_reading", Reading.raw_bytes)
    page_text = _on("_reading", Reading.page_text)
    links = _on("_reading", Reading.links)
    list_pages = _on("_reading", Reading.list_pages)
    history = _on("_reading", Reading.history)
    diff_args = _on("_reading", Reading.diff_args)
    diff = _on("_reading", Reading.diff)
    status = _on("_reading", Reading.status)
    recent = _on("_recent", Recent.recent)
    review_items = _on("_problems", PageProblems.review_items)
    anchor_states = _on("_problems", PageProblems.anchor_states)
    review = _on("_review", StatusReview.review)

    # History, as the viewer browses it ------------------------------------------------------

    commit_log = _on("_browsing", Browsing.commit_log)
    warm_history = _on("_browsing", Browsing.warm_history)
    activity = _on("_browsing", Browsing.activity)
    commit = _on("_browsing", Browsing.commit)
    page_history = _on("_browsing", Browsing.page_history)
    graph = _on("_browsing", Browsing.graph)

    # Writing, and a page's status -----------------------------------------------------------

    write = _on("_writing", Writing.write)
    apply_edit = _on("_writing", Writing.edit)
    move = _on("_writing", Writing.move)
    delete = _on("_writing", Writing.delete)
    revert = _on("_writing", Writing.revert)
    commit_hand_edits = _on("_writing", Writing.commit_hand_edits)
    page_source = _on("_texts", PageTexts.page_source)
    save_text = _on("_texts", PageTexts.save_text)
    mark = _on("_status", StatusChanges.mark)
    supersede = _on("_status", StatusChanges.supersede)
    anchor = _on("_status", StatusChanges.anchor)
    drift = _on("_status", StatusChanges.drift)

    def edit(
        self,
        ref: str,
        operation: str,
        *,
        text: str | None = None,
        heading: str | None = None,
        find: str | None = None,
        replace: str | None = None,
        expected_count: int = 1,
        status: str | None = None,
        superseded_by: str | None = None,
        actor: Actor = PERSON,
    ) -> Written:
        """Change part of a page: `append` (to the page or a section), `replace_section`,
        `find_replace` (exactly `expected_count` times) or `set_status`. Refuses rather than
        guesses: nothing is written when the heading or text is not found as asked."""
        # A front end that carries the edit as one value builds the `EditRequest` itself and
        # calls `apply_edit`: one signature each, rather than `edit` taking either form.
        request = EditRequest(
            ref, operation, text, heading, find, replace, expected_count, status, superseded_by, actor
        )
        return self._writing.edit(request)

    # Sessions: handoffs, consolidation, distillation, the index's upkeep --------------------

    handoff = _on("_sessions", Sessions.handoff)
    handoff_explain = _on("_sessions", Sessions.handoff_explain)
    handoff_write = _on("_sessions", Sessions.handoff_write)
    consolidate = _on("_sessions", Sessions.consolidate)
    consolidate_pending = _on("_sessions", Sessions.consolidate_pending)
    distill = _on("_distilling", Distilling.distill)
    reindex = _on("_indexing", IndexUpkeep.reindex)
    warm = _on("_indexing", IndexUpkeep.warm)
    may_lack_vectors = _on("_indexing", IndexUpkeep.may_lack_vectors)
    embed_some = _on("_indexing", IndexUpkeep.embed_some)

    # Recall, as the hook does it ----------------------------------------------------------

    recall = _on("_recalling", Recalling.recall)
    full_session_id = _on("_recalling", Recalling.full_session_id)
    recalled = _on("_recalling", Recalling.recalled)
    recall_moment = _on("_recalling", Recalling.recall_moment)
    stats = _on("_recalling", Recalling.stats)

    # Secrets, remotes and syncing -----------------------------------------------------------

    scan = _on("_secrets", Secrets.scan)
    forget = _on("_secrets", Secrets.forget)
    finish_interrupted_forget = _on("_secrets", Secrets.finish_interrupted_forget)
    forget_on = _on("_secrets", Secrets.forget_on)
    remotes = _on("_syncing", Syncing.remotes)
    add_remote = _on("_syncing", Syncing.add_remote)
    remove_remote = _on("_syncing", Syncing.remove_remote)
    sync = _on("_syncing", Syncing.sync)
    sync_tiers = _on("_syncing", Syncing.sync_tiers)
    auto_sync = _on("_syncing", Syncing.auto_sync)

    # The team tier ----------------------------------------------------------------------

    @property
    def is_team_tier(self) -> bool:
        return self._teams.is_team_tier

    team = _on("_teams", Teams.team)
    team_join = _on("_teams", Teams.team_join)
    team_leave = _on("_teams", Teams.team_leave)
    team_status = _on("_teams", Teams.team_status)
    team_sync = _on("_teams", Teams.team_sync)
    refresh_team = _on("_teams", Teams.refresh_team)

    def tier_of(self, ref: str) -> tuple[Any, str]:
        """(the memory that holds `ref`, the reference inside it): `team:<path>` names a
        page of the team tier, anything else one of this wiki."""
        team_ref = self._teams.team_ref(ref)
        return (self, ref) if team_ref is None else (self._teams.team(), team_ref)

    # Sharing with the team tier: a part of its own (`team_share`), opened per call.

    def share_plan(self, pages: Sequence[str], message: str | None = None, allow: Sequence[str] = ()) -> ShareProposal:
        """What sharing these personal pages with the team would push (nothing is pushed)."""
        with TeamShare(self) as part:
            return part.plan(pages, message, allow)

    def share_push(self, proposal: ShareProposal) -> ShareResult:
        """Push a proposal as a branch of the team remote and open its request if possible."""
        with TeamShare(self) as part:
            return part.push(proposal)

    def share_candidates(self) -> list[ShareCandidate]:
        """Personal pages worth proposing to the team, each with why."""
        with TeamShare(self) as part:
            return part.candidates()

    def shared_pages(self, *, fetch: bool = True) -> tuple[list[SharedState], str | None]:
        """The pages shared from here, proposed or merged; a note if the remote was not reached."""
        with TeamShare(self) as part:
            return part.shared_pages(fetch=fetch)

    def handoff_share(self) -> BranchHandoff:
        """Attach the newest handoff to the code branch checked out, in the team tier."""
        with TeamShare(self) as part:
            return part.share_handoff()
