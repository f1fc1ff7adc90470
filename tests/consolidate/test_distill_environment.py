"""What real sessions establish beyond test and build commands: tool versions a program
reported, CI workflows, git hooks, MSBuild properties and the licence read from the project's
files (a session on Windows too), and a failing command that passed again with other settings
inside a longer shell line. Crafted journals through the memory library (real git, real SQLite);
and the tempting shapes that must not become pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session
from journals import wiki_pages as pages

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.manifest_parsers import parse
from wiki_memory.consolidate.distill.versions import version_of

WORKFLOW = """name: Regenerate the chat log
on:
  push:
    branches: [ main ]
    paths:
      - 'CHAT_LOGS/*.jsonl'
  workflow_dispatch:
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
    - uses: actions/checkout@v4
    - uses: actions/setup-python@v5
      with:
        python-version: '3.11'
    - name: Convert
      run: python scripts/convert_to_markdown.py
"""
HOOK = """#!/usr/bin/env bash
# scan staged files for secrets
set -e
RED='\\033[0;31m'
if ! command -v gitleaks &> /dev/null; then
    echo "gitleaks is not installed"
    exit 1
fi
REPO_ROOT=$(git rev-parse --show-toplevel)
if gitleaks protect --staged --config="${REPO_ROOT}/.gitleaks.toml" --redact; then
    exit 0
fi
"""
PROPS = """<Project>
  <PropertyGroup>
    <TargetFramework>net10.0</TargetFramework>
    <Nullable>enable</Nullable>
    <GenerateDocumentationFile>true</GenerateDocumentationFile>
  </PropertyGroup>
</Project>
"""


@pytest.fixture
def project(code_repo: Path):
    (code_repo / ".github" / "workflows").mkdir(parents=True)
    (code_repo / ".github" / "workflows" / "chatlog.yml").write_text(WORKFLOW)
    (code_repo / "Directory.Build.props").write_text(PROPS)
    (code_repo / "LICENSE").write_text("Creative Commons Legal Code\n\nCC0 1.0 Universal\n\n    CREATIVE COMMONS ...\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def test_a_version_a_program_reported_is_kept_per_program_and_updated_in_place(project):
    s = Session(project, "s-vers-0001", agent="gemini").start().prompt("Install the 1Password CLI")
    s.tool("run_shell_command", "yay -S --noconfirm 1password-cli", "1password-cli-2.32.0-2 installed")
    gemini_output = "Command: op --version\nDirectory: (root)\nOutput: 2.32.0\nError: (none)\nExit Code: 0"
    s.tool("run_shell_command", "op --version", gemini_output)
    s.tool("run_shell_command", "docfx --version", "2.78.4+ba9dfcbb96a4ceed2ac6d3ba93e12e16550b3e2a\n")
    # Asked with something else on the line, or failing: no version to stand behind.
    s.tool("run_shell_command", "node --version && npm --version", "v20.1.0\n10.2.0")
    s.tool("run_shell_command", "rustc --version", "rustc: command not found", error=True)
    s.stop("Installed: `op --version` says 2.32.0.").end().write()
    consolidate_session(project, "s-vers-0001")
    [(name, (meta, body))] = pages(project, "facts").items()
    assert name == "tool-versions.md"
    assert {k: v["version"] for k, v in meta["tools"].items()} == {"op": "2.32.0", "docfx": "2.78.4"}
    assert "- `op` 2.32.0 (`op --version`" in body

    # A later session sees a newer version: the same page, that program's line updated.
    later = Session(project, "s-vers-0002", agent="gemini", start="2026-12-02T08:00:00").start()
    later.prompt("update the op cli").tool("run_shell_command", "op --version", "2.33.1\n")
    later.stop("Updated.").end().write()
    consolidate_session(project, "s-vers-0002")
    [(meta, body)] = pages(project, "facts").values()
    assert meta["tools"]["op"]["version"] == "2.33.1" and meta["tools"]["docfx"]["version"] == "2.78.4"
    assert "2.32.0" not in body


def test_a_version_asked_through_an_interpreter_names_the_command_as_run(project):
    s = Session(project, "s-vers-0003", agent="codex").start().prompt("Which pytest is this?")
    s.tool("shell", "python3 -m pytest --version", "pytest 7.4.4\n")
    s.stop("pytest 7.4.4 under python3.").end().write()
    consolidate_session(project, "s-vers-0003")
    [(meta, body)] = pages(project, "facts").values()
    assert meta["tools"]["pytest"] == {
        "version": "7.4.4",
        "command": "python3 -m pytest --version",
        "date": meta["tools"]["pytest"]["date"],
    }
    assert "(`python3 -m pytest --version`" in body


def test_version_of_reads_only_a_version_shaped_first_line():
    assert version_of("git version 2.43.0\n") == "2.43.0"
    assert version_of("v20.11.1") == "20.11.1"
    assert version_of("usage: tool [options]\n  --version  print 1.2") is None
    assert version_of("") is None


def test_workflow_hook_msbuild_props_and_licence_read_on_windows_are_fact_pages(project, tmp_path):
    # The session ran on Windows: its paths are `C:\\...` and its cwd too; the code repository
    # it is recorded against is elsewhere (an imported session), so paths are read against its cwd.
    win = "C:\\Users\\me\\work\\app"
    s = Session(project, "s-wincfg-01", cwd=win).start().prompt("Review this repository")
    s.tool("Read", win + "\\.github\\workflows\\chatlog.yml", WORKFLOW)
    s.tool("Read", win + "\\LICENSE", "Creative Commons Legal Code\n\nCC0 1.0 Universal\n\n  CREATIVE COMMONS\n")
    s.tool("Read", win + "\\Directory.Build.props", PROPS)
    s.bash('cat .git/hooks/pre-commit 2>/dev/null | head -50 || echo "No hook"', HOOK)
    s.bash("cat .git/hooks/pre-commit.sample", HOOK)  # a sample git ships: not the project's hook
    s.stop("Reviewed.").end().write()
    consolidate_session(project, "s-wincfg-01")
    found = pages(project, "facts")
    assert sorted(found) == [
        "facts-from-directory-build-props.md",
        "facts-from-git-hooks-pre-commit.md",
        "facts-from-github-workflows-chatlog-yml.md",
        "facts-from-license.md",
    ], sorted(found)
    workflow = found["facts-from-github-workflows-chatlog-yml.md"][1]
    assert 'Workflow "Regenerate the chat log" runs on push (branches main; paths CHAT_LOGS/*.jsonl)' in workflow
    assert "workflow_dispatch" in workflow and "step runs `python scripts/convert_to_markdown.py`" in workflow
    assert "actions/setup-python: python-version 3.11" in workflow
    hook = found["facts-from-git-hooks-pre-commit.md"][1]
    assert "runs `gitleaks protect --staged" in hook
    assert "`echo" not in hook and "`exit" not in hook and "REPO_ROOT=" not in hook
    assert "Licence: Creative Commons Legal Code — CC0 1.0 Universal" in found["facts-from-license.md"][1]
    props = found["facts-from-directory-build-props.md"][1]
    assert "TargetFramework net10.0" in props and "GenerateDocumentationFile true" in props


@pytest.mark.parametrize(
    "name,text",
    [
        ("LICENSE", "Copyright (c) 2024 Someone\n\nPermission is hereby granted, free of charge, to any person\n"),
        (".github/workflows/ci.yml", "just: [a, list\n"),
        (".git/hooks/pre-commit", "#!/bin/sh\n# nothing\nexit 0\n"),
        ("Directory.Build.props", "<Project></Project>"),
    ],
)
def test_a_config_that_states_nothing_makes_no_page(name, text):
    assert parse(name, text) == {}


def test_a_command_passing_again_with_other_settings_inside_a_longer_line_is_a_gotcha(project):
    s = Session(project, "s-sudo-0001", agent="gemini").start().prompt("Why is there no sound from the bass speaker?")
    s.tool("run_shell_command", "lspci -v | grep -i audio && pactl info",
           "pa_context_connect() failed: Connection refused", error=True)  # fmt: skip
    s.tool(
        "run_shell_command",
        "sudo -u mischa XDG_RUNTIME_DIR=/run/user/1000 pactl info && sudo -u mischa pactl list short sinks",
        "Server Name: PulseAudio (on PipeWire 1.4.9)\n55 alsa_output.pci analog-stereo",
    )
    s.stop("The agent's shell has no user session: run pactl as you with XDG_RUNTIME_DIR set.").end().write()
    consolidate_session(project, "s-sudo-0001")
    [(meta, _body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "pa_context_connect() failed: Connection refused"
    assert meta["fix"]["instead"] == "sudo -u mischa XDG_RUNTIME_DIR=/run/user/1000 pactl info"


def test_the_same_command_word_for_word_inside_a_longer_line_is_no_gotcha(project):
    # Nothing changed: it passed again as it was (flaky, or a service that came up).
    s = Session(project, "s-sudo-0002", agent="gemini").start().prompt("Check the sound server")
    s.tool("run_shell_command", "pactl info", "pa_context_connect() failed: Connection refused", error=True)
    s.tool("run_shell_command", "sleep 2 && pactl info", "Server Name: PulseAudio (on PipeWire 1.4.9)")
    s.stop("It is up now.").end().write()
    consolidate_session(project, "s-sudo-0002")
    assert pages(project, "gotchas") == {}


def test_the_command_that_installed_a_program_is_kept_with_its_version(project):
    s = Session(project, "s-upgrade-1", agent="gemini").start().prompt("update")
    s.tool("run_shell_command", "gemini --version", "0.22.5\n")
    s.tool("run_shell_command", "pip install -U requests", "Successfully installed requests-2.32.3\n")
    s.tool("run_shell_command", "sudo npm install -g @google/gemini-cli@latest", "changed 542 packages in 31s\n")
    s.tool("run_shell_command", "gemini --version", "0.23.0\n")
    s.tool("run_shell_command", "python3 --version", "Python 3.13.1\n")  # requests is not python3
    s.stop("Gemini CLI is now 0.23.0.").end().write()
    consolidate_session(project, "s-upgrade-1")
    [(meta, body)] = pages(project, "facts").values()
    assert meta["tools"]["gemini"]["installed"] == "sudo npm install -g @google/gemini-cli@latest"
    assert "installed" not in meta["tools"]["python3"]
    assert "- `gemini` 0.23.0 (`gemini --version`, 2026-11-30); installed or upgraded with " in body
