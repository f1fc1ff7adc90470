"""The memory layer's rules for writing, called directly (no front end): a title names a
page in its type's folder, the type and the path are checked, an edit changes what it
names and nothing else, the actor is the commit's author and trailers, and a person's
uncommitted edit is committed as theirs before anyone writes over it. Each checked in the
real git repository with the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from wiki_memory.errors import NotFoundError, WikiMemoryError
from wiki_memory.memory import Actor, EditError, InputError, Memory
from wiki_memory.store import Author

TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape
CODEX = Actor("codex", "sess-1234567890")


@pytest.fixture
def memory(code_repo: Path):
    with Memory.at(code_repo) as memory:
        yield memory


def commits(memory: Memory) -> list[str]:
    return git(memory.project.wiki, "log", "--format=%H").split()


def shown(memory: Memory, path: str, rev: str = "HEAD") -> str:
    return git(memory.project.wiki, "show", f"{rev}:{path}")


def test_a_title_becomes_one_page_in_its_type_s_folder_with_its_front_matter(memory):
    written = memory.write("Deploy needs the VPN", "Connect first.", "gotcha", tags=["net", " net ", "ops"])
    assert written.created and written.path == "gotchas/deploy-needs-the-vpn.md"
    text = shown(memory, written.path)
    assert "title: Deploy needs the VPN\n" in text and "type: gotcha\n" in text and "status: active\n" in text
    assert "tags: [net, ops]\n" in text  # duplicates (after collapsing spaces) dropped, order kept
    assert text.rstrip().endswith("# Deploy needs the VPN\n\nConnect first.")
    assert git(memory.project.wiki, "log", "-1", "--format=%s") == "remember: gotchas/deploy-needs-the-vpn\n"
    assert git(memory.project.wiki, "status", "--porcelain") == ""


def test_an_agent_s_write_is_its_commit_with_trailers_and_a_source_on_the_page(memory):
    written = memory.write("Retry policy", "Twice.", "decision", actor=CODEX)
    wiki = memory.project.wiki
    fmt = "%an <%ae>%n%(trailers:key=Agent,valueonly)%(trailers:key=Session-Id,valueonly)"
    assert git(wiki, "log", "-1", f"--format={fmt}").split("\n")[:3] == [
        "codex <codex@wiki-memory>",
        "codex",
        "sess-1234567890",
    ]
    assert written.page.sources == ("codex:sess-123",)  # the session's first eight characters
    memory.edit("Retry policy", "append", text="Then fail.")  # the person, with no agent
    assert git(wiki, "log", "-1", f"--format={fmt}").split("\n")[:2] == ["Test Person <person@example.com>", ""]
    assert memory.read("Retry policy").page.sources == ("codex:sess-123",)  # the person adds no source


def test_an_unknown_type_a_handoff_and_a_bad_tag_are_refused_and_nothing_is_committed(memory):
    memory.write("First", "Body.", "note")
    before = commits(memory)
    with pytest.raises(InputError, match=r"unknown type 'recipe': one of decision, gotcha"):
        memory.write("Soup", "Boil.", "recipe")
    with pytest.raises(InputError, match="handoff write"):
        memory.write("Soup", "Boil.", "handoff")
    with pytest.raises(InputError, match="no commas"):
        memory.write("Soup", "Boil.", "note", tags=["a,b"])
    with pytest.raises(InputError, match="not one string"):
        memory.write("Soup", "Boil.", "note", tags="soup")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="`title` is empty"):
        memory.write("   ", "Boil.", "note")
    assert commits(memory) == before
    assert not list(memory.project.wiki.rglob("soup*.md"))


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../outside.md", "may not leave the wiki"),
        ("notes/../../outside.md", "may not leave the wiki"),
        ("{tmp}/outside.md", "not absolute"),
        (".git/hooks/x.md", "the .git folder"),
        ("notes/page.txt", "end in .md"),
    ],
)
def test_a_path_outside_the_wiki_is_refused_and_nothing_is_written(memory, tmp_path, path, says):
    memory.write("First", "Body.", "note")
    before = commits(memory)
    with pytest.raises(WikiMemoryError, match=says):
        memory.write("Escape", "Body.", "note", path=path.format(tmp=tmp_path))
    assert commits(memory) == before
    assert not (tmp_path / "outside.md").exists() and not (memory.project.home / "outside.md").exists()
    assert git(memory.project.wiki, "status", "--porcelain", "--ignored") == ""


def test_an_edit_changes_its_section_and_keeps_the_front_matter(memory):
    body = "Intro.\n\n## Steps\n\nOne.\n\n## Notes\n\nKeep."
    first = memory.write("Release", body, "procedure", tags=["ship"], actor=CODEX)
    edited = memory.edit("Release", "replace_section", heading="Steps", text="Tag.\nPush.")
    assert edited.operation == "replace_section"
    assert edited.page.body == "# Release\n\nIntro.\n\n## Steps\n\nTag.\nPush.\n\n## Notes\n\nKeep.\n"
    assert (edited.page.id, edited.page.tags, edited.page.status) == (first.page.id, ("ship",), "active")
    assert edited.page.meta["created"] == first.page.meta["created"]
    subject = git(memory.project.wiki, "log", "-1", "--format=%s").strip()
    assert subject == "update: procedures/release (replace_section)"
    changed = git(memory.project.wiki, "show", "--format=", "--stat", "HEAD")
    assert "procedures/release.md" in changed and "1 file changed" in changed


def test_an_edit_that_does_not_match_as_asked_writes_nothing(memory):
    memory.write("Ports", "Use 8080 here and 8080 there.", "fact")
    before, file_before = commits(memory), (memory.project.wiki / "facts/ports.md").read_bytes()
    with pytest.raises(EditError, match="found 2 occurrences of '8080', expected 1"):
        memory.edit("Ports", "find_replace", find="8080", replace="9090")
    with pytest.raises(EditError, match="no section headed 'Nowhere'"):
        memory.edit("Ports", "append", heading="Nowhere", text="x")
    with pytest.raises(InputError, match="leave the page empty"):
        memory.edit("Ports", "find_replace", find="Use 8080 here and 8080 there.", replace="")
    with pytest.raises(InputError, match="unknown operation 'prepend'"):
        memory.edit("Ports", "prepend", text="x")
    assert commits(memory) == before
    assert (memory.project.wiki / "facts/ports.md").read_bytes() == file_before
    done = memory.edit("Ports", "find_replace", find="8080", replace="9090", expected_count=2)
    assert done.replaced == 2 and "9090 here and 9090 there" in shown(memory, "facts/ports.md")


def test_set_status_superseded_names_its_successor_as_a_path(memory):
    memory.write("Old retry", "Twice.", "decision")
    memory.write("New retry", "Thrice.", "decision")
    with pytest.raises(InputError, match="names its successor"):
        memory.edit("Old retry", "set_status", status="superseded")
    with pytest.raises(InputError, match="set_status needs `status`"):
        memory.edit("Old retry", "set_status", status="gone")
    memory.edit("Old retry", "set_status", status="superseded", superseded_by="New retry")
    text = shown(memory, "decisions/old-retry.md")
    assert "status: superseded\n" in text and "superseded_by: decisions/new-retry.md\n" in text
    assert memory.read("New retry").page.status == "active"  # set_status changes the one page named


def test_a_secret_in_an_edit_is_redacted_before_the_commit(memory):
    memory.write("Deploy", "Steps.", "procedure")
    edited = memory.edit("Deploy", "append", text=f"export GITHUB_TOKEN={TOKEN}")
    assert edited.redacted == ("github-token",)
    assert "[REDACTED:github-token]" in shown(memory, "procedures/deploy.md")
    assert TOKEN not in git(memory.project.wiki, "log", "-p", "--all")


def test_a_person_s_uncommitted_edit_is_committed_as_theirs_before_an_agent_writes(memory):
    memory.write("Cache rules", "Flush nightly.", "fact")
    page = memory.project.wiki / "facts/cache-rules.md"
    page.write_text(page.read_text().replace("Flush nightly.", "Flush hourly (by hand)."))
    memory.edit("Cache rules", "append", text="Never in prod.", actor=CODEX)
    fmt = "%an|%s|%(trailers:key=Agent,valueonly,separator=%x2C)|%(trailers:key=Session-Id,valueonly,separator=%x2C)"
    log = git(memory.project.wiki, "log", "-2", f"--format={fmt}").splitlines()
    assert log == [
        "codex|update: facts/cache-rules (append)|codex|sess-1234567890",
        "Test Person|edit: facts/cache-rules.md||",
    ]
    assert "Flush hourly (by hand).\n\nNever in prod." in shown(memory, "facts/cache-rules.md")
    assert "Flush hourly (by hand)." in shown(memory, "facts/cache-rules.md", "HEAD~1")


def test_a_retitle_keeps_the_id_and_the_history_follows_it(memory):
    first = memory.write("Flaky login", "401s.", "gotcha")
    moved = memory.move("Flaky login", title="Login returns 401 at midnight")
    assert moved.path == "gotchas/login-returns-401-at-midnight.md" and moved.page.id == first.page.id
    tree = git(memory.project.wiki, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "gotchas/flaky-login.md" not in tree and moved.path in tree
    assert memory.find(first.page.id) == moved.path
    assert [c.id for c in memory.history(moved.path).commits][-1] == first.commit  # renames followed


def test_delete_takes_the_page_out_of_head_and_keeps_its_history(memory):
    written = memory.write("Temp note", "Scratch.", "note")
    deleted = memory.delete("Temp note")
    assert deleted.path == "notes/temp-note.md"
    assert git(memory.project.wiki, "log", "-1", "--format=%H").strip() == deleted.commit
    assert deleted.path not in git(memory.project.wiki, "ls-tree", "-r", "--name-only", "HEAD")
    with pytest.raises(NotFoundError):
        memory.read("Temp note")
    assert [c.id for c in memory.history(deleted.path).commits] == [deleted.commit, written.commit]
    assert "Scratch." in shown(memory, deleted.path, written.commit or "")


def test_revert_undoes_one_commit_with_a_new_one(memory):
    memory.write("Timeout", "Thirty seconds.", "fact")
    changed = memory.write("Timeout", "Sixty seconds.", "fact")
    undone, new = memory.revert(changed.commit or "")
    assert undone == changed.commit and commits(memory)[0] == new
    assert "Thirty seconds." in shown(memory, "facts/timeout.md")
    assert "Sixty seconds." in shown(memory, "facts/timeout.md", "HEAD~1")  # nothing rewritten


def test_an_agent_acting_for_a_named_person_commits_as_that_person_with_the_agent_in_trailers(memory):
    acting = Actor("codex", "sess-1234567890", person=Author("Dana Reviewer", "dana@example.com"))
    written = memory.write("Token scope", "Read only.", "fact", actor=acting)
    fmt = "%an <%ae>|%(trailers:key=Agent,valueonly,separator=%x2C)"
    assert git(memory.project.wiki, "log", "-1", f"--format={fmt}").strip() == "Dana Reviewer <dana@example.com>|codex"
    assert written.page.sources == ("codex:sess-123",)


def test_a_move_onto_a_page_that_exists_is_refused_and_both_stay(memory):
    memory.write("Flaky login", "401s.", "gotcha")
    memory.write("Slow login", "3 s.", "gotcha")
    before = commits(memory)
    with pytest.raises(WikiMemoryError, match=r"gotchas/slow-login\.md"):
        memory.move("Flaky login", "gotchas/slow-login.md")
    with pytest.raises(InputError, match="give a destination path, or a new title"):
        memory.move("Flaky login")
    assert commits(memory) == before
    assert memory.read("Flaky login").page.body.endswith("401s.\n") and memory.read("Slow login").page.body.endswith(
        "3 s.\n"
    )
