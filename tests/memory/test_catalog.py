"""The commands users look for first: projects, sessions, config (with where each setting
came from), prune (session pages out of the tree, history kept), and a whole wiki exported
and imported into a fresh home, page for page."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git
from journals import Session, set_config

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.memory import Memory
from wiki_memory.memory.catalog import parse_age, prune_sessions
from wiki_memory.memory.portable import export_wiki, import_wiki


def cli(*args: str, ok: bool = True):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def worked(code_repo: Path):
    """A project with two consolidated sessions (January and late November) and a preference."""
    project = resolve_project(code_repo)
    Session(project, "s-old-0001", start="2026-01-05T08:00:00").start().prompt("Fix the login page").bash(
        "pytest", "1 passed"
    ).stop("Fixed.").end().write()
    Session(project, "s-new-0002", agent="codex", start="2026-11-30T08:00:00").start().prompt(
        "Add CSV export. From now on, use pnpm instead of npm."
    ).stop("Done.").end().write()
    with Memory(project) as memory:
        memory.consolidate_pending(llm=False)
    return project


def test_projects_and_sessions(worked, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    cli("--project", str(other), "write", "-t", "Other note", "--body", "x")
    rows = json.loads(cli("projects", "--json").output)
    by_root = {r["root"]: r for r in rows}
    mine = by_root[str(worked.root)]
    assert mine["sessions"] == 2 and mine["pages"] >= 4 and mine["size"] > 0
    assert mine["last_session"].startswith("2026-11-30")
    assert by_root[str(other)]["pages"] == 1 and by_root[str(other)]["last_session"] is None

    sessions = json.loads(cli("--project", str(worked.root), "sessions", "--json").output)
    assert [(s["agent"], s["session_id"]) for s in sessions] == [("codex", "s-new-0002"), ("claude-code", "s-old-0001")]
    assert all(s["path"].startswith("sessions/") for s in sessions)


def test_config_says_where_each_setting_came_from(code_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_config("[sync]\nauto = true\n\n[recall]\nmax_pages = 2\n")
    monkeypatch.setenv("WIKI_MEMORY_EMBED_THREADS", "2")
    rows = {r["name"]: r for r in json.loads(cli("--project", str(code_repo), "config", "--json").output)}
    assert rows["sync.auto"]["value"] is True and rows["sync.auto"]["source"].endswith("config.toml")
    assert rows["recall.max_pages"]["value"] == 2 and rows["recall.max_pages"]["source"].endswith("config.toml")
    assert rows["recall.max_chars"] == {"name": "recall.max_chars", "value": 1500, "source": "default"}
    assert rows["index.threads"]["source"] == "environment (WIKI_MEMORY_EMBED_THREADS)"
    assert rows["project.root"]["value"] == str(code_repo)


def test_prune_takes_old_session_pages_out_and_keeps_history(worked) -> None:
    now = datetime(2026, 12, 7, tzinfo=timezone.utc)
    with Memory(worked) as memory:
        before = {row.path for row in memory.list_pages()[0]}
        dry = prune_sessions(memory, parse_age("90d"), dry_run=True, now=now)
        assert len(dry.paths) == 1 and dry.commit is None
        result = prune_sessions(memory, timedelta(days=90), now=now)
        assert result.paths == dry.paths and result.commit
        after = {row.path for row in memory.list_pages()[0]}
    gone = result.paths[0]
    assert before - after == {gone} and gone.startswith("sessions/2026/01/")
    # Handoffs and distilled pages stay; the pruned page is still in the history.
    assert any(p.startswith("handoffs/2026/01/") for p in after) and any(p.startswith("preferences/") for p in after)
    assert git(worked.wiki, "log", "--format=%s", "--", gone).splitlines()[0].startswith("prune: 1 session pages")
    assert "Fix the login page" in git(worked.wiki, "show", f"HEAD~1:{gone}")
    git(worked.wiki, "fsck", "--strict")


def test_bad_age_is_one_line() -> None:
    result = cli("prune", "--sessions-older-than", "soon", ok=False)
    assert result.exit_code == 1 and "give an age like 90d" in result.output


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_export_then_import_into_a_fresh_home_gives_the_same_pages(
    worked, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    with Memory(worked) as memory:
        memory.write("Ünïcödé note", "Text with ümlauts and a [[Use pnpm]] link.", "note")
        done = export_wiki(memory, fmt, tmp_path / ("out.json" if fmt == "json" else "out"))

    def files(wiki: Path) -> dict[str, bytes]:  # every page; the wiki's own README.md is not one
        return {p.relative_to(wiki).as_posix(): p.read_bytes() for p in wiki.rglob("*.md") if p.name != "README.md"}

    original = files(worked.wiki)
    assert done.pages == len(original)

    monkeypatch.setenv("WIKI_MEMORY_HOME", str(tmp_path / "fresh-home"))
    project = resolve_project(worked.root)
    assert not project.wiki.exists()
    result = cli("--project", str(worked.root), "import", "wiki", str(done.path), "--json")
    report = json.loads(result.output)
    assert len(report["written"]) == len(original) and report["with_history"]
    assert files(project.wiki) == original
    # The history came along: the same commits, ids and all, and a clean repository.
    assert git(project.wiki, "log", "--format=%H %an %s") == git(worked.wiki, "log", "--format=%H %an %s")
    assert report["commit"] == git(worked.wiki, "rev-parse", "HEAD").strip()
    assert git(project.wiki, "status", "--porcelain") == ""
    with Memory(project) as memory:
        assert memory.read("Ünïcödé note").page.body.endswith("a [[Use pnpm]] link.\n")
        again = import_wiki(memory, done.path)
    assert again.commit is None and again.unchanged == len(original)
    git(project.wiki, "fsck", "--strict")


def test_import_wiki_into_a_wiki_that_exists_writes_the_pages_in_one_commit(worked, tmp_path: Path) -> None:
    with Memory(worked) as memory:
        done = export_wiki(memory, "json", tmp_path / "out.json")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    cli("--project", str(other), "write", "-t", "Already here", "--body", "x")
    report = json.loads(cli("--project", str(other), "import", "wiki", str(done.path), "--json").output)
    assert not report["with_history"] and report["written"] and report["commit"]
    project = resolve_project(other)
    assert git(project.wiki, "log", "-1", "--format=%s").startswith(f"import: {len(report['written'])} pages")
    assert (project.wiki / "notes" / "already-here.md").is_file()


def test_the_history_bundle_is_a_git_bundle(worked, tmp_path: Path) -> None:
    with Memory(worked) as memory:
        export_wiki(memory, "markdown", tmp_path / "out")
    bundle = tmp_path / "out" / ".wiki-memory-history.bundle"
    assert "refs/heads/main" in git(tmp_path, "bundle", "list-heads", str(bundle))
    git(tmp_path, "clone", "-q", str(bundle), "clone")
    assert git(tmp_path / "clone", "rev-parse", "HEAD") == git(worked.wiki, "rev-parse", "HEAD")
