"""Reading in the memory layer, called directly: a page named by path, title or id, read
now or as it was at a revision, its links resolved (a missing target is None) and its
backlinks, the list of pages by filter with the broken ones named, a person's hand edits
committed as theirs one page per commit with a rename followed, and the project's status
saying what is pending. Checked with the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from wiki_memory.errors import NotFoundError
from wiki_memory.memory import InputError, Memory


@pytest.fixture
def memory(code_repo: Path):
    with Memory.at(code_repo) as memory:
        memory.write("Retry policy", "Retry twice, then fail.", "decision", tags=["http"])
        memory.write("Flaky login", "401s: see [[Retry policy]] and [[Token lifetime]].", "gotcha", tags=["auth"])
        memory.write("Release steps", "Tag, push, publish.", "procedure")
        yield memory


def test_a_page_is_found_by_path_title_or_id_and_nothing_else(memory):
    page_id = memory.read("Retry policy").page.id or ""
    for ref in ("decisions/retry-policy.md", "decisions/retry-policy", "Retry policy", "retry POLICY", page_id):
        assert memory.find(ref) == "decisions/retry-policy.md", ref
    with pytest.raises(NotFoundError):
        memory.find("Retry policies")
    with pytest.raises(InputError, match="`page` is empty"):
        memory.find("  ")


def test_a_page_reads_as_it_was_at_a_revision(memory):
    first = git(memory.project.wiki, "rev-parse", "HEAD").strip()
    memory.edit("Retry policy", "find_replace", find="twice", replace="three times")
    assert "Retry three times" in memory.read("Retry policy").page.body
    then = memory.read("Retry policy", rev=first)
    assert then.rev == first and "Retry twice, then fail." in then.page.body
    assert memory.read("Retry policy", rev="HEAD~1").page.body == then.page.body
    path, data = memory.raw_bytes("Retry policy", rev=first)
    assert (path, data) == ("decisions/retry-policy.md", git(memory.project.wiki, "show", f"{first}:{path}").encode())


def test_links_resolve_to_paths_and_backlinks_name_the_linking_page(memory):
    memory.reindex(embed=False)
    links = memory.links("Flaky login").links
    assert [(link.target, link.path) for link in links] == [
        ("Retry policy", "decisions/retry-policy.md"),
        ("Token lifetime", None),  # no such page yet
    ]
    assert memory.links("Retry policy").backlinks == ["gotchas/flaky-login.md"]
    assert memory.read("Retry policy").backlinks == ["gotchas/flaky-login.md"]


def test_list_pages_filters_and_names_the_pages_that_do_not_parse(memory):
    (memory.project.wiki / "notes").mkdir()
    (memory.project.wiki / "notes" / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    memory.commit_hand_edits()
    rows, errors = memory.list_pages()
    assert sorted(r.path for r in rows) == [
        "decisions/retry-policy.md",
        "gotchas/flaky-login.md",
        "procedures/release-steps.md",
    ]
    assert len(errors) == 1 and errors[0].startswith("notes/broken.md")
    assert [r.path for r in memory.list_pages(tag="auth")[0]] == ["gotchas/flaky-login.md"]
    assert [r.path for r in memory.list_pages(type="procedure")[0]] == ["procedures/release-steps.md"]
    memory.mark("Release steps", "archived")
    assert [r.path for r in memory.list_pages(status="archived")[0]] == ["procedures/release-steps.md"]


def test_hand_edits_are_the_person_s_one_commit_per_page_with_a_rename_followed(memory):
    wiki = memory.project.wiki
    page = wiki / "decisions" / "retry-policy.md"
    page.write_text(page.read_text().replace("Retry twice", "Retry once"))
    (wiki / "procedures" / "release-steps.md").rename(wiki / "procedures" / "shipping.md")
    status = memory.status()
    assert status["pending_edits"] == [
        "decisions/retry-policy.md",
        "procedures/release-steps.md",
        "procedures/shipping.md",
    ]
    before = git(wiki, "rev-parse", "HEAD").strip()
    edits = memory.commit_hand_edits()
    assert [e.subject for e in edits] == [
        "edit: decisions/retry-policy.md",
        "edit: procedures/release-steps.md -> procedures/shipping.md",
    ]
    log = git(wiki, "log", f"{before}..HEAD", "--format=%an <%ae>|%s", "--name-status").split("\n")
    assert "Test Person <person@example.com>|edit: procedures/release-steps.md -> procedures/shipping.md" in log
    assert "R100\tprocedures/release-steps.md\tprocedures/shipping.md" in log
    assert git(wiki, "status", "--porcelain") == "" and memory.status()["pending_edits"] == []
    assert memory.find("Release steps") == "procedures/shipping.md"  # the title still names it
    assert memory.status()["pages_by_type"] == {"decision": 1, "gotcha": 1, "procedure": 1}
