"""Recall reads the index only through `index.readonly`, which knows the index's schema
version: an index of another version (one an upgrade has not rebuilt yet) is not read at all.
The hooks hand nothing for it and say why in the log; with the version right, the same prompt
and the same command get their page, so the refusal is the version's doing."""

from __future__ import annotations

import io
import json
import os
import sqlite3
from pathlib import Path

import pytest

from wiki_memory.config import Project, home, resolve_project
from wiki_memory.hook.main import main as hook_main
from wiki_memory.index import readonly
from wiki_memory.index.schema import SCHEMA_VERSION
from wiki_memory.pages import Page
from wiki_memory.recall import find, moment_table
from wiki_memory.store import Author

PAGE = Page.new(
    "Vite build runs out of memory",
    "gotcha",
    "**Symptom**: `npm run build` dies with `FATAL ERROR: Reached heap limit Allocation failed - "
    "JavaScript heap out of memory`.\n\n**Fix**: set `NODE_OPTIONS=--max-old-space-size=4096` before the vite build.",
)
PROMPT = "the vite build dies with a javascript heap out of memory error"


@pytest.fixture
def project(code_repo: Path) -> Project:
    from wiki_memory.memory import Memory

    project = resolve_project(code_repo)
    with Memory(project) as memory:
        memory.store(create=True).write_many([PAGE], Author.agent("test"))
        memory.reindex(embed=False)
    return project


def hook(event: str, payload: dict) -> str:
    """The hook run in this process as Claude Code runs it; the context it hands over."""
    out = io.BytesIO()
    env = {**os.environ, "WIKI_MEMORY_RECALL": "words"}
    code = hook_main(["claude-code", event], stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out, env=env)
    assert code == 0
    text = out.getvalue().decode()
    return json.loads(text)["hookSpecificOutput"]["additionalContext"] if text.strip() else ""


def ask(code_repo: Path, session: str) -> str:
    return hook("UserPromptSubmit", {"session_id": session, "cwd": str(code_repo), "prompt": PROMPT})


def before(code_repo: Path, session: str) -> str:
    payload = {"session_id": session, "cwd": str(code_repo), "tool_name": "Bash"}
    return hook("PreToolUse", {**payload, "tool_input": {"command": "npm run build"}})


def set_version(project: Project, version: str) -> None:
    with sqlite3.connect(project.index_path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (version,))
    conn.close()


def logged(text: str) -> list[str]:
    folder = home() / "logs"
    lines = [line for f in folder.glob("*.log") for line in f.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if text in line]


def test_the_index_schema_version_has_one_owner():
    assert SCHEMA_VERSION == readonly.SCHEMA_VERSION


def test_recall_reads_nothing_from_an_index_of_another_schema_version(project, code_repo):
    assert "vite-build-runs-out-of-memory.md" in ask(code_repo, "s1")
    assert "vite-build-runs-out-of-memory.md" in before(code_repo, "s1")

    older = str(int(SCHEMA_VERSION) - 1)
    set_version(project, older)
    with pytest.raises(readonly.IndexSchemaMismatch):
        find.connect(project.index_path)
    with pytest.raises(readonly.IndexSchemaMismatch):
        moment_table.table(project)  # the index changed since the table was written: it is read again

    assert ask(code_repo, "s2") == ""
    assert before(code_repo, "s2") == ""
    said = logged(f"schema version {older}, this wiki-memory reads {SCHEMA_VERSION}")
    assert len(said) >= 2, said  # the prompt's recall and the command's, each in its words

    set_version(project, SCHEMA_VERSION)
    assert "vite-build-runs-out-of-memory.md" in ask(code_repo, "s3")
