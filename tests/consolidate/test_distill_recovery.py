"""Gotchas as real agents resolve failures: another command line, a command run first, an
edit made through the shell; and what is still refused. Crafted journals through the memory
library (real git, real SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.pages import parse_page


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "scripts").mkdir()
    (code_repo / "scripts" / "report.py").write_text("import csv\n")
    (code_repo / "run.sh").write_text("#!/bin/sh\necho ok\n")
    (code_repo / "src").mkdir()
    (code_repo / "src" / "settings.py").write_text("DEBUG = True\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def gotchas(project) -> dict[str, tuple[dict, str]]:
    folder = project.wiki / "gotchas"
    out = {}
    for path in sorted(folder.glob("*.md")) if folder.exists() else []:
        found = parse_page(path.read_text(encoding="utf-8"), str(path.relative_to(project.wiki)))
        out[str(path.relative_to(project.wiki))] = (dict(found.meta), found.body)
    return out


def test_python_missing_and_python3_working_is_a_gotcha(project):
    s = Session(project, "s-py3-0001").start().prompt("Make the weekly report")
    s.bash("python scripts/report.py --week 48", "/bin/sh: 1: python: not found\nExit code 127", error=True)
    s.bash("which python3", "/usr/bin/python3")
    s.bash("python3 scripts/report.py --week 48", "report written to out/week48.csv")
    s.stop("Done: python is not installed here, python3 is.").end().write()
    consolidate_session(project, "s-py3-0001")
    (_path, (meta, body)), *rest = gotchas(project).items()
    assert not rest
    assert meta["signature"] == "sh: 1: python: not found"
    assert meta["fix"]["instead"] == "python3 scripts/report.py --week 48"
    assert "**Fix**: run `python3 scripts/report.py --week 48` instead." in body
    assert "from `python scripts/report.py --week 48`" in body


def test_a_script_that_is_not_executable_fixed_by_chmod_first(project):
    s = Session(project, "s-chmod-001").start().prompt("Run the release script")
    s.bash("./run.sh", "bash: ./run.sh: Permission denied\nExit code 126", error=True)
    s.bash("chmod +x run.sh", "")
    s.bash("./run.sh", "ok")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-chmod-001")
    [(meta, body)] = gotchas(project).values()
    assert meta["signature"] == "bash: run.sh: Permission denied"
    assert meta["fix"]["first"] == ["chmod +x run.sh"]
    assert "**Fix**: run `chmod +x run.sh` first." in body


def test_a_fix_made_in_the_shell_is_an_edit_and_anchors_the_page(project):
    s = Session(project, "s-sed-0001").start().prompt("Start the app")
    s.bash(
        "python3 -m src.app",
        'Traceback (most recent call last):\n  File "/x/src/app.py", line 2, in <module>\n'
        "    from src.settings import DATABASE\nImportError: cannot import name 'DATABASE' from 'src.settings'\n",
        error=True,
    )
    s.bash("sed -i 's/^DEBUG = True$/DEBUG = True\\nDATABASE = \"db.sqlite\"/' src/settings.py", "")
    (project.root / "src" / "settings.py").write_text('DEBUG = True\nDATABASE = "db.sqlite"\n')
    s.bash("python3 -m src.app", "serving on :8000")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-sed-0001")
    [(meta, body)] = gotchas(project).values()
    assert meta["signature"] == "ImportError: cannot import name 'DATABASE' from 'src.settings'"
    assert meta["fix"]["files"] == ["src/settings.py"]
    blob = git(project.root, "hash-object", "src/settings.py").strip()
    assert meta["anchors"] == [{"path": "src/settings.py", "blob": blob}]
    assert "**Fix**: changed `src/settings.py`." in body


@pytest.mark.parametrize(
    "first,then",
    [
        # Word for word the same command passing with nothing in between: flaky.
        (("python3 -m src.app", "ConnectionResetError: [Errno 104] Connection reset by peer"), "python3 -m src.app"),
        # Looking around failing, then looking elsewhere: no trap.
        (("cat config/app.yml", "cat: config/app.yml: No such file or directory"), "cat src/settings.py"),
        # git's own state (a branch that exists): not a trap of the project.
        (("git checkout -b feature", "fatal: a branch named 'feature' already exists"), "git checkout feature"),
        # Another, unrelated command passing is no resolution.
        (("python3 -m src.app", "KeyError: 'SECRET_KEY'"), "python3 -m pytest -q"),
    ],
)
def test_resolutions_that_make_no_gotcha(project, first, then):
    s = Session(project, "s-norec-001").start().prompt("Work on the app")
    s.bash(first[0], first[1], error=True)
    s.bash(then, "3 passed" if "pytest" in then else "ok")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-norec-001")
    assert gotchas(project) == {}


def test_only_a_command_run_first_on_the_same_thing_is_the_fix(project):
    s = Session(project, "s-first-001").start().prompt("Make the weekly report")
    s.bash("python3 scripts/report.py", "ModuleNotFoundError: No module named 'tabulate'", error=True)
    s.bash("pip install rich", "Successfully installed rich")
    s.bash("pip install tabulate", "Successfully installed tabulate")
    s.bash("python3 scripts/report.py", "report written")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-first-001")
    [(meta, _body)] = gotchas(project).values()
    assert meta["fix"]["first"] == ["pip install tabulate"]


def test_an_error_recurring_across_sessions_becomes_a_gotcha_page(project):
    for n, agent in enumerate(("claude-code", "codex"), 1):
        s = Session(project, f"s-recur-00{n}", agent=agent, start=f"2026-12-0{n}T08:00:00").start()
        s.prompt("Start the app")
        s.bash("python3 -m src.app", "KeyError: 'SHOP_SECRET_KEY'", error=True)
        s.stop("It needs SHOP_SECRET_KEY; I could not find where it is set.").end().write()
        consolidate_session(project, f"s-recur-00{n}")
        found = gotchas(project)
        if n == 1:
            assert found == {}  # once is not yet a trap
    [(meta, body)] = found.values()
    assert meta["signature"] == "KeyError: 'SHOP_SECRET_KEY'" and meta["evidence"] == 2
    assert [o["session"] for o in meta["occurrences"]] == ["claude-code:srecur00", "codex:srecur00"]
    assert "from `python3 -m src.app`" in body and "**Fix**" not in body
    # Looking around failing the same way twice is still no page.
    for n in (3, 4):
        s = Session(project, f"s-recur-00{n}", start=f"2026-12-0{n}T08:00:00").start().prompt("Find the config")
        s.bash("cat config/app.yml", "cat: config/app.yml: No such file or directory", error=True)
        s.stop("No config file.").end().write()
        consolidate_session(project, f"s-recur-00{n}")
    assert len(gotchas(project)) == 1


def test_a_broader_run_passing_after_a_narrow_one_failed_is_no_fix(project):
    s = Session(project, "s-broad-001").start().prompt("Check the login tests")
    s.bash("python3 -m pytest -k login", "E   KeyError: 'SHOP_SECRET_KEY'", error=True)
    s.bash("python3 -m pytest", "12 passed")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-broad-001")
    assert gotchas(project) == {}


def test_installing_the_project_first_is_the_fix_of_a_missing_module(project):
    s = Session(project, "s-inst-0001").start().prompt("Run the tests")
    s.bash(
        "python3 -m pytest -q",
        "E   ModuleNotFoundError: No module named 'widgets'\n1 error in 0.12s",
        error=True,
    )
    s.bash("pip install -e .", "Successfully installed widgets-0.1.0")
    s.bash("python3 -m pytest -q", "4 passed")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-inst-0001")
    [(meta, body)] = gotchas(project).values()
    assert meta["signature"] == "ModuleNotFoundError: No module named 'widgets'"
    assert "**Fix**: run `pip install -e .` first." in body


def test_an_install_that_needs_an_option_is_a_gotcha_and_a_retried_one_is_not(project):
    s = Session(project, "s-peer-0001").start().prompt("Install the dependencies")
    s.bash(
        "npm install",
        'npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR! peer react@"^17"',
        error=True,
    )
    s.bash("npm install --legacy-peer-deps", "added 312 packages in 9s")
    s.bash("npm install", "npm ERR! code ETIMEDOUT\nnpm ERR! network request failed", error=True)
    s.bash("npm install", "up to date in 1s")
    s.stop("Installed.").end().write()
    consolidate_session(project, "s-peer-0001")
    [(meta, body)] = gotchas(project).values()
    assert meta["signature"] == "npm ERR! code ERESOLVE"
    assert "**Fix**: run `npm install --legacy-peer-deps` instead." in body
