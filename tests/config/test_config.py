from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.config import home, normalize_remote, resolve_project, trust


def test_home_defaults_to_xdg_data_home(monkeypatch, tmp_path):
    monkeypatch.delenv("WIKI_MEMORY_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert home() == tmp_path / "xdg" / "wiki-memory"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert home() == Path.home() / ".local" / "share" / "wiki-memory"


def test_project_is_the_git_top_level_named_by_its_remote(code_repo):
    (code_repo / "src" / "deep").mkdir(parents=True)
    top = resolve_project(code_repo)
    sub = resolve_project(code_repo / "src" / "deep")
    assert top == sub
    assert top.root == code_repo.resolve()
    assert top.id.startswith("widgets-") and len(top.id) == len("widgets-") + 8
    assert top.wiki == home() / "projects" / top.id / "wiki"
    assert top.identity == "github.com/acme/widgets"


def test_two_processes_in_one_repository_resolve_the_same_store(code_repo):
    (code_repo / "a").mkdir()
    (code_repo / "b" / "c").mkdir(parents=True)
    code = "from wiki_memory.config import resolve_project; print(resolve_project().wiki)"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=code_repo / d, capture_output=True, text=True, check=True
        ).stdout
        for d in ("a", "b/c")
    }
    assert len(outs) == 1


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/widgets.git",
        "https://github.com/acme/widgets",
        "https://user:secret@GitHub.com/acme/widgets.git/",
        "ssh://git@github.com:22/acme/widgets.git",
    ],
)
def test_clone_protocols_share_an_identity(url):
    assert normalize_remote(url) == "github.com/acme/widgets"


def test_same_remote_on_two_checkouts_is_one_project(tmp_path):
    ids = set()
    for name, url in (("one", "git@github.com:acme/widgets.git"), ("two", "https://github.com/acme/widgets")):
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", url)
        ids.add(resolve_project(repo).id)
    assert len(ids) == 1


def test_without_remote_the_path_is_the_identity(tmp_path):
    a, b = tmp_path / "a" / "same", tmp_path / "b" / "same"
    for d in (a, b):
        d.mkdir(parents=True)
        git(d, "init", "-q")
    assert resolve_project(a).id != resolve_project(b).id
    assert resolve_project(a).id.startswith("same-")


def test_plain_directory_is_its_own_project(tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    assert resolve_project(d).root == d.resolve()


def test_worktree_uses_the_main_repository_remote(code_repo):
    git(code_repo, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "-m", "x")
    worktree = code_repo.parent / "wt"
    git(code_repo, "worktree", "add", "-q", str(worktree))
    assert resolve_project(worktree).id == resolve_project(code_repo).id


def test_project_file_pins_a_name(code_repo, tmp_path):
    (code_repo / ".wiki-memory.toml").write_text('name = "Shared Memory"\n')
    other = tmp_path / "other"
    other.mkdir()
    (other / ".wiki-memory.toml").write_text('name = "Shared Memory"\n')
    trust(code_repo)  # a repository's own file counts once the user trusts it (tests/config/test_faults_trust.py)
    trust(other)
    assert resolve_project(code_repo).id == resolve_project(other).id
    assert resolve_project(code_repo).id.startswith("shared-memory-")


def test_project_file_points_at_another_store(code_repo, tmp_path):
    (code_repo / ".wiki-memory.toml").write_text('store = "../team-wiki"\n')
    trust(code_repo)
    project = resolve_project(code_repo)
    assert project.wiki == (code_repo / "../team-wiki").absolute()


def test_store_environment_variable_wins(code_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(tmp_path / "elsewhere"))
    assert resolve_project(code_repo).wiki == tmp_path / "elsewhere"


def test_bad_project_file_is_a_clear_error(code_repo):
    from wiki_memory.errors import WikiMemoryError

    (code_repo / ".wiki-memory.toml").write_text("name = \n")
    with pytest.raises(WikiMemoryError, match=r"\.wiki-memory\.toml: invalid TOML"):
        resolve_project(code_repo)


def test_team_tier_lives_beside_the_personal_wiki(code_repo):
    project = resolve_project(code_repo)
    team = project.team()
    assert team.home == project.home / "team"
    assert team.wiki == project.home / "team" / "wiki"
    assert team.index_path == project.home / "team" / "index.sqlite"
    assert team.id != project.id and team.root == project.root
    assert not project.has_team()
    subprocess.run(["git", "init", "-q", str(team.wiki)], check=True)
    assert project.has_team()
