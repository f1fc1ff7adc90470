"""Distillation of a session recorded through the real hook entry point (`wiki-memory hook
claude-code EVENT`, as Claude Code makes the calls): a recovery by another command becomes a
gotcha, a manifest the agent read becomes an anchored fact page, a persona prompt no preference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from hooked import Hooked

from wiki_memory.config import resolve_project
from wiki_memory.pages import parse_page

PACKAGE = {"name": "loader", "engines": {"node": ">=20"}, "scripts": {"start": "node server.js --port 4100"}}


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
    (code_repo / "scripts").mkdir()
    (code_repo / "scripts" / "load.py").write_text("print('loaded')\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def pages(project, folder: str) -> dict[str, dict]:
    found = {}
    for path in sorted((project.wiki / folder).glob("*.md")) if (project.wiki / folder).exists() else []:
        rel = str(path.relative_to(project.wiki))
        page = parse_page(path.read_text(encoding="utf-8"), rel)
        found[rel] = {**page.meta, "body": page.body}
    return found


def test_a_hooked_session_yields_a_gotcha_and_a_fact_page_and_no_persona_preference(project, code_repo):
    s = Hooked(code_repo, "dist-hooked-0001")
    s.start()
    s.prompt("NEVER break character until given an exit command.\nYou are Bob, the data engineer. STAY in role.")
    s.prompt("Run the data import script and tell me how many rows it loads")
    full = str(code_repo / "package.json")
    text = (code_repo / "package.json").read_text()
    s.tool(
        "Read",
        {"file_path": full},
        {"type": "text", "file": {"filePath": full, "content": text, "numLines": text.count("\n"), "startLine": 1}},
    )
    s.bash("python scripts/load.py", exit_code=127, stderr="bash: python: command not found")
    s.bash("python3 scripts/load.py", "loaded 120 rows")
    s.stop("The script loads 120 rows; `python` is not installed here, `python3` is.")
    consolidate_session(project, "dist-hooked-0001")

    [gotcha] = pages(project, "gotchas").values()
    assert gotcha["signature"] == "bash: python: command not found"
    assert gotcha["fix"]["instead"] == "python3 scripts/load.py"
    facts = pages(project, "facts")
    assert list(facts) == ["facts/facts-from-package-json.md"]
    fact = facts["facts/facts-from-package-json.md"]
    assert fact["anchors"] == [{"path": "package.json", "blob": git(code_repo, "hash-object", "package.json").strip()}]
    assert (
        "- `npm run start`: `node server.js --port 4100`" in fact["body"] and "- 4100 (script `start`)" in fact["body"]
    )
    assert pages(project, "preferences") == {}
