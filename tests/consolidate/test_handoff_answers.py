"""Runs that answered rather than failed, and failures the session went on without: a search
whose status 1 means "no", a look for something that is not there, a program that could not
run and was never needed again, a call the user refused. None of them is work left failing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git
from handoffs import consolidated, handoff_of, section, steps_of
from hooked import Hooked
from journals import codex_rollout

from wiki_memory.capture.adapter import load
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.command_runs import judge_runs
from wiki_memory.consolidate.commands import command_words, exit_one_means_no, only_looks
from wiki_memory.consolidate.extract import summarize
from wiki_memory.consolidate.session import build_session


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


@pytest.mark.parametrize(
    "command, answers",
    [
        ("ls ~/Library/LaunchAgents | grep -iv whisper", True),
        ("pgrep -la whisper 2>/dev/null; pgrep -la openwhisper 2>/dev/null", True),
        ("git grep -n TODO", True),
        ("git diff --quiet", True),
        ("command -v uv", True),
        ("git diff", False),
        ("grep -c x f | wc -l", False),
        ("pytest -q", False),
        ("find / -name x", False),
    ],
)
def test_a_line_ending_in_a_search_or_test_answers_no_by_status_1(command, answers):
    assert exit_one_means_no(command) is answers


def test_a_search_pipeline_that_exits_1_after_printing_is_an_answer(project, code_repo):
    s = Hooked(code_repo, "answer-grep-0001")
    s.start()
    s.prompt("Is any other dictation app running?")
    # The earlier commands printed; the last one found nothing: the line's status is its.
    s.bash("pgrep -la whisper 2>/dev/null; pgrep -la openwhisper 2>/dev/null", "9621 whisper-server", exit_code=1)
    s.bash("ls ~/Library/LaunchAgents | grep -iv voicemode", "krisp.plist\ncom.adobe.plist", exit_code=1)
    s.stop("Only whisper-server (9621) is running; krisp has a launch agent.")
    handoff, _page = consolidated(project, "answer-grep-0001")
    left = section(handoff, "Failed or abandoned approaches") + section(handoff, "Open items / next steps")
    assert left == "" or ("pgrep" not in left and "grep -iv" not in left)
    assert [r.ok for r in judge_runs(steps_of(project, "answer-grep-0001"))] == [True, True]


def test_an_error_before_the_search_is_still_a_failure_and_a_rerun_found_nothing(project, code_repo):
    s = Hooked(code_repo, "answer-remote-0001")
    s.start()
    s.prompt("Does a remote branch for the docs feature exist?")
    line = "git ls-remote --heads origin | grep -E 'refs/heads/[0-9]+-docs$'"
    s.bash(line, exit_code=1, stderr="fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host")
    s.bash(line, exit_code=1)
    s.stop("No remote branch for the docs feature exists.")
    handoff, _page = consolidated(project, "answer-remote-0001")
    runs = judge_runs(steps_of(project, "answer-remote-0001"))
    assert [r.ok for r in runs] == [False, True] and runs[1].found_nothing and runs[0].fixed_by is not None
    assert "then ran again and found nothing" in handoff
    assert "then passed" not in handoff
    assert section(handoff, "Failed or abandoned approaches") == ""


def test_a_look_for_something_absent_is_no_failure_and_nothing_gone(project, code_repo):
    s = Hooked(code_repo, "answer-absent-0001")
    s.start()
    s.prompt("Collect what the grant application needs from this repository")
    s.bash(
        "powershell.exe -NoProfile -Command (Invoke-WebRequest -UseBasicParsing https://example.org/x.py).Content",
        exit_code=1,
        stderr="Invoke-WebRequest : 404: Not Found",
    )
    s.bash(
        "Get-Content C:\\Users\\k\\.codex\\history.jsonl -Tail 5",
        exit_code=1,
        stderr="Get-Content : Cannot find path 'C:\\Users\\k\\.codex\\history.jsonl' because it does not exist.",
    )
    s.bash(
        "Get-ChildItem -Recurse -File .\\skills\\data\\specs",
        exit_code=1,
        stderr="Get-ChildItem : Cannot find path 'C:\\r\\skills\\data\\' because it does not exist.",
    )
    s.bash("Get-ChildItem -Recurse -File -Include Cargo.toml", exit_code=124, stderr="command timed out after 10937 ms")
    s.bash("Get-Content package.json", '{"name": "app"}')
    s.stop("The repository is a Next.js app.")
    handoff, _page = consolidated(project, "answer-absent-0001")
    failed = section(handoff, "Failed or abandoned approaches")
    assert "404" not in handoff and "history.jsonl" not in handoff
    assert "already gone" not in handoff and "specs" not in handoff  # a look removes nothing
    # A look that failed for another reason than absence is still a failure.
    assert "timed out" in failed


def test_a_program_that_could_not_run_and_was_not_needed_again_is_a_story(project, code_repo):
    s = Hooked(code_repo, "answer-nobash-0001")
    s.start()
    s.prompt("Export this session into the project root")
    s.bash(
        "bash --version",
        exit_code=1,
        stderr="bash : The term 'bash' is not recognized as the name of a cmdlet, function, script file, "
        "or operable program.",
    )
    s.bash("Copy-Item $latest.FullName .\\codex-session.jsonl", "")
    s.stop("The session is exported to codex-session.jsonl.")
    handoff, page = consolidated(project, "answer-nobash-0001")
    assert "bash" not in section(handoff, "Failed or abandoned approaches")
    assert "`bash` could not run here" in page


def test_a_program_that_could_not_run_and_is_tried_again_stays_failed(project, code_repo):
    s = Hooked(code_repo, "answer-nobash-0002")
    s.start()
    s.prompt("Install the dependencies")
    s.bash("uv sync", exit_code=127, stderr="bash: uv: command not found")
    s.bash("ls", "README.md")
    s.bash("uv sync --frozen", exit_code=127, stderr="bash: uv: command not found")
    s.stop("uv is not installed here.")
    handoff, _page = consolidated(project, "answer-nobash-0002")
    assert "`uv sync" in section(handoff, "Failed or abandoned approaches")


def test_a_codex_call_the_user_refused_neither_passed_nor_changed_anything(tmp_path):
    rollout = codex_rollout(
        tmp_path / "sessions",
        tmp_path,
        [
            ({"command": ["bash", "-lc", "git clone https://github.com/o/spec-kit"]}, "Cloning into 'spec-kit'..."),
            ({"command": ["bash", "-lc", "git clone https://github.com/o/codex"]}, "exec command rejected by user"),
        ],
        prompt="Study spec-kit and tell me how to run it on Windows",
        answer="",
        session_id="0199aaaa-0000-7000-8000-000000000001",
    )
    session = build_session(load("codex").read_transcript(rollout))
    runs = judge_runs(session.steps)
    assert [(r.ok, r.step.rejected) for r in runs] == [(True, False), (False, True)]
    summary = summarize(session)
    assert not any("o/codex" in line for line in summary.done)
    assert any("declined to run `git clone https://github.com/o/codex`" in line for line in summary.failed)
    assert json.loads(rollout.read_text().splitlines()[-2])["payload"]["output"] == "exec command rejected by user"


def test_a_session_whose_calls_the_user_refused_keeps_its_request_handed(project, code_repo):
    s = Hooked(code_repo, "answer-work-0001")
    s.start()
    s.prompt("Add a health endpoint to the API")
    s.edit("api.py")
    s.stop("The /health endpoint is added to api.py.")
    consolidated(project, "answer-work-0001")
    t = Hooked(code_repo, "answer-refused-0001")
    t.start()
    t.prompt("Generate the spec from requirements.md with /specify")
    t.tool(
        "Bash",
        {"command": "cat .codex/prompts/specify.md"},
        error="The user doesn't want to proceed with this tool use.",
    )
    t.stop("")
    consolidated(project, "answer-refused-0001")
    # What the next session is handed: the refused session comes first, its request in full.
    text = Hooked(code_repo, "answer-next-0001").start()
    assert "session answerre" in text.split("\n")[1]
    assert "Goal: Generate the spec from requirements.md" in text
    assert "Since then, sessions that changed nothing" not in text


def test_powershell_command_runs_its_script():
    assert command_words("powershell.exe -NoProfile -Command (Get-Content x.md).Length") == ["Get-Content", "x.md"]
    assert only_looks("powershell.exe -NoLogo -Command Get-Content -Raw 'a.md'")
    assert only_looks("Invoke-WebRequest https://example.org")
    assert not only_looks("Invoke-WebRequest https://example.org -OutFile x.zip")


# -- the final message: what it leaves open, and what it only advises ----------------------------


def test_contingent_advice_rules_and_hedged_steps_are_not_next_steps(project, code_repo):
    s = Hooked(code_repo, "final-steps-0001")
    s.start()
    s.prompt("Address the review comments on the PR")
    s.edit("docs/wrappers.md")
    s.bash("git add docs/wrappers.md && git commit -m 'docs: fix wrappers'", "[main 503e717] docs: fix wrappers")
    s.stop(
        "## All PR Comments Addressed\n\nCommits: 1 (`503e717`)\n\nNext steps:\n1. Push changes: `git push`\n"
        "   - If push is rejected (non-fast-forward): Run `/reconcile` to resolve. Do NOT use `git pull --rebase`.\n"
        "2. Wait for CI to pass\n3. Request re-review if needed"
    )
    handoff = handoff_of(project, "final-steps-0001")
    open_items = section(handoff, "Open items / next steps")
    assert "Wait for CI to pass" in open_items
    assert "/reconcile" not in handoff and "pull --rebase" not in handoff and "re-review" not in handoff
    assert "`git add docs/wrappers.md && git commit -m 'docs: fix wrappers'` succeeded." in section(handoff, "Done")


def test_a_command_the_final_message_names_and_the_session_never_ran_is_open(project, code_repo):
    """In any language: `make check` ran, `make apply` did not; a name in code that is no
    command of a program the session ran (`homebrew.casks`, `pip`) is not one."""
    s = Hooked(code_repo, "final-named-0001")
    s.start()
    s.prompt("Gather を追加して")
    s.edit("darwin/hosts/mac.nix")
    s.bash("make check", "all checks passed")
    s.stop(
        "`darwin/hosts/mac.nix` に `gather` を追加しました。`homebrew.casks` 側です。\n\n"
        "`make check` は通過済みです。反映は `make apply` でできます。`pip install nix` は不要です。\n\n"
        "```\nmake rollback\n```"
    )
    open_items = section(handoff_of(project, "final-named-0001"), "Open items / next steps")
    [line] = [x for x in open_items.splitlines() if "Named at the end" in x]
    assert line == "- Named at the end, not run in the session: `make apply`"


def test_a_closing_formula_leaves_no_question_a_real_one_does(project, code_repo):
    s = Hooked(code_repo, "final-ask-0001")
    s.start()
    s.prompt("Prepare the release notes")
    s.edit("CHANGELOG.md")
    s.stop("The notes are in CHANGELOG.md. Should 2.1 be called a major release? What else would you like me to do?")
    open_items = section(handoff_of(project, "final-ask-0001"), "Open items / next steps")
    assert "Question left for the user: Should 2.1 be called a major release?" in open_items
    assert "What else" not in open_items


def test_a_question_the_user_answered_with_a_command_is_not_left_open(project, code_repo):
    s = Hooked(code_repo, "final-answered-0001")
    s.start()
    s.prompt("Pick up objective 8036 where we left off")
    s.bash("gh issue view 8036", "node 1.7: in_progress, plan #8124")
    s.stop("Node 1.7 is in progress with plan #8124. Ready to implement plan #8124. Want me to go ahead?")
    s.prompt(
        "<command-message>plan-save</command-message>\n<command-name>/plan-save</command-name>\n"
        "<command-args></command-args>"
    )
    s.edit("src/prompts.py")
    handoff = handoff_of(project, "final-answered-0001")
    assert "Want me to go ahead" not in section(handoff, "Open items / next steps")


def test_staging_alone_is_not_work_done(project, code_repo):
    s = Hooked(code_repo, "final-stage-0001")
    s.start()
    s.prompt("Commit the converters")
    s.bash("git add -A && git status -s", "A  opk/convert.py")
    s.bash("git restore --staged .", "")
    s.stop("Staged, then unstaged everything.")
    assert "git add -A" not in section(handoff_of(project, "final-stage-0001"), "Done")


def test_an_answer_that_puts_options_to_the_user_is_no_report(project, code_repo):
    s = Hooked(code_repo, "turn-options-0001")
    s.start()
    s.prompt("Clarifie la spec")
    s.edit("specs/spec.md")
    s.stop(
        "Merci. J'ai intégré le statut public dans la spec.\n\nQuestion 2/5.\n\n| Option | Description |\n"
        "|--------|-------------|\n| A | Statuts libres |\n| B | Liste fermée |\n\n"
        "You can reply with the option letter."
    )
    s.prompt("B")
    s.edit("specs/spec.md")
    s.stop("La spec est complète.")
    done = section(handoff_of(project, "turn-options-0001"), "Done")
    assert "Question 2/5" not in done and "Reported:" not in done
    assert "Final report: La spec est complète." in done


def test_the_view_of_a_long_list_counts_only_real_items():
    from wiki_memory.consolidate.render import handoff_text

    done = "\n".join(f"- `npm install pkg{n}` succeeded." for n in range(25)) + "\n- … 60 more"
    body = f"## Goal\n\nInstall the packages\n\n## Done\n\n{done}\n"
    text = handoff_text({"session_page": "sessions/x.md"}, body, "handoffs/x.md")
    assert "- … 15 more in handoffs/x.md (60 more were not kept)" in text
    assert "- … 16 more" not in text


@pytest.mark.parametrize(
    "command, checks",
    [
        ("pytest -q", True),
        ("uv run pytest tests/", True),
        ("python -m pytest x", True),
        ("make fast-ci", True),
        ("cat pytest.ini", False),
        ("which pytest", False),
        ("python3 -m pytest --version", False),
        ("cargo --version", False),
        ("head -n 20 /opt/homebrew/bin/pytest", False),
        ('python3 -c "import pytest; print(pytest.__version__)"', False),
    ],
)
def test_a_look_or_inline_code_naming_a_checker_is_no_check(command, checks):
    from wiki_memory.consolidate.commands import is_verification

    assert is_verification(command) is checks


def test_codex_runs_its_sandbox_killed_or_the_user_aborted_did_not_pass(tmp_path):
    rollout = codex_rollout(
        tmp_path / "sessions",
        tmp_path,
        [
            ({"command": ["bash", "-lc", "pytest tests/unit"]}, "failed in sandbox: sandbox error: command was killed"),
            ({"command": ["bash", "-lc", "pytest --version"]}, "pytest 7.4.4"),
            ({"command": ["bash", "-lc", "cargo test --manifest-path x/Cargo.toml"]}, "aborted by user after 33.4s"),
        ],
        prompt="Fix the failing unit tests",
        answer="",
        session_id="0199aaaa-0000-7000-8000-000000000002",
    )
    session = build_session(load("codex").read_transcript(rollout))
    runs = judge_runs(session.steps)
    assert [r.ok for r in runs] == [False, True, False]
    assert runs[2].step.interrupted
    # A look at the test runner's version does not do the job the killed run was for.
    assert runs[0].fixed_by is None
    summary = summarize(session)
    assert not any("then `pytest --version` passed" in line for line in summary.done)
    assert any("`pytest tests/unit` failed" in line for line in summary.failed)


def test_commands_inside_a_shell_block_are_read_as_commands():
    from wiki_memory.capture.shell import edited_files

    line = 'if [ -d .erk/ctx/ ]; then git rm -rf .erk/ctx/ && git commit -m "x"; else echo "none"; fi'
    assert edited_files(line, "/repo") == (".erk/ctx",)
    assert command_words("for f in *.py; do ruff check $f; done") == ["ruff", "check", "$f"]


def test_an_answer_that_is_only_a_tool_call_written_out_reports_nothing(project, code_repo):
    # Old Codex models sometimes wrote a tool call's arguments as their answer text.
    s = Hooked(code_repo, "json-answer-1")
    s.prompt("Search for AI platforms")
    s.edit("notes.md")
    s.stop('{"query":"AI platforms defense"}')
    s.prompt("and what did you find?")
    s.bash("mkdir -p _ai_plats", "")
    s.stop('Nothing yet: the search returned no results.\n{"query":"AI platforms"}')
    handoff = handoff_of(project, "json-answer-1")
    assert '"query"' not in handoff
    assert "Final report: Nothing yet: the search returned no results." in section(handoff, "Done")
