"""Reading back what consolidation wrote for a recorded session: its handoff, its session page,
one section of a handoff, its steps."""

from __future__ import annotations

from conftest import consolidate_session

from wiki_memory.capture import journal
from wiki_memory.consolidate.session_sources import load_session


def consolidated(project, sid: str) -> tuple[str, str]:
    """The handoff and the session page of a recorded session, once consolidated."""
    outcome = consolidate_session(project, sid)
    assert outcome.status == "committed", outcome
    session_page, handoff = outcome.pages[0], outcome.pages[1]
    return (project.wiki / handoff).read_text(encoding="utf-8"), (project.wiki / session_page).read_text("utf-8")


def handoff_of(project, sid: str) -> str:
    return consolidated(project, sid)[0]


def section(text: str, name: str) -> str:
    """A handoff section's body ("" when absent or "None recorded.")."""
    if f"## {name}\n" not in text:
        return ""
    body = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0].strip()
    return "" if body == "None recorded." else body


def steps_of(project, sid: str):
    return load_session(journal.journal_file(project.journal_dir, sid)).steps
