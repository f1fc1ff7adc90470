"""What a person wrote is not lost (issue 27, "Data a person wrote" and "Smaller"): a
`forget` killed at any step, an edit made while an editor is open, pages in another
encoding or a hand-written style, pages too large to index whole, and malformed values.
Each test fails on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.config import project_for_store
from wiki_memory.memory import Actor, InputError, Memory
from wiki_memory.store import Author
from wiki_memory.store.rewrite import CRASH_POINTS

TOKEN = "ghp_" + "Kd7Lq2Wn8Rt4Xv6Bz1Mc3Hf5Js9Pa0Ye2Ug7T"  # fake, of the real shape
CODEX = Author.agent("codex")
#: Every step of a forget, the store's and the memory layer's, in order.
FORGET_STEPS = (*CRASH_POINTS, "forget:remembered", "forget:indexed", "forget:scrubbed")
UNDONE = {"forget:packed", "forget:journal"}  # no ref had moved: recovery undoes the rewrite


def wm(wiki: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own (a crash point exits it as SIGKILL would)."""
    env = {**os.environ, "WIKI_MEMORY_STORE": str(wiki), "WIKI_MEMORY_EMBED_MODEL_PATH": str(wiki / "no-model")}
    env.pop("WIKI_MEMORY_CRASH_AT", None)
    if crash:
        env["WIKI_MEMORY_CRASH_AT"] = crash
    return subprocess.run(
        [sys.executable, "-m", "wiki_memory", *args], env=env, capture_output=True, text=True, timeout=120
    )


def objects_of(repo: Path) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True
    ).stdout


@pytest.mark.parametrize("step", FORGET_STEPS)
def test_a_forget_killed_at_any_step_never_lets_sync_bring_the_secret_back(tmp_path, step):
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    wiki = tmp_path / "wiki"
    memory = Memory(project_for_store(wiki))
    store = memory.store(create=True)
    memory.add_remote("origin", str(remote))
    memory.write("Retry policy", "Retry twice, then fail.", "decision")
    store.commit({"notes/deploy.md": f"# Deploy\n\nexport GITHUB_TOKEN={TOKEN}\n".encode()}, "remember: deploy", CODEX)
    memory.sync()
    memory.close()
    remote_before = git(remote, "rev-parse", "main")

    killed = wm(wiki, "forget", "--string", TOKEN, crash=step)
    assert killed.returncode == 137, killed.stdout + killed.stderr

    # The sync the error message recommends: it must not fetch the old history back, nor push it.
    after = wm(wiki, "sync")
    assert git(remote, "rev-parse", "main") == remote_before  # nothing pushed
    if step in UNDONE:
        assert after.returncode == 0, after.stdout + after.stderr
        if step == "forget:journal":  # killed before its journal, a forget leaves nothing to undo
            assert "interrupted `forget` was undone" in after.stdout
        assert TOKEN in git(wiki, "show", "HEAD:notes/deploy.md")  # as it was: nothing half-done
        again = wm(wiki, "forget", "--string", TOKEN)
        assert again.returncode == 0, again.stdout + again.stderr
    else:
        assert after.returncode == 1
        assert "interrupted `forget` was finished" in after.stderr
        assert "--replace-remote-history" in after.stderr
        assert TOKEN.encode() not in objects_of(wiki)  # the fetch did not bring it back
        assert TOKEN.encode() not in (memory.project.index_path.read_bytes())
    assert not (wiki / ".git" / "wiki-memory" / "forget-pending").exists()
    assert git(wiki, "status", "--porcelain") == ""
    git(wiki, "fsck", "--full", "--strict")

    replaced = wm(wiki, "sync", "--replace-remote-history")
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    assert git(remote, "rev-parse", "main") == git(wiki, "rev-parse", "HEAD")
    assert TOKEN not in git(remote, "log", "-p", "main")
    assert TOKEN.encode() not in objects_of(wiki)
    assert "[forgotten]" in git(wiki, "show", "HEAD:notes/deploy.md")


# An edit made while an editor is open (item 6) ---------------------------------------------------

EDITOR = """\
import os, subprocess, sys
path = sys.argv[1]
buffer = open(path, encoding="utf-8").read()  # the editor opens the page
# While it is open, an agent changes the page (another process, through the CLI).
subprocess.run([sys.executable, "-m", "wiki_memory", "edit", "Retry policy", "--agent", "codex",
                {agent_change}], check=True, capture_output=True)
with open(path, "w", encoding="utf-8") as f:  # the person saves their buffer
    f.write(buffer.replace({old!r}, {new!r}))
"""


def editor_memory(tmp_path: Path, agent_change: str, old: str, new: str) -> tuple[Memory, dict[str, str]]:
    wiki = tmp_path / "wiki"
    memory = Memory(project_for_store(wiki))
    memory.store(create=True)
    memory.write("Retry policy", "Retry twice, then fail.\n\nBackoff is linear.", "decision")
    script = tmp_path / "editor.py"
    script.write_text(EDITOR.format(agent_change=agent_change, old=old, new=new))
    return memory, {"EDITOR": f"{sys.executable} {script}"}


def edit_cli(wiki: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "WIKI_MEMORY_STORE": str(wiki), "WIKI_MEMORY_EMBED_MODEL_PATH": str(wiki / "none")}
    return subprocess.run(
        [sys.executable, "-m", "wiki_memory", "edit", *args], env=full, capture_output=True, text=True, timeout=120
    )


def test_an_agent_s_write_while_the_editor_is_open_is_merged_not_reverted(tmp_path):
    change = '"--append", "Except for 429s."'
    memory, env = editor_memory(tmp_path, change, "Retry twice, then fail.", "Retry two times, then fail.")
    done = edit_cli(memory.wiki, env, "Retry policy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged with" in done.stdout
    text = git(memory.wiki, "show", "HEAD:decisions/retry-policy.md")
    assert "Except for 429s." in text and "Retry two times, then fail." in text and "twice" not in text
    assert git(memory.wiki, "log", "-2", "--format=%an|%s").splitlines() == [
        "Test Person|edit: decisions/retry-policy.md",
        "codex|update: decisions/retry-policy (append)",
    ]
    assert git(memory.wiki, "status", "--porcelain") == ""


def test_overlapping_changes_while_the_editor_is_open_are_both_kept(tmp_path):
    change = '"--find", "Retry twice", "--replace", "Retry three times"'
    memory, env = editor_memory(tmp_path, change, "Retry twice, then fail.", "Retry once, then fail.")
    done = edit_cli(memory.wiki, env, "Retry policy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "your version is in" in done.stdout
    page = git(memory.wiki, "show", "HEAD:decisions/retry-policy.md")
    assert "Retry three times" in page and "Edit conflict" in page  # the agent's change stands, with a link
    copies = [p for p in git(memory.wiki, "ls-files").split() if ".conflict-edit-" in p]
    assert len(copies) == 1 and "Retry once, then fail." in git(memory.wiki, "show", f"HEAD:{copies[0]}")
    assert copies[0].removesuffix(".md") in page


# Pages a person wrote by hand (item 7) -------------------------------------------------------------


def run_cli(monkeypatch, wiki: Path, *args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from wiki_memory.cli import main

    monkeypatch.setenv("WIKI_MEMORY_STORE", str(wiki))
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture
def memory(tmp_path):
    m = Memory(project_for_store(tmp_path / "wiki"))
    m.store(create=True)
    m.write("Retry policy", "Retry twice, then fail.", "decision")
    yield m
    m.close()


def test_a_latin_1_page_is_refused_by_edit_never_garbled(memory, monkeypatch):
    path = memory.wiki / "decisions" / "retry-policy.md"
    latin = path.read_text().replace("Retry twice", "Café: retry twice").encode("latin-1")
    path.write_bytes(latin)
    memory.commit_hand_edits()  # the person's bytes, committed as they are
    head = git(memory.wiki, "rev-parse", "HEAD")
    code, out = run_cli(monkeypatch, memory.wiki, "edit", "Retry policy", "--append", "Except for 429s.")
    assert code == 1 and "is not UTF-8 text (byte 0xe9" in out and "iconv" in out
    monkeypatch.setenv("EDITOR", "true")
    code, out = run_cli(monkeypatch, memory.wiki, "edit", "Retry policy")
    assert code == 1 and "is not UTF-8 text" in out
    assert path.read_bytes() == latin and git(memory.wiki, "rev-parse", "HEAD") == head


BLOCK_STYLE = """\
---
# kept by hand
title: Retry policy
id: {id}
type: decision
tags:
  - http
  - retries
status: active
created: {created}
updated: 2026-01-02T03:04:05Z
---
Retry twice, then fail.
"""


def test_a_hand_written_front_matter_keeps_its_style_through_an_edit(memory, monkeypatch):
    page = memory.read("Retry policy").page
    path = memory.wiki / "decisions" / "retry-policy.md"
    path.write_text(BLOCK_STYLE.format(id=page.id, created=page.created))
    memory.commit_hand_edits()
    code, out = run_cli(monkeypatch, memory.wiki, "edit", "Retry policy", "--append", "Except for 429s.")
    assert code == 0, out
    text = path.read_text()
    before = BLOCK_STYLE.format(id=page.id, created=page.created).splitlines()
    after = text.splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=False) if a != b]
    assert [a.split(":")[0] for a, _ in changed] == ["updated"], changed  # only the key that changed
    assert "# kept by hand" in text and "tags:\n  - http\n  - retries\n" in text
    assert text.endswith("Retry twice, then fail.\n\nExcept for 429s.\n")


def test_review_and_status_report_broken_pages_and_conflict_copies(memory, monkeypatch):
    broken = memory.wiki / "gotchas" / "login.md"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("---\ntitle: Login\ntags: [a\n---\nThe login test is flaky.\n")
    memory.commit_hand_edits()
    source = memory.page_source("Retry policy")
    memory.edit("Retry policy", "find_replace", find="twice", replace="three times", actor=Actor("codex", "s-1"))
    memory.save_text("Retry policy", source.text.replace("twice", "once"), base=source.blob)
    memory.reindex(embed=False)
    _, out = run_cli(monkeypatch, memory.wiki, "review")
    assert "[broken] gotchas/login.md: " in out and "invalid YAML" in out, out
    assert "[conflict] decisions/retry-policy.conflict-edit-" in out
    _, out = run_cli(monkeypatch, memory.wiki, "status")
    assert "broken:   gotchas/login.md" in out and "conflict: decisions/retry-policy.conflict-edit-" in out


def test_a_write_to_a_broken_page_s_title_is_refused_naming_the_file(memory, monkeypatch):
    path = memory.wiki / "decisions" / "retry-policy.md"
    path.write_text(path.read_text().replace("type: decision", "type: [decision"))
    memory.commit_hand_edits()
    head = git(memory.wiki, "rev-parse", "HEAD")
    code, out = run_cli(
        monkeypatch, memory.wiki, "write", "--title", "Retry policy", "--type", "decision", "--body", "Once."
    )
    assert code == 1 and "decisions/retry-policy.md may be the page titled 'Retry policy'" in out
    assert not (memory.wiki / "decisions" / "retry-policy-2.md").exists()
    assert git(memory.wiki, "rev-parse", "HEAD") == head
    # Another title of that slug is still written beside it.
    code, out = run_cli(
        monkeypatch, memory.wiki, "write", "--title", "Retry, policy!", "--type", "decision", "--body", "x"
    )
    assert code == 0 and (memory.wiki / "decisions" / "retry-policy-2.md").exists()


# Redaction (item 9) --------------------------------------------------------------------------------


def test_scan_finds_the_secret_half_of_an_aws_pair_in_history(memory):
    from secret_corpus import generate

    store = memory.store()
    key_id, secret = generate("AKIA|UD|16", "aws-id"), generate("|B64|40", "aws-secret")
    store.commit({"notes/creds.md": f"# Creds\n\naccess key {key_id} secret {secret}\n".encode()}, "hand", CODEX)
    found = {(f.path, f.family) for f in memory.scan().findings}
    assert ("notes/creds.md", "aws-secret-key") in found and ("notes/creds.md", "aws-access-key") in found
    written = memory.write("Staging creds", f"access key {key_id} secret {secret}", "note")
    assert secret not in (memory.wiki / written.path).read_text()


# Very large pages (item 8) ---------------------------------------------------------------------


def test_a_very_large_page_is_indexed_in_part_and_left_whole(memory):
    filler = "".join(f"line {i} of a log pasted whole into a page\n" for i in range(80_000))  # 3.4 MB
    text = f"---\ntitle: Huge log\ntype: note\n---\nfirstword\n{filler}lastword\n"
    path = memory.wiki / "notes" / "huge-log.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    memory.commit_hand_edits()  # indexed as it is committed; a rebuild says what it cut
    stats = memory.reindex(full=True, embed=False)
    assert stats.cut == ["notes/huge-log.md: only the first 256 KB of its body are indexed"]
    assert [r.path for r in memory.search("firstword", mode="fts").results] == ["notes/huge-log.md"]
    assert memory.search("lastword", mode="fts").results == []
    assert path.read_text() == text and git(memory.wiki, "show", "HEAD:notes/huge-log.md") == text
    assert memory.read("Huge log").page.body.endswith("lastword\n")  # nothing lost: the whole page reads


# Smaller (item 12) -------------------------------------------------------------------------------


def test_show_of_a_name_over_255_bytes_is_one_line(memory, monkeypatch):
    code, out = run_cli(monkeypatch, memory.wiki, "show", "notes/" + "x" * 300 + ".md")
    assert code == 1 and "at most 255 bytes" in out and "Traceback" not in out
    code, out = run_cli(monkeypatch, memory.wiki, "show", "y" * 300)
    assert code == 1 and "no page" in out


def test_a_page_with_malformed_values_is_shown(memory, monkeypatch):
    path = memory.wiki / "decisions" / "retry-policy.md"
    path.write_text(path.read_text().replace("status: active", "status: superseded\nsuperseded_by: 5\nanchors: 7"))
    memory.commit_hand_edits()
    code, out = run_cli(monkeypatch, memory.wiki, "show", "Retry policy")
    assert code == 0 and "superseded_by: 5" in out
    assert memory.read("Retry policy").page.superseded_by == "5"


def test_an_index_file_that_is_a_directory_is_moved_aside_and_rebuilt(memory):
    index_path = memory.project.index_path
    memory.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_path}{suffix}").unlink(missing_ok=True)
    index_path.mkdir()
    (index_path / "someone's.txt").write_text("kept")
    again = Memory(memory.project)
    assert [r.path for r in again.search("twice", mode="fts").results] == ["decisions/retry-policy.md"]
    assert index_path.is_file()
    aside = [p for p in index_path.parent.iterdir() if p.name.startswith("index.sqlite.not-a-file-")]
    assert len(aside) == 1 and (aside[0] / "someone's.txt").read_text() == "kept"
    again.close()


def test_the_sync_conflict_message_says_whose_version_is_where(tmp_path, monkeypatch):
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a, b = (Memory(project_for_store(tmp_path / name / "wiki")) for name in ("a", "b"))
    for m, host in ((a, "laptop"), (b, "desktop")):
        m.store(create=True).host = host
        m.add_remote("origin", str(remote))
    a.write("Retry policy", "Retry twice, then fail.", "decision")
    a.sync()
    b.sync()
    a.edit("Retry policy", "find_replace", find="twice", replace="three times")
    a.sync()
    b.edit("Retry policy", "find_replace", find="twice", replace="once")
    b.close()
    monkeypatch.setenv("WIKI_MEMORY_EMBED_MODEL_PATH", str(tmp_path / "none"))
    code, out = run_cli(monkeypatch, b.wiki, "sync")
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("conflict:"))
    copy = line.split(" is in ")[1].split(" ")[0]
    assert "the page has your version, theirs is in" in line
    assert "Retry once" in git(b.wiki, "show", "HEAD:decisions/retry-policy.md")
    assert "Retry three times" in git(b.wiki, "show", f"HEAD:{copy}")
    assert f"this machine's version; origin's is in {copy}" in git(b.wiki, "log", "-1", "--format=%B")
    a.close()


def test_recall_takes_a_short_session_id(memory):
    journal = memory.project.journal_dir
    journal.mkdir(parents=True, exist_ok=True)
    full = "2624e4c8-1f0a-4b7e-9d2c-5a1b3c4d5e6f"
    line = {"kind": "recall", "session_id": full, "time": "2026-12-07T04:00:00Z", "text": "retry?",
            "meta": {"trigger": "prompt", "pages": ["decisions/retry-policy.md"]}}  # fmt: skip
    (journal / f"{full}.jsonl").write_text(json.dumps(line) + "\n")
    (journal / "2624ffff-0000.jsonl").write_text("")
    assert memory.full_session_id("2624e4c8") == full
    assert [e["pages"] for e in memory.recalled("2624e4c8")] == [["decisions/retry-policy.md"]]
    with pytest.raises(InputError, match="ambiguous"):
        memory.full_session_id("2624")
    assert memory.full_session_id("9999") == "9999"  # no such session: nothing to leave out


def test_a_folder_outside_git_is_said_to_be_its_own_project_once(tmp_path):
    folder = tmp_path / "scratch"
    folder.mkdir()
    env = {**os.environ, "WIKI_MEMORY_EMBED_MODEL_PATH": str(tmp_path / "none")}
    env.pop("WIKI_MEMORY_STORE", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wiki_memory", *args], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    first = run("write", "-t", "Scratch note", "--body", "kept here")
    assert first.returncode == 0 and "is in no git repository: this folder is a project of its own" in first.stderr
    later = run("status")
    assert later.returncode == 0 and "git repository" not in later.stderr


def test_watch_once_prints_no_raw_python_warning(memory, tmp_path):
    path = memory.wiki / "decisions" / "retry-policy.md"
    path.write_text(path.read_text() + "\nA hand edit.\n")
    env = {**os.environ, "WIKI_MEMORY_STORE": str(memory.wiki), "WIKI_MEMORY_EMBED_MODEL_PATH": str(tmp_path / "none")}
    memory.close()
    memory.project.index_path.unlink()  # the index is built again, and finds no model
    done = subprocess.run([sys.executable, "-m", "wiki_memory", "watch", "--once"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Warning:" not in done.stderr and ".py:" not in done.stderr, done.stderr
    assert "wiki-memory: warning: no embedding model" in done.stderr
