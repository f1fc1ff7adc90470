"""The memory library itself: opening, the rules of a write, and finding pages by name."""

from __future__ import annotations

import json

import pytest
from conftest import git

from wiki_memory.errors import ConflictError
from wiki_memory.memory import Actor, InputError, Memory, NoMemoryError
from wiki_memory.store import Store


def test_reading_creates_nothing_and_the_first_write_creates_the_wiki_once(code_repo):
    memory = Memory.at(code_repo)
    with pytest.raises(NoMemoryError, match="run `wiki-memory init`"):
        memory.read("anything")
    assert memory.recent() == [] and memory.history().commits == [] and memory.handoff() is None
    assert not memory.project.wiki.exists()
    memory.write("Retry policy", "Twice.", "decision")
    info = json.loads((memory.project.home / "project.json").read_text())
    assert info["root"] == str(code_repo) and info["wiki"] == str(memory.project.wiki)
    assert git(memory.project.wiki, "log", "--format=%s").splitlines()[-1] == "init: wiki-memory wiki"
    memory.close()


def test_an_update_keeps_what_it_does_not_name(code_repo):
    with Memory.at(code_repo) as memory:
        first = memory.write("Retry policy", "Twice.", "decision", tags=["http"], actor=Actor("codex", "s-1"))
        memory.edit("Retry policy", "set_status", status="archived")
        again = memory.write("Retry policy", "Three times.", "decision", actor=Actor("claude-code", "s-2"))
        page = memory.read("Retry policy").page
    assert again.page.id == first.page.id and not again.created
    assert page.tags == ("http",) and page.status == "archived"
    assert page.sources == ("codex:s-1", "claude-code:s-2")
    assert page.meta["created"] == first.page.meta["created"]


def test_one_title_names_one_page(code_repo):
    with Memory.at(code_repo) as memory:
        memory.write("Flaky login", "401s.", "gotcha")
        with pytest.raises(ConflictError, match=r"gotchas/flaky-login\.md"):
            memory.write("Flaky login", "dup", "note")
        assert (
            memory.write("Flaky login", "dup", "note", path="gotchas/flaky-login.md").path == "gotchas/flaky-login.md"
        )
        with pytest.raises(InputError, match="handoff write"):
            memory.write("A handoff", "x", "handoff")


def test_find_catches_the_index_up_instead_of_scanning_every_page(code_repo, monkeypatch):
    with Memory.at(code_repo) as memory:
        memory.write("Kubernetes pods restart at midnight", "Drained.", "fact", path="ops/k8s.md")
        memory.reindex(embed=False)  # an index that has been built (by a search, reindex, the MCP server)
        # A commit made outside wiki-memory: the index is behind.
        wiki = memory.project.wiki
        (wiki / "ops" / "db.md").write_text("---\ntitle: Database failover drill\ntype: fact\n---\nQuarterly.\n")
        git(wiki, "add", "ops/db.md")
        git(wiki, "commit", "-q", "-m", "by hand")

        def no_scan(*args: object, **kwargs: object) -> str:
            raise AssertionError("Store.find parsed every page")

        monkeypatch.setattr(Store, "find", no_scan)
        assert memory.find("database FAILOVER drill") == "ops/db.md"
        assert memory.find("Kubernetes pods restart at midnight") == "ops/k8s.md"
