"""A handoff with no invented line: sessions of the shapes real agents produce, recorded
through the real hook entry point, consolidated, and read back."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from handoffs import handoff_of, section, steps_of
from hooked import Hooked

from wiki_memory.capture.toolcalls import tool_facts
from wiki_memory.config import resolve_project
from wiki_memory.consolidate import repostate
from wiki_memory.consolidate.command_runs import judge_runs, resolutions
from wiki_memory.consolidate.oneline import error_line


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


# -- resolution: a failure got past by another command is not "Failed" ---------------------------


def test_python_missing_then_python3_is_resolved_not_failed(project, code_repo):
    s = Hooked(code_repo, "res-python-0001")
    s.start()
    s.prompt("Run the data import script and tell me how many rows it loads")
    s.bash("python scripts/load.py", exit_code=127, stderr="bash: python: command not found")
    s.bash("python3 scripts/load.py", "loaded 120 rows")
    s.stop("The script loads 120 rows.")
    handoff = handoff_of(project, "res-python-0001")
    assert "python scripts/load.py" not in section(handoff, "Failed or abandoned approaches")
    assert "still failing" not in handoff
    assert "then `python3 scripts/load.py` passed" in section(handoff, "Done")
    (episode,) = resolutions(steps_of(project, "res-python-0001"))
    assert episode.how == "same program" and "command not found" in episode.error


def test_a_missing_program_replaced_by_another_is_resolved(project, code_repo):
    s = Hooked(code_repo, "res-tree-0001")
    s.start()
    s.prompt("Show me the layout of the src folder and build it")
    s.bash("tree src", exit_code=127, stderr="/bin/bash: line 1: tree: command not found")
    s.bash("find src -type f", "src/app.py\nsrc/util.py")
    s.bash("./build.sh", exit_code=126, stderr="/bin/bash: line 1: ./build.sh: Permission denied")
    s.bash("bash build.sh", "built")
    s.stop("The layout is src/app.py and src/util.py; the build passes.")
    handoff = handoff_of(project, "res-tree-0001")
    assert section(handoff, "Failed or abandoned approaches") == ""
    hows = {(r.failed.command, r.resolved_by.command, r.how) for r in resolutions(steps_of(project, "res-tree-0001"))}
    assert hows == {("tree src", "find src -type f", "another program"), ("./build.sh", "bash build.sh", "same script")}


def test_a_failure_fixed_by_a_shell_edit_carries_the_edit(project, code_repo):
    s = Hooked(code_repo, "res-sed-0001")
    s.start()
    s.prompt("The app crashes on start, fix it")
    s.bash("python3 app.py", exit_code=1, stderr="ModuleNotFoundError: No module named 'shop'")
    s.bash("sed -i 's/import shop/import store as shop/' app.py")
    s.bash("python3 app.py", "serving on :8000")
    s.stop("Fixed the import; the app serves on :8000.")
    handoff = handoff_of(project, "res-sed-0001")
    assert "after changes to app.py" in section(handoff, "Done")
    assert "`app.py`" in section(handoff, "Files touched")
    (episode,) = resolutions(steps_of(project, "res-sed-0001"))
    assert episode.files == ("app.py",) and episode.how == "rerun"
    assert episode.error == "ModuleNotFoundError: No module named 'shop'"


def test_other_work_passing_does_not_resolve_a_failure(project, code_repo):
    s = Hooked(code_repo, "res-none-0001")
    s.start()
    s.prompt("Migrate the database and start the server")
    s.bash("python3 manage.py migrate", exit_code=1, stderr="django.db.utils.OperationalError: no such table: shop")
    s.bash("python3 manage.py runserver --noreload", "Starting development server")
    s.bash("pytest tests/test_a.py", exit_code=1, stderr="FAILED tests/test_a.py::test_x - assert 1 == 2")
    s.bash("pytest tests/test_b.py", "1 passed")
    # A missing operand is the command's own failure, not a program that could not start.
    s.bash("bash scripts/seed.sh", exit_code=127, stderr="bash: scripts/seed.sh: No such file or directory")
    s.bash("npm install", "added 12 packages")
    s.stop("The server starts.")
    failed = section(handoff_of(project, "res-none-0001"), "Failed or abandoned approaches")
    assert "`python3 manage.py migrate` failed" in failed and "`pytest tests/test_a.py` failed" in failed
    assert "`bash scripts/seed.sh` failed" in failed
    assert resolutions(steps_of(project, "res-none-0001")) == []


def test_a_write_through_the_shell_that_failed_then_done_by_the_edit_tool_is_not_failed(project, code_repo):
    (code_repo / "docs").mkdir()
    (code_repo / "docs" / "spec.md").write_text("# Spec\n")
    s = Hooked(code_repo, "res-write-0001")
    s.start()
    s.prompt("Add the acceptance section to the spec and the notes")
    read_only = "cp: cannot create regular file 'docs/spec.md': Read-only file system"
    s.bash("cp /tmp/spec.md docs/spec.md", exit_code=1, stderr=read_only)
    s.bash("python3 tools/notes.py > notes.md", exit_code=1, stderr="bash: notes.md: Read-only file system")
    s.edit("docs/spec.md", "# Spec", "# Spec\n## Acceptance")
    s.stop("Added the acceptance section.")
    failed = section(handoff_of(project, "res-write-0001"), "Failed or abandoned approaches")
    assert "docs/spec.md" not in failed  # the edit tool wrote it afterwards
    assert "`python3 tools/notes.py > notes.md` failed" in failed  # nothing wrote that one


def test_git_checkout_of_a_branch_is_not_a_revert(project, code_repo):
    s = Hooked(code_repo, "res-git-0001")
    s.start()
    s.prompt("Start a feature branch for the login page")
    s.bash("git checkout -b login", exit_code=128, stderr="fatal: a branch named 'login' already exists")
    s.bash("git checkout login", "Switched to branch 'login'")
    s.edit("src/login.py")
    s.bash("git checkout -- src/old.py")
    s.stop("On branch login; src/login.py started.")
    handoff = handoff_of(project, "res-git-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "git checkout login" not in failed and "git checkout -b login" not in failed
    assert "Changes to src/old.py were reverted (`git checkout -- src/old.py`)." in failed
    assert failed.count("reverted") == 1


# -- edits made through the shell --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("sed -i 's/a/b/' src/x.py", ("src/x.py",)),
        ("sed -i '' -e 's/a/b/' m.c", ("m.c",)),
        ("perl -pi -e 's/a/b/' a.txt b.txt", ("a.txt", "b.txt")),
        ("echo done > notes.md && cat notes.md >> log.md", ("notes.md", "log.md")),
        ("pytest -q 2>&1 | tee out.log", ("out.log",)),
        ("cat > src/new.py <<'EOF'\nimport os\nrm -rf x > y\nEOF", ("src/new.py",)),
        (
            "bash -lc \"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a/b.py\n"
            '@@\n-x\n+y\n*** End Patch\nEOF\n"',
            ("a/b.py",),
        ),
        ("mv old.py new.py", ("old.py", "new.py")),
        ("cp a.py dst/", ("dst/a.py",)),
        ("rm -rf build /tmp/scratch", ("build",)),
        ("mkdir -p pkg && touch pkg/__init__.py", ("pkg", "pkg/__init__.py")),
        ("cd sub && sed -i.bak s/x/y/ conf.ini", ("sub/conf.ini",)),
        ("git apply <<'EOF'\n--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+b\nEOF", ("f.py",)),
        ("git mv a.py b.py", ("a.py", "b.py")),
        # Not edits: reads, a branch checkout, output thrown away, files outside the project.
        ("sed -n 1,20p src/x.py", ()),
        ("cat src/x.py | grep foo > /dev/null 2>&1", ()),
        ("git checkout main", ()),
        ("python3 x.py > /tmp/log 2>&1", ()),
        ("echo 'a > b'", ()),
    ],
)
def test_shell_commands_that_write_files_name_them(command, files, tmp_path):
    facts = tool_facts("Bash", {"command": command}, {"stdout": "", "stderr": ""}, str(tmp_path))
    assert facts.files == files
    codex = tool_facts("exec_command", {"cmd": command}, "Exit code: 0\nOutput:\n", str(tmp_path))
    assert codex.files == files


def test_a_file_written_by_its_absolute_path_in_a_project_under_tmp_is_the_projects():
    """A checkout may live under /tmp: inside the working directory a path is the project's;
    beside it, a temporary file."""
    line = "cat > /tmp/work/app/specs/research.md <<'EOF'\n# Research\nEOF\necho x > /tmp/scratch.txt"
    assert tool_facts("Bash", {"command": line}, {"stdout": ""}, "/tmp/work/app").files == ("specs/research.md",)
    assert tool_facts("Bash", {"command": line}, {"stdout": ""}, None).files == ()


def test_git_apply_of_a_patch_file_names_the_files_it_patches(tmp_path):
    (tmp_path / "fix.diff").write_text("--- a/src/one.py\n+++ b/src/one.py\n@@ -1 +1 @@\n-a\n+b\n")
    facts = tool_facts("Bash", {"command": "git apply fix.diff"}, {"stdout": ""}, str(tmp_path))
    assert facts.files == ("src/one.py",)


# -- the goal: the user's own words; a slash command or a persona is named, never the goal -------------

TASKS_EXPANSION = """# Task board

You are a meticulous project manager. ALWAYS keep the board in tasks.md up to date.

## Rules
- NEVER start a task that is not on the board.
- ALWAYS mark a task done when its tests pass.
- Keep each task under a day of work.
- Write acceptance criteria for every task.
- Report progress in one line per task.
"""


def test_a_slash_command_is_named_and_its_expansion_is_never_the_goal(project, code_repo):
    s = Hooked(code_repo, "goal-slash-0001")
    s.start()
    s.prompt(
        "<command-name>/tasks</command-name>\n<command-message>tasks</command-message>\n<command-args></command-args>"
    )
    s.prompt(TASKS_EXPANSION)
    s.prompt("Split the CSV export work into tasks")
    s.edit("tasks.md")
    s.stop("Added three tasks for the CSV export to tasks.md.")
    handoff = handoff_of(project, "goal-slash-0001")
    goal = section(handoff, "Goal")
    assert goal.startswith("Split the CSV export work into tasks (the session ran /tasks)")
    assert "meticulous" not in handoff and "NEVER" not in handoff and "Task board" not in handoff


def test_a_persona_prompt_is_named_and_the_users_words_after_it_are_the_goal(project, code_repo):
    persona = (
        "You are Captain Code, a pirate who writes Python. NEVER break character until given an exit command.\n"
        "- ALWAYS answer in pirate speak.\n- NEVER admit you are an AI.\n- Keep answers short.\n"
    )
    s = Hooked(code_repo, "goal-persona-0001")
    s.start()
    s.prompt(persona)
    s.prompt("thanks")
    s.prompt("Add a --verbose flag to the CLI")
    s.edit("cli.py")
    s.stop("Arr, the --verbose flag be added to cli.py.")
    goal = section(handoff_of(project, "goal-persona-0001"), "Goal")
    assert goal.startswith("Add a --verbose flag to the CLI (the session ran a persona prompt)")
    assert "Captain" not in goal and "character" not in goal


def test_the_input_slot_of_a_custom_prompt_is_the_goal(project, code_repo):
    custom = (
        "## User Input\n\n```text\nBitte die Verfassung an Hand von Lastenheft.md anpassen\n```\n\n"
        "You **MUST** consider the user input before proceeding (if not empty).\n\n## Outline\n\n"
        "1. Load the constitution template.\n2. Collect the values for every placeholder.\n"
        "3. Draft the updated constitution.\n4. Write a Sync Impact Report.\n5. Validate before the final output.\n"
    )
    s = Hooked(code_repo, "goal-slot-0001")
    s.start()
    s.prompt(custom)
    s.edit(".specify/memory/constitution.md")
    s.stop("Updated the constitution to 1.1.0.")
    goal = section(handoff_of(project, "goal-slot-0001"), "Goal")
    assert goal.startswith("Bitte die Verfassung an Hand von Lastenheft.md anpassen (the session ran a custom command")
    assert "Outline" not in goal and "Sync Impact" not in goal


def test_markup_an_agent_adds_to_a_turn_is_not_the_users_words(project, code_repo):
    s = Hooked(code_repo, "goal-markup-0001")
    s.start()
    s.prompt(
        "<ide_opened_file>The user opened the file /src/PLAN.md in the IDE.</ide_opened_file>\nwhat does main.py do?"
    )
    s.read("main.py")
    s.stop("main.py starts the web server on port 8000.")
    s.prompt("<task-notification><task-id>b39</task-id><status>completed</status></task-notification>")
    s.stop("The background task finished.")
    handoff = handoff_of(project, "goal-markup-0001")
    assert section(handoff, "Goal") == "what does main.py do?"
    assert "PLAN.md" not in handoff and "task-notification" not in handoff
    assert "got no answer" not in handoff


# -- no invented lines: answered requests, next steps -------------------------------------------------


def test_an_answered_request_followed_by_exit_is_not_unanswered(project, code_repo):
    s = Hooked(code_repo, "ans-exit-0001")
    s.start()
    s.prompt("Upgrade the brew package and confirm the version")
    s.bash("brew upgrade claude-code", "claude-code 2.1.7 -> 2.1.9")
    s.stop("Upgraded claude-code from 2.1.7 to 2.1.9.")
    s.prompt(
        "<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>"
    )
    s.prompt("<local-command-stdout>See ya!</local-command-stdout>")
    handoff = handoff_of(project, "ans-exit-0001")
    assert "got no answer" not in handoff
    assert "/exit" not in section(handoff, "Goal")
    # A request that really got nothing is still said to be open.
    t = Hooked(code_repo, "ans-none-0001")
    t.start()
    t.prompt("Fix the login redirect")
    t.edit("src/login.py")
    t.stop("Fixed the redirect in src/login.py.")
    t.prompt("Now add a test for it")
    assert "The last request got no answer: Now add a test for it" in handoff_of(project, "ans-none-0001")


def test_a_version_or_a_fact_under_a_heading_is_not_a_next_step(project, code_repo):
    s = Hooked(code_repo, "next-ver-0001")
    s.start()
    s.prompt("Scaffold the web app")
    s.bash("npx create-next-app@latest web --yes", "Success! Created web")
    s.stop(
        "The app is scaffolded.\n\n## Stack\n- Next.js 15.5.2\n- React 19.1.0\n\n## Next steps\n"
        "- Next.js 15.5.2\n- Add the login page under app/login\n\nYou can see the app at http://localhost:3000."
    )
    open_items = section(handoff_of(project, "next-ver-0001"), "Open items / next steps")
    assert "Stated next step: Add the login page under app/login" in open_items
    assert "15.5.2" not in open_items and "localhost" not in open_items


def test_a_command_that_printed_nothing_and_reported_no_error_passed(project, code_repo):
    s = Hooked(code_repo, "quiet-runs-0001")
    s.start()
    s.prompt("Generate the fixtures and stage them")
    s.bash("mkdir -p fixtures")
    s.bash("python scripts/gen_fixtures.py")  # {"stdout": "", "stderr": "", "interrupted": false}
    s.tool("Bash", {"command": "git add ."}, "")  # a response with nothing in it at all
    s.bash("make check", exit_code=2)  # nothing printed, but a non-zero exit: failed
    s.stop("Generated and staged; make check fails.")
    handoff = handoff_of(project, "quiet-runs-0001")
    runs = {r.command: r.outcome for r in judge_runs(steps_of(project, "quiet-runs-0001"))}
    assert runs == {"mkdir -p fixtures": "ok", "python scripts/gen_fixtures.py": "ok", "git add .": "ok",
                    "make check": "failed (exit 2)"}  # fmt: skip
    failed = section(handoff, "Failed or abandoned approaches")
    assert "make check" in failed and "gen_fixtures" not in failed and "git add" not in failed


def test_a_command_left_running_is_judged_by_the_call_that_collected_it(project, code_repo):
    s = Hooked(code_repo, "run-stdin-0001")
    s.start()
    s.prompt("Generate the API docs")
    for n in range(2):
        s.tool(
            "exec_command",
            {"cmd": "docfx docfx.json"},
            f"Chunk ID: a{n}\nWall time: 10 s\nProcess running with session ID 5868{n}\nOutput:\nBuilding...\n",
        )
        s.tool(
            "write_stdin",
            {"session_id": 58680 + n, "chars": "", "yield_time_ms": 120000},
            "Chunk ID: b\nWall time: 120 s\nProcess exited with code 255\nOutput:\nTimeoutException: timed out.\n",
        )
    s.stop("docfx timed out twice.")
    handoff = handoff_of(project, "run-stdin-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "`docfx docfx.json` failed (exit 255) (2 times): TimeoutException: timed out." in failed
    assert "yield_time_ms" not in handoff


# -- which handoff is handed: work, not the newest chatter; items a later session finished are gone ----


def working_session(code_repo: Path, sid: str) -> None:
    s = Hooked(code_repo, sid)
    s.start()
    s.prompt("Fix the token refresh in the auth client")
    s.bash("pytest tests/test_login.py", exit_code=1, stderr="E   AssertionError: 401 != 200")
    s.edit("src/auth/client.py")
    s.bash("pytest tests/test_login.py", "3 passed")
    s.tool(
        "TodoWrite",
        {
            "todos": [
                {"content": "Fix the refresh in src/auth/client.py", "status": "completed", "activeForm": "x"},
                {"content": "Apply the same fix to src/auth/admin_client.py", "status": "pending", "activeForm": "y"},
            ]
        },
        {"oldTodos": [], "newTodos": []},
    )
    s.bash("make lint", exit_code=2, stderr="src/auth/admin_client.py:3: F401 unused import")
    s.stop("Fixed the refresh in src/auth/client.py; admin_client.py still needs the same fix.")


def test_a_question_only_session_does_not_displace_the_last_working_one(project, code_repo):
    working_session(code_repo, "work-a-0001")
    consolidate_session(project, "work-a-0001")
    q = Hooked(code_repo, "quiet-b-0001")
    q.start()
    q.prompt("how do we enable ralph mode?")
    q.bash("brew info ralph", "ralph: stable 1.2")
    q.stop("Ralph mode comes with the ralph plugin; install it with /plugin.")
    q.prompt("thanks, looks good")
    q.stop("You're welcome!")
    consolidate_session(project, "quiet-b-0001")
    text = Hooked(code_repo, "next-c-0001").start()
    assert "session worka000" in text.split("\n")[1]  # the working session's handoff comes first, in full
    assert "[pending] Apply the same fix to src/auth/admin_client.py" in text
    assert "Since then, sessions that changed nothing:" in text
    assert "quietb00" in text and "how do we enable ralph mode?" in text
    assert "Ralph mode comes with" not in text  # named in a line, not handed in full


def test_items_a_later_session_finished_are_no_longer_handed(project, code_repo):
    working_session(code_repo, "work-a-0002")
    consolidate_session(project, "work-a-0002")
    later = Hooked(code_repo, "work-b-0002")
    later.start()
    later.prompt("Add a logout button to the navbar")
    later.edit("src/auth/admin_client.py")
    later.edit("web/navbar.tsx")
    later.bash("make lint", "All checks passed")
    later.tool(
        "TodoWrite",
        {
            "todos": [
                {"content": "Apply the same fix to src/auth/admin_client.py", "status": "completed", "activeForm": "x"}
            ]
        },
        {"oldTodos": [], "newTodos": []},
    )
    later.bash("npm test", "12 passed")
    later.stop("Added the logout button and fixed admin_client.py.")
    consolidate_session(project, "work-b-0002")
    text = Hooked(code_repo, "next-c-0002").start()
    assert "Goal: Add a logout button to the navbar" in text

    earlier = text.split("Also recent (shorter):", 1)[1].split("Procedures that worked", 1)[0]
    assert "Fix the token refresh" in earlier
    assert "admin_client.py" not in earlier and "make lint" not in earlier


# -- files touched: the repository's state at the start and at the end --------------------------------


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", message)


def test_the_repository_state_names_every_changed_file_whoever_changed_it(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for name in ("kept.py", "edited.py", "restored.py", "committed.py"):
        (repo / name).write_text(f"{name}\n")
    commit_all(repo, "start")
    (repo / "dirty.py").write_text("dirty at start\n")  # untracked before the session, left alone
    (repo / "committed.py").write_text("changed before the session\n")  # dirty at start, committed as it was
    before = repostate.snapshot(repo)
    (repo / "edited.py").write_text("a formatter rewrote this\n")
    (repo / "restored.py").write_text("changed\n")
    (repo / "restored.py").write_text("restored.py\n")  # and back: no change
    (repo / "new.txt").write_text("generated\n")
    git(repo, "add", "committed.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "commit what was there")
    after = repostate.snapshot(repo)
    assert sorted(repostate.changed_files(repo, before, after)) == ["edited.py", "new.txt"]


def test_a_live_session_counts_files_changed_outside_its_tools(project, code_repo):
    (code_repo / "app.py").write_text("print('hi')\n")
    (code_repo / "notes.md").write_text("dirty before the session\n")
    commit_all(code_repo, "start")
    (code_repo / "notes.md").write_text("dirty before the session, still\n")
    s = Hooked(code_repo, "live-state-0001")
    s.start()  # records the repository's state in a background process
    snapshot = repostate.start_state
    deadline = time.monotonic() + 60
    while snapshot(project, "live-state-0001") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert snapshot(project, "live-state-0001") is not None
    s.prompt("Format the code")
    s.bash("make fmt", "formatted 1 file")  # the formatter rewrote app.py: no edit tool saw it
    (code_repo / "app.py").write_text('print("hi")\n')
    s.stop("Formatted the code.")
    handoff = handoff_of(project, "live-state-0001")
    touched = section(handoff, "Files touched")
    assert "`app.py`" in touched and "notes.md" not in touched


# -- traceability: every item names the events it came from ------------------------------------------


def test_every_handed_item_names_the_journal_lines_it_came_from(project, code_repo):
    import json

    from click.testing import CliRunner

    from wiki_memory.cli import main

    working_session(code_repo, "trace-a-0001")
    consolidate_session(project, "trace-a-0001")
    runner = CliRunner()
    result = runner.invoke(main, ["--project", str(code_repo), "handoff", "--explain", "--json"])
    assert result.exit_code == 0, result.output
    (handed,) = json.loads(result.output)["handoffs"]
    journal_lines = Path(handed["journal"]).read_text(encoding="utf-8").splitlines()
    sections = {item["section"] for item in handed["items"]}
    assert {"Goal", "Done", "Failed or abandoned", "Open items / next steps", "Files touched"} <= sections
    for item in handed["items"]:
        assert item["evidence"], item
        for ref in item["evidence"]:
            assert ref.startswith("journal line "), ref
            assert 1 <= int(ref.split()[-1]) <= len(journal_lines)
    by_text = {item["text"]: item["evidence"] for item in handed["items"]}
    lint = by_text["`make lint` failed (exit 2): src/auth/admin_client.py:3: F401 unused import"]
    assert all(json.loads(journal_lines[int(r.split()[-1]) - 1])["input"] == "make lint" for r in lint)
    goal = next(i for i in handed["items"] if i["section"] == "Goal")
    (goal_ref,) = goal["evidence"]
    assert (
        json.loads(journal_lines[int(goal_ref.split()[-1]) - 1])["text"] == "Fix the token refresh in the auth client"
    )
    # The text form says the same, item by item.
    text = runner.invoke(main, ["--project", str(code_repo), "handoff", "--explain"]).output
    assert "- `make lint` failed (exit 2)" in text and "<- journal line" in text
    # A line a person rewrote has no recorded event, and says so.
    page = project.wiki / handed["path"]
    page.write_text(page.read_text().replace("## Done\n\n", "## Done\n\n- Checked by hand\n"))
    from conftest import git as run_git

    run_git(project.wiki, "commit", "-qam", "hand edit")
    again = json.loads(runner.invoke(main, ["--project", str(code_repo), "handoff", "--explain", "--json"]).output)
    by_text = {item["text"]: item["evidence"] for item in again["handoffs"][0]["items"]}
    assert by_text["Checked by hand"] == []


def test_a_call_the_permission_settings_refused_is_not_a_failure_left_open(project, code_repo):
    s = Hooked(code_repo, "perm-0001")
    s.start()
    s.prompt("Install tmux")
    s.tool(
        "Bash", {"command": "brew install tmux"}, error="Permission to use Bash has been auto-denied in dontAsk mode."
    )
    # A look around that the settings refused tried nothing: no failure to hand on.
    s.tool(
        "Bash",
        {"command": "ls -l /usr/local/bin | grep tmux"},
        error="Permission to use Bash has been auto-denied in dontAsk mode.",
    )
    s.stop("I could not run brew: the permission settings refused it. Run `brew install tmux` yourself.")
    handoff = handoff_of(project, "perm-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    # In the settings' own words, which say why.
    assert "`brew install tmux` was not run: Permission to use Bash has been auto-denied in dontAsk mode." in failed
    assert "ls -l /usr/local/bin" not in failed
    assert "still failing" not in handoff


def test_dunder_file_names_keep_their_underscores(project, code_repo):
    """`__init__.py` is a name, not Markdown emphasis: the handoff names the file as it is."""
    s = Hooked(code_repo, "dunder-0001")
    s.start()
    s.prompt("Export the version from the package")
    s.tool("Edit", {"file_path": str(code_repo / "src/pkg/__init__.py"), "old_string": "", "new_string": "V = 1"})
    s.stop("The package's __init__.py now exports V; **done**.")
    handoff = handoff_of(project, "dunder-0001")
    assert "src/pkg/__init__.py" in handoff and "src/pkg/init.py" not in handoff
    assert "__init__.py now exports V; done." in section(handoff, "Done")  # the emphasis goes, the name stays


def test_a_search_that_exits_1_without_a_word_is_an_answer_not_a_failure(project, code_repo):
    s = Hooked(code_repo, "quiet-no-0001")
    s.start()
    s.prompt("Remove the old notes app and check nothing of it is left")
    s.bash("apt-get remove -y notes-old", "Removing notes-old (1.2) ...")
    s.bash("dpkg -l | grep notes-old", exit_code=1)  # grep found nothing: the app is gone
    s.bash("apt-cache search notes-old", exit_code=1, stdout="Output: (empty)\nError: (none)\nExit Code: 1")
    s.bash("notes-old --version", exit_code=1, stderr="notes-old: error while loading shared libraries")
    s.stop("notes-old is removed; dpkg no longer lists it.")
    handoff = handoff_of(project, "quiet-no-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    left = failed + section(handoff, "Open items / next steps")
    assert "grep notes-old" not in left and "apt-cache search" not in left
    # A failure that says what went wrong is still one, told by its own line, not the frame.
    assert "`notes-old --version` failed" in failed and "error while loading shared libraries" in failed
    assert error_line("Output: (empty)\nerror: disk full\nError: (none)\nExit Code: 1") == "error: disk full"


def test_a_bare_command_word_typed_last_is_not_an_unanswered_request(project, code_repo):
    s = Hooked(code_repo, "bare-word-0001")
    s.start()
    s.prompt("Make the status bar show the branch name")
    s.edit("src/statusbar.py")
    s.stop("The status bar now shows the branch name.")
    s.prompt("clear")
    assert "got no answer" not in handoff_of(project, "bare-word-0001")


def test_passing_builds_of_one_program_are_one_done_line(project, code_repo):
    s = Hooked(code_repo, "builds-0001")
    s.start()
    s.prompt("Add a history panel to the calculator and make sure everything builds")
    s.edit("src/Calc.Ui/HistoryPanel.cs")
    s.bash("dotnet build src/Calc.Core/Calc.Core.csproj -v minimal", "Build succeeded.")
    s.bash("dotnet build src/Calc.Ui/Calc.Ui.csproj -v minimal", "Build succeeded.")
    s.bash("dotnet build tests/Calc.Tests/Calc.Tests.csproj -v minimal", "Build succeeded.")
    s.bash("pytest tests/test_history.py", "3 passed")
    s.stop("The history panel is in and every project builds.")
    done = section(handoff_of(project, "builds-0001"), "Done")
    lines = [line for line in done.splitlines() if "dotnet build" in line]
    assert lines == [
        "- `dotnet build` passed on its last run for 3 targets (Calc.Core.csproj, Calc.Ui.csproj, Calc.Tests.csproj)."
    ]
    assert "`pytest tests/test_history.py` passed (last run)." in done


def test_the_steps_of_a_plan_left_pending_are_one_open_line(project, code_repo):
    s = Hooked(code_repo, "plan-one-0001")
    s.start()
    s.prompt("Implement the export feature from tasks.md")
    todos = [
        {"content": "Write the export schema", "status": "completed", "activeForm": "Writing"},
        {"content": "Add the CSV writer", "status": "pending", "activeForm": "Adding"},
        {"content": "Add the JSON writer", "status": "pending", "activeForm": "Adding"},
        {"content": "Document the export command", "status": "pending", "activeForm": "Documenting"},
    ]
    s.tool("TodoWrite", {"todos": todos}, {"newTodos": todos})
    s.edit("src/export/schema.py")
    s.stop("The export schema is written; the writers come next.")
    open_lines = [
        line
        for line in section(handoff_of(project, "plan-one-0001"), "Open items / next steps").splitlines()
        if "[" in line
    ]
    pending = [line for line in open_lines if "[pending]" in line]
    assert pending == ["- [pending] Add the CSV writer; Add the JSON writer; Document the export command"]


def test_code_in_the_final_message_is_no_question_and_no_todo_is_not_unfinished(project, code_repo):
    s = Hooked(code_repo, "final-code-0001")
    s.start()
    s.prompt("Review the repository and suggest a .gitignore")
    s.read("README.md")
    s.stop(
        "Review done.\n\n**Code quality:** good (clean, no TODO comments)\n\n"
        "Suggested .gitignore:\n```\n*.log\n.DS_Store?\nbuild/\n```\n\nShould I commit the .gitignore?"
    )
    left = section(handoff_of(project, "final-code-0001"), "Open items / next steps")
    assert "DS_Store" not in left and "TODO" not in left
    assert "Question left for the user: Should I commit the .gitignore?" in left


def test_a_failing_command_run_again_inside_another_line_is_resolved(project, code_repo):
    s = Hooked(code_repo, "res-chain-0001")
    s.start()
    s.prompt("Find out which sound server is running")
    s.bash(
        "lspci | grep -i audio && pactl info",
        exit_code=1,
        stdout="00:1f.3 Audio device: Intel",
        stderr="Connection failure: Connection refused",
    )
    s.bash("sudo -u alice XDG_RUNTIME_DIR=/run/user/1000 pactl info && pactl list sinks short", "Server Name: PipeWire")
    s.stop("PipeWire is the sound server.")
    handoff = handoff_of(project, "res-chain-0001")
    assert "pactl info" not in section(handoff, "Failed or abandoned approaches")
    assert "still failing" not in handoff
    (episode,) = resolutions(steps_of(project, "res-chain-0001"))
    assert episode.how == "rerun" and episode.resolved_by.command.startswith("sudo -u alice")


def test_an_edit_the_tool_found_already_made_is_neither_failed_nor_a_change(project, code_repo):
    s = Hooked(code_repo, "edit-noop-0001")
    s.start()
    s.prompt("Make reset redraw the timer")
    s.edit("script.js")
    s.tool(
        "Edit",
        {"file_path": str(code_repo / "timer.js"), "old_string": "reset() {}", "new_string": "reset() { draw(); }"},
        error="A secondary check by an LLM determined that no changes were necessary to fulfill the instruction. "
        "Original error: Failed to edit, 0 occurrences found for old_string in timer.js. No edits made.",
    )
    s.tool(
        "Edit",
        {"file_path": str(code_repo / "style.css"), "old_string": "a", "new_string": "b"},
        error="Failed to edit, 0 occurrences found for old_string in style.css. No edits made.",
    )
    s.stop("Reset already redraws the timer.")
    handoff = handoff_of(project, "edit-noop-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "timer.js" not in failed and "Editing " in failed and "style.css failed" in failed
    assert "timer.js" not in section(handoff, "Files touched")


def test_a_refused_edit_done_by_a_command_on_the_same_file_is_not_failed(project, code_repo):
    s = Hooked(code_repo, "edit-other-0001")
    s.start()
    s.prompt("Turn off the banner in the boot theme")
    s.tool(
        "Edit",
        {"file_path": "/boot/theme/theme.conf", "old_string": "banner on", "new_string": "banner off"},
        error="File path must be within one of the workspace directories",
    )
    s.bash("python3 tools/set_option.py /boot/theme/theme.conf banner off", "banner: off")
    # An edit nothing redid stays failed.
    s.tool(
        "Edit",
        {"file_path": "/boot/theme/icons.conf", "old_string": "a", "new_string": "b"},
        error="File path must be within one of the workspace directories",
    )
    s.stop("The banner is off.")
    failed = section(handoff_of(project, "edit-other-0001"), "Failed or abandoned approaches")
    assert "theme.conf" not in failed and "Editing /boot/theme/icons.conf failed" in failed


# -- what changed the system, what was left to the user, what the agent itself failed at -------------


def test_a_command_that_changed_the_system_is_done_in_its_own_words(project, code_repo):
    s = Hooked(code_repo, "change-0001")
    s.start()
    s.prompt("Install the 1password cli and pull the dotfiles repo")
    s.bash("pacman -Ss 1password-cli", exit_code=1)  # a search that found nothing: no change
    s.bash("yay -S --noconfirm 1password-cli", "Installing 1password-cli (2.32.0-2)...")
    s.bash("op --version", "2.32.0")
    s.bash("git pull origin main", "Already up to date.")
    s.bash("git checkout -b fix/login", "Switched to a new branch 'fix/login'")
    s.stop("Installed.")
    done = section(handoff_of(project, "change-0001"), "Done")
    assert "`yay -S --noconfirm 1password-cli` succeeded." in done
    assert "`git checkout -b fix/login` succeeded." in done
    assert "`git pull origin main`: Already up to date." in done  # it changed nothing: the tool says so
    assert "pacman -Ss" not in done and "op --version" not in done


def test_a_removal_that_finds_nothing_to_remove_is_done_not_failed(project, code_repo):
    s = Hooked(code_repo, "absent-0001")
    s.start()
    s.prompt("Uninstall VSCodium Insiders and remove every trace of it")
    s.bash(
        "flatpak uninstall -y com.vscodium.codium-insiders",
        exit_code=1,
        stderr="Error receiving data: Connection reset",
    )
    s.bash(
        "flatpak uninstall -y com.vscodium.codium-insiders",
        exit_code=1,
        stderr="error: No installed refs found for 'com.vscodium.codium-insiders'",
    )
    s.bash("flatpak remove -y org.other.app", exit_code=1, stderr="error: Connection reset by peer")
    s.stop("VSCodium Insiders is gone.")
    handoff = handoff_of(project, "absent-0001")
    left = section(handoff, "Failed or abandoned approaches") + section(handoff, "Open items / next steps")
    assert "codium-insiders" not in left
    assert "`flatpak uninstall -y com.vscodium.codium-insiders`: already gone (error: No installed refs" in section(
        handoff, "Done"
    )
    assert "`flatpak remove -y org.other.app` failed" in left  # a removal that failed for another reason


def test_commands_and_offers_handed_to_the_user_are_open_not_done(project, code_repo):
    s = Hooked(code_repo, "handed-0001")
    s.start()
    s.prompt("Set up the branch and the env file")
    s.edit(".env.local")
    s.stop(
        "The env file is written.\n\nI can't push from here, but you can finish it with:\n\n"
        "1. `git add .`\n2. `git push origin feature-x`\n\nYou can see the app at http://localhost:3000.\n\n"
        "If you want the Vercel variables set too, let me know."
    )
    handoff = handoff_of(project, "handed-0001")
    left = section(handoff, "Open items / next steps")
    assert (
        "Left to the user: I can't push from here, but you can finish it with: `git add .` `git push origin "
        "feature-x` If you want the Vercel variables set too, let me know." in left
    )
    done = section(handoff, "Done")
    assert "The env file is written." in done and "git push" not in done and "Vercel" not in done
    assert "localhost" not in left  # a statement addressed to the user hands nothing over


def test_a_request_the_agent_asked_about_is_the_goal_with_its_answer(project, code_repo):
    s = Hooked(code_repo, "clarify-0001")
    s.start()
    s.prompt("please update manually")
    s.bash("cat /etc/os-release", "NAME=CachyOS")
    s.stop("Could you clarify what you would like me to update: the system or an app?")
    s.prompt("I meant you, Gemini CLI: your auto-update failed")
    s.bash("npm install -g @google/gemini-cli@latest", "added 1 package")
    s.stop("The Gemini CLI is updated to 0.23.0.")
    goal = section(handoff_of(project, "clarify-0001"), "Goal")
    assert "please update manually (then: I meant you, Gemini CLI: your auto-update failed)" in goal
    # An offer after trying something is not a question about the request: the next one is its own.
    t = Hooked(code_repo, "clarify-0002")
    t.start()
    t.prompt("ssh into the build server")
    t.bash(
        "ssh build.example.com",
        exit_code=255,
        stderr="ssh: connect to host build.example.com port 22: Network is unreachable",
    )
    t.stop("The server is unreachable. Should I try another port?")
    t.prompt("how do we share a terminal instead")
    t.stop("Use tmux.")
    goal = section(handoff_of(project, "clarify-0002"), "Goal")
    assert "ssh into the build server" in goal and "then:" not in goal


def test_replies_the_agent_failed_to_give_are_failed_and_the_request_unanswered(project, code_repo):
    s = Hooked(code_repo, "apierr-0001")
    s.start()
    s.prompt("Investigate why the PC crashed and write a crash report")
    s.call("StopFailure", error="Request timed out")
    s.prompt("try again")
    s.call("StopFailure", error="Request timed out")
    s.prompt("...")
    handoff = handoff_of(project, "apierr-0001")
    assert "The agent's reply failed (2 times): Request timed out" in section(handoff, "Failed or abandoned approaches")
    left = section(handoff, "Open items / next steps")
    # The request is the one that said what to do, not the retry.
    assert "The last request got no answer: Investigate why the PC crashed and write a crash report" in left
    assert "Request timed out" not in section(handoff, "Done")


def test_a_reply_that_failed_and_was_answered_when_the_request_was_sent_again_is_resolved(project, code_repo):
    s = Hooked(code_repo, "apierr-0002")
    s.start()
    s.prompt("Add a Commands section to the README")
    s.call("StopFailure", error="Extra usage must be enabled to use Opus")
    s.prompt("Add a Commands section to the README")
    s.edit("README.md")
    s.stop("Added the Commands section.")
    handoff = handoff_of(project, "apierr-0002")
    assert (
        "The agent's reply failed (Extra usage must be enabled to use Opus); the same request sent again was answered."
        in section(handoff, "Done")
    )
    assert "reply failed" not in section(handoff, "Failed or abandoned approaches")
    # Another request answered after it does not say the failed one was: it stays a story.
    t = Hooked(code_repo, "apierr-0003")
    t.start()
    t.prompt("Summarise the crash logs")
    t.call("StopFailure", error="Request timed out")
    t.prompt("then just list the logs")
    t.stop("crash-1.log, crash-2.log")
    assert "reply failed" not in handoff_of(project, "apierr-0003")


def test_a_claude_code_api_error_record_ends_the_turn_without_an_answer(tmp_path):
    from wiki_memory.capture.claude_code import ClaudeCode

    common = {"sessionId": "s1", "cwd": "/w"}
    records = [
        {**common, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "why did the PC crash?"}},
        {**common, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "isApiErrorMessage": True,
         "timestamp": "2026-01-01T00:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": "<synthetic>",
                     "content": [{"type": "text", "text": "Request timed out"}]}},
    ]  # fmt: skip
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    stops = [o for o in ClaudeCode().read_transcript(path) if o.kind == "stop"]
    assert [(o.error, o.meta.get("error"), o.text) for o in stops] == [(True, "Request timed out", None)]


def test_the_answer_before_a_bare_word_typed_last_is_the_final_report(project, code_repo):
    s = Hooked(code_repo, "bare-final-0001")
    s.start()
    s.prompt("make the laptop speakers sound fuller")
    s.bash("pactl set-card-profile 56 output:analog-surround-21", "")
    s.stop("I switched the audio profile to 2.1 surround.")
    s.prompt("clear")
    assert "Final report: I switched the audio profile to 2.1 surround." in section(
        handoff_of(project, "bare-final-0001"), "Done"
    )


# -- a failure told once; looks are not work; what a handed list would do ----------------------------

REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def test_a_failure_left_at_the_end_is_told_once_under_failed(project, code_repo):
    s = Hooked(code_repo, "once-0001")
    s.start()
    s.prompt("Generate the API docs with docfx")
    s.bash("docfx docfx.json", exit_code=255, stderr="TimeoutException: The operation has timed out.")
    s.stop("docfx times out in this environment.")
    handoff = handoff_of(project, "once-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "`docfx docfx.json` failed (exit 255): TimeoutException" in failed
    assert "docfx docfx.json" not in section(handoff, "Open items / next steps")


def test_a_look_the_user_declined_is_no_failure_a_change_they_declined_is(project, code_repo):
    s = Hooked(code_repo, "declined-look-0001")
    s.start()
    s.prompt("Push the notes repo")
    s.tool("Bash", {"command": "gh repo view alice/notes --json name,url"}, error=REJECTED)
    s.prompt("it is in ~/Documents/notes")
    s.tool("Bash", {"command": "rm -rf ~/Documents/notes/tmp"}, error=REJECTED)
    s.bash("cd ~/Documents/notes && git pull origin main", "Already up to date.")
    s.stop("Already up to date.")
    failed = section(handoff_of(project, "declined-look-0001"), "Failed or abandoned approaches")
    assert "gh repo view" not in failed
    assert "The user declined to run `rm -rf ~/Documents/notes/tmp`." in failed


def test_a_look_that_failed_then_worked_is_not_work_done(project, code_repo):
    s = Hooked(code_repo, "look-fixed-0001")
    s.start()
    s.prompt("Why do the speakers sound thin?")
    s.bash("pactl info", exit_code=1, stderr="Connection failure: Connection refused")
    s.bash("sudo -u alice XDG_RUNTIME_DIR=/run/user/1000 pactl info", "Server Name: PipeWire")
    s.bash("pactl set-card-profile 0 output:analog-surround-21")
    s.stop("The card now uses the 2.1 profile.")
    done = section(handoff_of(project, "look-fixed-0001"), "Done")
    assert "pactl info" not in done
    assert "`pactl set-card-profile 0 output:analog-surround-21` succeeded." in done


def test_what_handed_commands_would_do_and_narration_are_no_report(project, code_repo):
    s = Hooked(code_repo, "handed-after-0001")
    s.start()
    s.prompt("Push this up to our repo")
    s.stop(
        "I can\u2019t push from here, but you can finish it in a couple of commands:\n\n"
        "1. `git add .`\n2. `git push origin feature-x`\n\n"
        "That\u2019ll send the current branch up to the `coda` repo."
    )
    handoff = handoff_of(project, "handed-after-0001")
    assert "coda" not in section(handoff, "Done")
    assert "`git push origin feature-x` That\u2019ll send the current branch up to the `coda` repo." in section(
        handoff, "Open items / next steps"
    )
    s = Hooked(code_repo, "narration-0001")
    s.start()
    s.prompt("Review the repository and report")
    s.read("README.md")
    s.stop(
        "Perfect! Now I have a comprehensive view of the repository. Let me compile the analysis.\n\n---\n\n"
        "## Analysis\n\n**Repository type:** a personal archive of chat logs"
    )
    done = section(handoff_of(project, "narration-0001"), "Done")
    assert "Final report: Repository type: a personal archive of chat logs" in done
    assert "Let me" not in done and "comprehensive view" not in done and "---" not in done


def test_a_run_of_one_subcommand_does_not_resolve_the_whole_job(project, code_repo):
    s = Hooked(code_repo, "subcommand-0001")
    s.start()
    s.prompt("Build the docs with docfx")
    s.bash("docfx docfx.json", exit_code=255, stderr="TimeoutException: The operation has timed out.")
    s.edit("docfx.json")
    s.bash("docfx build docfx.json --logLevel warning", "Build succeeded. 0 warning(s), 0 error(s)")
    s.stop("The build part works; metadata still times out.")
    handoff = handoff_of(project, "subcommand-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "`docfx docfx.json` failed (exit 255): TimeoutException" in failed
    assert "docfx docfx.json` failed at first" not in section(handoff, "Done")


def test_each_earlier_request_that_changed_something_keeps_its_report(project, code_repo):
    s = Hooked(code_repo, "turns-0001")
    s.start()
    s.prompt("Add a dark-mode toggle to the site")
    s.edit("site/style.css")
    s.stop("Dark mode added: a #theme-toggle button, the choice saved in localStorage.")
    s.prompt("What does the toggle do on a phone?")
    s.read("site/style.css")
    s.stop("On a phone it is the same button, at the top right.")
    s.prompt("Now write the docs page")
    s.edit("site/docs.html")
    s.stop("The docs page is written.")
    done = section(handoff_of(project, "turns-0001"), "Done")
    assert "Reported: Dark mode added: a #theme-toggle button, the choice saved in localStorage." in done
    assert "on a phone" not in done.lower()  # a request that only asked changed nothing: no report
    assert "Final report: The docs page is written." in done
    assert "Reported: The docs page" not in done  # the last request's answer is the final report, once


def test_a_check_still_running_or_never_collected_is_not_passed(project, code_repo):
    s = Hooked(code_repo, "running-0001")
    s.start()
    s.prompt("Build everything")
    s.edit("src/app.py")
    s.bash("make build-all", "Command running in background with ID: bash_7")
    s.bash("make build-docs", "Command running in background with ID: bash_8")
    s.tool("BashOutput", {"bash_id": "bash_8"}, {"stdout": "BashOutput failed: no such shell", "stderr": ""})
    s.bash("make build-core", "built core")
    s.stop("Core builds; the full build is still going.")
    handoff = handoff_of(project, "running-0001")
    done = section(handoff, "Done")
    assert "`make build-core` passed" in done
    assert "build-all" not in done and "build-docs" not in done


def test_a_failure_is_told_by_what_the_command_said_not_its_tools_frame(project, code_repo):
    s = Hooked(code_repo, "frame-0001")
    s.start()
    s.prompt("Point the boot entry at shim")
    report = (
        "Command: bcdedit /set {efe4} path \\EFI\\refind\\shimx64.efi\nDirectory: (root)\n"
        "Output: The set command specified is not valid.\nThe parameter is incorrect.\nError: (none)\n"
        "Exit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 7448"
    )
    s.bash("bcdedit /set {efe4} path \\EFI\\refind\\shimx64.efi", exit_code=1, stdout=report)
    s.stop("bcdedit refused the path.")
    failed = section(handoff_of(project, "frame-0001"), "Failed or abandoned approaches")
    assert "The parameter is incorrect." in failed
    assert "PGID" not in failed and "(none)" not in failed


def test_a_file_named_absolute_and_relative_is_one_file(project, tmp_path):
    s = Hooked(tmp_path, "one-file-0001")  # the agent works from a folder above the project
    s.start()
    s.prompt("Add a dark-mode toggle to the playground site")
    s.tool(
        "Edit",
        {"file_path": "/home/alice/site/index.html", "old_string": "a", "new_string": "b"},
        {"filePath": "/home/alice/site/index.html"},
    )
    s.tool(
        "Edit", {"file_path": "site/index.html", "old_string": "b", "new_string": "c"}, {"filePath": "site/index.html"}
    )
    s.tool(
        "Edit", {"file_path": "site/style.css", "old_string": "a", "new_string": "b"}, {"filePath": "site/style.css"}
    )
    s.stop("Dark mode added.")
    handoff = handoff_of(resolve_project(tmp_path), "one-file-0001")
    assert "Changed 2 files (site/index.html, site/style.css)" in section(handoff, "Done")


def test_the_final_report_leaves_out_drawing_and_link_targets_and_reads_cjk_questions(project, code_repo):
    s = Hooked(code_repo, "drawn-0001")
    s.start()
    s.prompt("Why does the terminal freeze on a new tab?")
    s.stop(
        "`\u2605 Insight \u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500`\nIt is a known Terminal.app bug.\n\n"
        "| Workaround | How |\n|-----------|-----|\n| **Use keyboard shortcuts** | `\u2318T` for a new tab |\n\n"
        "Details are in [notes.md](/Users/alice/project/notes.md). "
        "\u8a2d\u5b9a\u3092\u5909\u3048\u307e\u3057\u3087\u3046\u304b\uff1f"
    )
    handoff = handoff_of(project, "drawn-0001")
    done = section(handoff, "Done")
    assert (
        "Final report: It is a known Terminal.app bug. Use keyboard shortcuts | `\u2318T` for a new tab. "
        "Details are in notes.md." in done
    )
    assert "\u2500" not in done and "Workaround | How" not in done and "/Users/alice" not in done
    assert "Question left for the user: \u8a2d\u5b9a\u3092\u5909\u3048\u307e\u3057\u3087\u3046\u304b\uff1f" in section(
        handoff, "Open items / next steps"
    )


def test_a_powershell_cmdlet_that_changes_state_is_done(project, code_repo):
    s = Hooked(code_repo, "pwsh-0001")
    s.start()
    s.prompt("Clean up the downloaded shim copies")
    s.bash('Remove-Item -Path "C:\\Temp\\shimx64.efi"')
    s.bash(
        'Remove-Item -Path "C:\\Temp\\mmx64.efi"',
        exit_code=1,
        stderr="Remove-Item : Cannot find path 'C:\\Temp\\mmx64.efi' because it does not exist.",
    )
    s.bash('Get-Content "C:\\Temp\\notes.txt"', "notes")
    s.stop("Both copies are gone.")
    handoff = handoff_of(project, "pwsh-0001")
    done = section(handoff, "Done")
    assert '`Remove-Item -Path "C:\\Temp\\shimx64.efi"` succeeded.' in done
    assert '`Remove-Item -Path "C:\\Temp\\mmx64.efi"`: already gone' in done
    assert "Get-Content" not in done
    assert "mmx64" not in section(handoff, "Failed or abandoned approaches")
