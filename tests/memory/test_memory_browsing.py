"""The memory layer's browsing operations (the web viewer's reads and its whole-text edit):
activity, one commit, a page's history with diffs, the link graph, the review list,
anchors' drift, and saving a page's whole text as the person's edit."""

from __future__ import annotations

import json

import pytest
from conftest import git

from wiki_memory.errors import NotFoundError
from wiki_memory.memory import Actor, InputError, Memory, known_projects
from wiki_memory.pages import drift

CODEX = Actor("codex", "5e55f00d-1")


@pytest.fixture
def memory(code_repo):
    with Memory.at(code_repo) as memory:
        memory.write("Retry policy", "Retry twice, then fail. See [[Auth overview]].", "decision", actor=CODEX)
        memory.write("Auth overview", "Tokens refresh before the retry. [[Retry policy]]", "fact")
        memory.write("Lonely note", "Nothing links here.", "note", actor=CODEX)
        yield memory


def test_activity_names_who_did_what_newest_first(memory):
    memory.edit("Retry policy", "append", text="Except for 429s.")
    memory.delete("Lonely note", actor=CODEX)
    items = memory.activity(10)
    assert [i.subject for i in items[:3]] == [
        "forget: notes/lonely-note",
        "update: decisions/retry-policy (append)",
        "remember: notes/lonely-note",
    ]
    forget, edit = items[0], items[1]
    assert forget.paths == ("notes/lonely-note.md",)  # a deletion is listed too
    assert (forget.agent, forget.session, forget.kind) == ("codex", CODEX.session_id, "agent")
    assert (edit.agent, edit.kind, edit.author) == (None, "person", "Test Person")
    assert items[-1].subject == "init: wiki-memory wiki"
    mine = memory.activity(10, who="test person")
    assert mine and all(i.author == "Test Person" for i in mine)
    assert memory.activity(10, who="codex")[0].subject == "forget: notes/lonely-note"
    assert len(memory.activity(2)) == 2


def test_a_commit_with_the_diff_of_each_file(memory):
    memory.edit("Retry policy", "find_replace", find="twice", replace="three times")
    view = memory.commit("HEAD")
    assert view.info.subject == "update: decisions/retry-policy (find_replace)"
    assert view.parent == git(memory.wiki, "rev-parse", "HEAD~1").strip()
    (diff,) = view.files
    assert (diff.path, diff.change) == ("decisions/retry-policy.md", "modified")
    assert "-Retry twice, then fail. See [[Auth overview]]." in diff.lines
    assert "+Retry three times, then fail. See [[Auth overview]]." in diff.lines
    assert diff.lines[0].startswith("@@") and (diff.added, diff.removed) >= (1, 1)
    short = git(memory.wiki, "rev-parse", "--short", "HEAD~2").strip()
    assert memory.commit(short).info.subject == "remember: facts/auth-overview"
    assert memory.commit("HEAD~1", limit=0).more_files == 1
    with pytest.raises(NotFoundError):
        memory.commit("no-such-revision")


def test_a_page_history_follows_its_renames_with_each_diff(memory):
    memory.move("Auth overview", title="Auth service overview")
    memory.edit("Auth service overview", "append", text="Refresh takes 200 ms.")
    history = memory.page_history("Auth service overview")
    assert history.path == "facts/auth-service-overview.md" and not history.more
    edit, move, created = history.changes
    assert edit.diff.change == "modified" and "+Refresh takes 200 ms." in edit.diff.lines
    assert (move.diff.change, move.diff.old_path) == ("moved", "facts/auth-overview.md")
    assert "-title: Auth overview" in move.diff.lines and "+title: Auth service overview" in move.diff.lines
    assert created.diff.change == "added" and created.diff.old_path is None
    assert created.info.subject == "remember: facts/auth-overview"
    assert memory.page_history("Auth service overview", n=1).more
    # A deleted page keeps its history, found by its path.
    memory.delete("Lonely note")
    gone = memory.page_history("notes/lonely-note.md")
    assert [c.diff.change for c in gone.changes] == ["deleted", "added"]
    assert gone.changes[0].diff.lines[-1] == "-Nothing links here."


def test_the_link_graph_whole_or_around_a_page(memory):
    memory.write("Deploy runbook", "Follow the [[Retry policy]] on failures.", "procedure")
    graph = memory.graph()
    paths = {n.path for n in graph.nodes}
    assert paths == {
        "decisions/retry-policy.md", "facts/auth-overview.md", "procedures/deploy-runbook.md", "notes/lonely-note.md",
    }  # fmt: skip
    assert set(graph.edges) == {
        ("decisions/retry-policy.md", "facts/auth-overview.md"),
        ("facts/auth-overview.md", "decisions/retry-policy.md"),
        ("procedures/deploy-runbook.md", "decisions/retry-policy.md"),
    }
    by_path = {n.path: n for n in graph.nodes}
    assert by_path["decisions/retry-policy.md"].degree == 3 and by_path["notes/lonely-note.md"].degree == 0
    assert graph.nodes[0].path == "decisions/retry-policy.md"  # the best-linked first
    small = memory.graph(limit=2)
    assert small.cut and len(small.nodes) == 2 and small.linked_pages == 3
    around = memory.graph("Deploy runbook")
    assert around.around == "procedures/deploy-runbook.md"
    assert {n.path for n in around.nodes} == paths - {"notes/lonely-note.md"}
    with pytest.raises(InputError):
        memory.graph(limit=0)


def test_review_lists_broken_pages_conflict_copies_and_marked_pages(memory):
    wiki = memory.wiki
    (wiki / "notes" / "deploy.md").write_text("---\ntitle: Deploy\ntags: [x\n---\n# Deploy\n\nCanary first.\n")
    (wiki / "notes" / "hand-written.md").write_text("# Hand written\n\nNo front matter, and that is fine.\n")
    copy = "facts/auth-overview.conflict-laptop-2026-11-30.md"
    (wiki / copy).write_text("---\ntitle: Auth overview\nconflict_of: facts/auth-overview.md\n---\n# Auth\n\nOld.\n")
    memory.commit_hand_edits()
    memory.edit("Retry policy", "set_status", status="wrong")
    memory.edit("Auth overview", "set_status", status="stale")
    items = memory.review_items()
    assert [(i.kind, i.path) for i in items] == [
        ("broken", "notes/deploy.md"),
        ("conflict", copy),
        ("wrong", "decisions/retry-policy.md"),
        ("stale", "facts/auth-overview.md"),
    ]
    broken, conflict = items[0], items[1]
    assert "line 4" in broken.detail and "invalid YAML" in broken.detail and broken.title == "deploy"
    assert conflict.other == "facts/auth-overview.md" and "laptop" in conflict.detail
    # Fixed, it leaves the list.
    memory.save_text("notes/deploy.md", "---\ntitle: Deploy\ntags: [x]\n---\n# Deploy\n\nCanary first.\n")
    memory.edit("Retry policy", "set_status", status="active")
    assert [i.kind for i in memory.review_items()] == ["conflict", "stale"]


def test_review_without_the_index_reads_every_page(memory):
    (memory.wiki / "notes" / "deploy.md").write_text("---\ntitle: [x\n---\n# Deploy\n")
    memory.commit_hand_edits()
    memory.edit("Retry policy", "set_status", status="wrong")
    memory.close()
    memory.project.index_path.unlink()
    # An index that cannot be opened: a link to a directory (a directory itself is moved aside and rebuilt).
    (memory.project.home / "elsewhere").mkdir()
    memory.project.index_path.symlink_to(memory.project.home / "elsewhere")
    with Memory(memory.project) as blind:
        assert blind.index is None
        assert [(i.kind, i.path) for i in blind.review_items()] == [
            ("broken", "notes/deploy.md"),
            ("wrong", "decisions/retry-policy.md"),
        ]


def test_anchors_say_whether_their_file_changed(memory, code_repo, monkeypatch):
    (code_repo / "src").mkdir()
    (code_repo / "src" / "client.py").write_text("def refresh():\n    pass\n")
    (code_repo / "src" / "same.py").write_text("x = 1\n")
    client = git(code_repo, "hash-object", "src/client.py").strip()
    same = git(code_repo, "hash-object", "src/same.py").strip()
    page = memory.read("Retry policy").page.with_meta(
        anchors=[
            {"path": "src/client.py", "blob": client},
            {"path": "src/same.py", "blob": same},
            "src/gone.py",
            "src/same.py",  # (a path once)
            {"path": "docs/no-blob.md"},
        ]
    )
    (code_repo / "docs").mkdir()
    (code_repo / "docs" / "no-blob.md").write_text("notes\n")
    (code_repo / "src" / "client.py").write_text("def refresh():\n    return token()\n")
    states = {a.path: a.state for a in memory.anchor_states(page)}
    assert states == {
        "src/client.py": "drifted",
        "src/same.py": "current",
        "src/gone.py": "missing",
        "docs/no-blob.md": "unrecorded",
    }
    # Committed, the files are read from the git index as everywhere else (pages.drift): a
    # file whose stat its index entry vouches for is not hashed again.
    git(code_repo, "add", "src", "docs")
    git(code_repo, "commit", "-qm", "code")
    hashed: list[str] = []
    real = drift.blob_of_file
    monkeypatch.setattr(drift, "blob_of_file", lambda path, algo="sha1": hashed.append(str(path)) or real(path, algo))
    assert {a.path: a.state for a in memory.anchor_states(page)} == states
    assert hashed == []


def test_a_page_text_is_saved_as_the_person_s_edit(memory):
    source = memory.page_source("Retry policy")
    assert source.path == "decisions/retry-policy.md" and source.text.startswith("---\nid: ")
    assert source.blob == git(memory.wiki, "rev-parse", "HEAD:decisions/retry-policy.md").strip()
    text = source.text.replace("twice", "three times").replace("\n", "\r\n") + "Key: ghp_" + "a1B2" * 9 + "\r\n"
    written = memory.save_text("Retry policy", text, base=source.blob)
    assert written.commit and written.operation == "edit" and written.redacted
    log = git(memory.wiki, "log", "-1", "--format=%an <%ae>|%s").strip()
    assert log == "Test Person <person@example.com>|edit: decisions/retry-policy.md"
    saved = (memory.wiki / "decisions" / "retry-policy.md").read_bytes()
    assert b"\r" not in saved and b"Retry three times" in saved and b"ghp_a1B2" not in saved
    assert memory.read("Retry policy").page.id == memory.read(written.page.id).page.id  # the id kept
    git(memory.wiki, "fsck", "--strict")


def test_a_page_text_is_refused_rather_than_lost(memory):
    source = memory.page_source("Retry policy")
    head = git(memory.wiki, "rev-parse", "HEAD").strip()
    with pytest.raises(InputError, match=r"line 4: invalid YAML.*nothing was committed"):
        memory.save_text("Retry policy", "---\nid: x\ntags: [a\n---\n# Retry\n\nBody.\n", base=source.blob)
    with pytest.raises(InputError, match="no body"):
        memory.save_text("Retry policy", "---\ntitle: Retry policy\n---\n", base=source.blob)
    with pytest.raises(InputError, match="empty"):
        memory.save_text("Retry policy", "  \n", base=source.blob)
    assert git(memory.wiki, "rev-parse", "HEAD").strip() == head
    # Someone else wrote meanwhile, at the same place: both are kept, the save in a conflict copy.
    memory.edit("Retry policy", "append", text="Except for 429s.", actor=CODEX)
    written = memory.save_text("Retry policy", source.text + "\nMine.\n", base=source.blob)
    assert written.conflict_copy and written.merged
    assert "Mine." in git(memory.wiki, "show", f"HEAD:{written.conflict_copy}")
    assert "Except for 429s." in git(memory.wiki, "show", "HEAD:decisions/retry-policy.md")
    # A person's unsaved change in their editor is committed as theirs first, then kept beside it too.
    fresh = memory.page_source("Retry policy")
    path = memory.wiki / fresh.path
    path.write_text(fresh.text + "\nFrom vim.\n")
    again = memory.save_text("Retry policy", fresh.text + "\nFrom the browser.\n", base=fresh.blob)
    assert "From vim." in git(memory.wiki, "show", "HEAD:decisions/retry-policy.md")
    assert again.conflict_copy and "From the browser." in git(memory.wiki, "show", f"HEAD:{again.conflict_copy}")


def test_the_home_s_projects(code_repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    with Memory.at(code_repo) as a, Memory.at(other) as b:
        a.write("One", "x", "note")
        b.write("Two", "y", "note")
        found = known_projects()
    assert [p.name for p in found] == ["other", "widgets"]
    assert {p.id for p in found} == {a.project.id, b.project.id}
    info = json.loads((b.project.home / "project.json").read_text())
    assert [p.root for p in found if p.name == "other"] == [other] and info["root"] == str(other)


def test_a_page_history_through_a_merge_shows_the_side_that_changed_it(memory):
    # Another machine's change arrives on a branch that a merge brings in (as a sync does).
    wiki = memory.wiki
    git(wiki, "checkout", "-q", "-b", "laptop", "HEAD~1")
    path = wiki / "facts" / "auth-overview.md"
    path.write_text(path.read_text() + "\nFrom the laptop.\n")
    git(wiki, "commit", "-q", "-am", "laptop: auth note")
    git(wiki, "checkout", "-q", "main")
    git(wiki, "merge", "-q", "--no-ff", "-m", "sync: merge laptop", "laptop")
    history = memory.page_history("facts/auth-overview.md")
    assert [c.info.subject for c in history.changes] == ["laptop: auth note", "remember: facts/auth-overview"]
    assert "+From the laptop." in history.changes[0].diff.lines
    assert memory.activity(1)[0].subject == "sync: merge laptop"
    assert memory.commit("HEAD").files[0].path == "facts/auth-overview.md"  # against its first parent


def test_the_history_is_worked_out_a_slice_at_a_time(memory):
    for i in range(5):
        memory.edit("Lonely note", "append", text=f"Line {i}.")
    fresh = Memory(memory.project)
    assert fresh.warm_history(0) is True  # nothing done in no time, and more to do
    while fresh.warm_history(0.05):
        pass
    assert fresh.warm_history(0) is False
    assert [c.info.subject for c in fresh.page_history("Lonely note").changes][-1] == "remember: notes/lonely-note"
    fresh.close()
