"""`Memory`: one project's memory, the library every front end calls.

    from wiki_memory.memory import Actor, Memory
    with Memory.at("~/src/widgets") as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http"])
        for hit in memory.search("how often do we retry").results:
            print(hit.path, hit.snippet)
        memory.edit("Retry policy", "append", text="Except for 429s.", actor=Actor("codex", "s1"))

It opens (or, on the first write, creates) the project's store and keeps its search
index attached, and owns every memory operation with its rules: the CLI, the MCP server,
the hook process and the web viewer parse their input, call one method and render what
it returns. Not thread-safe: one thread per Memory (the MCP server runs each project on a
thread of its own).
"""

from __future__ import annotations

from collections.abc import Sequence

from wiki_memory.memory.history import Browsing
from wiki_memory.memory.knowledge import Knowledge
from wiki_memory.memory.pagetext import PageTexts
from wiki_memory.memory.recalling import Recalling
from wiki_memory.memory.recent import Recent
from wiki_memory.memory.review import Reviewing
from wiki_memory.memory.sessions import Sessions
from wiki_memory.memory.team_share import (
    BranchHandoff,
    ShareCandidate,
    SharedState,
    ShareProposal,
    ShareResult,
    TeamShare,
)


class Memory(Knowledge, Recent, Sessions, Recalling, Browsing, Reviewing, PageTexts):
    """One project's memory (see the module docstring); `Memory(project)` or `Memory.at(dir)`."""

    # Sharing with the team tier: a part of its own (`team_share`), composed, not inherited.

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
