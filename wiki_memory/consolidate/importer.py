"""Past sessions from transcripts, imported as session pages, and the newest one's handoff.

Each transcript is filed under the project of the working directory it records (or the
project given), and every project gets one commit for the batch: the session pages, and
the handoff of the project's newest imported session (what the next session is handed, as
if that session had just ended). A session whose page already exists is skipped, so
importing the same transcripts again changes nothing.

A sub-agent's own transcript (Claude Code's `agent-*.jsonl`) imports alone as a session of
its own; given with its parent's, its calls join the parent's session (once: a call the
parent's transcript already holds inline is not counted again) and it gets no page of its
own. A file that is not a transcript of the agent is reported in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiki_memory.capture.adapter import load
from wiki_memory.config import Project, resolve_project
from wiki_memory.consolidate.extract import summarize
from wiki_memory.consolidate.run import build_pages, unique_key
from wiki_memory.consolidate.session import build_session, in_time_order, time_key
from wiki_memory.consolidate.session_sources import current_branch
from wiki_memory.store import Author


def default_transcripts(agent: str) -> list[Path]:
    """Where the agent keeps its transcripts on this machine."""
    return load(agent).default_transcripts()


#: the names of an agent's transcript files in a folder given to `import`.
TRANSCRIPT_GLOBS: dict[str, tuple[str, ...]] = {
    "claude-code": ("*.jsonl",),
    "codex": ("*.jsonl",),
    "gemini": ("session-*.jsonl", "session-*.json", "checkpoint-*.json"),
    "opencode": ("opencode*.db", "ses_*.json"),
}


def find_transcripts(paths: Iterable[str | Path], agent: str | None = None) -> list[Path]:
    """The transcript files among `paths`: files as given, folders searched for the agent's
    transcript names (any agent's, without one), sub-agents' files included: they join their
    parent's session when it is there."""
    patterns = TRANSCRIPT_GLOBS.get(agent or "") or tuple({g for globs in TRANSCRIPT_GLOBS.values() for g in globs})
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted({p for pattern in patterns for p in path.rglob(pattern) if p.is_file()}))
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
    handoffs: dict[str, str] = field(default_factory=dict)  # project id -> the handoff page written
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
            "handoffs": self.handoffs,
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
            if pid in self.handoffs:
                out.append(f"  handoff: {self.handoffs[pid]}")
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
    reader = load(agent)
    report = ImportReport(agent)
    sessions: list[tuple[Path, list[Any]]] = []
    for path in (named for file in files for named in reader.transcripts_in(file)):
        try:
            observations = reader.read_transcript(path)
        except (OSError, UnicodeDecodeError) as e:
            report.failed.append((str(path), f"unreadable: {e}"))
            continue
        except Exception as e:  # noqa: BLE001 - one bad file is one line of the report, never a traceback
            report.failed.append((str(path), f"not a {agent} transcript ({type(e).__name__}: {e})"))
            continue
        finally:
            if progress is not None:
                progress(1)
        if not observations:
            report.failed.append((str(path), f"not a {agent} transcript (no session records)"))
            continue
        sessions.append((path, observations))
    by_project: dict[str, tuple[Project, list[Any]]] = {}
    for path, observations in _join_subagents(sessions):
        _file_session(agent, report, by_project, path, observations, project)
    return report, by_project


def _subagent_of(observations: Sequence[Any]) -> str | None:
    """The parent session of a sub-agent's own transcript (None: not a sub-agent's)."""
    start = observations[0] if observations and observations[0].kind == "session-start" else None
    parent = start.meta.get("parent_session") if start is not None else None
    return str(parent) if parent else None


def _join_subagents(sessions: list[tuple[Path, list[Any]]]) -> list[tuple[Path, list[Any]]]:
    """The sessions to import: a sub-agent's transcript whose parent is among them joins the
    parent's (its calls, marked with the sub-agent, each once); the others stay alone."""

    parents = {obs[0].session_id: n for n, (_, obs) in enumerate(sessions) if not _subagent_of(obs)}
    joined: dict[int, list[Any]] = {}
    alone: list[tuple[Path, list[Any]]] = []
    for path, observations in sessions:
        parent = _subagent_of(observations)
        if parent is None:
            continue
        if parent not in parents:
            alone.append((path, observations))
            continue
        host = parents[parent]
        base = joined.setdefault(host, list(sessions[host][1]))
        have = {o.meta.get("tool_use_id") for o in base if o.kind == "tool" and o.meta.get("tool_use_id")}
        agent_id = str(observations[0].meta.get("subagent") or path.stem)
        for o in observations:
            if o.kind != "tool" or (o.meta.get("tool_use_id") and o.meta["tool_use_id"] in have):
                continue
            base.append(o._replace(session_id=parent, meta={**o.meta, "subagent": agent_id}, plan=()))
    out = [
        (path, in_time_order(joined[n]) if n in joined else obs)
        for n, (path, obs) in enumerate(sessions)
        if not _subagent_of(obs)
    ]
    return out + alone


def _file_session(
    agent: str,
    report: ImportReport,
    by_project: dict[str, tuple[Project, list[Any]]],
    path: Path,
    observations: list[Any],
    project: Project | None,
) -> None:
    """Summarise one transcript's session and file it under its project."""

    session = build_session(observations, agent=agent)
    # A transcript is a session that is over: it is not "in progress", whatever its last event.
    session.ended = True
    summary = summarize(session)
    if not summary.substantive:
        report.empty.append(str(path))
        return
    target = project
    if target is None:
        if not session.cwd:
            report.failed.append((str(path), "the transcript records no working directory; use --project"))
            return
        target = resolve_project(session.cwd)
    if not session.branch:
        session.branch = current_branch(session.cwd)
    by_project.setdefault(target.id, (target, []))[1].append(summary)


def newest(summaries: Sequence[Any]) -> Any:
    """The summary of the session that ended last (the one whose handoff an import writes)."""

    return max(summaries, key=lambda s: time_key(s.session.end or s.session.start) or 0.0)


def import_into(agent: str, report: ImportReport, pid: str, target: Project, store: Any, summaries: list[Any]) -> None:
    """Write one project's imported session pages, and the handoff of the newest of them, in
    one commit, skipping sessions already there."""

    report.wikis[pid] = str(target.wiki)
    fresh, seen = [], set()
    last = newest(summaries) if summaries else None
    for summary in summaries:
        summary.session.page_key = unique_key(store, summary.session)
        pages = build_pages(summary, with_handoff=summary is last)
        page = pages[0]
        if store.exists(page.path) or page.path in seen:
            report.skipped.setdefault(pid, []).append(page.path)
        else:
            seen.add(page.path)
            fresh.extend(pages[:2])
            if summary is last and len(pages) > 1:
                report.handoffs[pid] = pages[1].path
    if not fresh:
        return
    sessions = [p for p in fresh if p.path.startswith("sessions/")]
    plural = "s" if len(sessions) != 1 else ""
    body = "\n".join(f"- {p.path}" for p in fresh)
    results = store.write_many(
        fresh, Author.agent(agent), message=f"import: {len(sessions)} {agent} session{plural}\n\n{body}"
    )
    commit = next((r.commit for r in results if r.commit), None)
    if commit:
        report.commits[pid] = commit
    report.imported[pid] = [r.path for r in results if r.path.startswith("sessions/")]
