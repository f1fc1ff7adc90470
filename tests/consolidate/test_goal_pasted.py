"""Pasted material is not the user's goal: a terminal screen or a long document pasted into a
turn is named, and the user's own sentence around it is the goal."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from hooked import Hooked

from wiki_memory.capture.prompts import pasted
from wiki_memory.config import resolve_project

# A Claude Code screen as a user copies it from the terminal: banner, prompt, turn markers.
SCREEN = """ ▐▛███▜▌   Claude Code v2.0.14
▝▜█████▛▘  Sonnet 4.5 · Claude Pro
  ▘▘ ▝▝    /home/me/shop

> fix the failing checkout test

● I'll run the tests first.

● Bash(pytest tests/test_checkout.py)
  ⎿  FAILED tests/test_checkout.py::test_total - AssertionError: 41 != 42
     1 failed in 0.31s
"""

# A Gemini CLI screen: answers marked with ✦, tool calls drawn in boxes.
BOXED = """✦ I will check the boot configuration first.

╭──────────────────────────────────────────────╮
│ ✓  Shell bcdedit /enum firmware               │
│                                               │
│ Firmware Boot Manager                         │
╰──────────────────────────────────────────────╯
✦ The shim is missing from the EFI partition.
"""

# An earlier session's summary, as a user pastes it to carry on.
SUMMARY = (
    "## Summary\n\n"
    + "\n".join(f"- Installed and configured package number {i} for the shop service" for i in range(24))
    + "\n\n## Next Steps\n\n1. Run the database migrations\n2. Deploy the service to staging\n"
)


@pytest.fixture
def project(code_repo: Path):
    git(code_repo, "checkout", "-q", "-b", "main")
    return resolve_project(code_repo)


def goal_section(project, sid: str) -> str:
    outcome = consolidate_session(project, sid)
    assert outcome.status == "committed", outcome
    text = (project.wiki / outcome.pages[1]).read_text(encoding="utf-8")
    return text.split("## Goal\n", 1)[1].split("\n## ", 1)[0].strip()


def test_the_users_sentence_after_a_pasted_screen_is_the_goal(project, code_repo):
    s = Hooked(code_repo, "paste-after-0001")
    s.start()
    s.prompt(SCREEN + "\nthe agent above crashed; finish the fix it started")
    s.edit("shop/checkout.py")
    s.bash("pytest tests/test_checkout.py", "1 passed")
    s.stop("Fixed the total; the test passes.")
    goal = goal_section(project, "paste-after-0001")
    assert goal.startswith("the agent above crashed; finish the fix it started (with a pasted terminal screen")
    # What was typed at the pasted screen's prompt names it; nothing else of the paste is handed on.
    assert "its prompt: “fix the failing checkout test”" in goal
    for pasted_text in ("▐▛███▜▌", "Claude Code v2.0.14", "● Bash", "⎿", "1 failed in 0.31s"):
        assert pasted_text not in goal


def test_the_users_sentence_before_a_pasted_screen_is_the_goal(project, code_repo):
    s = Hooked(code_repo, "paste-before-0001")
    s.start()
    s.prompt("my boot manager stopped loading after I enabled Secure Boot, please fix:\n\n" + BOXED)
    s.bash("bcdedit /enum firmware", "Firmware Boot Manager")
    s.stop("Copied the shim into place.")
    goal = goal_section(project, "paste-before-0001")
    assert goal == (
        "my boot manager stopped loading after I enabled Secure Boot, please fix: (with a pasted terminal screen)"
    )


def test_a_turn_that_is_only_a_paste_is_named_never_quoted(project, code_repo):
    s = Hooked(code_repo, "paste-only-0001")
    s.start()
    s.prompt(SCREEN)
    s.bash("pytest tests/test_checkout.py", "1 failed")
    s.stop("The total is off by one.")
    goal = goal_section(project, "paste-only-0001")
    assert goal == "Pasted a terminal screen (its prompt: “fix the failing checkout test”)"


def test_a_pasted_summary_is_named_and_the_request_before_it_is_the_goal(project, code_repo):
    s = Hooked(code_repo, "paste-doc-0001")
    s.start()
    s.prompt("carry on from where yesterday's session stopped:\n\n" + SUMMARY)
    s.bash("make migrate", "migrated")
    s.stop("Ran the migrations.")
    goal = goal_section(project, "paste-doc-0001")
    assert goal == (
        "carry on from where yesterday's session stopped: (with a pasted document of 28 lines headed “Summary”)"
    )
    # A later turn that is only a paste is a later request by its name, not its text.
    t = Hooked(code_repo, "paste-doc-0002")
    t.start()
    t.prompt("deploy the shop service")
    t.bash("make deploy", "deployed")
    t.stop("Deployed.")
    t.prompt(SUMMARY)
    t.stop("Noted.")
    later = goal_section(project, "paste-doc-0002")
    assert "Pasted a document of 28 lines headed “Summary”" in later
    assert "Installed and configured" not in later


def test_a_request_the_user_laid_out_is_whole_not_a_paste():
    request = (
        "Explore this repository thoroughly to understand:\n"
        "1. The overall codebase structure and organization\n"
        "2. Python scripts in the scripts/ directory - what they do and their quality\n"
        "3. GitHub Actions workflows and automation\n"
        "4. Documentation completeness and quality\n"
        "5. Security measures in place\n\n"
        "I need a comprehensive analysis to propose improvements."
    )
    assert pasted(request).own == request and pasted(request).what == ""
    # Arrows and ticks people type as bullets do not make a terminal screen.
    typed = "plan for today:\n→ fix the login\n→ write the tests\n✓ deploy"
    assert pasted(typed).what == ""
    assert pasted("• fix the login\n• write the tests\n• deploy to staging").what == ""
    # A long request in prose, however long, is the user's.
    prose = "\n".join(f"Line {i}: the checkout total must include the tax of the shipping country." for i in range(40))
    assert pasted(prose).what == ""


def test_a_pasted_screen_is_told_by_its_shape_in_any_agents_glyphs():
    codex = (
        "\u203a run the tests\n\n• Ran pytest -q\n  └ 3 failed, 12 passed\n\n"
        "• Three tests fail in test_cart.py.\n\nwhy?"
    )
    split = pasted(codex)
    assert split.own == "why?"
    assert split.what == "terminal screen (its prompt: “run the tests”)"


@pytest.mark.parametrize(
    "prompt",
    [
        "# Context from my IDE setup:\n\n## Active file: src/form.jsx\n\n## Open tabs:\n- form.jsx: src/form.jsx\n\n"
        "## My request for Codex:\nSend the contact form's messages by email through Netlify",
        "## My request for Codex:\nSend the contact form's messages by email through Netlify",
    ],
)
def test_the_codex_ide_extensions_frame_is_not_the_users_words(prompt: str, tmp_path: Path):
    """The extension puts what the editor showed (the active file, open tabs) and a heading
    before the user's words: the goal is the words."""
    from journals import codex_rollout

    from wiki_memory.capture.codex import read_rollout
    from wiki_memory.consolidate.extract import summarize
    from wiki_memory.consolidate.session import build_session

    path = codex_rollout(
        tmp_path, tmp_path, [], prompt=prompt, answer="Done.", session_id="019a0000-0000-0000-0000-00000000ide1"
    )
    [observed] = [o for o in read_rollout(path) if o.kind == "prompt"]
    assert observed.text == "Send the contact form's messages by email through Netlify"
    assert summarize(build_session(read_rollout(path))).goal == observed.text


def test_a_command_the_ide_extension_sent_is_a_request(tmp_path: Path):
    """Framed by the extension, `/specify --help` went to the model: not a CLI command."""
    from journals import codex_rollout

    from wiki_memory.capture.codex import read_rollout

    prompt = "# Context from my IDE setup:\n\n## Active file: pixi.toml\n\n## My request for Codex:\n/specify --help\n"
    path = codex_rollout(tmp_path, tmp_path, [], prompt=prompt, answer="Here is the help.", session_id="019a-ide2")
    assert [o.text for o in read_rollout(path) if o.kind == "prompt"] == ["/specify --help"]
