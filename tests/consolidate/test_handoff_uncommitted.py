"""Changes a session left uncommitted are handed as open: from the recorded events (no commit
after a file's last change) and, for a live session, from the repository's own state."""

from __future__ import annotations

import time

import pytest
from conftest import git
from handoffs import handoff_of, section
from hooked import Hooked

from wiki_memory.config import resolve_project
from wiki_memory.consolidate import repostate
from wiki_memory.consolidate.closing import closed, item_keys
from wiki_memory.consolidate.uncommitted import LABEL
from wiki_memory.memory import Memory


@pytest.fixture
def project(code_repo):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


def _commit_all(repo, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", message)


def _uncommitted_line(handoff: str) -> str:
    return next((line for line in section(handoff, "Open items / next steps").splitlines() if LABEL in line), "")


def test_files_changed_and_never_committed_are_open(project, code_repo):
    s = Hooked(code_repo, "uncommitted-0001")
    s.prompt("Add the export command")
    s.bash("git status --short", "")  # git answered there: a repository
    s.edit("cli.py").edit("export.py")
    s.bash("python -m pytest -q", "3 passed")
    s.stop("Added the export command; tests pass.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-0001"))
    assert "the session's changes (2 files, under Files touched)" in line and "no `git commit`" in line


def test_only_files_changed_after_the_last_commit_are_open(project, code_repo):
    s = Hooked(code_repo, "uncommitted-0002")
    s.prompt("Fix the parser, then tidy the docs")
    s.edit("parser.py")
    s.bash('git commit -am "fix parser"', "[main 1a2b3c4] fix parser\n 1 file changed, 2 insertions(+)")
    s.edit("docs/usage.md")
    s.stop("Fixed the parser and committed it; the docs are tidied.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-0002"))
    assert "docs/usage.md" in line and "parser.py" not in line
    assert "after the session's last `git commit`" in line


@pytest.mark.parametrize(
    "stdout, stderr, exit_code",
    [
        # A post-commit hook failed: the command exits 1, but git made the commit and said so.
        ("[main 9f8e7d6] fix parser\n 1 file changed", "post-commit hook: notify failed", 1),
        # Codex: the commit was made, then its sandbox stopped the command; git's words follow "stdout: ".
        (
            "",
            "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 128, "
            "stdout: [main 548dd49] fix parser\n 1 file changed",
            128,
        ),
    ],
)
def test_a_commit_is_seen_by_gits_summary_line_even_when_the_command_failed_after_it(
    project, code_repo, stdout, stderr, exit_code
):
    s = Hooked(code_repo, f"uncommitted-commit-{exit_code}")
    s.prompt("Commit the fix")
    s.edit("parser.py")
    s.bash('git add -A && git commit -m "fix parser"', stdout, exit_code=exit_code, stderr=stderr)
    s.stop("Committed.")
    assert _uncommitted_line(handoff_of(project, f"uncommitted-commit-{exit_code}")) == ""


def test_a_fallback_answer_is_no_repository_and_an_empty_folder_no_change(project, code_repo, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    s = Hooked(plain, "uncommitted-0010")
    s.prompt("Update the status notes")
    s.bash('git status 2>/dev/null || echo "not a repository"', "not a repository")
    s.edit("SESSION_STATUS.md")
    s.stop("Updated the notes.")
    assert _uncommitted_line(handoff_of(resolve_project(plain), "uncommitted-0010")) == ""

    s = Hooked(code_repo, "uncommitted-0011")
    s.prompt("Prepare a folder for the research")
    s.bash("git status", "On branch main")
    s.bash("mkdir -p _ai_plats", "")
    s.stop("The folder is ready.")
    assert _uncommitted_line(handoff_of(project, "uncommitted-0011")) == ""


def test_a_tool_that_commits_for_the_user_ends_the_claim_for_what_came_before(project, code_repo):
    s = Hooked(code_repo, "uncommitted-0008")
    s.prompt("Implement the plan and submit it")
    s.edit("parser.py")
    s.bash("erk pr submit", "Submitted PR #8371")  # commits and pushes without git's summary line
    s.edit("NOTES.md")
    s.stop("Submitted; notes updated.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-0008"))
    assert "NOTES.md" in line and "parser.py" not in line


def test_changes_set_aside_or_outside_a_repository_are_not_claimed(project, code_repo, tmp_path):
    s = Hooked(code_repo, "uncommitted-0004")
    s.prompt("Try a change, then shelve it")
    s.bash("git status", "On branch main")
    s.edit("parser.py")
    s.bash("git stash", "Saved working directory and index state WIP on main")
    s.stop("Stashed the experiment.")
    assert _uncommitted_line(handoff_of(project, "uncommitted-0004")) == ""

    plain = tmp_path / "plain"  # no repository: no git command ever answered there
    plain.mkdir()
    elsewhere = resolve_project(plain)
    s = Hooked(plain, "uncommitted-0005")
    s.prompt("Write the notes")
    s.edit("notes.md")
    s.stop("Wrote the notes.")
    assert _uncommitted_line(handoff_of(elsewhere, "uncommitted-0005")) == ""


def test_a_live_session_is_judged_by_what_git_status_still_lists(project, code_repo):
    (code_repo / "app.py").write_text("print('hi')\n")
    (code_repo / "lib.py").write_text("x = 1\n")
    _commit_all(code_repo, "start")
    s = Hooked(code_repo, "uncommitted-live-1")
    s.start()  # records the repository's state in a background process: wait for it
    deadline = time.monotonic() + 60
    while repostate.start_state(project, "uncommitted-live-1") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert repostate.start_state(project, "uncommitted-live-1") is not None
    s.prompt("Change both modules, commit the library")
    (code_repo / "app.py").write_text("print('hello')\n")
    (code_repo / "lib.py").write_text("x = 2\n")
    s.edit("app.py").edit("lib.py")
    # Committed by a tool whose output the events do not show as a commit: only the state knows.
    git(code_repo, "add", "lib.py")
    git(code_repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "lib")
    s.bash("make release-lib", "done")
    s.stop("Changed both; the library is released.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-live-1"))
    assert "app.py" in line and "lib.py" not in line and "`git status` still listed" in line


def test_a_later_commit_closes_the_item_and_a_later_status_does_not():
    item = f"{LABEL}: the session's changes (2 files, under Files touched); the session made no `git commit`."
    assert closed([item], ["cmd:git status"]) == []
    assert closed([item], ["git:commit"]) == [item]
    assert item_keys(item) == {"git:commit"}


def test_a_later_session_that_commits_drops_the_item_from_the_handoff(project, code_repo):
    s = Hooked(code_repo, "uncommitted-0006")
    s.prompt("Add the export command")
    s.bash("git status --short", "")
    s.edit("export.py")
    s.stop("Added the export command.")
    assert _uncommitted_line(handoff_of(project, "uncommitted-0006"))

    later = Hooked(code_repo, "uncommitted-0007")
    later.prompt("Commit it")
    later.bash('git commit -am "export"', "[main 2b3c4d5] export\n 1 file changed")
    later.stop("Committed.")
    handoff_of(project, "uncommitted-0007")
    with Memory(project) as memory:
        handed = memory.handoff().text
    assert "Add the export command" in handed  # the earlier session is still handed, shorter
    assert LABEL not in handed


def test_a_file_the_repositorys_ignore_rules_keep_out_is_not_claimed(project, code_repo):
    (code_repo / ".gitignore").write_text(".serena/\n")
    _commit_all(code_repo, "ignore the tool's notes")
    s = Hooked(code_repo, "uncommitted-0012")
    s.prompt("Summarise the model for the next agent, and fix the parser")
    s.bash("git status", "On branch main")
    s.edit(".serena/MODEL_INPUT.md").edit("parser.py")
    s.stop("Summary written; parser fixed.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-0012"))
    assert "parser.py" in line and ".serena" not in line


def test_a_file_the_sessions_own_git_status_did_not_list_is_not_claimed(project, code_repo):
    # No ignore file here to ask: the session's own `git status`, after it changed both files,
    # listed only one of them; the other is one git ignores (the session read why).
    s = Hooked(code_repo, "uncommitted-0013")
    s.prompt("Install the skill locally and fix the parser")
    s.edit(".dazi/skills/SKILL.md").edit("parser.py")
    s.bash("git status --short", " M parser.py\n?? notes/\n")
    s.bash("cat .gitignore", ".dazi/\n")
    s.edit(".dazi/skills/SKILL.md")  # changed again later: still ignored
    s.stop("Installed the skill; parser fixed.")
    line = _uncommitted_line(handoff_of(project, "uncommitted-0013"))
    assert "parser.py" in line and ".dazi" not in line
    # A status that leaves untracked files out, or is cut short, says nothing of them.
    for n, status in enumerate(("git status -uno", "git status --short | head -1")):
        t = Hooked(code_repo, f"uncommitted-001{4 + n}")
        t.prompt("Write the notes")
        t.edit("notes/todo.md").edit("parser.py")
        t.bash(status, " M parser.py\n")
        t.stop("Notes written.")
        assert "the session's changes (2 files" in _uncommitted_line(handoff_of(project, f"uncommitted-001{4 + n}"))
