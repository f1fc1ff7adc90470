"""Traps of the environment that real agents work around, and the user's rules as real users
type them: a command the agent's sandbox stopped that passed with escalated permissions (a
Codex rollout, imported), a Gemini CLI shell report with a Windows error sentence fixed by
quoting, a file tool that takes only one spelling of a path, a "dont" typed without its
apostrophe; and the tempting shapes that must not become pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session, codex_rollout
from journals import wiki_pages as pages

from wiki_memory.capture.codex import read_rollout
from wiki_memory.capture.toolcalls import command_output
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.environment_gotchas import path_spelling
from wiki_memory.consolidate.distill.evidence import shell_output
from wiki_memory.memory import import_transcripts

DENIED = (
    "failed in sandbox MacosSeatbelt with execution error: Denied { output: ExecToolCallOutput { exit_code: 128, "
    'stdout: StreamOutput { text: "", truncated_after_lines: None }, stderr: StreamOutput { text: "fatal: cannot '
    "lock ref 'refs/heads/001-ideas': Unable to create '{root}/.git/refs/heads/001-ideas.lock': Operation not "
    'permitted\\n", truncated_after_lines: None }, aggregated_output: StreamOutput { text: "fatal: cannot lock ref '
    "'refs/heads/001-ideas': Unable to create '{root}/.git/refs/heads/001-ideas.lock': Operation not permitted\\n\", "
    "truncated_after_lines: None }, duration: 276.007292ms, timed_out: false } }"
)


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "scripts").mkdir()
    (code_repo / "scripts" / "new-feature.sh").write_text('#!/bin/sh\ngit checkout -b "$1"\n')
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def rollout(folder: Path, cwd: Path, calls: list[tuple[dict, str]]) -> Path:
    return codex_rollout(
        folder,
        cwd,
        calls,
        prompt="create the feature branch for ideas",
        answer="Branch created.",
        session_id="01a22bcf-417c-7f01-aca0-77b109a14193",
    )


def test_a_codex_sandbox_denial_is_a_failure_with_what_the_command_printed():
    text, code = command_output(DENIED.replace("{root}", "/w/app"))
    assert code == 128
    assert text.splitlines() == [
        "fatal: cannot lock ref 'refs/heads/001-ideas': Unable to create '/w/app/.git/refs/heads/001-ideas.lock': "
        "Operation not permitted",
        "[denied by the sandbox MacosSeatbelt: exit code 128]",
    ]


def test_a_command_the_sandbox_stopped_that_passed_escalated_is_a_gotcha(project, tmp_path: Path):
    root = project.root
    command = ["bash", "-lc", "scripts/new-feature.sh 001-ideas"]
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": command, "workdir": str(root)}, json.dumps({"output": DENIED.replace("{root}", str(root)),
                                                                "metadata": {}})),
        ({"command": command, "workdir": str(root), "with_escalated_permissions": True,
          "justification": "creating a branch writes inside .git"},
         json.dumps({"output": "Switched to a new branch '001-ideas'\n", "metadata": {"exit_code": 0}})),
    ])  # fmt: skip
    steps = [o for o in read_rollout(path) if o.kind == "tool"]
    assert [o.error for o in steps] == [True, False]
    import_transcripts("codex", [path], project=project)
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"].startswith("fatal: cannot lock ref '001-ideas'")
    assert meta["fix"]["sandbox"] == "MacosSeatbelt"
    assert "run it with escalated permissions, outside the sandbox" in body


# Codex 0.11x wraps the same report in a message string, one level of escapes deeper.
NESTED = (
    'exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: ExecToolCallOutput { exit_code: '
    '128, stdout: StreamOutput { text: \\"\\", truncated_after_lines: None }, aggregated_output: StreamOutput { '
    "text: \\\"fatal: Unable to create '{root}/.git/index.lock': Operation not permitted\\\\n\\\", "
    'truncated_after_lines: None }, duration: 0ns, timed_out: false }, network_policy_decision: None }))" }'
)


def test_newer_codexs_wrapped_denial_reads_the_same_and_git_stopped_so_is_a_gotcha(project, tmp_path: Path):
    text, code = command_output(NESTED.replace("{root}", "/w/app"))
    assert code == 128
    assert text.splitlines() == [
        "fatal: Unable to create '/w/app/.git/index.lock': Operation not permitted",
        "[denied by the sandbox Codex: exit code 128]",
    ]
    root = project.root
    command = ["/bin/zsh", "-lc", "git add README.md"]
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": command, "workdir": str(root)}, NESTED.replace("{root}", str(root))),
        ({"command": command, "workdir": str(root), "sandbox_permissions": "require_escalated"},
         json.dumps({"output": "", "metadata": {"exit_code": 0}})),
    ])  # fmt: skip
    import_transcripts("codex", [path], project=project)
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "fatal: Unable to create 'index.lock': Operation not permitted"
    assert meta["fix"]["sandbox"] == "Codex" and "outside the sandbox" in body


def test_a_failure_that_passed_again_with_no_sandbox_in_the_way_is_still_no_gotcha(project, tmp_path: Path):
    root = project.root
    command = ["bash", "-lc", "scripts/new-feature.sh 001-ideas"]
    failed = "fatal: cannot lock ref 'refs/heads/001-ideas': Operation not permitted\n"
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": command, "workdir": str(root)}, json.dumps({"output": failed, "metadata": {"exit_code": 128}})),
        ({"command": command, "workdir": str(root)}, json.dumps({"output": "Switched to a new branch '001-ideas'\n",
                                                                "metadata": {"exit_code": 0}})),
    ])  # fmt: skip
    import_transcripts("codex", [path], project=project)
    assert pages(project, "gotchas") == {}


def test_a_failure_the_sandbox_caused_silently_is_a_gotcha_once_it_passed_escalated(project, tmp_path: Path):
    """The sandbox cut the network and said nothing of it: only the run that passed, asking
    to run outside it, tells what stopped the first. The handoff says so too."""
    root = project.root
    command = ["bash", "-lc", "git push origin HEAD"]
    cut = "fatal: unable to access 'https://github.com/o/app.git/': Could not resolve host: github.com\n"
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": command, "workdir": str(root)}, json.dumps({"output": cut, "metadata": {"exit_code": 128}})),
        ({"command": command, "workdir": str(root), "sandbox_permissions": "require_escalated"},
         json.dumps({"output": "", "metadata": {"exit_code": 0}})),
    ])  # fmt: skip
    steps = [o for o in read_rollout(path) if o.kind == "tool"]
    assert [bool(o.meta.get("escalated")) for o in steps] == [False, True]
    import_transcripts("codex", [path], project=project)
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "fatal: unable to access 'httpapp.git/': Could not resolve host: github.com"
    assert meta["fix"]["sandbox"] == "Codex"
    assert "run it with escalated permissions, outside the sandbox" in body
    [handoff] = (project.wiki / "handoffs").rglob("*.md")
    assert "then passed with escalated permissions, outside the sandbox" in handoff.read_text()


@pytest.mark.parametrize(
    "agent, tool_input",
    [
        ("claude-code", {"command": "git push origin HEAD", "dangerouslyDisableSandbox": True}),
        ("codex", {"command": "git push origin HEAD", "sandbox_permissions": "require_escalated"}),
        ("codex", {"command": ["bash", "-lc", "git push origin HEAD"], "with_escalated_permissions": True}),
    ],
)
def test_the_hooks_record_a_call_that_asked_to_run_outside_the_sandbox(agent: str, tool_input: dict):
    from wiki_memory.capture.adapter import load

    payload = {"session_id": "s-escalated-1", "cwd": "/w/app", "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": tool_input, "tool_response": ""}  # fmt: skip
    [o] = load(agent).parse("PostToolUse", payload)
    assert o.meta["escalated"] is True
    [o] = load(agent).parse("PostToolUse", {**payload, "tool_input": {"command": "git push origin HEAD"}})
    assert "escalated" not in o.meta


def test_a_rerun_that_asked_for_nothing_more_says_nothing_of_the_sandbox(project, tmp_path: Path):
    root = project.root
    command = ["bash", "-lc", "git fetch --all --prune"]
    cut = "fatal: unable to access 'https://github.com/o/app.git/': Could not resolve host: github.com\n"
    up = {"sandbox_permissions": "require_escalated"}
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": command, "workdir": str(root), **up}, json.dumps({"output": cut, "metadata": {"exit_code": 128}})),
        ({"command": command, "workdir": str(root), **up}, json.dumps({"output": "", "metadata": {"exit_code": 0}})),
    ])  # fmt: skip
    import_transcripts("codex", [path], project=project)
    assert pages(project, "gotchas") == {}
    [handoff] = (project.wiki / "handoffs").rglob("*.md")
    assert "escalated" not in handoff.read_text()


def report(command: str, output: str, code: int) -> str:
    """A shell command as an older Gemini CLI transcript reports it."""
    return (
        f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\nExit Code: {code}\n"
        "Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 7448"
    )


def test_a_windows_error_sentence_in_a_gemini_report_fixed_by_quoting_is_a_gotcha(project):
    bad = "bcdedit /set {efe4f330-e02a-11f0-a024-901057d2aee6} path \\EFI\\refind\\shimx64.efi"
    good = 'bcdedit /set "{efe4f330-e02a-11f0-a024-901057d2aee6}" path \\EFI\\refind\\shimx64.efi'
    said = 'The set command specified is not valid.\nRun "bcdedit /?" for command line assistance.\n'
    s = Session(project, "s-bcd-00001", agent="gemini").start().prompt("Boot rEFInd through the shim")
    s.tool("run_shell_command", bad, report(bad, said + "The parameter is incorrect.", 1), error=True)
    s.tool("run_shell_command", good, report(good, "The operation completed successfully.", 0))
    s.stop("Done: PowerShell needs the braces quoted.").end().write()
    consolidate_session(project, "s-bcd-00001")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "The parameter is incorrect"
    assert meta["fix"]["instead"] == good
    assert "What differs: quoted `{efe4f330-e02a-11f0-a024-901057d2aee6}`." in body


def test_a_file_tool_that_takes_only_the_windows_spelling_of_a_path_is_a_gotcha(project):
    win = "C:\\Users\\me\\work\\app"
    s = Session(project, "s-wpath-001", cwd=win).start().prompt("Review the workflow")
    refused = "<tool_use_error>File does not exist.</tool_use_error>"
    s.tool("Read", "/c/Users/me/work/app/.github/workflows/ci.yml", refused, error=True)
    s.tool("Read", win + "\\.github\\workflows\\ci.yml", "name: CI\non: push\n")
    s.stop("Reviewed.").end().write()
    consolidate_session(project, "s-wpath-001")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "Read: File does not exist"
    assert "What differs: the tool takes the Windows spelling `C:`…, not `/c`…" in body


def test_a_wrong_guess_of_a_folder_is_no_path_gotcha(project):
    s = Session(project, "s-wpath-002").start().prompt("Review the app")
    s.tool("Read", f"{project.root}/src/app.py", "<tool_use_error>File does not exist.</tool_use_error>", error=True)
    s.tool("Read", f"{project.root}/app/app.py", "print('hi')\n")
    s.stop("Reviewed.").end().write()
    consolidate_session(project, "s-wpath-002")
    assert pages(project, "gotchas") == {}
    assert path_spelling("src/app.py", "app/app.py") == ""
    assert (
        path_spelling("src/app.py", "/home/me/repo/src/app.py") == "the tool takes an absolute path, not a relative one"
    )


def test_a_rule_typed_without_its_apostrophe_is_kept_with_the_question_it_answered(project):
    s = Session(project, "s-pref-dont").start()
    s.prompt("how do we make sure that 1password always prompts for my YubiKey when we login? "
             "I dont want unlock to be only a alphanum password")  # fmt: skip
    s.prompt("dont you think the vault is slow?")  # a question: no rule
    s.stop("Set 'Require YubiKey' in 1Password's security settings.").end().write()
    consolidate_session(project, "s-pref-dont")
    [(meta, body)] = pages(project, "preferences").values()
    assert meta["statement"] == "I dont want unlock to be only a alphanum password"
    assert "Said right after: \u201cHow do we make sure that 1password always prompts for my YubiKey" in body


def test_a_gemini_shell_report_is_read_by_its_fields_in_every_shape_it_comes_in():
    # The AfterTool hook's `Output:`/`Exit Code:`; an older transcript's whole report; that
    # report replayed under `Output: `. What the command printed, and that it failed.
    said = "error: No installed refs found for \u2018org.x.App\u2019"
    whole = report("flatpak uninstall -y org.x.App", said, 1)
    for shape in (f"Output: {said}\nExit Code: 1", whole, f"Output: {whole}\nExit Code: 1"):
        assert shell_output(shape) == f"{said}\nExit code 1"
    assert shell_output(report("op --version", "2.32.0", 0)) == "2.32.0"
    assert shell_output("Output: (empty)\nExit Code: 1") == "\nExit code 1"
    assert shell_output("plain text\nOutput: not a report") == "plain text\nOutput: not a report"


def test_a_failure_in_gemini_hook_output_keeps_its_own_line_not_the_report_field(project):
    bad, good = "pactl info", "sudo -u me XDG_RUNTIME_DIR=/run/user/1000 pactl info"
    s = Session(project, "s-gem-hook1", agent="gemini").start().prompt("Why is there no sound?")
    s.tool("run_shell_command", bad, "Output: pa_context_connect() failed: Connection refused\nExit Code: 1",
           error=True)  # fmt: skip
    s.tool("run_shell_command", good, "Output: Server Name: PulseAudio (on PipeWire 1.4.9)\nExit Code: 0")
    s.stop("The audio server runs as your user.").end().write()
    consolidate_session(project, "s-gem-hook1")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "pa_context_connect() failed: Connection refused"
    assert "What differs: added `sudo -u me XDG_RUNTIME_DIR=/run/user/1000`." in body


POWERSHELL_MISSING = (
    "tail : The term 'tail' is not recognized as the name of a cmdlet, function, script file, or operable "
    "program. Check the \nspelling of the name, or if a path was included, verify that the path is correct and "
    "try again.\nAt line:1 char:1\n+ tail -n 5 E:\\EFI\\refind\\refind.conf\n+ ~~~~\n    + CategoryInfo          : "
    "ObjectNotFound: (tail:String) [], CommandNotFoundException\n    + FullyQualifiedErrorId : "
    "CommandNotFoundException\n \n"
)


def test_a_program_powershell_does_not_know_then_another_command_is_a_gotcha(project):
    bad = "tail -n 5 E:\\EFI\\refind\\refind.conf"
    good = 'powershell -Command "Get-Content E:\\EFI\\refind\\refind.conf -Tail 5"'
    s = Session(project, "s-pwsh-tail", agent="gemini", cwd="C:\\Windows\\system32").start()
    s.prompt("Show the end of refind.conf")
    s.tool("run_shell_command", bad, report(bad, POWERSHELL_MISSING, 1), error=True)
    s.tool("run_shell_command", good, report(good, "include EFI/refind/themes/regular/theme.conf", 0))
    s.stop("The last lines include the theme.").end().write()
    consolidate_session(project, "s-pwsh-tail")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"].startswith("tail : The term 'tail' is not recognized as the name of a cmdlet")
    assert meta["fix"]["instead"] == good
    assert "What differs" not in body  # another program: the fix line says it all


def test_an_unrelated_command_after_a_missing_program_is_not_its_fix(project):
    bad = 'bash -lc "bash ~/.claude/skills/apply-grant/export-session.sh ."'
    missing = POWERSHELL_MISSING.replace("tail", "bash")
    s = Session(project, "s-pwsh-bash", agent="gemini", cwd="C:\\Users\\k\\app").start()
    s.prompt("Export this session and collect the project's facts")
    s.tool("run_shell_command", bad, report(bad, missing, 1), error=True)
    s.tool("run_shell_command", "Get-Content package.json", report("Get-Content package.json", '{"name": "app"}', 0))
    s.stop("Exported.").end().write()
    consolidate_session(project, "s-pwsh-bash")
    fixes = [meta.get("fix") or {} for meta, _ in pages(project, "gotchas").values()]
    assert all(f.get("instead") != "Get-Content package.json" for f in fixes)


def test_reading_the_file_a_command_failed_on_is_not_its_fix(project):
    s = Session(project, "s-docfx-01", agent="codex").start().prompt("Regenerate the API docs")
    s.tool("shell", "docfx docfx.json", "Unhandled exception. System.TimeoutException: The operation has timed out.\n"
           "Exit code 134", error=True)  # fmt: skip
    s.tool("shell", "nl -ba docfx.json", '     1\t{\n     2\t  "metadata": []\n     3\t}\n')
    s.stop("docfx hangs building the metadata.").end().write()
    consolidate_session(project, "s-docfx-01")
    fixes = [meta.get("fix") or {} for meta, _ in pages(project, "gotchas").values()]
    assert all(not f.get("instead") and f.get("verified") != "nl -ba docfx.json" for f in fixes)


def test_a_script_run_after_cd_to_an_unknown_or_other_place_is_no_procedure_here(project):
    s = Session(project, "s-cd-away-1").start().prompt("Rebuild the app bundle")
    s.bash("cd ~/Code/otherapp && bash scripts/bundle-app.sh build/app App.app 0.14", "Bundled App.app\n")
    s.bash("cd $APP_DIR && bash scripts/sign.sh App.app", "Signed\n")
    s.stop("Bundled and signed.").end().write()
    consolidate_session(project, "s-cd-away-1")
    bodies = "".join(body for _, body in pages(project, "procedures").values())
    assert "bundle-app.sh" not in bodies and "sign.sh" not in bodies


def test_the_projects_own_scripts_that_worked_are_a_procedure_not_ones_the_session_wrote(project):
    root = project.root
    s = Session(project, "s-scripts-1").start().prompt("Sync the logs and rebuild the journals")
    s.bash("python3 scripts/sync_raw_logs.py", "Synced 12 files\n")
    s.bash("python3 scripts/generate_journals.py --days 7", "Wrote 7 journals\n")
    s.tool("Write", f"{root}/scripts/check_once.py", "create", files=(f"{root}/scripts/check_once.py",))
    s.bash("python3 scripts/check_once.py", "ok\n")  # written for this session: not the project's
    s.bash("python3 /tmp/probe.py", "ok\n")  # outside the project
    s.bash("./scripts/publish.sh", "bash: ./scripts/publish.sh: Permission denied\nExit code 126", error=True)
    s.stop("Synced and rebuilt.").end().write()
    consolidate_session(project, "s-scripts-1")
    [(meta, body)] = pages(project, "procedures").values()
    assert meta["title"] == "How to run the project's scripts"
    assert [c["command"] for c in meta["commands"]] == [
        "python3 scripts/sync_raw_logs.py",
        "python3 scripts/generate_journals.py --days 7",
    ]
    assert "check_once" not in body and "/tmp/probe.py" not in body


DENIAL = "Permission to use Bash has been auto-denied in dontAsk mode."


def test_the_same_error_on_commands_of_different_programs_is_a_trap_of_the_environment(project):
    s = Session(project, "s-denied-01").start().prompt("Set up a tmux launcher")
    s.bash("tmux -V", DENIAL, error=True)
    s.bash('chmod +x "/Applications/Tmux.app/Contents/MacOS/launcher.sh"', DENIAL, error=True)
    s.bash("chmod +x ~/Desktop/Tmux.command", DENIAL, error=True)
    s.stop("I cannot run commands here: paste these yourself.").end().write()
    consolidate_session(project, "s-denied-01")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "Permission to use Bash has been auto-denied in dontAsk mode"
    assert meta["fix"]["commands"][0] == "tmux -V" and len(meta["fix"]["commands"]) == 3
    assert "**Every command failed alike**" in body


def test_one_programs_own_error_or_one_that_passed_later_is_no_environment_trap(project):
    s = Session(project, "s-denied-02").start().prompt("Start the stack")
    refused = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    s.bash("docker ps", refused, error=True).bash("docker compose up -d", refused, error=True)  # one program
    s.bash("tmux -V", DENIAL, error=True).bash("chmod +x run.sh", DENIAL, error=True)
    s.bash("tmux -V", "tmux 3.4\n")  # let through after all
    s.stop("Docker is not running.").end().write()
    consolidate_session(project, "s-denied-02")
    assert not [m for m, _ in pages(project, "gotchas").values() if (m.get("fix") or {}).get("commands")]


def test_an_edit_refused_outside_the_workspace_then_made_from_the_shell_is_a_gotcha(project):
    conf = "E:\\EFI\\refind\\refind.conf"
    refused = "File path must be within one of the workspace directories: C:\\Windows\\system32"
    shell = (
        f"powershell -Command \"(Get-Content {conf}) -replace 'icon themes/', 'icon EFI/refind/themes/' "
        f'| Set-Content {conf}"'
    )
    s = Session(project, "s-pwsh-edit", agent="gemini", cwd="C:\\Windows\\system32").start()
    s.prompt("Make the icon paths absolute")
    s.tool("replace", conf, f"{refused}\n{refused}", error=True)
    s.tool("run_shell_command", shell, report(shell, "(empty)", 0))
    s.stop("Edited refind.conf with PowerShell.").end().write()
    consolidate_session(project, "s-pwsh-edit")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["signature"] == f"replace: {refused}"
    assert meta["fix"]["instead"] == shell
    assert "What differs: the shell wrote the file the tool would not." in body


def test_an_edit_refused_over_what_the_file_holds_then_made_with_sed_is_no_gotcha(project):
    s = Session(project, "s-sed-edit1").start().prompt("Rename the setting")
    s.tool("Edit", f"{project.root}/app.cfg", "<tool_use_error>String to replace not found in file.</tool_use_error>",
           error=True)  # fmt: skip
    s.bash("sed -i 's/old_name/new_name/' app.cfg", "")
    s.stop("Renamed.").end().write()
    consolidate_session(project, "s-sed-edit1")
    assert pages(project, "gotchas") == {}


def test_a_line_that_failed_at_its_cd_then_ran_in_the_right_place_is_a_gotcha(project):
    root = project.root
    s = Session(project, "s-cd-place1").start().prompt("Pull the latest changes")
    s.bash(f"cd {root}/M-Claude && git status", f"Exit code 1\n(eval):cd:1: no such file or directory: {root}/M-Claude",
           error=True)  # fmt: skip
    s.bash(f"cd {root}/Documents/M-Claude && git status", "On branch main\nnothing to commit, working tree clean\n")
    s.stop("Pulled.").end().write()
    consolidate_session(project, "s-cd-place1")
    [(meta, body)] = pages(project, "gotchas").values()
    assert meta["fix"]["instead_dir"] == "Documents/M-Claude"
    assert "**Fix**: run `git status` in `Documents/M-Claude` instead." in body


def test_a_look_around_that_failed_on_a_missing_file_is_still_no_gotcha(project):
    s = Session(project, "s-cd-place2").start().prompt("Look at the notes")
    s.bash("cat notes.txt", "cat: notes.txt: No such file or directory", error=True)
    s.bash("cat docs/notes.txt", "the notes\n")
    s.stop("Read them.").end().write()
    consolidate_session(project, "s-cd-place2")
    assert pages(project, "gotchas") == {}


def test_a_script_that_fails_later_is_not_noted_as_done_another_way(project):
    # A procedure's failures tell the moment hook "run it the page's way instead"; for scripts
    # the page's first one is another script, not a way to run this one.
    Session(project, "s-scripts-2").start().prompt("Sync").bash("python3 scripts/sync.py", "Synced\n").bash(
        "python3 scripts/report.py", "Report written\n"
    ).stop("Done.").end().write()
    consolidate_session(project, "s-scripts-2")
    later = Session(project, "s-scripts-3", start="2026-12-01T08:00:00").start().prompt("Report")
    later.bash("python3 scripts/report.py", "Traceback (most recent call last):\nKeyError: 'TOKEN'", error=True)
    later.stop("It needs TOKEN.").end().write()
    consolidate_session(project, "s-scripts-3")
    [(meta, body)] = pages(project, "procedures").values()
    assert not meta.get("failures") and "Recent failures" not in body


def test_a_script_named_by_its_absolute_path_inside_the_project_is_one_of_its_scripts(project):
    publish = f"python3 {project.root}/commands/publish/scripts/publish_session.py 47bf5f5c"
    s = Session(project, "s-scripts-4").start().prompt("/publish-session")
    s.bash(publish, "Published: https://gist.github.com/x/1\n")
    s.bash("python3 /opt/tools/check_version.py", "up to date\n")  # outside the project
    s.stop("Published.").end().write()
    consolidate_session(project, "s-scripts-4")
    [(meta, _body)] = pages(project, "procedures").values()
    assert [c["command"] for c in meta["commands"]] == [publish]


def test_a_command_the_capture_kept_only_in_part_is_no_way_to_do_anything(project):
    # A long patch passed to the shell: the journal keeps its start and a cut mark, so what
    # ran is not known, and neither the failure nor the "fix" may become a page.
    cut = "\n[... 2,325 more characters cut ...]"
    s = Session(project, "s-cut-0001").start().prompt("Forward the Ollama URL into the container")
    s.bash("python3 tools/gen.py --config big.toml --mode all" + cut, "Error: ai-webui: command not found", error=True)
    s.edit("src/worker.rs")
    s.bash("python3 tools/gen.py --config big.toml --mode all" + cut, "generated 3 files")
    s.stop("Done.").end().write()
    consolidate_session(project, "s-cut-0001")
    assert pages(project, "gotchas") == {}
    assert not any("characters cut" in body for _meta, body in pages(project, "procedures").values())


PS_PARSE = (
    "At line:1 char:22\r\n+ git log --oneline -3 && git diff --stat\r\n+                      ~~\r\n"
    "The token '&&' is not a valid statement separator in this version.\r\n"
    "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\r\n"
    "    + FullyQualifiedErrorId : InvalidEndOfLine\r\n"
)


def test_a_line_the_shell_could_not_parse_then_written_its_way_is_a_gotcha(project):
    # Windows PowerShell 5 has no `&&`: git never ran, so that git only looks is no matter.
    s = Session(project, "s-pwsh-and-01", agent="codex", cwd="C:\\Users\\k\\site").start()
    s.prompt("Show the last commits and what changed")
    s.tool("shell", "git log --oneline -3 && git diff --stat", PS_PARSE + "Exit code: 1", error=True)
    s.tool("shell", "git log --oneline -3; git diff --stat", "b2b5a26 Add workflow\n 1 file changed")
    s.stop("Here are the last commits.").end().write()
    consolidate_session(project, "s-pwsh-and-01")
    [(meta, _body)] = pages(project, "gotchas").values()
    assert meta["signature"] == "The token '&&' is not a valid statement separator in this version"
    assert meta["title"].endswith("the shell refused the line")
    assert meta["fix"]["instead"] == "git log --oneline -3; git diff --stat"
    # An unbalanced quote fixed by writing another command is the agent's slip, no trait of
    # the shell: no page.
    t = Session(project, "s-bash-quote-1", agent="codex").start().prompt("Find the gen commands")
    t.tool("shell", 'rg -n "add_parser(\\"gen|gen-snippets\\" cli.py -S',
           "bash: -c: line 1: unexpected EOF while looking for matching `\"'\nExit code: 2", error=True)  # fmt: skip
    t.tool("shell", 'rg -n "add_parser" cli.py', "12: sub.add_parser('gen')")
    t.stop("Found it.").end().write()
    consolidate_session(project, "s-bash-quote-1")
    assert len(pages(project, "gotchas")) == 1
