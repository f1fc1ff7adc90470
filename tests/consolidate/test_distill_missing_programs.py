"""A program the machine does not have, or will not start, is a gotcha page the first time it
shows, in the words of whichever shell said so; not when the session resolved it, ran it, or
only a script it ran looked for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session, codex_rollout
from journals import wiki_pages as pages

from wiki_memory.capture.codex import read_rollout
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.evidence import Run
from wiki_memory.consolidate.distill.gotchas import missing_program
from wiki_memory.memory import import_transcripts

PS_MISSING = (
    "bash : The term 'bash' is not recognized as the name of a cmdlet, function, script file, or operable program. "
    "Check \nthe spelling of the name, or if a path was included, verify that the path is correct and try again.\n"
    "At line:1 char:1\n+ bash --version\n+ ~~~~\n    + CategoryInfo          : ObjectNotFound: (bash:String) [], "
    "CommandNotFoundException\n    + FullyQualifiedErrorId : CommandNotFoundException\n"
)
PS_WONT_START = (
    "Program 'rg.exe' failed to run: Access is deniedAt line:2 char:1\n+ rg --files -g README.md\n+ ~~~~~~~~~~.\n"
    "    + CategoryInfo          : ResourceUnavailable: (:) [], ApplicationFailedException\n"
    "    + FullyQualifiedErrorId : NativeCommandFailed\n"
)


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "README.md").write_text("# app\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def gotchas(project) -> dict[str, tuple[dict, str]]:
    return {meta["title"]: (meta, body) for meta, body in pages(project, "gotchas").values()}


def test_a_program_the_shell_could_not_find_is_a_page_at_first_sight(project):
    s = Session(project, "s-miss-0001", agent="codex").start().prompt("Show where the worker is defined")
    s.tool("shell", "python - <<'PY' …", "/bin/bash: line 1: python: command not found\nExit code 127", error=True)
    s.edit("src/worker.rs")
    s.stop("Edited the worker with apply_patch.").end().write()
    consolidate_session(project, "s-miss-0001")
    [(meta, body)] = gotchas(project).values()
    assert meta["title"] == "`python` is not installed or not on PATH here"
    assert meta["signature"] == "bash: line 1: python: command not found"
    assert "from `python - <<'PY' …`" in body


def test_powershell_saying_so_names_the_shell_and_both_ways_a_program_fails(project):
    s = Session(project, "s-miss-0002", agent="codex", cwd="C:\\Users\\k\\app").start()
    s.prompt("Export this session and find the project's manifests")
    s.tool("shell", "bash --version", PS_MISSING, error=True)
    s.tool("shell", "rg --files -g README.md", PS_WONT_START, error=True)
    s.tool("shell", "Get-Content README.md", "# app")
    s.stop("Read the README.").end().write()
    consolidate_session(project, "s-miss-0002")
    found = gotchas(project)
    assert set(found) == {
        "`bash` is not installed or not on PATH here (the shell is PowerShell)",
        "`rg` will not start here (the shell is PowerShell)",
    }
    meta, _ = found["`rg` will not start here (the shell is PowerShell)"]
    assert meta["signature"] == "Program 'rg.exe' failed to run: Access is denied"


def test_another_name_of_the_program_that_ran_is_on_the_page(project):
    s = Session(project, "s-miss-0003", agent="codex").start().prompt("Which pytest is installed?")
    s.tool("shell", "python -m pytest --version", "bash: python: command not found\nExit code 127", error=True)
    s.edit("tests/test_app.py")
    s.tool("shell", "python3 --version", "Python 3.12.1")
    s.stop("Python 3.12.1.").end().write()
    consolidate_session(project, "s-miss-0003")
    [(meta, body)] = gotchas(project).values()
    assert meta["fix"]["instead"] == "python3 --version"
    assert "**Fix**: run `python3 --version` instead." in body


def test_no_page_when_the_program_ran_a_script_looked_for_it_or_a_script_is_not_executable(project):
    s = Session(project, "s-miss-0004", agent="codex").start().prompt("Build the web UI and run the checks")
    s.tool("shell", "tree -L 2", "bash: tree: command not found\nExit code 127", error=True)
    s.tool("shell", "brew install tree", "==> Pouring tree--2.1.1.arm64_sonoma.bottle.tar.gz")
    s.tool("shell", "python3 tools/gen.py", "Error: ai-webui: command not found\nExit code 1", error=True)
    s.tool("shell", "./check.sh", "bash: ./check.sh: Permission denied\nExit code 126", error=True)
    s.stop("Could not build the UI.").end().write()
    consolidate_session(project, "s-miss-0004")
    assert not [t for t in gotchas(project) if "not installed" in t or "will not start" in t]


def test_no_page_when_another_command_did_the_job_the_gotcha_says_so_instead(project):
    s = Session(project, "s-miss-0005", agent="codex").start().prompt("Show the project's layout")
    s.tool("shell", "tree -L 2", "bash: tree: command not found\nExit code 127", error=True)
    s.tool("shell", "find . -maxdepth 2", "./src\n./README.md")
    s.stop("The code is under src/.").end().write()
    consolidate_session(project, "s-miss-0005")
    [(meta, _body)] = gotchas(project).values()
    assert meta["fix"]["instead"] == "find . -maxdepth 2"
    assert "not installed" not in meta["title"]


def test_codex_that_could_not_start_the_program_reports_a_failure(project, tmp_path: Path):
    root = project.root
    calls = [
        ({"command": ["rg", "-l", "worker"], "workdir": str(root)},
         "execution error: Io(Error { kind: NotFound, message: \"program not found\" })"),
        ({"command": ["cargo", "check"], "workdir": str(root)},
         json.dumps({"output": "Finished dev profile\n", "metadata": {"exit_code": 0}})),
    ]  # fmt: skip
    path = codex_rollout(
        tmp_path / "rollouts",
        root,
        calls,
        prompt="find the worker",
        answer="It is not in the README.",
        session_id="01a22bcf-417c-7f01-aca0-77b109a14194",
    )
    steps = [o for o in read_rollout(path) if o.kind == "tool"]
    assert [o.error for o in steps] == [True, False]
    import_transcripts("codex", [path], project=project)
    assert "`rg` is not installed or not on PATH here" in gotchas(project)


def run(error: str) -> Run:
    return Run(0, "", "x", ("x",), ".", (), False, error, None, False, False, "", None)


def test_a_web_call_that_found_nothing_is_no_missing_program():
    assert not missing_program(run("Invoke-WebRequest : 404: Not Found"))
    assert missing_program(run("sh: 1: tree: not found"))
    assert missing_program(run('execution error: Io(Os { code: 2, kind: NotFound, message: "No such file" })'))


WSL = "wsl: Failed to translate 'E:\\gradle-8.10.2\\bin'\nwsl: Failed to translate 'E:\\curl\\bin'\n"


def test_reading_the_script_a_missing_program_was_to_run_is_not_its_fix(project):
    # Every command under this WSL shell opens with the same warnings: they are not the error.
    script = ".specify/scripts/powershell/create-new-feature.ps1"
    s = Session(project, "s-miss-0006", agent="codex").start().prompt("Create the feature branch")
    s.tool("shell", "ls .specify/scripts", WSL + "powershell\n")
    s.tool("shell", f"pwsh -File {script} -Json", WSL + "/bin/bash: line 1: pwsh: command not found\n", error=True)
    s.tool("shell", f"sed -n '1,200p' {script}", WSL + "param([string]$ShortName)\n")
    s.stop("pwsh is not installed here.").end().write()
    consolidate_session(project, "s-miss-0006")
    [(meta, _body)] = gotchas(project).values()
    assert meta["title"] == "`pwsh` is not installed or not on PATH here"
    assert meta["signature"] == "bash: line 1: pwsh: command not found"
    assert "instead" not in meta["fix"]


def test_a_line_the_capture_cut_is_never_compared_with_the_one_that_worked(project):
    cut = "\n[... 2,325 more characters cut ...]"
    s = Session(project, "s-miss-0007", agent="codex").start().prompt("Add the spec")
    patch = "apply_patch *** Begin Patch\n*** Add File: spec.md\n+# Spec"
    s.tool("shell", patch + cut, 'execution error: Io(Error { kind: NotFound, message: "program not found" })',
           error=True)  # fmt: skip
    s.tool("shell", patch + "\n*** End Patch", "Success. Updated the following files:\nA spec.md")
    s.stop("Added the spec.").end().write()
    consolidate_session(project, "s-miss-0007")
    assert not any(meta["fix"].get("instead") for meta, _ in gotchas(project).values())
