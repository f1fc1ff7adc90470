"""A handoff with no invented line: sessions of the shapes real agents produce, recorded
through the real hook entry point, consolidated, and read back."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from hooked import Hooked

from wiki_memory.capture import journal
from wiki_memory.capture.toolcalls import tool_facts
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.commands import resolutions
from wiki_memory.consolidate.run import load_session


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


def handoff_of(project, sid: str) -> str:
    outcome = consolidate_session(project, sid)
    assert outcome.status == "committed", outcome
    return (project.wiki / outcome.pages[1]).read_text(encoding="utf-8")


def section(text: str, name: str) -> str:
    if f"## {name}\n" not in text:
        return ""
    body = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0].strip()
    return "" if body == "None recorded." else body


def steps_of(project, sid: str):
    return load_session(journal.journal_file(project.journal_dir, sid)).steps


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
    s.stop("The server starts.")
    failed = section(handoff_of(project, "res-none-0001"), "Failed or abandoned approaches")
    assert "`python3 manage.py migrate` failed" in failed and "`pytest tests/test_a.py` failed" in failed
    assert resolutions(steps_of(project, "res-none-0001")) == []


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


def test_git_apply_of_a_patch_file_names_the_files_it_patches(tmp_path):
    (tmp_path / "fix.diff").write_text("--- a/src/one.py\n+++ b/src/one.py\n@@ -1 +1 @@\n-a\n+b\n")
    facts = tool_facts("Bash", {"command": "git apply fix.diff"}, {"stdout": ""}, str(tmp_path))
    assert facts.files == ("src/one.py",)
