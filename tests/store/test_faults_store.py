"""Faults the store must survive: what a killed writer leaves, damaged files, links, page
names that collide, and input it must refuse (issue 21). Each test fails on the code before
the fix it names."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.pages import Page
from wiki_memory.store import Author, Store

CLAUDE = Author.agent("claude-code")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "wiki")


def assert_clean(store: Store) -> None:
    git(store.root, "fsck", "--strict")
    assert git(store.root, "status", "--porcelain") == ""


def litter_of(root: Path) -> list[str]:
    """Lock and temporary files anywhere in a repository (working tree and .git)."""
    found = []
    for path in root.rglob("*"):
        name = path.name
        if name in ("wiki-memory.lock", "wiki-memory-push.lock", "sync.lock"):
            continue  # the writer locks themselves: empty and unlocked between writers
        if name.endswith(".lock") or name.startswith(("tmp_pack_", "tmp")) or ".wm-tmp-" in name:
            found.append(str(path.relative_to(root)))
    return sorted(found)


# A writer that dies holding the lock, having made the files a kill -9 mid-write leaves.
DIE_HOLDING_THE_LOCK = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from wiki_memory.store import Store
    store = Store(sys.argv[1])
    with store.lock:
        for rel in sys.argv[2:]:
            path = store.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
        os.kill(os.getpid(), signal.SIGKILL)
""")


def die_holding_the_lock(store: Store, tmp_path: Path, *litter: str) -> None:
    script = tmp_path / "die.py"
    script.write_text(DIE_HOLDING_THE_LOCK)
    proc = subprocess.run([sys.executable, str(script), str(store.root), *litter], capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()


# 1. A stale lock wedges every later write ------------------------------------------------


def test_a_writer_killed_writing_an_object_does_not_wedge_the_next_writes(store, tmp_path):
    """Killed while dulwich wrote a loose object, a writer left `objects/xx/<sha>.lock`; a
    hand edit making the same blob then failed with FileLocked on every write, watch and
    sync. Its git lock files are the dead owner's: the next writer removes them."""
    from dulwich.objects import Blob

    text = b"# Hand\n\nwritten by hand\n"
    sha = Blob.from_string(text).id.decode()
    die_holding_the_lock(
        store,
        tmp_path,
        f".git/objects/{sha[:2]}/{sha[2:]}.lock",
        ".git/index.lock",
        ".git/refs/heads/main.lock",
        ".git/objects/pack/tmpabc123.pack",
        "notes/.page.md.wm-tmp-4242",
    )
    (store.root / "notes").mkdir(exist_ok=True)
    (store.root / "notes" / "hand.md").write_bytes(text)
    survivor = Store(store.root)
    edits = survivor.commit_edits()
    assert [e.paths for e in edits] == [("notes/hand.md",)]
    survivor.write(Page.new("After the kill", "note", "still works"), CLAUDE)
    assert litter_of(store.root) == []
    assert_clean(store)


def test_a_stale_object_lock_without_an_owner_record_is_broken(store):
    """A loose object's lock with no dead owner on record (another tool, an older version):
    objects are named by their content, so a lock older than a few seconds guards nothing."""
    from dulwich.objects import Blob

    text = b"# Stale\n\nsame bytes\n"
    sha = Blob.from_string(text).id.decode()
    lock = store.git_dir / "objects" / sha[:2] / f"{sha[2:]}.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_bytes(b"")
    old = time.time() - 60
    os.utime(lock, (old, old))
    (store.root / "stale.md").write_bytes(text)
    assert store.commit_pending() is not None
    assert not lock.exists()
    assert_clean(store)


def test_a_lock_taken_by_a_live_writer_is_never_broken(store, tmp_path):
    """The owner record only counts once its owner is gone: while a writer holds the lock,
    another waits, and finds its files untouched."""
    index_lock = store.git_dir / "index.lock"
    with store.lock:
        index_lock.write_bytes(b"")
        other = Store(store.root)
        other.lock.timeout = 0.2
        from wiki_memory.errors import ConflictError

        with pytest.raises(ConflictError):
            other.write(Page.new("Waits", "note", "x"), CLAUDE)
        assert index_lock.exists()
        index_lock.unlink()


DIE_HOLDING_A_LOCK = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from wiki_memory.store.lock import WriterLock
    lock, top = Path(sys.argv[1]), Path(sys.argv[2])
    with WriterLock(lock):
        for rel in sys.argv[3:]:
            (top / rel).write_bytes(b"")
        os.kill(os.getpid(), signal.SIGKILL)
""")


def synced_with_a_bare_remote(tmp_path: Path, code_repo: Path) -> tuple[Path, Path]:
    """(a bare remote, the project's wiki) after a first page and a first sync."""
    from wiki_memory.memory import Memory

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    with Memory.at(code_repo) as memory:
        memory.write("First", "before the faults", "note")
        memory.add_remote("origin", str(remote))
        memory.sync()
        return remote, memory.wiki


def test_a_sync_killed_mid_push_does_not_wedge_the_remote_or_the_wiki(tmp_path, code_repo):
    """A sync killed while pushing into a bare repository on this machine left
    `refs/heads/main.lock` and an empty temporary pack there, and every later sync failed;
    one killed mid-fetch left a temporary pack in the wiki, or its remote-tracking ref's
    lock, on which every later sync failed with a traceback (found by scripts/soak.py).
    The next sync removes them."""
    from wiki_memory.memory import Memory

    remote, wiki = synced_with_a_bare_remote(tmp_path, code_repo)
    script = tmp_path / "die.py"
    script.write_text(DIE_HOLDING_A_LOCK)
    for lock, top, files in (
        (remote / "wiki-memory-push.lock", remote, ["refs/heads/main.lock", "objects/pack/tmpk1ll3d.pack"]),
        (
            wiki / ".git/wiki-memory/sync.lock",
            wiki / ".git",
            ["objects/tmp_pack_k1ll3d", "refs/remotes/origin/main.lock"],
        ),
    ):
        proc = subprocess.run([sys.executable, str(script), str(lock), str(top), *files], capture_output=True)
        assert proc.returncode == -9, proc.stderr.decode()
    with Memory.at(code_repo) as memory:
        memory.write("Second", "after the kill", "note")
        report = memory.sync()
    assert report.sent_commits == 1
    assert litter_of(remote) == [] and litter_of(wiki) == []
    git(remote, "fsck", "--strict")
    assert "remember: notes/second" in git(remote, "log", "--format=%s", "main")


# 6. Symlinks -----------------------------------------------------------------------------------


def test_stray_symlinks_in_the_wiki_are_never_followed_nor_committed(tmp_path, code_repo):
    """One stray, uncommitted symlink made every commit of hand edits fail, and `watch`
    retried it forever. Links are not memory: left alone, never committed or followed."""
    from wiki_memory.memory import Memory

    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nnot memory\n")
    with Memory.at(code_repo) as memory:
        memory.write("First", "hello", "note")
        wiki = memory.wiki
    (wiki / "notes" / "evil.md").symlink_to(outside)
    (wiki / "loop").symlink_to(wiki / "notes")
    (wiki / "notes" / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (wiki / "notes" / "hand.md").write_text("# Hand\n\nwritten by hand\n")
    result = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "watch", "--once"], cwd=code_repo, capture_output=True, text=True
    )
    assert result.returncode == 0 and "retrying" not in result.stderr, result.stderr
    with Memory.at(code_repo) as memory:
        assert memory.status()["pending_edits"] == []
        memory.write("Second", "after the links", "note")
    tree = git(wiki, "ls-tree", "-r", "HEAD")
    assert "notes/hand.md" in tree and "120000" not in tree and "evil" not in tree and "loop" not in tree
    assert outside.read_text() == "# Outside\n\nnot memory\n"


def test_a_remote_commit_adding_a_symlink_is_refused_and_sync_recovers(tmp_path, code_repo):
    """A remote commit adding a symlink was checked out by `sync` (an editor opening the
    page then edited the file it points at), and every later sync failed. It is refused
    with one line, nothing changes here, and once the remote drops it sync works again."""
    from wiki_memory.memory import Memory
    from wiki_memory.sync import SyncError

    remote, wiki = synced_with_a_bare_remote(tmp_path, code_repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    (clone / "notes" / "link.md").symlink_to("/etc/passwd")
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "add a link")
    git(clone, "push", "-q", "origin", "main")
    with Memory.at(code_repo) as memory:
        head = memory.store().head()
        with pytest.raises(SyncError, match="symbolic link"):
            memory.sync()
        assert memory.store().head() == head
        assert not (wiki / "notes" / "link.md").is_symlink()
    git(clone, "rm", "-q", "notes/link.md")
    (clone / "notes" / "link.md").write_text("# Link\n\nnow a page\n")
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "a page instead")
    git(clone, "push", "-q", "origin", "main")
    with Memory.at(code_repo) as memory:
        memory.sync()
    assert (wiki / "notes" / "link.md").read_text() == "# Link\n\nnow a page\n"
    assert not (wiki / "notes" / "link.md").is_symlink()
    assert_clean(Store(wiki))


# 8. Damage healed -----------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["flipped", "cut", "garbage", "empty"])
def test_a_damaged_git_index_is_rebuilt_from_head(store, damage):
    """A corrupted `.git/index` made every write fail (a deleted one was handled). It is a
    mirror of HEAD: rebuilt from it, and the write goes through."""
    store.write(Page.new("Before", "note", "x"), CLAUDE)
    index = store.git_dir / "index"
    data = bytearray(index.read_bytes())
    if damage == "flipped":
        data[len(data) // 2] ^= 0xFF
    elif damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"DIRC" + os.urandom(200))
    else:
        data = bytearray()
    index.write_bytes(bytes(data))
    survivor = Store(store.root)
    survivor.write(Page.new("After", "note", "still works"), CLAUDE)
    assert survivor.pending() == {}
    assert_clean(store)
    assert "notes/after.md" in git(store.root, "ls-files")


def test_any_damage_to_the_search_index_is_rebuilt(code_repo):
    """Some corruptions of index.sqlite fail inside a PRAGMA with text that is not UTF-8
    (`Could not decode to UTF-8`, or UnicodeDecodeError), which was not taken for damage:
    the index was never rebuilt and every search failed. Flipped bytes anywhere in the
    file, a damaged name in its schema among them, leave search working."""
    import random
    import sqlite3

    from wiki_memory.memory import Memory

    with Memory.at(code_repo) as memory:
        for i in range(30):
            memory.write(f"Runbook {i}", f"Drain queue q{i}, then restart ingest worker {i}.", "procedure")
        assert memory.search("restart ingest worker", mode="fts").results
        path = memory.project.index_path
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    good = path.read_bytes()
    damaged = []
    schema_at = good.find(b"superseded_by TEXT")
    damaged.append(good[: schema_at + 3] + b"\xff" + good[schema_at + 4 :])  # a column's name, not UTF-8
    rng = random.Random(21)
    for _ in range(25):
        data = bytearray(good)
        for _flip in range(rng.choice((1, 4, 32))):
            data[rng.randrange(100, len(data))] ^= 1 << rng.randrange(8)
        damaged.append(bytes(data))
    for data in damaged:
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.write_bytes(data)
        with Memory.at(code_repo) as memory:
            found = memory.search("restart ingest worker 7", mode="fts").results
            assert found and found[0].path == "procedures/runbook-7.md"
