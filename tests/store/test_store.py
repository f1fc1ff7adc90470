from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.errors import ConflictError, NotFoundError, PageError, PathError
from wiki_memory.pages import Page, parse_page
from wiki_memory.store import Author, Store
from wiki_memory.store.worktree import WorkTree

CLAUDE = Author.agent("claude-code")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "wiki")


def gotcha(body: str = "The retry used the expired token.", title: str = "JWT refresh before retry") -> Page:
    return Page.new(title, "gotcha", body, tags=["auth"])


def assert_clean(store: Store) -> None:
    """fsck finds nothing wrong, and git sees no difference between HEAD, index and files."""
    git(store.root, "fsck", "--strict")
    assert git(store.root, "status", "--porcelain") == ""
    assert git(store.root, "diff", "--cached", "--name-only") == ""


def test_create_makes_a_normal_git_repository(store):
    assert git(store.root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert "wiki-memory" in (store.root / "README.md").read_text()
    assert git(store.root, "log", "--format=%s").splitlines() == ["init: wiki-memory wiki"]
    again = Store.create(store.root)  # idempotent
    assert again.head() == store.head()
    assert_clean(store)


def test_create_builds_the_repository_aside_and_leaves_nothing_behind(tmp_path):
    store = Store.create(tmp_path / "wiki")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wiki"]  # no half-built copy beside it
    assert_clean(store)


def test_a_wiki_whose_creation_was_killed_is_made_again(tmp_path):
    """A process killed while git wrote HEAD left `.git` with no HEAD and a stale `HEAD.lock`
    (every commit then failed with FileLocked): the next create moves it aside and makes the
    wiki whole."""
    from dulwich.repo import Repo

    root = tmp_path / "wiki"
    root.mkdir()
    Repo.init(str(root)).close()
    (root / ".git" / "HEAD").unlink()
    (root / ".git" / "HEAD.lock").write_text("ref: refs/heads/main\n")

    store = Store.create(root)
    result = store.write(gotcha(), CLAUDE)
    assert git(root, "log", "--format=%s").splitlines() == [
        f"remember: {result.path.removesuffix('.md')}",
        "init: wiki-memory wiki",
    ]
    assert_clean(store)
    aside = [p.name for p in tmp_path.iterdir() if p.name != "wiki"]
    assert len(aside) == 1 and aside[0].startswith(".wiki.unfinished-git-")


def test_write_commits_one_page_with_author_and_trailers(store):
    result = store.write(gotcha(), CLAUDE, session_id="2624e4c8", agent="claude-code")
    assert result.created and result.path == "gotchas/jwt-refresh-before-retry.md"
    fmt = git(
        store.root,
        "log",
        "-1",
        "--format=%an <%ae>%n%s%n%(trailers:key=Session-Id,valueonly)%(trailers:key=Agent,valueonly)",
    )
    assert fmt.split("\n")[:4] == [
        "claude-code <claude-code@wiki-memory>",
        "remember: gotchas/jwt-refresh-before-retry",
        "2624e4c8",
        "claude-code",
    ]
    assert git(store.root, "show", f"HEAD:{result.path}") == (store.root / result.path).read_text()
    assert git(store.root, "show", "--name-only", "--format=", "HEAD").split() == [result.path]
    assert git(store.root, "log", "--grep", "Session-Id: 2624e4c8", "--format=%h").strip()
    assert_clean(store)


def test_update_keeps_id_and_created_and_sets_updated(store, monkeypatch):
    first = store.write(gotcha(), CLAUDE).page
    import wiki_memory.store.writing as store_module

    monkeypatch.setattr(store_module, "now_iso", lambda: "2030-01-01T00:00:00Z")
    second = store.write(gotcha("Refresh first, then retry."), CLAUDE)
    assert not second.created and second.commit
    page = store.read(second.path)
    assert page.id == first.id and page.created == first.created
    assert page.updated == "2030-01-01T00:00:00Z"
    assert "Refresh first" in page.body
    assert git(store.root, "log", "-1", "--format=%s").strip() == "update: gotchas/jwt-refresh-before-retry"


def test_writing_the_same_page_again_makes_no_commit(store):
    store.write(gotcha(), CLAUDE)
    before = store.head()
    result = store.write(gotcha(), CLAUDE)
    assert result.commit is None and store.head() == before


def test_unknown_front_matter_keys_survive_an_update(store):
    page = gotcha().with_meta(reviewer="ana", priority=2)
    store.write(page, CLAUDE)
    store.write(gotcha("New body."), CLAUDE)
    meta = store.read("gotchas/jwt-refresh-before-retry.md").meta
    assert meta["reviewer"] == "ana" and meta["priority"] == 2


def test_a_writer_drops_a_key_it_owns_and_no_longer_sets(store):
    store.write(gotcha().with_meta(in_progress=True, reviewer="ana"), CLAUDE)
    store.write(gotcha("New body."), CLAUDE, owns={"in_progress", "branch"})
    meta = store.read("gotchas/jwt-refresh-before-retry.md").meta
    assert "in_progress" not in meta and meta["reviewer"] == "ana"
    assert "in_progress" not in git(store.root, "show", "HEAD:gotchas/jwt-refresh-before-retry.md")


def test_write_many_is_one_commit(store):
    pages = [Page.new("Session a", "session", "x"), Page.new("Handoff a", "handoff", "y")]
    results = store.write_many(pages, CLAUDE, session_id="s1", agent="claude-code")
    assert results[0].commit == results[1].commit
    assert sorted(git(store.root, "show", "--name-only", "--format=", "HEAD").split()) == sorted(
        r.path for r in results
    )


def test_move_keeps_id_and_log_follows_the_rename(store):
    written = store.write(gotcha(), CLAUDE)
    store.write(gotcha("Second version."), CLAUDE)
    moved = store.move(written.path, "decisions/refresh-first.md", CLAUDE)
    assert not (store.root / written.path).exists()
    assert store.read(moved.path).id == written.page.id
    subjects = [c.subject for c in store.log(moved.path)]
    assert subjects == [
        "move: gotchas/jwt-refresh-before-retry -> decisions/refresh-first",
        "update: gotchas/jwt-refresh-before-retry",
        "remember: gotchas/jwt-refresh-before-retry",
    ]
    assert len(git(store.root, "log", "--follow", "--format=%h", "--", moved.path).split()) == 3
    assert not (store.root / "gotchas").exists()  # the empty folder went with the page
    assert_clean(store)


def test_retitle_moves_to_the_new_slug(store):
    written = store.write(gotcha(), CLAUDE)
    moved = store.move(written.path, None, CLAUDE, title="Refresh tokens before retrying")
    assert moved.path == "gotchas/refresh-tokens-before-retrying.md"
    page = store.read(moved.path)
    assert page.title == "Refresh tokens before retrying"
    assert page.body.startswith("# Refresh tokens before retrying\n")


def test_delete_and_read_at_an_older_revision(store):
    written = store.write(gotcha(), CLAUDE)
    store.delete(written.path, CLAUDE)
    assert not store.exists(written.path)
    assert store.read(written.path, rev="HEAD~1").title == "JWT refresh before retry"
    assert git(store.root, "log", "-1", "--format=%s").strip() == "forget: gotchas/jwt-refresh-before-retry"
    assert [c.subject for c in store.log(written.path)] == [
        "forget: gotchas/jwt-refresh-before-retry",
        "remember: gotchas/jwt-refresh-before-retry",
    ]
    with pytest.raises(NotFoundError):
        store.read(written.path)
    with pytest.raises(NotFoundError):
        store.delete(written.path, CLAUDE)
    assert_clean(store)


def test_diff_between_revisions_and_of_one_page(store):
    a = store.write(gotcha("first"), CLAUDE)
    store.write(Page.new("Other", "fact", "other"), CLAUDE)
    store.write(gotcha("second"), CLAUDE)
    text = store.diff(a.commit, "HEAD")
    assert "-first" in text and "+second" in text and "facts/other.md" in text
    only = store.diff(a.commit, "HEAD", a.path)
    assert "+second" in only and "facts/other.md" not in only


def test_revert_restores_the_earlier_text(store):
    store.write(gotcha("first"), CLAUDE)
    bad = store.write(gotcha("wrong"), CLAUDE)
    store.revert(bad.commit, Author.person())
    assert "first" in store.read(bad.path).body
    assert git(store.root, "log", "-1", "--format=%an%n%s%n%b").splitlines()[:3] == [
        "Test Person",
        "revert: update: gotchas/jwt-refresh-before-retry",
        f"This reverts commit {bad.commit}.",
    ]
    assert_clean(store)


def test_revert_keeps_later_edits_to_other_lines_and_refuses_overlaps(store):
    body = "line one\n\nline two\n\nline three\n"
    store.write(gotcha(body), CLAUDE)
    change = store.write(gotcha(body.replace("line one", "line ONE")), CLAUDE)
    store.write(gotcha(body.replace("line one", "line ONE").replace("line three", "line 3")), CLAUDE)
    store.revert(change.commit, CLAUDE)
    text = store.read(change.path).body
    assert "line one" in text and "line 3" in text
    overlap = store.write(gotcha("alpha"), CLAUDE)
    store.write(gotcha("beta"), CLAUDE)
    with pytest.raises(ConflictError):
        store.revert(overlap.commit, CLAUDE)


def test_revert_of_a_creation_removes_the_page(store):
    created = store.write(gotcha(), CLAUDE)
    store.revert(created.commit, CLAUDE)
    assert not store.exists(created.path) and not (store.root / created.path).exists()


@pytest.mark.parametrize(
    "bad",
    [
        "../escape.md",
        "/etc/passwd.md",
        "notes/../../x.md",
        ".git/config.md",
        "notes\\x.md",
        "notes/x.txt",
        "",
        "README.md",
    ],
)
def test_paths_that_escape_or_are_not_pages_are_refused(store, bad, tmp_path):
    before = store.head()
    with pytest.raises(PathError):
        store.write(Page.new("Escape", "note", "x", path=bad) if bad else Page("", {}, "x"), CLAUDE)
    assert store.head() == before
    assert not (tmp_path / "escape.md").exists()


def test_symlink_pointing_out_of_the_wiki_is_refused(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (store.root / "notes").symlink_to(outside)
    before = store.head()
    with pytest.raises(PathError, match="symbolic link"):
        store.write(Page.new("Sneaky", "note", "x"), CLAUDE)
    assert list(outside.iterdir()) == [] and store.head() == before


def test_broken_front_matter_is_reported_with_the_file_and_left_alone(store):
    broken = "---\ntitle: Broken\ntags: [a, b\n---\nbody\n"
    (store.root / "notes").mkdir()
    (store.root / "notes" / "broken.md").write_text(broken)
    store.commit_pending()
    with pytest.raises(PageError, match=r"^notes/broken\.md: line 4: invalid YAML"):
        store.read("notes/broken.md")
    errors: list[str] = []
    assert list(store.pages(errors=errors)) == []
    assert errors and errors[0].startswith("notes/broken.md")
    assert (store.root / "notes" / "broken.md").read_text() == broken


def test_a_hand_edit_is_committed_as_the_person_before_an_agent_overwrites_it(store):
    written = store.write(gotcha("agent text"), CLAUDE)
    file = store.root / written.path
    file.write_text(file.read_text().replace("agent text", "the person's careful words"))
    store.write(gotcha("agent rewrite"), CLAUDE)
    authors = git(store.root, "log", "-2", "--format=%an|%s").splitlines()
    assert authors == ["claude-code|update: gotchas/jwt-refresh-before-retry", f"Test Person|edit: {written.path}"]
    assert "the person's careful words" in git(store.root, "show", f"HEAD~1:{written.path}")
    assert_clean(store)


def test_commit_pending_commits_new_changed_and_deleted_files(store):
    a = store.write(Page.new("A", "note", "a"), CLAUDE)
    b = store.write(Page.new("B", "note", "b"), CLAUDE)
    (store.root / a.path).write_text("# A\n\nchanged by hand\n")
    (store.root / b.path).unlink()
    (store.root / "notes" / "new.md").write_text("# New\n")
    (store.root / "notes" / ".new.md.swp").write_text("vim swap")  # ignored
    assert sorted(store.pending()) == sorted([a.path, b.path, "notes/new.md"])
    commit = store.commit_pending()
    assert commit and git(store.root, "log", "-1", "--format=%an|%s").strip() == "Test Person|edit: 3 files"
    assert store.pending() == {} and store.commit_pending() is None
    assert ".new.md.swp" not in git(store.root, "ls-files")


def test_git_cli_commits_in_the_wiki_are_picked_up(store):
    store.write(gotcha(), CLAUDE)
    (store.root / "notes").mkdir()
    (store.root / "notes" / "by-git.md").write_text("# By git\n")
    git(store.root, "add", "-A")
    git(store.root, "commit", "-q", "-m", "hand commit")
    store.write(Page.new("After git", "note", "x"), CLAUDE)
    assert store.exists("notes/by-git.md")
    assert_clean(store)


def test_index_version_4_is_read_and_rewritten(store):
    store.write(gotcha(), CLAUDE)
    git(store.root, "update-index", "--index-version", "4")
    store.write(Page.new("After v4", "note", "x"), CLAUDE)
    assert_clean(store)


def test_commit_records_the_modes_it_is_given(store):
    """A merge hands `commit` the modes of files that are not on disk yet (another
    machine's executable script): they are recorded, not the default of a missing file."""
    store.commit({"x.md": b"#!/bin/sh\necho hi\n", "y.md": b"plain\n"}, "merge: x", CLAUDE, modes={"x.md": 0o100755})
    tree = {line.split()[3]: line.split()[0] for line in git(store.root, "ls-tree", "HEAD").splitlines()}
    assert tree["x.md"] == "100755" and tree["y.md"] == "100644"
    assert os.access(store.root / "x.md", os.X_OK)
    assert_clean(store)


def test_find_by_path_title_or_id(store):
    written = store.write(gotcha(), CLAUDE)
    assert store.find(written.path) == written.path
    assert store.find(written.path.removesuffix(".md")) == written.path
    assert store.find("JWT refresh before retry") == written.path
    assert store.find("jwt REFRESH before retry") == written.path
    assert store.find(written.page.id) == written.path
    with pytest.raises(NotFoundError):
        store.find("nothing like it")


def test_oversized_page_is_refused(store):
    before = store.head()
    with pytest.raises(PageError, match="page limit"):
        store.write(Page.new("Huge", "note", "x" * (3 * 1024 * 1024)), CLAUDE)
    assert store.head() == before


WRITER = textwrap.dedent("""
    import sys
    from wiki_memory.pages import Page
    from wiki_memory.store import Author, Store
    store = Store(sys.argv[1])
    worker = sys.argv[2]
    for i in range(int(sys.argv[3])):
        store.write(Page.new(f"worker {worker} page {i}", "note", f"text of {worker}/{i}"),
                    Author.agent(f"agent-{worker}"), session_id=f"s-{worker}")
""")


def test_eight_processes_writing_at_once_lose_nothing(store, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen([sys.executable, str(script), str(store.root), str(w), "25"], stderr=subprocess.PIPE)
        for w in range(8)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    paths = [p for p, _ in store.page_files()]
    assert len(paths) == 200
    assert len(git(store.root, "log", "--format=%h").split()) == 201  # 200 pages + init
    for w in range(8):
        assert len(git(store.root, "log", "--grep", f"Session-Id: s-{w}$", "--format=%h").split()) == 25
    assert {store.read(p).body.strip().rsplit("\n", 1)[-1] for p in paths} == {
        f"text of {w}/{i}" for w in range(8) for i in range(25)
    }
    assert_clean(store)


def test_a_writer_killed_mid_commit_leaves_a_consistent_wiki(store, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    for attempt, delay in enumerate((0.35, 0.5, 0.65, 0.8)):
        proc = subprocess.Popen([sys.executable, str(script), str(store.root), f"k{attempt}", "1000"])
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        survivor = Store(store.root)
        survivor.write(Page.new(f"after kill {attempt}", "note", "still works"), CLAUDE)
        git(store.root, "fsck", "--strict")
        # Every committed page is on disk as committed, and nothing on disk is uncommitted.
        assert survivor.pending() == {}
        assert git(store.root, "status", "--porcelain") == ""
        for path, _ in survivor.page_files():
            parse_page((store.root / path).read_text(), path)


def test_a_commit_interrupted_after_it_landed_is_finished_by_the_next_writer(store, monkeypatch):
    # Deterministic companion of the kill test: die right after the branch moved, before
    # the working tree was written.
    def die(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(WorkTree, "write_file", die)
    with pytest.raises(KeyboardInterrupt):
        store.write(gotcha("landed"), CLAUDE)
    monkeypatch.undo()
    assert git(store.root, "log", "-1", "--format=%s").strip() == "remember: gotchas/jwt-refresh-before-retry"
    assert not (store.root / "gotchas" / "jwt-refresh-before-retry.md").exists()
    survivor = Store(store.root)
    survivor.write(Page.new("Next", "note", "x"), CLAUDE)
    assert "landed" in (store.root / "gotchas" / "jwt-refresh-before-retry.md").read_text()
    assert_clean(store)
    # The person's history is not polluted by a bogus "edit" reverting the landed commit.
    assert "edit:" not in git(store.root, "log", "--format=%s")


def test_loose_objects_are_packed_and_history_still_reads(store):
    for i in range(5):
        store.write(gotcha(f"version {i}"), CLAUDE)
    store.pack()
    counts = dict(line.split(": ") for line in git(store.root, "count-objects", "-v").splitlines())
    assert counts["count"] == "0" and int(counts["in-pack"]) > 0
    store.write(gotcha("after packing"), CLAUDE)
    assert len(store.log("gotchas/jwt-refresh-before-retry.md")) == 6
    assert_clean(store)


def test_history_follows_a_rename_made_by_hand(store):
    store.write(gotcha("v1"), CLAUDE)
    store.write(gotcha("v2"), CLAUDE)
    git(store.root, "mv", "gotchas/jwt-refresh-before-retry.md", "gotchas/renamed-by-hand.md")
    git(store.root, "commit", "-q", "-m", "rename by hand")
    store.write(Page.new("Unrelated", "note", "x"), CLAUDE)
    subjects = [c.subject for c in store.log("gotchas/renamed-by-hand.md")]
    assert subjects == [
        "rename by hand",
        "update: gotchas/jwt-refresh-before-retry",
        "remember: gotchas/jwt-refresh-before-retry",
    ]
