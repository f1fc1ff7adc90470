"""Past sessions imported from the agents' transcripts, each under its own project's memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.distilling import distill_enabled
from wiki_memory.memory.memory import Memory

if TYPE_CHECKING:
    from wiki_memory.config import Project
    from wiki_memory.consolidate.importer import ImportReport


def import_transcripts(
    agent: str,
    files: Sequence[Path],
    *,
    project: Project | None = None,
    progress: Callable[..., Any] | None = None,
    index_progress: Callable[[str, int, int], None] | None = None,
) -> ImportReport:
    """Import transcripts as session pages, with the handoff of each project's newest imported
    session: one commit per project; sessions that already have a page are skipped. Each
    session is then distilled from its evidence (no LLM: an import may hold hundreds of
    sessions), in a commit of its own per session that yields pages. Each project's search
    index takes the new pages and embeds them (on every core: an import is waited for), and
    the context the next session starts from is rebuilt, before this returns."""
    from wiki_memory.consolidate.importer import (  # deferred: the consolidator, not loaded with Memory
        import_into,
        read_sessions,
    )

    report, by_project = read_sessions(agent, files, project=project, progress=progress)
    for pid, (target, summaries) in by_project.items():
        with Memory(target) as memory:
            import_into(agent, report, pid, target, memory.store(create=True), summaries)
            if not report.imported.get(pid):
                continue
            if distill_enabled():
                report.distilled[pid] = [memory.distill(summary, llm=False) for summary in summaries]
            if pid in report.commits:
                memory.auto_sync()
            try:
                report.embedded[pid] = memory.reindex(progress=index_progress).embedded
            except Exception as e:  # noqa: BLE001 - derived data: the pages are committed whatever happens here
                report.index_errors[pid] = f"{type(e).__name__}: {e}"
            if pid in report.handoffs:
                from wiki_memory.consolidate import (
                    context_build,  # deferred: the consolidator, not loaded with Memory
                )

                # The next session starts from what the import handed over (and what it distilled).
                context_build.refresh(target, memory.store(), memory.index)
    return report
