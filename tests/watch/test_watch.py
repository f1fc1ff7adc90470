"""The editor watcher, on real filesystem events (inotify through watchdog) in a real wiki.

Every wait is on a condition with a timeout, never a fixed sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git

from wiki_memory.cli import main
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store
from wiki_memory.watch import Watcher

CLAUDE = Author.agent("claude-code")
TIMEOUT = 30.0


def wait_for(predicate, timeout: float = TIMEOUT, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


def subjects(store: Store) -> list[str]:
    return git(store.root, "log", "--format=%an|%s").splitlines()


def head_text(store: Store, path: str) -> str | None:
    result = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=store.root, capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


def assert_clean(store: Store) -> None:
    git(store.root, "fsck", "--strict")
    assert git(store.root, "status", "--porcelain") == ""


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "wiki")


class Running:
    """A watcher running in a thread, as `wiki-memory watch` runs it."""

    def __init__(self, store: Store):
        self.problems: list[str] = []
        # A second Store object: the watcher's thread owns its own, as a separate process would.
        self.watcher = Watcher(
            Store(store.root), quiet=0.3, rescan=0, on_problem=self.problems.append, author=Author.person(store.root)
        )
        self.stop_event = threading.Event()
        self.watcher.start()
        self.thread = threading.Thread(target=self.watcher.run, args=(self.stop_event,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=TIMEOUT)
        self.watcher.stop()


@pytest.fixture
def running(store):
    r = Running(store)
    yield r
    r.close()


def page(store: Store, title: str = "Retry policy", body: str = "Retry twice, then fail.") -> Path:
    written = store.write(Page.new(title, "decision", body), CLAUDE)
    return store.root / written.path


def test_an_editor_style_save_is_one_commit_as_the_person(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    before = len(subjects(store))
    new_text = file.read_text().replace("Retry twice", "Retry three times")
    # Write a temporary file beside the page and rename it over the page.
    tmp = file.with_name(file.name + ".tmp")
    tmp.write_text(new_text)
    os.replace(tmp, file)
    wait_for(lambda: head_text(store, rel) == new_text, what="the save to be committed")
    log = subjects(store)
    assert log[0] == f"Test Person|edit: {rel}"
    assert len(log) == before + 1
    assert ".tmp" not in git(store.root, "ls-files")
    assert_clean(store)


def test_the_committed_file_is_left_as_the_editor_wrote_it(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    file.write_text(file.read_text() + "\nA person's note.\n")
    inode, mtime = os.stat(file).st_ino, os.stat(file).st_mtime_ns
    wait_for(lambda: "A person's note." in (head_text(store, rel) or ""), what="the edit to be committed")
    # Rewriting the file would make an open editor warn that it changed on disk.
    assert (os.stat(file).st_ino, os.stat(file).st_mtime_ns) == (inode, mtime)
    assert_clean(store)


def test_a_jetbrains_safe_write_is_one_commit_and_leaves_no_litter(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    new_text = file.read_text() + "\nEdited in PyCharm.\n"
    tmp = file.with_name(file.name + "___jb_tmp___")
    old = file.with_name(file.name + "___jb_old___")
    tmp.write_text(new_text)
    os.rename(file, old)
    os.rename(tmp, file)
    old.unlink()
    wait_for(lambda: head_text(store, rel) == new_text, what="the save to be committed")
    assert subjects(store)[0] == f"Test Person|edit: {rel}"
    assert "jb_" not in git(store.root, "ls-files")
    assert_clean(store)


def test_a_vim_save_with_swap_file_backup_and_probe_commits_only_the_page(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    before = len(subjects(store))
    swap = file.parent / f".{file.name}.swp"
    swap.write_bytes(b"b0VIM 9.0\0" + os.urandom(64))  # stays while vim is open
    probe = file.parent / "4913"  # vim's check that it may create files here
    probe.write_text("")
    probe.unlink()
    new_text = file.read_text().replace("then fail", "then open the circuit")
    backup = file.with_name(file.name + "~")
    os.rename(file, backup)  # backupcopy=no: the original becomes the backup
    file.write_text(new_text)
    backup.unlink()
    wait_for(lambda: head_text(store, rel) == new_text, what="the save to be committed")
    swap.write_bytes(b"b0VIM 9.0\0" + os.urandom(64))  # vim touches its swap file again
    # A hand edit elsewhere, committed after the swap file event, shows the swap file was passed over.
    marker = store.root / "notes" / "marker.md"
    marker.parent.mkdir(exist_ok=True)
    marker.write_text("# Marker\n")
    wait_for(lambda: head_text(store, "notes/marker.md"), what="the marker to be committed")
    log = subjects(store)
    assert log[:2] == ["Test Person|edit: notes/marker.md", f"Test Person|edit: {rel}"]
    assert len(log) == before + 2
    tracked = git(store.root, "ls-files")
    assert ".swp" not in tracked and "~" not in tracked and "4913" not in tracked
    assert swap.exists()
    assert_clean(store)  # the wiki's .gitignore hides the swap file from git too


def test_a_deletion_is_committed(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    file.unlink()
    wait_for(lambda: head_text(store, rel) is None, what="the deletion to be committed")
    assert subjects(store)[0] == f"Test Person|edit: {rel}"
    assert rel not in git(store.root, "ls-files")
    assert_clean(store)


def test_a_rename_is_one_commit_that_git_follows(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    (store.root / "notes").mkdir()
    os.rename(file, store.root / "notes" / file.name)
    new_rel = f"notes/{file.name}"
    wait_for(lambda: head_text(store, new_rel) and head_text(store, rel) is None, what="the rename")
    assert subjects(store)[0] == f"Test Person|edit: {rel} -> {new_rel}"
    follow = git(store.root, "log", "--follow", "--format=%s", "--", new_rel).splitlines()
    assert follow == [f"edit: {rel} -> {new_rel}", "remember: decisions/retry-policy"]
    assert_clean(store)


def test_a_renamed_folder_takes_its_pages_along(store, running):
    first = page(store, "Retry policy")
    second = page(store, "Cache policy")
    os.rename(store.root / "decisions", store.root / "archive")
    wait_for(
        lambda: (
            head_text(store, "archive/" + second.name)
            and head_text(store, "archive/" + first.name)
            and not head_text(store, "decisions/" + first.name)
        ),
        what="the folder rename",
    )
    assert not [p for p in git(store.root, "ls-files").splitlines() if p.startswith("decisions/")]
    assert_clean(store)


def test_a_burst_of_fifty_saves_makes_few_commits_with_the_final_text(store, running):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    before = len(subjects(store))
    base = file.read_text()
    saves = [base + f"\nSave number {i}.\n" for i in range(50)]
    for i, text in enumerate(saves):
        tmp = file.with_name(f".{file.name}.{i}.tmp")
        tmp.write_text(text)
        os.replace(tmp, file)
    wait_for(lambda: head_text(store, rel) == saves[-1], what="the last save to be committed")
    edits = subjects(store)[: len(subjects(store)) - before]
    assert 1 <= len(edits) <= 5, edits
    assert all(s == f"Test Person|edit: {rel}" for s in edits)
    # Every committed version is one of the saves: never a half-written file.
    for rev in git(store.root, "log", "--format=%H", f"-{len(edits)}").split():
        assert git(store.root, "show", f"{rev}:{rel}") in saves
    assert_clean(store)


def test_broken_front_matter_is_committed_and_reported_once(store, running):
    rel = "notes/half-written.md"
    file = store.root / rel
    file.parent.mkdir()
    broken = "---\ntitle: [never closed\ntype: note\n---\n# Half written\n\nThe person's words.\n"
    file.write_text(broken)
    wait_for(lambda: head_text(store, rel) == broken, what="the broken page to be committed")
    wait_for(lambda: running.problems, what="the report")
    assert len(running.problems) == 1 and rel in running.problems[0]
    still_broken = broken + "More words, front matter still broken.\n"
    file.write_text(still_broken)
    wait_for(lambda: head_text(store, rel) == still_broken, what="the second save")
    assert len(running.problems) == 1  # reported once, not on every save
    fixed = broken.replace("[never closed", "Half written")
    file.write_text(fixed)
    wait_for(lambda: head_text(store, rel) == fixed, what="the fix")
    wait_for(lambda: len(running.problems) == 2, what="the fix to be reported")
    assert "fixed" in running.problems[1]
    assert_clean(store)


def test_an_agents_write_is_not_taken_for_a_hand_edit(store, running):
    agent_store = Store(store.root)  # another process writing while the person watches
    written = agent_store.write(Page.new("Agent finding", "fact", "The cache is per worker."), CLAUDE)
    (store.root / "notes").mkdir(exist_ok=True)
    (store.root / "notes" / "mine.md").write_text("# Mine\n")
    wait_for(lambda: head_text(store, "notes/mine.md"), what="the hand edit")
    log = subjects(store)
    assert log[:2] == ["Test Person|edit: notes/mine.md", f"claude-code|remember: {written.path.removesuffix('.md')}"]
    assert_clean(store)


@pytest.mark.usefixtures("embedding_model")
def test_the_watcher_updates_the_index_for_the_pages_it_commits(store):
    from wiki_memory.config import project_for_store
    from wiki_memory.index import Index

    project = project_for_store(store.root)
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    with Index.open(project) as open_index:
        watcher = Watcher(Store(store.root), index=open_index, quiet=0.2, rescan=0)
        watcher.start()  # indexes what is there
        try:
            file.write_text(file.read_text() + "\nCircuit breakers open after five consecutive timeouts.\n")
            wait_for(lambda: watcher.step(timeout=0.5), what="the edit to be committed")
        finally:
            watcher.stop()
    with Index.open(project) as index:
        # Up to date before any search could catch it up: the watcher did it, vectors included.
        assert index.head == git(store.root, "rev-parse", "HEAD").strip()
        assert index.pending_count() == 0
        found = index.search("what happens after repeated timeouts", mode="vector")
    assert found and found[0].path == rel


def test_edits_made_while_nobody_watched_are_committed_at_start(store):
    file = page(store)
    file.write_text(file.read_text() + "\nWhile the watcher was off.\n")
    with Watcher(Store(store.root), rescan=0) as watcher:
        assert [e.subject for e in watcher.edits] == [f"edit: {file.relative_to(store.root).as_posix()}"]
    assert_clean(store)


def test_commit_edits_pairs_a_rename_with_an_edit_by_page_id_and_groups_large_batches(store):
    file = page(store)
    rel = file.relative_to(store.root).as_posix()
    new = store.root / "decisions" / "retry-policy-v2.md"
    new.write_text(file.read_text().replace("Retry twice", "Retry with backoff"))
    file.unlink()
    edits = store.commit_edits()
    assert [e.subject for e in edits] == [f"edit: {rel} -> decisions/retry-policy-v2.md"]
    notes = store.root / "notes"
    notes.mkdir()
    for i in range(25):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n")
    edits = store.commit_edits()
    assert [e.subject for e in edits] == ["edit: 25 files"]
    assert_clean(store)


def test_watch_once_commits_each_pending_file_and_prints_json(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    runner = CliRunner()
    wiki = Path(runner.invoke(main, ["init"]).output.strip())
    (wiki / "notes").mkdir()
    (wiki / "notes" / "a.md").write_text("# A\n")
    (wiki / "notes" / "b.md").write_text("# B\n")
    (wiki / "notes" / ".b.md.swp").write_text("swap")
    result = runner.invoke(main, ["watch", "--once", "--json"])
    assert result.exit_code == 0, result.output
    assert [e["subject"] for e in json.loads(result.output)] == ["edit: notes/a.md", "edit: notes/b.md"]
    assert git(wiki, "log", "-2", "--format=%an").split("\n")[:2] == ["Test Person", "Test Person"]
    again = runner.invoke(main, ["watch", "--once"])
    assert again.exit_code == 0 and "nothing to commit" in again.output


def test_watch_stops_cleanly_on_ctrl_c_and_commits_what_is_pending(code_repo):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run(
        [sys.executable, "-m", "wiki_memory", "init"], cwd=code_repo, env=env, check=True, capture_output=True
    )
    wiki = Path(
        subprocess.run(
            [sys.executable, "-m", "wiki_memory", "path"],
            cwd=code_repo,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiki_memory", "watch", "--quiet", "0.2"],
        cwd=code_repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Why: a runner started in the background (nohup, `&`) hands its children SIGINT
        # ignored, and Python then never turns Ctrl-C into KeyboardInterrupt; the watcher is
        # started as from a terminal, with Ctrl-C's default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    guard = threading.Timer(2 * TIMEOUT, proc.kill)  # a watcher that never answers fails the test, not CI
    guard.start()
    try:
        assert "watching" in proc.stderr.readline()
        (wiki / "notes").mkdir()
        (wiki / "notes" / "first.md").write_text("# First\n")
        assert "edit: notes/first.md" in proc.stdout.readline()
        (wiki / "notes" / "last.md").write_text("# Written just before Ctrl-C\n")
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err
    assert git(wiki, "show", "HEAD:notes/last.md") == "# Written just before Ctrl-C\n"
    git(wiki, "fsck", "--strict")


# `wiki-memory open` ---------------------------------------------------------------------


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def opened(code_repo, monkeypatch, tmp_path):
    monkeypatch.chdir(code_repo)
    for var in ("VISUAL", "EDITOR"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()
    assert runner.invoke(main, ["init"]).exit_code == 0
    assert (
        runner.invoke(main, ["write", "-t", "Retry policy", "--type", "decision", "--body", "Retry twice."]).exit_code
        == 0
    )
    wiki = Path(runner.invoke(main, ["path"]).output.strip())
    return runner, wiki


def test_open_a_page_in_the_editor_commits_what_the_person_wrote(opened, monkeypatch, tmp_path):
    runner, wiki = opened
    monkeypatch.setenv("EDITOR", script(tmp_path / "editor", 'printf "\\nAdded in the editor.\\n" >> "$1"\n'))
    result = runner.invoke(main, ["open", "Retry policy"])
    assert result.exit_code == 0, result.output
    assert "edit: decisions/retry-policy.md" in result.output
    assert git(wiki, "log", "-1", "--format=%an|%s").strip() == "Test Person|edit: decisions/retry-policy.md"
    assert "Added in the editor." in git(wiki, "show", "HEAD:decisions/retry-policy.md")


def test_open_with_no_page_opens_the_wiki_folder(opened, monkeypatch, tmp_path):
    runner, wiki = opened
    record = tmp_path / "args"
    monkeypatch.setenv("VISUAL", script(tmp_path / "editor", f'echo "$@" > {record}\n'))
    result = runner.invoke(main, ["open"])
    assert result.exit_code == 0, result.output
    assert record.read_text().strip() == str(wiki)
    assert "no change" in result.output


def test_open_without_an_editor_uses_the_system_opener(opened, monkeypatch, tmp_path):
    runner, wiki = opened
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "opened"
    script(bin_dir / "xdg-open", f'echo "$@" > {record}\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = runner.invoke(main, ["open", "decisions/retry-policy.md"])
    assert result.exit_code == 0, result.output
    if sys.platform.startswith("linux"):
        assert wait_for(lambda: record.exists() and record.read_text().strip(), what="xdg-open") == str(
            wiki / "decisions" / "retry-policy.md"
        )


def test_open_says_what_to_do_when_nothing_can_open_the_wiki(opened, monkeypatch, tmp_path):
    runner, _ = opened
    if not sys.platform.startswith("linux"):
        pytest.skip("the system opener is `open` on macOS and the shell on Windows")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = runner.invoke(main, ["open"])
    assert result.exit_code == 1 and "set EDITOR" in result.output and result.output.count("\n") == 1


def test_open_reports_an_editor_that_fails(opened, monkeypatch, tmp_path):
    runner, _ = opened
    monkeypatch.setenv("EDITOR", script(tmp_path / "editor", "exit 3\n"))
    result = runner.invoke(main, ["open", "Retry policy"])
    assert result.exit_code == 1 and "exited with status 3" in result.output


def test_a_file_whose_name_cannot_be_committed_is_reported_once_and_blocks_nothing(store, running):
    odd = store.root / "notes" / "back\\slash.md"
    odd.parent.mkdir()
    odd.write_text("# Odd name\n")
    (store.root / "notes" / "fine.md").write_text("# Fine\n")
    wait_for(lambda: head_text(store, "notes/fine.md"), what="the other file to be committed")
    wait_for(lambda: running.problems, what="the report")
    assert len(running.problems) == 1 and "backslash" in running.problems[0]
    odd.write_text("# Odd name\n\nEdited again.\n")
    (store.root / "notes" / "fine.md").write_text("# Fine\n\nAgain.\n")
    wait_for(lambda: "Again." in (head_text(store, "notes/fine.md") or ""), what="the second edit")
    assert len(running.problems) == 1  # reported once
    assert odd.read_text() == "# Odd name\n\nEdited again.\n"  # left alone, not lost
    # And an agent's write is not blocked by it either.
    store.write(Page.new("Agent page", "note", "Still writable."), CLAUDE)


def test_editor_litter_of_other_editors_is_never_committed(store):
    notes = store.root / "notes"
    notes.mkdir()
    (notes / "page.md").write_text("# Page\n")
    for litter in ("page.md.kate-swp", ".goutputstream-ABC123", ".~lock.page.md#", "~$page.md", "page.md.crswap"):
        (notes / litter).write_text("litter")
    edits = store.commit_edits()
    assert [e.subject for e in edits] == ["edit: notes/page.md"]
