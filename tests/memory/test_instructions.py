"""Instruction files in and out: each tool's files imported as pages with their sources and
anchors, re-import changes nothing, an edited source updates its page and drift shows it, a
section removed marks its page stale; the export block leaves every byte around it alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from wiki_memory.cli import main
from wiki_memory.memory import Memory
from wiki_memory.memory.instruction_files import claude_project_folder
from wiki_memory.memory.instructions import import_instructions
from wiki_memory.memory.instructions_export import END, START, export_block


def cli(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


CLAUDE_MD = """\
# Widgets

A web shop backend in Python 3.12, served by FastAPI.

## Build and test

- `make test` runs the whole suite
- `make lint` before each commit

## Code style

- Always use type hints.
- Never commit print statements.

See @docs/database.md for the database.
"""

# As `/init` and people write them; a Cursor rule as Cursor's editor saves it (front matter
# with description, globs, alwaysApply); Copilot's file is plain Markdown.
FILES = {
    "CLAUDE.md": CLAUDE_MD,
    "docs/database.md": "## Database\n\nWe decided to use Postgres instead of SQLite: several writers at once.\n",
    "CLAUDE.local.md": "# My sandbox\n\nMy sandbox is at https://sandbox.example.test/widgets.\n",
    "AGENTS.md": "# AGENTS.md\n\n## Pull requests\n\n- Never push to main; open a pull request.\n",
    ".cursor/rules/typescript.mdc": (
        "---\ndescription: TypeScript conventions\nglobs: src/**/*.ts\nalwaysApply: false\n---\n\n"
        "- Prefer `const` over `let`.\n- Avoid `any`.\n"
    ),
    ".cursorrules": "Always answer in British English.\n",
    ".github/copilot-instructions.md": "## Releases\n\n1. Bump the version.\n2. Run `make release`.\n",
    ".windsurfrules": "- Keep functions under 40 lines.\n",
}


@pytest.fixture
def project(code_repo: Path) -> Path:
    for name, text in FILES.items():
        write(code_repo / name, text)
    git(code_repo, "add", "-A")
    git(code_repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "instructions")
    return code_repo


def pages_of(memory: Memory) -> dict[str, dict]:
    return {row.path: {"title": row.title, "type": row.type} for row in memory.list_pages()[0]}


def test_every_project_file_becomes_pages_of_the_right_type(project: Path) -> None:
    with Memory.at(project) as memory:
        report = import_instructions(memory)
        assert set(report.files) >= {"CLAUDE.md", "docs/database.md", "CLAUDE.local.md", "AGENTS.md",
                                     ".cursor/rules/typescript.mdc", ".cursorrules",
                                     ".github/copilot-instructions.md", ".windsurfrules"}  # fmt: skip
        pages = pages_of(memory)
        by_title = {p["title"]: (path, p["type"]) for path, p in pages.items()}
        assert by_title["Build and test"][1] == "procedure"
        assert by_title["Code style"][1] == "preference"
        assert by_title["Database"][1] == "decision"  # through CLAUDE.md's @docs/database.md
        assert by_title["Widgets"][1] == "fact"  # the text before the first section
        assert by_title["Releases"][1] == "procedure"
        assert by_title["Pull requests"][1] == "preference"
        assert by_title["Typescript"][1] == "preference"
        page = memory.read(by_title["Code style"][0]).page
        # The user's heading and wording, their file as source and anchor.
        assert "- Always use type hints.\n- Never commit print statements." in page.body
        assert page.sources == ("file:CLAUDE.md",)
        blob = git(project, "hash-object", "CLAUDE.md").strip()
        assert page.meta["anchors"] == [{"path": "CLAUDE.md", "blob": blob}]
    wiki = memory.wiki
    assert git(wiki, "log", "--format=%an %s", "-1").startswith("Test Person import: ")
    git(wiki, "fsck", "--strict")


def test_reimport_changes_nothing_then_an_edit_updates_and_drift_shows_it(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        head = git(memory.wiki, "rev-parse", "HEAD")
        again = import_instructions(memory)
        assert again.commit is None and {p.action for p in again.pages} == {"unchanged"}
        assert git(memory.wiki, "rev-parse", "HEAD") == head

        write(project / "CLAUDE.md", CLAUDE_MD.replace("- Never commit print", "- Use ruff.\n- Never commit print"))
        path = memory.find("Code style")
        assert memory.drift(path), "the edited CLAUDE.md is drift on the page imported from it"
        third = import_instructions(memory)
        changed = {p.path: p.action for p in third.pages if p.action != "unchanged"}
        # Every section of CLAUDE.md is anchored to it, but only the edited one changed.
        assert changed == {path: "updated"}
        page = memory.read(path).page
        assert "- Use ruff." in page.body
        assert not memory.drift(path)
        assert git(memory.wiki, "log", "--format=%s", "--", path).count("\n") == 2


def test_a_section_removed_from_its_file_marks_its_page_stale(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        write(project / "AGENTS.md", "# AGENTS.md\n\n## Checks\n\n- Always run `make check`.\n")
        report = import_instructions(memory)
        actions = {p.title: p.action for p in report.pages}
        assert actions["Pull requests"] == "stale" and actions["Checks"] == "created"
        page = memory.read("Pull requests").page
        assert page.status == "stale" and page.meta["stale_reason"] == "its section is gone from AGENTS.md"
        write(project / "AGENTS.md", FILES["AGENTS.md"])
        back = {p.title: p.action for p in import_instructions(memory).pages}
        assert back["Pull requests"] == "updated" and back["Checks"] == "stale"
        page = memory.read("Pull requests").page
        assert page.status == "active" and "stale_reason" not in page.meta


def test_dry_run_writes_nothing(project: Path) -> None:
    result = cli("--project", str(project), "import", "instructions", "--dry-run", "--json")
    report = json.loads(result.output)
    assert report["dry_run"] and any(p["title"] == "Code style" for p in report["pages"])
    with Memory.at(project) as memory:
        assert not memory.exists or not memory.list_pages()[0]


def test_claude_code_auto_memory_of_the_project(code_repo: Path, env_setup: Path) -> None:
    # ~/.claude/projects/<the project's path, every non-alphanumeric a dash>/memory/, as
    # Claude Code writes it: MEMORY.md indexes topic files with name/description/type.
    folder = Path.home() / ".claude" / "projects" / claude_project_folder(code_repo) / "memory"
    assert claude_project_folder(Path("/home/u/my.app")) == "-home-u-my-app"
    write(folder / "MEMORY.md", "- [Use pnpm](feedback_pnpm.md) — the user wants pnpm, never npm\n")
    write(folder / "feedback_pnpm.md",
          "---\nname: Use pnpm\ndescription: the user wants pnpm\ntype: feedback\n---\n\n"
          "Use pnpm, never npm: the lockfile is pnpm-lock.yaml.\n")  # fmt: skip
    write(folder / "project_deploys.md",
          "---\nname: Deploys freeze on Fridays\ndescription: no deploys on Fridays\ntype: project\n---\n\n"
          "Nothing is deployed on Fridays (release policy).\n")  # fmt: skip
    with Memory.at(code_repo) as memory:
        report = import_instructions(memory)
        titles = {p.title: p.type for p in report.pages}
        assert titles == {"Use pnpm": "preference", "Deploys freeze on Fridays": "fact"}
        page = memory.read("Use pnpm").page
        assert page.sources == (f"file:~/.claude/projects/{claude_project_folder(code_repo)}/memory/feedback_pnpm.md",)
        assert "anchors" not in page.meta  # outside the code repository: re-import is what sees changes


def test_cline_memory_bank_serena_and_basic_memory_folders(code_repo: Path, tmp_path: Path) -> None:
    bank = code_repo / "memory-bank"
    write(bank / "projectbrief.md", "# Project Brief\n\nWidgets sells widgets online.\n")
    write(bank / "systemPatterns.md",
          "# System Patterns\n\n## Queue\n\nOrders go through a Redis queue, chosen for retries.\n")  # fmt: skip
    write(code_repo / ".serena" / "memories" / "suggested_commands.md",
          "# Suggested commands\n\n- `uv run pytest` for the tests\n- `uv run ruff check .`\n")  # fmt: skip
    notes = tmp_path / "basic-memory" / "widgets"
    write(notes / "coffee-notes.md",
          "---\ntitle: Coffee Brewing Methods\ntype: note\npermalink: coffee-brewing-methods\ntags:\n- coffee\n---\n\n"
          "# Coffee Brewing Methods\n\n## Observations\n- [method] Pour over gives a clean cup #brewing\n\n"
          "## Relations\n- relates_to [[Coffee Bean Origins]]\n")  # fmt: skip
    with Memory.at(code_repo) as memory:
        report = import_instructions(memory)
        types = {p.title: p.type for p in report.pages}
        assert types["Project Brief"] == "fact"
        assert types["Queue"] == "decision"  # Cline's systemPatterns.md says what it holds
        assert types["Suggested commands"] == "procedure"
        folder = import_instructions(memory, [notes])
        assert [(p.title, p.action) for p in folder.pages] == [("Coffee Brewing Methods", "created")]
        body = memory.read("Coffee Brewing Methods").page.body
        assert "- [method] Pour over gives a clean cup #brewing" in body and "[[Coffee Bean Origins]]" in body


def test_our_own_blocks_are_not_imported_back(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        export_block(memory, "agents-md")
        report = import_instructions(memory)
        assert {p.action for p in report.pages} == {"unchanged"}


USER_TEXT_BEFORE = "# AGENTS.md\n\nHand-written intro, with trailing spaces   \r\n\n"
USER_TEXT_AFTER = "\n## After the block\n\nMore of the user's words, no final newline"


def test_export_changes_only_the_bytes_between_its_markers(code_repo: Path) -> None:
    with Memory.at(code_repo) as memory:
        memory.write("Use pnpm", "Always use pnpm, never npm.", "preference")
        memory.write("Run the tests", "```sh\nmake test\n```", "procedure")
        memory.write("Session notes", "Not durable.", "note")
        agents = code_repo / "AGENTS.md"
        agents.write_bytes((USER_TEXT_BEFORE + f"{START}\nold\n{END}" + USER_TEXT_AFTER).encode())
        result = export_block(memory, "agents-md")
        assert result.changed and set(result.pages) == {"preferences/use-pnpm.md", "procedures/run-the-tests.md"}
        data = agents.read_bytes().decode()
        before, rest = data.split(START, 1)
        block, after = rest.split(END, 1)
        assert before == USER_TEXT_BEFORE and after == USER_TEXT_AFTER
        assert "**Use pnpm**: Always use pnpm, never npm." in block and "`make test`" in block
        assert "Session notes" not in block
        assert not export_block(memory, "agents-md", check=True).changed
        memory.write("Use uv", "Prefer uv over pip.", "preference")
        assert export_block(memory, "agents-md", check=True).changed
        assert agents.read_bytes().decode() == data, "--check writes nothing"
        memory.mark("Use pnpm", "wrong")
        export_block(memory, "agents-md")
        assert "Use pnpm" not in agents.read_text() and "Use uv" in agents.read_text()


def test_export_check_exit_code_and_budget(code_repo: Path) -> None:
    with Memory.at(code_repo) as memory:
        for i in range(40):
            memory.write(f"Rule number {i}", f"Always follow rule {i} " + "carefully " * 20, "preference")
    assert cli("--project", str(code_repo), "export", "claude-md", "--check", ok=False).exit_code == 1
    cli("--project", str(code_repo), "export", "claude-md", "--budget", "1500")
    text = (code_repo / "CLAUDE.md").read_text()
    assert len(text) <= 1501 and text.count("**Rule number") >= 3
    assert cli("--project", str(code_repo), "export", "claude-md", "--check", "--budget", "1500").exit_code == 0
    cli("--project", str(code_repo), "export", "cursor-rules")
    mdc = (code_repo / ".cursor" / "rules" / "wiki-memory.mdc").read_text()
    assert mdc.startswith("---\ndescription: ") and "alwaysApply: true" in mdc


def test_export_leaves_out_pages_imported_from_that_file(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        result = export_block(memory, "claude-md")
        block = (project / "CLAUDE.md").read_text().split(START, 1)[1]
        assert "Code style" not in block, "CLAUDE.md says it already"
        assert "Pull requests" in block  # from AGENTS.md
        assert (project / "CLAUDE.md").read_text().startswith(CLAUDE_MD)
        assert result.changed


def test_export_targets_are_refreshed_after_a_consolidation(code_repo: Path) -> None:
    from journals import Session, set_config

    from wiki_memory.config import resolve_project

    set_config('[export]\ntargets = ["agents-md", "claude-md"]\n')
    agents = code_repo / "AGENTS.md"
    agents.write_text(f"Mine.\n\n{START}\n{END}\n\nAlso mine.\n")
    project = resolve_project(code_repo)
    Session(project, "s-export-01").start().prompt("From now on, use pnpm instead of npm.").stop("Ok.").end().write()
    with Memory(project) as memory:
        memory.consolidate("s-export-01", llm=False)
    text = agents.read_text()
    assert text.startswith("Mine.\n\n") and text.endswith("\n\nAlso mine.\n")
    assert "use pnpm instead of npm" in text.split(START)[1].lower()
    assert not (code_repo / "CLAUDE.md").exists(), "a file without the block is not opted in"


@pytest.mark.parametrize(
    ("heading", "text", "kind"),
    [
        ("Build and test", "- `cargo test -p core` for one crate\n- `just fmt` after each change", "procedure"),
        ("Release", "1. Tag the commit.\n2. Push the tag.\n3. Wait for CI to publish.", "procedure"),
        (
            "Tests",
            "- Prefer whole-object asserts.\n- Avoid mutating the environment.\n- Use the shared helpers.\n"
            "- Never sleep in a test.\n- Run `cargo test -p x` first.",
            "preference",
        ),
        (
            "Development practices",
            "- Always add a changelog entry.\n- Never add a v1 endpoint.\n- Keep ids strings.\n"
            "- Regenerate the schema: `just schema`",
            "preference",
        ),
        ("Storage", "We decided on SQLite over Postgres: one file, no server to run.", "decision"),
        ("Layout", "The API lives in `server/`, the web client in `web/`.", "fact"),
    ],
)
def test_a_sections_type_comes_from_its_shape(heading: str, text: str, kind: str) -> None:
    from wiki_memory.memory.instruction_files import classify

    assert classify(heading, text) == kind


def test_a_secret_in_an_instruction_file_is_redacted_and_said(code_repo: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    write(code_repo / "CLAUDE.md", f"## Deploy\n\n- Run `make deploy` with GITHUB_TOKEN={token}\n")
    result = cli("--project", str(code_repo), "import", "instructions")
    assert "github" in result.output
    with Memory.at(code_repo) as memory:
        body = memory.read("Deploy").page.body
    assert token not in body and "[REDACTED:" in body


def test_imported_pages_are_searchable_at_once(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        hits = memory.search("type hints print statements", mode="fts").results
        assert hits and hits[0].path == memory.find("Code style")


def test_a_models_proposal_is_exported_once_marked_helpful(code_repo: Path) -> None:
    from wiki_memory.pages import Page
    from wiki_memory.store import Author

    with Memory.at(code_repo) as memory:
        memory.write("Use pnpm", "Always use pnpm.", "preference")
        page = Page.new("Cache the wheels", "procedure", "Run `pip download -d wheels .` once.",
                        extra={"distilled": "llm", "evidence": 1})  # fmt: skip
        memory.store().write(page, Author.agent("claude-code"))
        assert "Cache the wheels" not in export_block(memory, "agents-md").text
        memory.mark("Cache the wheels", "helpful")
        assert "Cache the wheels" in export_block(memory, "agents-md").text


def test_a_persons_mark_survives_a_changed_source(project: Path) -> None:
    with Memory.at(project) as memory:
        import_instructions(memory)
        memory.mark("Code style", "wrong", reason="we print on purpose")
        write(project / "CLAUDE.md", CLAUDE_MD.replace("type hints", "full type hints"))
        import_instructions(memory)
        page = memory.read("Code style").page
        assert "full type hints" in page.body and page.status == "wrong"
