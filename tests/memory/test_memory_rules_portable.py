"""Memory moved in and out, called directly: an export read back into a wiki that exists
is one commit of the pages that differ (a dry run commits nothing), an export naming a
path outside the wiki is refused whole, a project with no wiki has nothing to export, and
instruction files become pages in one commit, again changing nothing while they stand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Memory
from wiki_memory.memory.instructions import import_instructions
from wiki_memory.memory.portable import export_wiki, import_wiki

AGENTS_MD = """\
# AGENTS.md

## Pull requests

- Never push to main; open a pull request.

## Tests

Run `make test` before each commit.
"""


@pytest.fixture
def memory(code_repo: Path):
    with Memory.at(code_repo) as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http"])
        memory.write("Release steps", "Tag, push, publish.", "procedure")
        yield memory


def head(memory: Memory) -> str:
    return git(memory.project.wiki, "rev-parse", "HEAD").strip()


def test_an_export_read_back_writes_only_the_pages_that_differ_in_one_commit(memory, tmp_path):
    out = export_wiki(memory, "json", tmp_path / "out.json")
    assert out.pages == 2
    exported = (memory.project.wiki / "decisions/retry-policy.md").read_bytes()
    memory.edit("Retry policy", "append", text="Except for 429s.")
    memory.delete("Release steps")
    before = head(memory)
    dry = import_wiki(memory, out.path, dry_run=True)
    assert (dry.written, dry.unchanged, dry.commit) == (
        ("decisions/retry-policy.md", "procedures/release-steps.md"),
        0,
        None,
    )
    assert head(memory) == before
    done = import_wiki(memory, out.path)
    assert done.written == dry.written and not done.with_history
    assert (
        git(memory.project.wiki, "log", "-1", "--format=%an|%s").strip() == "Test Person|import: 2 pages from out.json"
    )
    assert git(memory.project.wiki, "rev-parse", "HEAD~1").strip() == before  # one commit on top
    assert (memory.project.wiki / "decisions/retry-policy.md").read_bytes() == exported  # byte for byte
    again = import_wiki(memory, out.path)
    assert (again.written, again.unchanged, again.commit) == ((), 2, None)


def test_an_export_naming_a_path_outside_the_wiki_is_refused_whole(memory, tmp_path):
    page = "---\ntitle: Evil\ntype: note\n---\n# Evil\n\nx\n"
    doc = {
        "format": "wiki-memory-export/1",
        "pages": [{"path": "notes/fine.md", "text": page}, {"path": "notes/../../escape.md", "text": page}],
    }
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    before = head(memory)
    with pytest.raises(WikiMemoryError, match="may not leave the wiki"):
        import_wiki(memory, bad)
    assert head(memory) == before and not (memory.project.wiki / "notes" / "fine.md").exists()
    assert not (memory.project.home / "escape.md").exists()
    bad.write_text("{}")
    with pytest.raises(WikiMemoryError, match="not a wiki-memory export"):
        import_wiki(memory, bad)
    assert head(memory) == before


def test_a_project_with_no_wiki_has_nothing_to_export_and_creates_none(tmp_path):
    code = tmp_path / "empty"
    code.mkdir()
    git(code, "init", "-q")
    with Memory.at(code) as memory:
        with pytest.raises(WikiMemoryError, match="nothing to export"):
            export_wiki(memory, "markdown", tmp_path / "out")
        assert not memory.project.wiki.exists() and not (tmp_path / "out").exists()


def test_instruction_files_become_pages_in_one_commit_and_again_change_nothing(code_repo):
    (code_repo / "AGENTS.md").write_text(AGENTS_MD)
    with Memory.at(code_repo) as memory:
        dry = import_instructions(memory, dry_run=True)
        assert [(p.path, p.type, p.action) for p in dry.pages] == [
            ("preferences/pull-requests.md", "preference", "created"),
            ("facts/tests.md", "fact", "created"),
        ]
        assert dry.commit is None and not memory.exists  # the dry run made no wiki
        done = import_instructions(memory)
        wiki = memory.project.wiki
        assert done.commit == git(wiki, "rev-parse", "HEAD").strip()
        assert git(wiki, "log", "-1", "--format=%s").strip() == (
            "import: 2 new, 0 updated, 0 stale pages from instruction files"
        )
        assert sorted(git(wiki, "show", "--format=", "--name-only", "HEAD").split()) == [
            "facts/tests.md",
            "preferences/pull-requests.md",
        ]
        page = memory.read("Pull requests").page
        assert page.sources == ("file:AGENTS.md",) and "Never push to main" in page.body
        assert page.meta["imported"][0]["from"] == "AGENTS.md"
        again = import_instructions(memory)
        assert again.commit is None and {p.action for p in again.pages} == {"unchanged"}
        (code_repo / "AGENTS.md").write_text(AGENTS_MD.replace("`make test`", "`make check`"))
        changed = import_instructions(memory)
        assert [(p.path, p.action) for p in changed.pages if p.action != "unchanged"] == [("facts/tests.md", "updated")]
        assert "`make check`" in memory.read("Tests").page.body
