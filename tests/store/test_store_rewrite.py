"""History rewrite: scan a wiki's whole history for secrets, and forget a string or a page
for good, checked with the git CLI on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.capture.redact import find
from wiki_memory.errors import ConflictError
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store
from wiki_memory.store.rewrite import forget, scan

TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape
PASSWORD = "Hx7QmL2vZp9-Kt4"
ALICE = Author("Alice", "alice@example.com")
BOB = Author("Bob", "bob@example.com")


def page(path: str, title: str, body: str, page_id: str | None = None) -> Page:
    meta = {"title": title, "type": "note", **({"id": page_id} if page_id else {})}
    return Page(path, meta, body)


@pytest.fixture
def wiki(tmp_path: Path) -> Store:
    """A wiki whose history holds the token in two pages, a commit message and a later
    edit that removed it again, and a page renamed once."""
    store = Store.create(tmp_path / "wiki")
    store.write(page("notes/ci.md", "CI", "The runner uses the usual settings.\n"), ALICE)
    store.write(page("notes/deploy.md", "Deploy", f"export GITHUB_TOKEN={TOKEN}\nthen run make deploy\n"), ALICE)
    store.write(page("notes/keep.md", "Keep", "Nothing secret here, ever.\n"), BOB)
    store.commit({"notes/log.md": b"# Log\n\nrotated the token\n"}, f"remember: rotated {TOKEN}", BOB)
    store.write(page("notes/old-name.md", "Leaky", f"db password: {PASSWORD}\n", page_id="01LEAKYPAGE"), ALICE)
    store.move("notes/old-name.md", "notes/leaky.md", ALICE)
    store.write(page("notes/deploy.md", "Deploy", "export GITHUB_TOKEN=$GITHUB_TOKEN\nthen run make deploy\n"), BOB)
    store.write(page("notes/ci.md", "CI", f"The runner uses {TOKEN} too.\n"), BOB)
    store.write(page("notes/keep.md", "Keep", "Nothing secret here, ever. Still.\n"), BOB)
    return store


def all_objects(repo: Path) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True
    ).stdout


def fsck(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True, text=True)


def log_without(secret: str, repo: Path) -> list[tuple[str, str, str, str]]:
    """(author, author date, committer date, message with the secret scrubbed) of every commit."""
    out = git(repo, "log", "--all", "--format=%an <%ae>%x00%at%x00%ct%x00%B%x01")
    rows = []
    for record in out.split("\x01"):
        if record.strip():
            author, at, ct, message = record.strip("\n").split("\x00")
            rows.append((author, at, ct, message.replace(secret, "[forgotten]").strip()))
    return rows


def test_scan_finds_every_secret_in_history_and_shows_none(wiki):
    findings = scan(wiki, find)
    where = {(f.path, f.family) for f in findings}
    assert ("notes/deploy.md", "github-token") in where
    assert ("notes/ci.md", "github-token") in where
    assert (None, "github-token") in where  # the commit message
    assert any(f.path in ("notes/old-name.md", "notes/leaky.md") for f in findings)
    assert ("notes/keep.md", "github-token") not in where
    for f in findings:
        assert TOKEN not in f.preview and PASSWORD not in f.preview
        assert f.line >= 1 and len(f.commit) == 40
    # Each version once, at the commit that introduced it: the deploy page's token is one finding.
    assert len([f for f in findings if f.path == "notes/deploy.md"]) == 1


def test_forget_dry_run_lists_and_changes_nothing(wiki):
    root = wiki.root
    head = wiki.head()
    before = all_objects(root)
    report = forget(wiki, strings=[TOKEN], dry_run=True)
    assert report.dry_run and report.changed
    assert wiki.head() == head and all_objects(root) == before
    assert set(report.files) == {"notes/deploy.md", "notes/ci.md"}
    subjects = [c.subject for c in report.commits]
    assert "remember: rotated [forgotten]" in subjects
    assert all(TOKEN not in s for s in subjects)
    assert report.head_after != report.head_before


def test_forget_a_string_leaves_no_trace_and_keeps_everything_else(wiki):
    root = wiki.root
    keep_before = wiki.read_bytes("notes/keep.md")
    leaky_before = wiki.read_bytes("notes/leaky.md")
    log_before = log_without(TOKEN, root)
    assert TOKEN.encode() in all_objects(root)

    report = forget(wiki, strings=[TOKEN])

    assert not report.dry_run and report.objects_removed > 0
    assert TOKEN.encode() not in all_objects(root)
    assert TOKEN not in git(root, "log", "-p", "--all")
    check = fsck(root)
    assert check.returncode == 0 and "error" not in check.stderr.lower(), check.stderr
    # Every other page byte for byte; the scrubbed ones keep the rest of their text.
    assert wiki.read_bytes("notes/keep.md") == keep_before
    assert wiki.read_bytes("notes/leaky.md") == leaky_before
    assert wiki.read_bytes("notes/ci.md").decode().endswith("The runner uses [forgotten] too.\n")
    # Authors, dates and messages as they were (the token's place marked).
    assert log_without(TOKEN, root) == log_before
    assert "remember: rotated [forgotten]" in git(root, "log", "--format=%s")
    # The working tree and the git index follow the new HEAD.
    assert git(root, "status", "--porcelain") == ""
    assert (root / "notes" / "ci.md").read_bytes() == wiki.read_bytes("notes/ci.md")
    assert git(root, "rev-parse", "HEAD").strip() == report.head_after
    assert git(root, "reflog", "--all") == ""
    # And the wiki goes on working.
    wiki.write(page("notes/after.md", "After", "written after the rewrite\n"), ALICE)
    assert fsck(root).returncode == 0
    assert not [f for f in scan(wiki, find) if f.family == "github-token"]


def test_forget_a_page_with_its_whole_history(wiki):
    root = wiki.root
    keep_before = wiki.read_bytes("notes/keep.md")
    count_before = len(git(root, "rev-list", "--all").split())

    report = forget(wiki, paths=["notes/leaky.md"])

    assert set(report.files) == {"notes/leaky.md", "notes/old-name.md"}  # its renames followed by id
    assert PASSWORD.encode() not in all_objects(root)
    assert b"01LEAKYPAGE" not in all_objects(root)
    assert not (root / "notes" / "leaky.md").exists()
    assert not wiki.exists("notes/leaky.md")
    assert wiki.read_bytes("notes/keep.md") == keep_before
    # The two commits that only created and renamed it are gone; the others stay.
    dropped = [c for c in report.commits if c.new is None]
    assert len(dropped) == 2
    assert len(git(root, "rev-list", "--all").split()) == count_before - 2
    assert fsck(root).returncode == 0
    assert git(root, "status", "--porcelain") == ""


def test_uncommitted_edits_are_committed_then_rewritten(wiki):
    root = wiki.root
    (root / "notes" / "keep.md").write_text(f"hand edit with {TOKEN}\n")
    dry = forget(wiki, strings=[TOKEN], dry_run=True)
    assert dry.pending_edits == ("notes/keep.md",)
    report = forget(wiki, strings=[TOKEN])
    assert report.pending_edits == ("notes/keep.md",)
    assert (root / "notes" / "keep.md").read_text() == "hand edit with [forgotten]\n"
    assert TOKEN.encode() not in all_objects(root)
    assert git(root, "log", "-1", "--format=%an").strip() != ""  # the edit commit is history
    assert git(root, "status", "--porcelain") == ""


def test_tags_move_and_remote_tracking_refs_go(wiki):
    root = wiki.root
    head = git(root, "rev-parse", "HEAD").strip()
    first = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    git(root, "tag", "v1", head)
    git(root, "tag", "-a", "v0", first, "-m", "the beginning")
    git(root, "update-ref", "refs/remotes/origin/main", head)
    report = forget(wiki, strings=[TOKEN])
    assert report.refs["refs/remotes/origin/main"] == (head, None)
    assert git(root, "rev-parse", "v1").strip() == report.head_after
    assert git(root, "rev-parse", "v0^{commit}").strip() == first  # untouched history keeps its ids
    assert "refs/remotes/origin/main" not in git(root, "show-ref")
    assert TOKEN.encode() not in all_objects(root)
    assert fsck(root).returncode == 0


def test_nothing_to_forget_changes_nothing(wiki):
    head = wiki.head()
    report = forget(wiki, strings=["not-in-this-wiki"])
    assert not report.changed and wiki.head() == head
    with pytest.raises(ValueError):
        forget(wiki)


def test_a_wiki_edited_during_forget_is_left_alone(wiki, monkeypatch):
    root = wiki.root
    head = wiki.head()
    from wiki_memory.store.rewrite import forgetting

    original = forgetting._write_pack

    def meanwhile(*args, **kwargs):
        written = original(*args, **kwargs)
        (root / "notes" / "keep.md").write_text("saved by a person mid-rewrite\n")
        return written

    monkeypatch.setattr(forgetting, "_write_pack", meanwhile)
    with pytest.raises(ConflictError):
        forget(wiki, strings=[TOKEN])
    assert wiki.head() == head
    assert (root / "notes" / "keep.md").read_text() == "saved by a person mid-rewrite\n"
    assert fsck(root).returncode == 0
