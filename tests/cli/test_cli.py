from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from wiki_memory.cli import main


def all_commands(group=main, prefix=()):
    for name, command in group.commands.items():
        yield prefix + (name,), command
        if hasattr(command, "commands"):
            yield from all_commands(command, prefix + (name,))


@pytest.mark.parametrize(
    "name,command", list(all_commands()), ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_every_command_has_help_with_an_example(name, command):
    assert command.help, f"{' '.join(name)} is missing its help"
    assert "Example" in command.help, f"{' '.join(name)} has no example in its help"


@pytest.fixture
def cli(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    runner = CliRunner()

    def run(*args, input=None, ok=True):
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    run.repo = code_repo
    return run


def wiki_of(cli) -> Path:
    return Path(cli("path").output.strip())


def test_init_is_idempotent_and_prints_the_wiki_path(cli):
    first = cli("init").output.strip()
    assert cli("init").output.strip() == first
    assert Path(first, ".git").is_dir()
    info = json.loads(cli("path", "--json").output)
    assert info["wiki"] == first and info["root"] == str(cli.repo.resolve())
    project_file = json.loads((Path(first).parent / "project.json").read_text())
    assert project_file["root"] == str(cli.repo.resolve())


def test_write_show_list_by_title_path_and_id(cli):
    cli("init")
    path = cli(
        "write",
        "-t",
        "Retry policy",
        "--type",
        "decision",
        "--tag",
        "http",
        "--tag",
        "resilience",
        "--body",
        "Retry twice, then fail.",
    ).output.strip()
    assert path == "decisions/retry-policy.md"
    piped = cli("write", "-t", "Package manager", "--type", "preference", input="Use uv, not pip.\n")
    assert piped.output.strip() == "preferences/package-manager.md"
    shown = cli("show", "Retry policy").output
    assert "title: Retry policy" in shown and "Retry twice, then fail." in shown
    page = json.loads(cli("show", path, "--json").output)
    assert page["meta"]["tags"] == ["http", "resilience"]
    assert cli("show", page["meta"]["id"]).output == shown
    rows = json.loads(cli("list", "--json").output)
    assert {r["path"] for r in rows} == {path, "preferences/package-manager.md"}
    assert [r["path"] for r in json.loads(cli("list", "--type", "decision", "--json").output)] == [path]
    assert [r["path"] for r in json.loads(cli("list", "--tag", "resilience", "--json").output)] == [path]


def test_write_as_an_agent_carries_trailers(cli):
    cli("init")
    cli("write", "-t", "X", "--body", "y", "--agent", "codex", "--session", "019a-77")
    out = git(wiki_of(cli), "log", "-1", "--format=%an|%(trailers:key=Session-Id,valueonly,separator=)")
    assert out.strip() == "codex|019a-77"


def test_mv_rm_log_diff_and_revert(cli):
    cli("init")
    cli("write", "-t", "Retry", "--body", "first")
    cli("write", "-t", "Retry", "--body", "second")
    assert cli("mv", "Retry", "--title", "Retry policy").output.strip() == "notes/retry-policy.md"
    log = json.loads(cli("log", "Retry policy", "--json").output)
    assert [c["subject"] for c in log] == [
        "move: notes/retry -> notes/retry-policy",
        "update: notes/retry",
        "remember: notes/retry",
    ]
    diff = cli("diff", "HEAD~2", "HEAD", "notes/retry-policy.md").output
    assert "+second" in diff
    reverted = cli("revert", log[0]["id"]).output
    assert reverted.startswith(f"reverted {log[0]['id'][:8]}")
    assert Path(wiki_of(cli), "notes/retry.md").exists()
    assert cli("rm", "notes/retry.md").output.startswith("removed notes/retry.md")
    assert json.loads(cli("log", "-n", "1", "--json").output)[0]["subject"] == "forget: notes/retry"


def test_diff_without_revisions_shows_uncommitted_hand_edits(cli):
    cli("init")
    cli("write", "-t", "Retry", "--body", "first")
    page = wiki_of(cli) / "notes" / "retry.md"
    page.write_text(page.read_text().replace("first", "edited by hand"))
    out = cli("diff").output
    assert "+edited by hand" in out and "-first" in out
    assert "notes/retry.md" in json.loads(cli("status", "--json").output)["pending_edits"]


def test_edit_opens_the_editor_and_commits_as_the_person(cli, tmp_path, monkeypatch):
    cli("init")
    cli("write", "-t", "Retry", "--body", "first", "--agent", "claude-code")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/first/changed in the editor/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    assert cli("edit", "Retry").output.startswith("committed notes/retry.md")
    wiki = wiki_of(cli)
    assert git(wiki, "log", "-1", "--format=%an|%s").strip() == "Test Person|edit: notes/retry.md"
    assert "changed in the editor" in (wiki / "notes/retry.md").read_text()


def test_status_counts_pages_by_type(cli):
    cli("init")
    cli("write", "-t", "A", "--type", "decision", "--body", "a")
    cli("write", "-t", "B", "--type", "gotcha", "--body", "b")
    cli("write", "-t", "C", "--type", "gotcha", "--body", "c")
    info = json.loads(cli("status", "--json").output)
    assert info["pages"] == 3 and info["pages_by_type"] == {"decision": 1, "gotcha": 2}
    assert info["last_commit"]["subject"] == "remember: gotchas/c"
    assert "pages:    3 (decision 1, gotcha 2)" in cli("status").output


@pytest.mark.parametrize(
    "args,message",
    [
        (("show", "no such page"), "no page with path, title or id 'no such page'"),
        (("show", "../../etc/passwd"), "may not leave the wiki"),
        (("write", "-t", "x", "--path", "/abs.md", "--body", "b"), "not absolute"),
        (("revert", "deadbeef"), "unknown revision 'deadbeef'"),
        (("log", "-n", "0"), "0 is not in the range"),
    ],
)
def test_user_errors_are_one_line_and_non_zero(cli, args, message):
    cli("init")
    result = cli(*args, ok=False)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1


def test_broken_page_is_reported_by_file_and_line_and_untouched(cli):
    wiki = Path(cli("init").output.strip())
    broken = "---\ntitle: [oops\n---\nbody\n"
    (wiki / "notes").mkdir()
    (wiki / "notes" / "broken.md").write_text(broken)
    uncommitted = cli("show", "notes/broken.md", ok=False)
    assert "notes/broken.md is not committed yet" in uncommitted.output
    cli("watch", "--once")  # commits the person's pending edit, as theirs
    result = cli("show", "notes/broken.md", ok=False)
    assert result.exit_code == 1 and "notes/broken.md: line" in result.output
    listing = cli("list")
    assert "warning: notes/broken.md" in listing.output
    assert (wiki / "notes" / "broken.md").read_text() == broken


def test_commands_before_init_say_what_to_do(cli):
    result = cli("list", ok=False)
    assert result.exit_code == 1 and "run `wiki-memory init`" in result.output


def test_the_installed_executable_and_python_m_work(code_repo):
    env = dict(os.environ)
    exe = Path(sys.executable).parent / "wiki-memory"
    out = subprocess.run([str(exe), "init"], cwd=code_repo, env=env, capture_output=True, text=True, check=True)
    wiki = out.stdout.strip()
    out = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "path"],
        cwd=code_repo / ".",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == wiki
    bad = subprocess.run([str(exe), "show", "nope"], cwd=code_repo, env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.strip() == "Error: no page with path, title or id 'nope'"


def test_each_command_loads_its_own_module_alone():
    """`wiki-memory search` imports cli/search.py and no other command's module: the table
    of which module defines which command is checked against the commands themselves."""
    import inspect

    from wiki_memory.cli import COMMAND_MODULES, load_commands, main

    load_commands()
    defined = {
        name: inspect.getmodule(getattr(command.callback, "__wrapped__", command.callback)).__name__.rsplit(".", 1)[1]
        for name, command in main.commands.items()
    }
    assert defined == COMMAND_MODULES, "update COMMAND_MODULES in wiki_memory/cli/__init__.py"
    probe = (
        "import json, sys\nfrom wiki_memory.cli import main\nmain.get_command(None, 'search')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('wiki_memory.cli.'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["wiki_memory.cli.output", "wiki_memory.cli.search"]
