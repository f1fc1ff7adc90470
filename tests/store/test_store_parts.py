"""The rules the parts of a `Store` share through their one context, checked with the git
CLI: the machine name every commit records, the person's edits committed before an agent's
commit of the same file (and only then), the observers that hear every landed commit, and
two stores on one wiki keeping its index true."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wiki_memory.pages import Page
from wiki_memory.store import Author, Store

AGENT = Author.agent("codex")
PERSON = Author("Ada", "ada@example.com")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
    ).stdout


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "wiki", PERSON)


def trailer(root: Path, key: str, rev: str = "HEAD") -> str:
    return git(root, "log", "-1", f"--format=%(trailers:key={key},valueonly)", rev).strip()


def test_a_new_host_name_is_recorded_by_every_kind_of_commit(store):
    store.host = "desktop"
    store.write(Page.new("Retry policy", "decision", "Retry twice."), AGENT)
    assert trailer(store.root, "Host") == "desktop"
    (store.root / "notes").mkdir(exist_ok=True)
    (store.root / "notes" / "mine.md").write_text("# Mine\n\nby hand\n")
    assert store.commit_pending(PERSON)
    assert trailer(store.root, "Host") == "desktop"
    store.host = "laptop"
    store.commit({"notes/raw.md": b"# Raw\n"}, "raw: one file", AGENT, session_id="s-1")
    assert trailer(store.root, "Host") == "laptop" and trailer(store.root, "Session-Id") == "s-1"
    assert store.host == "laptop"


def test_commit_takes_the_persons_edit_of_the_same_file_first_and_no_other(store):
    store.commit({"notes/a.md": b"# A\n\nagent\n", "notes/b.md": b"# B\n\nagent\n"}, "two pages", AGENT)
    (store.root / "notes" / "a.md").write_text("# A\n\nthe person's word\n")
    (store.root / "notes" / "b.md").write_text("# B\n\nthe person's other word\n")
    store.commit({"notes/a.md": b"# A\n\nagent again\n"}, "agent rewrites a", AGENT)
    subjects = git(store.root, "log", "--format=%s|%an", "-3").splitlines()
    person = Author.person(store.root).name  # the person's git identity, not the agent's
    assert subjects[:2] == ["agent rewrites a|codex", f"edit: notes/a.md|{person}"]
    assert "the person's word" in git(store.root, "show", "HEAD~1:notes/a.md")
    # b.md was not written: the person's edit of it stays theirs to commit, untouched.
    assert git(store.root, "status", "--porcelain") == " M notes/b.md\n"
    # Told not to, commit leaves even the same file's edit alone (the caller did it already).
    (store.root / "notes" / "a.md").write_text("# A\n\nsaved again\n")
    store.commit({"notes/c.md": b"# C\n"}, "c", AGENT, commit_hand_edits=False)
    assert git(store.root, "log", "-1", "--format=%s") == "c\n"
    assert sorted(git(store.root, "status", "--porcelain").splitlines()) == [" M notes/a.md", " M notes/b.md"]


def test_observers_hear_every_landed_commit_whichever_part_made_it(store):
    heard: list[tuple[str, tuple[str, ...]]] = []
    store.on_commit.append(lambda commit, paths: heard.append((commit, paths)))
    written = store.write(Page.new("Retry policy", "decision", "Retry twice."), AGENT)
    assert heard[-1] == (git(store.root, "rev-parse", "HEAD").strip(), (written.path,))
    (store.root / "notes").mkdir(exist_ok=True)
    (store.root / "notes" / "mine.md").write_text("# Mine\n")
    edits = store.commit_edits()
    assert heard[-1] == (edits[0].commit, ("notes/mine.md",))
    reverted = store.revert("HEAD", AGENT)
    assert heard[-1] == (reverted, ("notes/mine.md",))
    # A commit made elsewhere (as another machine's, by sync), landed with `advance`.
    env = {"GIT_INDEX_FILE": str(store.root.parent / "other-index")}
    git(store.root, "read-tree", "HEAD", env=env)
    blob = git(store.root, "hash-object", "-w", "--stdin", stdin="# Far\n\nfrom another machine\n").strip()
    git(store.root, "update-index", "--add", "--cacheinfo", f"100644,{blob},notes/far.md", env=env)
    tree = git(store.root, "write-tree", env=env).strip()
    other = git(store.root, "commit-tree", tree, "-p", "HEAD", "-m", "far", env={"GIT_AUTHOR_NAME": "B"}).strip()
    assert store.advance(other) == ("notes/far.md",)
    assert heard[-1] == (other, ("notes/far.md",))
    assert (store.root / "notes" / "far.md").read_text() == "# Far\n\nfrom another machine\n"
    assert git(store.root, "status", "--porcelain") == ""
    assert len(heard) == 4


def test_two_stores_on_one_wiki_keep_its_index_true(store):
    other = Store(store.root)
    store.write(Page.new("First", "note", "one"), AGENT)
    other.write(Page.new("Second", "note", "two"), AGENT)  # its cached index is stale: HEAD moved
    store.write(Page.new("Third", "note", "three"), AGENT)
    tracked = git(store.root, "ls-files").split()
    assert {"notes/first.md", "notes/second.md", "notes/third.md"} <= set(tracked)
    assert git(store.root, "status", "--porcelain") == ""
    assert git(store.root, "diff", "--cached", "--name-only") == ""
    assert other.pending() == {} and store.pending() == {}
