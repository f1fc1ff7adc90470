"""The project's AGENTS.md as Codex handed it to the model becomes pages, one a section,
typed by its shape; the harness's skills list in the same block does not."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import consolidate_session, git
from journals import Session

from wiki_memory.capture.codex import read_rollout
from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill import gather
from wiki_memory.consolidate.extract import summarize
from wiki_memory.consolidate.session import build_session
from wiki_memory.memory import Memory, import_transcripts
from wiki_memory.memory.instructions import import_instructions
from wiki_memory.memory.instructions_given import given_instructions
from wiki_memory.pages import parse_page

AGENTS = """# Repository Guidelines

## Build and Test
- `cargo build --release`: the build CI runs.
- `cargo test --workspace`: every crate's tests.

## Style
- Always run `cargo fmt` before a commit; never commit `target/`.
- Prefer `thiserror` for error types.

## Agent
<!--COMPILED PERSONA START-->
<system>
<purpose>This agent is a meticulous veteran who verifies every detail before it answers.</purpose>
<rules>
<rule>Never guess; search the memory with several queries first.</rule>
</rules>
</system>

## Skills
A skill is a set of local instructions stored in a `SKILL.md` file.
- tidy: tidy things (file: {skills}/tidy/SKILL.md)
"""


def rollout(folder: Path, cwd: Path, skills: str) -> Path:
    def wrap(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2026-11-30T09:35:{second:02d}.000Z", "type": kind, "payload": payload}

    given = f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n{AGENTS.format(skills=skills)}</INSTRUCTIONS>"
    sid = "01a22bcf-417c-7f01-aca0-77b109a14192"
    records = [
        wrap("session_meta", {"id": sid, "cwd": str(cwd), "cli_version": "0.171.0"}, 0),
        wrap("response_item", {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": given}]}, 1),
        wrap("event_msg", {"type": "user_message", "message": "what does this crate do?"}, 2),
        wrap("response_item", {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "what does this crate do?"}]}, 2),
        wrap("event_msg", {"type": "task_complete", "last_agent_message": "It parses invoices."}, 3),
    ]  # fmt: skip
    path = folder / "rollout-2026-11-30T09-35-00-01a22bcf-417c-7f01-aca0-77b109a14192.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_the_given_agents_md_is_read_as_instructions_not_as_a_prompt(tmp_path: Path):
    path = rollout(tmp_path / "rollouts", tmp_path / "app", f"{tmp_path}/.codex/skills")
    session = build_session(read_rollout(path))
    assert [p.text for p in session.prompts] == ["what does this crate do?"]
    by_title = {c.title: c for c in given_instructions(gather(summarize(session)))}
    # The skills list is the harness's; a prompt compiled into tags is text for a model.
    assert sorted(by_title) == ["Build and Test", "Style"]
    assert by_title["Build and Test"].type == "procedure"
    assert by_title["Style"].type == "preference"
    assert "`cargo test --workspace`" in by_title["Build and Test"].facts["body"]


def test_skills_kept_in_a_hidden_folder_of_the_project_are_still_the_harness_text(tmp_path: Path):
    app = tmp_path / "app"
    path = rollout(tmp_path / "rollouts", app, f"{app}/.codex/skills")
    titles = [c.title for c in given_instructions(gather(summarize(build_session(read_rollout(path)))))]
    assert "Skills" not in titles and "Style" in titles


def test_imported_session_writes_one_page_a_section_once(code_repo: Path, tmp_path: Path):
    (code_repo / "AGENTS.md").write_text(AGENTS.format(skills="~/.codex/skills"), encoding="utf-8")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "agents")
    project = resolve_project(code_repo)
    path = rollout(tmp_path / "rollouts", code_repo, "~/.codex/skills")
    import_transcripts("codex", [path], project=project)
    import_transcripts("codex", [path], project=project)  # again: nothing new
    page = parse_page((project.wiki / "procedures/build-and-test.md").read_text(encoding="utf-8"), "x")
    assert "`cargo build --release`" in page.body
    assert "file:AGENTS.md" in page.sources
    assert page.meta["imported"][0]["section"] == "Build and Test"
    assert (project.wiki / "preferences/style.md").is_file()
    assert not list(project.wiki.rglob("skills*.md"))
    # `import instructions` of the same file finds the same pages for these sections
    import_instructions(Memory(project), [code_repo / "AGENTS.md"])
    assert not [p.name for p in project.wiki.rglob("*agents-md*.md")]
    assert len(list(project.wiki.rglob("build-and-test*.md"))) == 1


def numbered(text: str) -> str:
    """A file as Claude Code's Read tool returns it (line numbers and an arrow)."""
    return "\n".join(f"{n:6}\u2192{line}" for n, line in enumerate(text.splitlines(), 1))


def test_a_claude_md_read_whole_becomes_pages_and_a_cut_read_does_not(code_repo: Path):
    text = AGENTS.format(skills="~/.codex/skills")
    (code_repo / "CLAUDE.md").write_text(text, encoding="utf-8")
    (code_repo / "docs").mkdir()
    (code_repo / "docs" / "CLAUDE.md").write_text("# Docs\n\n## Deploy\n- `make deploy`\n", encoding="utf-8")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "claude")
    project = resolve_project(code_repo)
    s = Session(project, "s-instr-001").start().prompt("How do I build this?")
    s.tool("Read", f"{code_repo}/CLAUDE.md", numbered(text))
    cut = numbered("# Docs\n\n## Deploy\n- `make deploy`") + "\n[... 2,048 characters omitted ...]\nend"
    s.tool("Read", f"{code_repo}/docs/CLAUDE.md", cut)
    s.stop("Run `cargo build --release`.").end().write()
    consolidate_session(project, "s-instr-001")

    page = parse_page((project.wiki / "procedures/build-and-test.md").read_text(encoding="utf-8"), "x")
    assert "`cargo test --workspace`" in page.body and "\u2192" not in page.body
    assert "file:CLAUDE.md" in page.sources
    blob = git(code_repo, "hash-object", "CLAUDE.md").strip()
    assert {"path": "CLAUDE.md", "blob": blob} in page.meta["anchors"]
    assert not list(project.wiki.rglob("deploy*.md"))  # read cut short: not the file's word


def older_rollout(folder: Path, cwd: Path, given: str) -> Path:
    """A rollout of Codex before 0.5: the project's doc handed inside `<user_instructions>`."""

    def wrap(kind: str, payload: dict, second: int) -> dict:
        return {"timestamp": f"2025-10-14T21:34:{second:02d}.000Z", "type": kind, "payload": payload}

    sid = "0199e4a1-0000-7000-8000-00000000a0b1"
    records = [
        wrap("session_meta", {"id": sid, "cwd": str(cwd), "cli_version": "0.46.0"}, 0),
        wrap("response_item", {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": given}]}, 1),
        wrap("event_msg", {"type": "user_message", "message": "what does this crate do?"}, 2),
        wrap("event_msg", {"type": "task_complete", "last_agent_message": "It parses invoices."}, 3),
    ]  # fmt: skip
    path = folder / f"rollout-2025-10-14T21-34-00-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_an_older_codex_hands_the_project_doc_in_user_instructions(tmp_path: Path):
    app = tmp_path / "app"
    doc = AGENTS.format(skills="~/.codex/skills")
    mine = "# My rules\n\n## Tone\n- Always answer in French.\n"
    for given, titles in (
        (f"<user_instructions>\n\n{doc}\n\n</user_instructions>", ["Build and Test", "Style"]),
        # The user's own file first, then the project's: only the project's is the project's.
        (
            f"<user_instructions>\n\n{mine}\n\n--- project-doc ---\n\n{doc}\n\n</user_instructions>",
            ["Build and Test", "Style"],
        ),
    ):
        session = build_session(read_rollout(older_rollout(tmp_path / "r", app, given)))
        assert [p.text for p in session.prompts] == ["what does this crate do?"]
        candidates = given_instructions(gather(summarize(session)))
        assert sorted(c.title for c in candidates) == titles
        assert all(c.facts.get("file", "AGENTS.md").endswith("AGENTS.md") for c in candidates)


CODEX_SKILLS = """## Skills
A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. Below is the list of skills.
### Available skills
- skill-installer: Install Codex skills. (file: C:/Users/al/GitHub/calc/.codex/skills/.system/skill-installer/SKILL.md)
### How to use skills
- Discovery: The list above is the skills available in this session.
- Trigger rules: If the user names a skill, you must use that skill for that turn.
"""


def test_the_skills_list_codex_appends_is_never_the_projects(tmp_path: Path):
    app = "C:\\\\Users\\\\al\\\\GitHub\\\\calc"
    for doc, titles in ((CODEX_SKILLS, []), (AGENTS.split("## Skills")[0] + CODEX_SKILLS, ["Build and Test", "Style"])):
        given = f"# AGENTS.md instructions for {app}\n\n<INSTRUCTIONS>\n{doc}</INSTRUCTIONS>"
        path = older_rollout(tmp_path / "r", Path("/work/calc"), given)
        candidates = given_instructions(gather(summarize(build_session(read_rollout(path)))))
        assert sorted(c.title for c in candidates) == titles
