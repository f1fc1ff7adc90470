"""The one `.git/index` parser (`pages.gitindex`), read against what the git CLI says of the
same index: every version git writes, a sha256 repository, a conflicted file, and the wiki's
own index written back so that git reads it whole."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wiki_memory.pages import gitindex
from wiki_memory.pages.drift import GitIndex
from wiki_memory.store import gitindex as wiki_index


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **(env or {})}
    ).stdout


def staged(cwd: Path, index_file: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(mode, blob id, stage, path) of every entry, as `git ls-files -s` prints them."""
    env = {"GIT_INDEX_FILE": str(index_file)} if index_file else None
    out = []
    for line in git(cwd, "ls-files", "-s", "-z", env=env).split("\0"):
        if line:
            info, path = line.split("\t", 1)
            mode, sha, stage = info.split()
            out.append((mode, sha, stage, path))
    return out


def make_repo(root: Path, *args: str) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main", *args)
    git(root, "config", "user.name", "T")
    git(root, "config", "user.email", "t@example.com")
    (root / "src" / "deep" / "er").mkdir(parents=True)
    files = {
        "README.md": "# demo\n",
        "src/app.py": "print('app')\n",
        "src/apple.py": "A = 1\n",  # shares a prefix with the path before it (version 4 compresses it)
        "src/deep/er/" + "n" * 200 + ".py": "LONG = True\n",
        "tool.sh": "#!/bin/sh\necho hi\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(text)
    os.chmod(root / "tool.sh", 0o755)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def parsed(root: Path) -> tuple[int, list[tuple[str, str, str, str]]]:
    data = (root / ".git" / "index").read_bytes()
    version, count = gitindex.header(data)
    width = 32 if "sha256" in git(root, "rev-parse", "--show-object-format") else 20
    out = []
    for name, offset, _next, flags in gitindex.entries(data, version, count, width):
        mode = int.from_bytes(data[offset + 24 : offset + 28], "big")
        sha = data[offset + 40 : offset + 40 + width].hex()
        out.append((f"{mode:o}", sha, str((flags >> 12) & 0x3), name.decode()))
    return version, out


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_every_index_version_git_writes_is_read_entry_for_entry(tmp_path, version):
    root = make_repo(tmp_path / "code")
    (root / "later.txt").write_text("intent to add\n")
    git(root, "add", "-N", "later.txt")  # an extended flag: git writes version 3 for it
    git(root, "update-index", "--index-version", version)
    read_version, entries = parsed(root)
    assert read_version == max(int(version), 3)  # an extended flag needs version 3 at least
    assert entries == staged(root)
    assert GitIndex(root).entries.keys() == {path for _, _, _, path in staged(root)}


def test_a_sha256_repository_is_read_with_its_longer_ids(tmp_path):
    root = make_repo(tmp_path / "code", "--object-format=sha256")
    entries = GitIndex(root).entries
    listed = staged(root)
    assert {path: entry.sha for path, entry in entries.items()} == {path: sha for _, sha, _, path in listed}
    assert all(len(sha) == 64 for _, sha, _, _ in listed)
    assert GitIndex(root).current_blob("src/app.py") == git(root, "hash-object", "src/app.py").strip()


def test_a_conflicted_file_has_no_one_blob_for_drift(tmp_path):
    root = make_repo(tmp_path / "code")
    git(root, "checkout", "-q", "-b", "other")
    (root / "src" / "app.py").write_text("print('other')\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    (root / "src" / "app.py").write_text("print('main')\n")
    git(root, "commit", "-q", "-am", "main")
    subprocess.run(["git", "merge", "-q", "other"], cwd=root, capture_output=True)
    stages = {stage for _, _, stage, path in staged(root) if path == "src/app.py"}
    assert stages == {"1", "2", "3"}
    assert parsed(root)[1] == staged(root)  # the parser sees every stage...
    assert "src/app.py" not in GitIndex(root).entries  # ...drift takes stage 0 only
    assert "src/apple.py" in GitIndex(root).entries


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_wiki_index_written_back_is_the_one_git_wrote(tmp_path, version):
    root = make_repo(tmp_path / "wiki")
    if version != "4":  # version 4 is written back as 2, which has no extended flags
        (root / "later.txt").write_text("intent to add\n")
        git(root, "add", "-N", "later.txt")
    git(root, "update-index", "--index-version", version)
    read_version, entries = wiki_index.read_index(root / ".git" / "index")
    assert read_version == (2 if version == "4" else 3)
    copy = tmp_path / "index.copy"
    wiki_index.write_index(copy, read_version, entries)
    assert staged(root, copy) == staged(root)
    with_copy = {"GIT_INDEX_FILE": str(copy)}
    assert git(root, "diff", "--stat", env=with_copy) == git(root, "diff", "--stat")
    assert git(root, "status", "--porcelain", env=with_copy) == git(root, "status", "--porcelain")


def test_a_torn_index_is_refused_by_the_parser_and_hashed_around_by_drift(tmp_path):
    root = make_repo(tmp_path / "code")
    index = root / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])
    version, count = gitindex.header(index.read_bytes())
    with pytest.raises((IndexError, ValueError)):
        list(gitindex.entries(index.read_bytes(), version, count))
    code = GitIndex(root)
    assert code.entries == {}
    assert code.current_blob("src/app.py") == git(root, "hash-object", "src/app.py").strip()
    with pytest.raises(wiki_index.IndexDamaged):
        wiki_index.read_index(index)
    with pytest.raises(ValueError):
        gitindex.header(b"DIRC")
