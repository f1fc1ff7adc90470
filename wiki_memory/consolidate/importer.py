"""Past sessions from transcripts, imported as session pages (no handoffs: they are history).

Each transcript is filed under the project of the working directory it records (or the
project given), and every project gets one commit for the batch. A session whose page
already exists is skipped, so importing the same transcripts again changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiki_memory.capture.adapter import load
from wiki_memory.config import Project, resolve_project


def default_transcripts(agent: str) -> list[Path]:
    """Where the agent keeps its transcripts on this machine."""
    return load(agent).default_transcripts()


def find_transcripts(paths: Iterable[str | Path]) -> list[Path]:
    """The transcript files among `paths` (folders are searched; sub-agent files are left out)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*.jsonl")) if "subagents" not in p.parts)
        elif path.is_file():
            found.append(path)
    seen: set[Path] = set()
    return [p for p in found if not (p.resolve() in seen or seen.add(p.resolve()))]  # type: ignore[func-returns-value]


@dataclass
class ImportReport:
    agent: str
    imported: dict[str, list[str]] = field(default_factory=dict)  # project id -> page paths
    skipped: dict[str, list[str]] = field(default_factory=dict)  # already there
    empty: list[str] = field(default_factory=list)  # transcripts with nothing substantive
    failed: list[tuple[str, str]] = field(default_factory=list)  # (transcript, reason)
    commits: dict[str, str] = field(default_factory=dict)
    wikis: dict[str, str] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)  # project id -> chunks embedded after the import
    index_errors: dict[str, str] = field(default_factory=dict)  # project id -> why its index was not updated
    distilled: dict[str, list[Any]] = field(default_factory=dict)  # project id -> what distillation wrote

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "imported": self.imported,
            "skipped": self.skipped,
            "empty": self.empty,
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "commits": self.commits,
            "wikis": self.wikis,
            "embedded": self.embedded,
            "index_errors": self.index_errors,
            "distilled": {pid: [r.as_dict() for r in reports] for pid, reports in self.distilled.items()},
        }

    def lines(self) -> list[str]:
        out = []
        for pid in sorted(set(self.imported) | set(self.skipped)):
            new, old = len(self.imported.get(pid, [])), len(self.skipped.get(pid, []))
            commit = f" (commit {self.commits[pid][:8]})" if pid in self.commits else ""
            out.append(
                f"{pid}: {new} session{'s' if new != 1 else ''} imported{commit}, "
                f"{old} already there  [{self.wikis.get(pid, '')}]"
            )
            pages = {p.path for r in self.distilled.get(pid, []) for p in r.pages if p.action != "unchanged"}
            if pages:
                out.append(f"  distilled: {', '.join(sorted(pages))}")
            if pid in self.index_errors:
                out.append(
                    f"  the search index was not updated ({self.index_errors[pid]}); `wiki-memory reindex` catches up"
                )
        if self.empty:
            out.append(f"{len(self.empty)} transcript(s) with nothing substantive (no prompt, no command or edit)")
        for path, reason in self.failed:
            out.append(f"could not import {path}: {reason}")
        if not out:
            out.append("nothing to import")
        return out


def read_sessions(
    agent: str, files: Sequence[Path], *, project: Project | None = None, progress: Callable[..., Any] | None = None
) -> tuple[ImportReport, dict[str, tuple[Project, list[Any]]]]:
    """Read transcripts into session summaries grouped by project: (the report so far, project
    id -> (project, summaries)). Each transcript goes to the project of the working directory
    it records, or to `project` when given."""
    from wiki_memory.consolidate.extract import summarize
    from wiki_memory.consolidate.run import current_branch
    from wiki_memory.consolidate.session import build_session

    reader = load(agent)
    report = ImportReport(agent)
    by_project: dict[str, tuple[Project, list[Any]]] = {}
    for path in (named for file in files for named in reader.transcripts_in(file)):
        try:
            observations = reader.read_transcript(path)
        except (OSError, UnicodeDecodeError) as e:
            report.failed.append((str(path), f"unreadable: {e}"))
            continue
        finally:
            if progress is not None:
                progress(1)
        if not observations:
            report.failed.append((str(path), f"not a {agent} transcript (no session records)"))
            continue
        session = build_session(observations, agent=agent)
        summary = summarize(session)
        if not summary.substantive:
            report.empty.append(str(path))
            continue
        target = project
        if target is None:
            if not session.cwd:
                report.failed.append((str(path), "the transcript records no working directory; use --project"))
                continue
            target = resolve_project(session.cwd)
        if not session.branch:
            session.branch = current_branch(session.cwd)
        by_project.setdefault(target.id, (target, []))[1].append(summary)
    return report, by_project


def import_into(agent: str, report: ImportReport, pid: str, target: Project, store: Any, summaries: list[Any]) -> None:
    """Write one project's imported session pages in one commit, skipping those already there."""
    from wiki_memory.consolidate.run import build_pages, unique_key
    from wiki_memory.store import Author

    report.wikis[pid] = str(target.wiki)
    fresh, seen = [], set()
    for summary in summaries:
        summary.session.page_key = unique_key(store, summary.session)
        page = build_pages(summary, with_handoff=False)[0]
        if store.exists(page.path) or page.path in seen:
            report.skipped.setdefault(pid, []).append(page.path)
        else:
            seen.add(page.path)
            fresh.append(page)
    if not fresh:
        return
    plural = "s" if len(fresh) != 1 else ""
    body = "\n".join(f"- {p.path}" for p in fresh)
    results = store.write_many(
        fresh, Author.agent(agent), message=f"import: {len(fresh)} {agent} session{plural}\n\n{body}"
    )
    commit = next((r.commit for r in results if r.commit), None)
    if commit:
        report.commits[pid] = commit
    report.imported[pid] = [r.path for r in results]
