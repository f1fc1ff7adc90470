"""The Markdown kept for tools and agents in the project's hidden folders (a spec kit's
constitution, an agent's prompts): one `fact` page for the project, each file with the title
it gives itself, anchored to the files, updated in place by a later session, flagged by drift
when one changes. Machinery (`.venv`), a task's own plan and anything but Markdown stay out."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.tool_notes import home_folder, note_path, title_of
from wiki_memory.memory import Memory
from wiki_memory.pages import parse_page

CONSTITUTION = (
    "<!--\nSync Impact Report\n- Version change: 1.0.0 -> 1.1.0\n-->\n# Shop Constitution\n\n"
    "## Core Principles\n\n### I. Tests first\n"
)
PAGE = "facts/notes-for-tools-and-agents-in-hidden-folders.md"


def numbered(text: str) -> str:
    return "\n".join(f"{n:6}\u2192{line}" for n, line in enumerate(text.splitlines(), 1))


@pytest.fixture
def project(code_repo: Path):
    for path, text in {
        ".specify/memory/constitution.md": CONSTITUTION,
        ".codex/prompts/specify.md": "---\ndescription: Create a spec\n---\n# Specify\n\nRun the script.\n",
        ".kiro/specs/cutover/design.md": "# Strategy cutover\n",
        ".venv/lib/README.md": "# Not ours\n",
        ".impl/plan.md": "# Plan: add a print statement\n",
        ".specify/scripts/bash/new-feature.sh": "#!/bin/sh\n",
    }.items():
        (code_repo / path).parent.mkdir(parents=True, exist_ok=True)
        (code_repo / path).write_text(text)
    git(code_repo, "add", "-f", ".")
    git(code_repo, "commit", "-qm", "tools")
    return resolve_project(code_repo)


@pytest.mark.parametrize(
    "path, kept",
    [
        (".specify/memory/constitution.md", True),
        (".cursor/rules/style.mdc", True),
        (".github/copilot-instructions.md", True),
        ("docs/guide.md", False),  # not hidden
        (".venv/lib/README.md", False),  # machinery
        (".git/description.md", False),
        (".specify/scripts/bash/new-feature.sh", False),  # not Markdown
        ("AGENTS.md", False),
    ],
)
def test_which_files_are_notes_for_tools(path: str, kept: bool):
    assert note_path(path) is kept


def test_a_files_title_is_its_first_line_past_front_matter_or_a_comment():
    assert title_of(CONSTITUTION) == "Shop Constitution"
    assert title_of(numbered("---\ndescription: x\n---\n# Specify\n")) == "Specify"
    # Read from its middle: whatever line opens the output is no title, nor a later heading.
    assert title_of("### I. Tests first\n\nWrite the test.\n# Governance\n") == ""
    assert title_of("## Core Principles\n") == ""


def test_notes_read_and_changed_are_one_anchored_page_updated_in_place_and_flagged_on_change(project):
    root = project.root
    s = Session(project, "s-notes-001", agent="codex").start().prompt("Amend the constitution")
    s.bash("sed -n '1,200p' .specify/memory/constitution.md", CONSTITUTION)
    s.tool("Read", f"{root}/.codex/prompts/specify.md", numbered((root / ".codex/prompts/specify.md").read_text()))
    s.tool("Read", f"{root}/.venv/lib/README.md", numbered("# Not ours\n"))
    s.tool("Read", f"{root}/.impl/plan.md", numbered("# Plan: add a print statement\n"))
    s.bash("cat .specify/scripts/bash/new-feature.sh", "#!/bin/sh\n")
    # Written through the shell, beside another prompt: a prompt named plan.md, not a task's plan.
    s.bash("cat > .codex/prompts/plan.md <<'EOF'\n# Plan\nMake the plan.\nEOF", "")
    s.stop("Amended.").end().write()
    consolidate_session(project, "s-notes-001")

    page = parse_page((project.wiki / PAGE).read_text(encoding="utf-8"), PAGE)
    assert page.meta["type"] == "fact" and page.meta["environment"] == "notes"
    assert sorted(page.meta["tools"]) == [
        ".codex/prompts/plan.md",
        ".codex/prompts/specify.md",
        ".specify/memory/constitution.md",
    ]
    assert page.meta["tools"][".codex/prompts/plan.md"]["how"] == "changed"
    assert "## `.specify/memory/`" in page.body
    assert "- `.specify/memory/constitution.md`: “Shop Constitution” (read " in page.body
    assert "- `.codex/prompts/specify.md`: “Specify” (read " in page.body
    assert ".venv" not in page.body and ".impl" not in page.body and "new-feature.sh" not in page.body
    blob = git(root, "hash-object", ".specify/memory/constitution.md").strip()
    assert {"path": ".specify/memory/constitution.md", "blob": blob} in page.meta["anchors"]

    # The constitution changes: drift flags the page.
    (root / ".specify/memory/constitution.md").write_text(CONSTITUTION.replace("Shop", "Store"))
    with Memory(project) as memory:
        assert [(d.path, d.reason) for d in memory.drift(PAGE)] == [(".specify/memory/constitution.md", "changed")]

    # A later session reads another note: the same page, with both.
    later = Session(project, "s-notes-002", agent="codex", start="2026-12-02T08:00:00").start().prompt("Plan it")
    later.bash("cat .kiro/specs/cutover/design.md", "# Strategy cutover\n")
    later.stop("Read the design.").end().write()
    consolidate_session(project, "s-notes-002")
    assert [p.name for p in (project.wiki / "facts").glob("notes-*.md")] == [Path(PAGE).name]
    page = parse_page((project.wiki / PAGE).read_text(encoding="utf-8"), PAGE)
    assert sorted(page.meta["tools"]) == [
        ".codex/prompts/plan.md",
        ".codex/prompts/specify.md",
        ".kiro/specs/cutover/design.md",
        ".specify/memory/constitution.md",
    ]
    assert "“Strategy cutover”" in page.body and "“Shop Constitution”" in page.body


@pytest.mark.parametrize(
    "path, home",
    [("/Users/ann", True), ("/home/ann/", True), ("C:\\Users\\ann", True), ("/root", True),
     ("/Users/ann/shop", False), ("/srv/app", False), ("", False)],
)  # fmt: skip
def test_a_session_run_in_a_home_folder_has_no_project_notes(path: str, home: bool):
    """There `.codex/skills/x/SKILL.md` is the user's own setting, not a project's note."""
    assert home_folder(path) is home


def test_no_notes_page_for_a_session_run_in_the_home_folder(project, monkeypatch):
    """The project's root is this machine's `~`: its hidden folders are the user's settings."""
    monkeypatch.setenv("HOME", str(project.root))
    s = Session(project, "s-notes-home", agent="codex").start().prompt("Apply for the grant")
    s.bash("sed -n '1,200p' .specify/memory/constitution.md", CONSTITUTION)
    s.stop("Read it.").end().write()
    consolidate_session(project, "s-notes-home")
    assert not (project.wiki / PAGE).exists()
    # The same session in a project folder writes the page.
    monkeypatch.setenv("HOME", str(project.root.parent))
    t = Session(project, "s-notes-proj", agent="codex").start().prompt("Apply for the grant")
    t.bash("sed -n '1,200p' .specify/memory/constitution.md", CONSTITUTION)
    t.stop("Read it.").end().write()
    consolidate_session(project, "s-notes-proj")
    assert (project.wiki / PAGE).exists()
