"""Preferences and decisions in the user's own language, kept in the user's words; never
from a persona prompt or a slash command's text. Crafted journals through the memory library."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.pages import parse_page

PERSONA = """NEVER break character until given an exit command.
You are Winston, the Architect. You ALWAYS follow the workflow below.

## Activation
- Always greet the user with your name and role
- STAY in character at all times
- Never write code before the design is approved
- Offer the numbered list of commands
- Wait for the user's choice
"""

EXPANSION = """## Your task

Review the staged changes. You MUST NOT push.
- Always use conventional commit messages for this repository
- Never amend commits that were pushed to origin
- Report the commit id
"""


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "app.py").write_text("print('hi')\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def statements(project) -> dict[str, dict]:
    out = {}
    for folder in ("preferences", "decisions"):
        for path in sorted((project.wiki / folder).glob("*.md")) if (project.wiki / folder).exists() else []:
            rel = str(path.relative_to(project.wiki))
            out[rel] = dict(parse_page(path.read_text(encoding="utf-8"), rel).meta)
    return out


def test_a_french_and_a_japanese_preference_in_the_users_words(project):
    s = Session(project, "s-lang-0001").start()
    s.prompt("Ajoute l'export CSV. Utilise toujours pnpm, jamais npm. Merci !")
    s.prompt("テストを追加してください。テストは毎回 `make test` で実行してください。")
    s.prompt("On utilise Postgres au lieu de SQLite.")
    # One-off requests and complaints are no rules, in any language.
    s.prompt("Es funktioniert immer noch nicht mit pnpm. ここを変更しないでください。不要担心\uff0c这个问题我来处理。")
    s.prompt("いつもありがとうございます。Siempre falla.")
    s.edit("app.py").stop("Fait.").end().write()
    consolidate_session(project, "s-lang-0001")
    found = statements(project)
    by_statement = {meta["statement"]: (path, meta) for path, meta in found.items()}
    assert set(by_statement) == {
        "Utilise toujours pnpm, jamais npm",
        "テストは毎回 `make test` で実行してください。",
        "On utilise Postgres au lieu de SQLite",
    }, found
    path, meta = by_statement["テストは毎回 `make test` で実行してください。"]
    assert path.startswith("preferences/") and meta["type"] == "preference"
    path, meta = by_statement["On utilise Postgres au lieu de SQLite"]
    assert path.startswith("decisions/") and meta["names"] == ["postgres"] and meta["negated"] == ["sqlite"]
    body = (project.wiki / by_statement["Utilise toujours pnpm, jamais npm"][0]).read_text(encoding="utf-8")
    assert "> Utilise toujours pnpm, jamais npm" in body


def test_no_statement_from_a_persona_prompt_or_a_slash_commands_expansion(project):
    s = Session(project, "s-persona-01").start()
    s.prompt(PERSONA)
    s.prompt("<command-name>/commit</command-name>\n<command-args></command-args>")
    s._obs("prompt", text=EXPANSION, after=0)  # written in the same instant as the command's record
    s.prompt("/review always keep the changelog in docs/CHANGES.md")
    s.edit("app.py").stop("Done.").end().write()
    consolidate_session(project, "s-persona-01")
    # Only the user's own words count: the slash command's arguments.
    assert [m["statement"] for m in statements(project).values()] == ["Always keep the changelog in docs/CHANGES.md"]
