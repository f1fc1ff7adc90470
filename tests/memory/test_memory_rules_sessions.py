"""Sessions and handoffs in the memory layer, called directly: a finished session's journal
consolidated into its session and handoff pages in one commit (and not again while the
journal stands), a handoff written on purpose with its sections and its writer, what a
session starting now is handed (never its own handoff), short session ids, and the
recalls a session was handed read back from its journal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import git
from journals import Session

from wiki_memory.capture import journal
from wiki_memory.capture.observation import Observation
from wiki_memory.memory import Actor, InputError, Memory

SID = "2624e4c8-1111-4111-8111-000000000001"
CODEX = Actor("codex", "7f3e9a2b-0000-4000-8000-000000000002")
TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape


@pytest.fixture
def memory(code_repo: Path):
    with Memory.at(code_repo) as memory:
        yield memory


def finished_session(memory: Memory, sid: str = SID) -> None:
    s = Session(memory.project, sid).start().prompt("Fix the flaky login test: test_login_refresh fails with 401")
    s.edit("src/auth/client.py").bash("pytest -k login --count 50", "50 passed")
    s.stop("Moved the refresh before the retry; the login test passed 50 runs.").end().write()


def test_a_finished_session_becomes_its_session_and_handoff_pages_in_one_commit(memory):
    finished_session(memory)
    outcome = memory.consolidate(SID)
    assert outcome.status == "committed"
    assert outcome.pages == (
        "sessions/2026/11/2026-11-30-claude-code-2624e4c8.md",
        "handoffs/2026/11/2026-11-30-claude-code-2624e4c8.md",
    )
    wiki = memory.project.wiki
    assert outcome.commit == git(wiki, "rev-parse", "HEAD").strip()
    assert sorted(git(wiki, "show", "--format=", "--name-only", "HEAD").split()) == sorted(outcome.pages)
    fmt = "%an|%s|%(trailers:key=Session-Id,valueonly)"
    assert git(wiki, "log", "-1", f"--format={fmt}").strip() == (
        f"claude-code|consolidate: claude-code session 2624e4c8|{SID}"
    )
    handoff = memory.read(outcome.handoff or "").page
    assert handoff.type == "handoff" and "Fix the flaky login test" in handoff.body
    again = memory.consolidate(SID)
    assert again.status == "already" and git(wiki, "rev-parse", "HEAD").strip() == outcome.commit


def test_a_session_starting_now_is_handed_the_handoff_but_never_its_own(memory):
    assert memory.handoff() is None  # nothing yet, and nothing created
    finished_session(memory)
    memory.consolidate(SID)
    view = memory.handoff()
    assert view is not None and view.handoffs == ("handoffs/2026/11/2026-11-30-claude-code-2624e4c8.md",)
    assert "From claude-code, session 2624e4c8" in view.text and "Goal: Fix the flaky login test" in view.text
    assert memory.handoff(SID) is None  # the session itself, resumed: its own handoff left out


def test_a_handoff_written_on_purpose_has_its_sections_its_writer_and_goes_first(memory):
    finished_session(memory)
    memory.consolidate(SID)
    written = memory.handoff_write(
        f"Halfway through the admin client; token {TOKEN}",
        done=["client fixed"],
        next_steps=["port the fix to the admin client"],
        files=["src/auth/admin.py"],
        actor=CODEX,
    )
    assert re.fullmatch(r"handoffs/\d{4}/\d{2}/\d{4}-\d{2}-\d{2}-codex-7f3e9a2b-explicit\.md", written.path)
    assert written.redacted == ("github-token",)
    body = written.page.body
    assert "## Summary\n\nHalfway through the admin client; token [REDACTED:github-token]\n" in body
    assert "## Done\n\n- client fixed\n" in body and "## Next steps\n\n- port the fix to the admin client\n" in body
    assert "## Files touched\n\n- `src/auth/admin.py`\n" in body
    meta = written.page.meta
    assert (meta["handoff_kind"], meta["agent"], meta["session_id"]) == ("explicit", "codex", CODEX.session_id)
    wiki = memory.project.wiki
    assert git(wiki, "log", "-1", "--format=%an|%(trailers:key=Agent,valueonly)").strip() == "codex|codex"
    assert TOKEN not in git(wiki, "log", "-p", "--all")
    assert memory.handoff().handoffs[0] == written.path  # the newest first
    assert written.path not in memory.handoff(CODEX.session_id).handoffs  # not handed back to its writer


def test_a_handoff_without_a_summary_is_refused_and_creates_nothing(memory):
    with pytest.raises(InputError, match="a handoff needs a summary"):
        memory.handoff_write("  ", done=["something"])
    assert not memory.exists and not memory.project.wiki.exists()


def test_a_short_session_id_names_the_one_session_that_starts_so(memory):
    finished_session(memory)
    finished_session(memory, "2624e4c8-9999-4999-8999-000000000009")
    finished_session(memory, "51d0aa00-1111-4111-8111-000000000003")
    assert memory.full_session_id("51d0") == "51d0aa00-1111-4111-8111-000000000003"
    assert memory.full_session_id(SID) == SID
    assert memory.full_session_id("ffff") == "ffff"  # no such session: itself
    with pytest.raises(InputError, match="session '2624e4c8' is ambiguous: 2 sessions start so"):
        memory.full_session_id("2624e4c8")


def test_the_recalls_a_session_was_handed_are_read_back_from_its_journal(memory):
    finished_session(memory)
    handed = Observation(
        kind="recall",
        agent="claude-code",
        session_id=SID,
        time="2026-11-30T08:30:00.000Z",
        cwd=str(memory.project.root),
        text="why does login fail with 401",
        meta={"trigger": "prompt", "pages": ["gotchas/jwt-refresh.md"]},
    )
    journal.append(memory.project.journal_dir, [handed])
    assert memory.recalled("2624e4c8") == [
        {
            "time": "2026-11-30T08:30:00.000Z",
            "trigger": "prompt",
            "subject": "why does login fail with 401",
            "pages": ["gotchas/jwt-refresh.md"],
        }
    ]
    assert memory.recalled("51d0aa00") == []  # no such session: nothing, no error
