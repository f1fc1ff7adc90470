"""The team tier (issue 28): three people, each with their own home and git identity, share
a team wiki through a real bare repository, over file:// and over smart HTTP (git's own
`http-backend`). Pages reach the team's main with the git CLI (a branch merged by another
member), as a host's pull request would land them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git
from test_sync_transport import git_http_server

from wiki_memory.memory import Memory

GOTCHA = """---
title: JWT refresh must happen before the retry
type: gotcha
status: active
---
# JWT refresh must happen before the retry

The login test fails one run in ten with a 401: the token refresh ran after the retry,
so the retry used the expired token. Refresh before retrying in the auth client.
"""
PROMPT = "why does the login test fail with a 401 after the token refresh retry"


@dataclass
class Person:
    name: str
    email: str
    base: Path

    @property
    def ident(self) -> str:
        return f"{self.name} <{self.email}>"


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Person]:
    found = {}
    for name in ("Alice", "Bob", "Carol"):
        base = tmp_path / name.lower()
        (base / "home").mkdir(parents=True)
        (base / "home" / ".gitconfig").write_text(
            f"[user]\n\tname = {name}\n\temail = {name.lower()}@example.com\n[init]\n\tdefaultBranch = main\n"
        )
        found[name] = Person(name, f"{name.lower()}@example.com", base)
    return found


@contextlib.contextmanager
def acting(person: Person, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Everything inside runs as `person`: their wiki-memory home and git identity."""
    with monkeypatch.context() as m:
        m.setenv("HOME", str(person.base / "home"))
        m.setenv("WIKI_MEMORY_HOME", str(person.base / "wm"))
        for role in ("AUTHOR", "COMMITTER"):
            m.setenv(f"GIT_{role}_NAME", person.name)
            m.setenv(f"GIT_{role}_EMAIL", person.email)
        yield


def memory_of(person: Person, code: Path, monkeypatch: pytest.MonkeyPatch) -> Memory:
    with acting(person, monkeypatch):
        return Memory.at(code)


@pytest.fixture
def http_team(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "srv"
    root.mkdir()
    git(root, "init", "-q", "--bare", "-b", "main", "team.git")
    with git_http_server(root) as base:
        yield f"{base}/team.git", root / "team.git"


@pytest.fixture
def file_team(tmp_path: Path) -> tuple[str, Path]:
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare.as_uri(), bare


@pytest.fixture(params=["file", "http"])
def team_remote(request: pytest.FixtureRequest) -> tuple[str, Path]:
    return request.getfixturevalue(f"{request.param}_team")


def run_git(person: Person, cwd: Path, *args: str) -> str:
    """The git CLI as `person` (their identity on every commit and merge)."""
    import os
    import subprocess

    env = {
        **os.environ,
        "HOME": str(person.base / "home"),
        "GIT_AUTHOR_NAME": person.name,
        "GIT_AUTHOR_EMAIL": person.email,
        "GIT_COMMITTER_NAME": person.name,
        "GIT_COMMITTER_EMAIL": person.email,
    }
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout


def propose(person: Person, url: str, work: Path, branch: str, path: str, text: str) -> None:
    """`person` pushes a branch adding a page to the team repository (what `share` does)."""
    if not work.exists():
        run_git(person, work.parent, "clone", "-q", url, str(work))
    run_git(person, work, "fetch", "-q", "origin")
    run_git(person, work, "checkout", "-q", "-B", branch, "origin/main")
    (work / path).parent.mkdir(parents=True, exist_ok=True)
    (work / path).write_text(text)
    run_git(person, work, "add", path)
    run_git(person, work, "commit", "-q", "-m", f"share: {path}")
    run_git(person, work, "push", "-q", "origin", branch)


def merge(person: Person, url: str, work: Path, branch: str) -> None:
    """`person` merges the branch into the team's main with the git CLI (a reviewed merge)."""
    if not work.exists():
        run_git(person, work.parent, "clone", "-q", url, str(work))
    run_git(person, work, "fetch", "-q", "origin")
    run_git(person, work, "checkout", "-q", "-B", "main", "origin/main")
    run_git(person, work, "merge", "-q", "--no-ff", f"origin/{branch}", "-m", f"Merge {branch}")
    run_git(person, work, "push", "-q", "origin", "main")


def land_gotcha(people: dict[str, Person], url: str, tmp_path: Path) -> None:
    """Alice proposes the JWT gotcha on a branch and Bob merges it: it is on the team's main."""
    propose(people["Alice"], url, tmp_path / "alice-work", "share/jwt", "gotchas/jwt-refresh.md", GOTCHA)
    merge(people["Bob"], url, tmp_path / "bob-work", "share/jwt")


def joined(people: dict[str, Person], code: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Memory]:
    memories = {}
    for name, person in people.items():
        with acting(person, monkeypatch):
            memory = Memory.at(code)
            status = memory.team_join(url)
            assert status.joined and status.url
            memories[name] = memory
    return memories


def test_a_merged_gotcha_reaches_a_third_member_labelled_with_its_author(
    people, code_repo, team_remote, monkeypatch, tmp_path
):
    url, bare = team_remote
    alice, carol = people["Alice"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    # Joining an empty remote made the team wiki and pushed it; the others cloned it.
    assert git(bare, "rev-parse", "main").strip()
    land_gotcha(people, url, tmp_path)
    with acting(carol, monkeypatch):
        done = memories["Carol"].sync_tiers()
        assert done.personal is None  # Carol has no personal remote: only the team tier synced
        assert done.team is not None and "gotchas/jwt-refresh.md" in done.team.received
        handed = memories["Carol"].recall(PROMPT)
    assert "team:gotchas/jwt-refresh.md" in handed.pages
    assert "team page by Alice <alice@example.com>, merged by Bob <bob@example.com>" in handed.text
    # Search finds it too, with its tier and author.
    with acting(carol, monkeypatch):
        found = memories["Carol"].search("JWT refresh retry 401").results
    hit = next(r for r in found if r.path == "team:gotchas/jwt-refresh.md")
    assert (hit.tier, hit.author, hit.reviewed) == ("team", alice.ident, True)
    git(bare, "fsck", "--strict")


def test_a_gotcha_shared_by_one_merged_by_another_is_recalled_by_a_third(
    people, code_repo, team_remote, monkeypatch, tmp_path
):
    """The whole road with `share` itself: Alice's distilled gotcha (seen in two sessions)
    goes out as a branch, Bob merges it with the git CLI, Carol syncs and is handed it."""
    from wiki_memory.pages import Page
    from wiki_memory.store import Author

    url, bare = team_remote
    alice, bob, carol = people["Alice"], people["Bob"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    body = GOTCHA.split("---\n", 2)[2].split("\n", 2)[2].strip()
    with acting(alice, monkeypatch):
        page = Page.new(
            "JWT refresh must happen before the retry", "gotcha", body, sources=["claude-code:s1", "codex:s2"]
        )
        path = memories["Alice"].store(create=True).write(page, Author.agent("claude-code")).path
        assert [c.path for c in memories["Alice"].share_candidates()] == [path]
        proposal = memories["Alice"].share_plan([path], message="bit us twice")
        memories["Alice"].share_push(proposal)
    assert proposal.branch in git(bare, "branch", "--list", "share/*")
    assert "main" not in git(bare, "branch", "--contains", proposal.commit)  # not on main before review
    merge(bob, url, tmp_path / "bob-work", proposal.branch)
    with acting(carol, monkeypatch):
        done = memories["Carol"].sync_tiers()
        assert done.team is not None and path in done.team.received
        handed = memories["Carol"].recall(PROMPT)
    assert f"team:{path}" in handed.pages
    assert "team page by Alice <alice@example.com>, merged by Bob <bob@example.com>" in handed.text
    git(bare, "fsck", "--strict")


def test_a_front_matter_author_is_the_pages_author_as_it_changes(people, code_repo, file_team, monkeypatch, tmp_path):
    """`author:` in a page's front matter names its author (Alice pushed it for Dana); a later
    edit of that key is read again after the next sync (the provenance kept by blob id)."""
    from wiki_memory.recall import tier

    url, _ = file_team
    alice, bob, carol = people["Alice"], people["Bob"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    for_dana = GOTCHA.replace("status: active\n", "status: active\nauthor: Dana <dana@example.com>\n")
    propose(alice, url, tmp_path / "alice-work", "share/jwt", "gotchas/jwt-refresh.md", for_dana)
    merge(bob, url, tmp_path / "bob-work", "share/jwt")
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        team = memories["Carol"].project.team()
        assert tier.read(team, ["gotchas/jwt-refresh.md"])["gotchas/jwt-refresh.md"] == tier.Provenance(
            "Dana <dana@example.com>", True, bob.ident
        )
        assert "team page by Dana <dana@example.com>, merged by Bob" in memories["Carol"].recall(PROMPT).text
    for_erin = for_dana.replace("Dana <dana@example.com>", "Erin <erin@example.com>")
    propose(alice, url, tmp_path / "alice-work", "share/erin", "gotchas/jwt-refresh.md", for_erin)
    merge(bob, url, tmp_path / "bob-work", "share/erin")
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        assert tier.read(team, ["gotchas/jwt-refresh.md"])["gotchas/jwt-refresh.md"].author == "Erin <erin@example.com>"


def test_a_page_on_main_without_review_is_held_back_unless_recall_is_all(
    people, code_repo, file_team, monkeypatch, tmp_path
):
    from wiki_memory.recall import tier

    url, _ = file_team
    alice, carol = people["Alice"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    # Alice pushes one page to main directly, and merges a branch of her own with another:
    # neither was merged by someone other than its author.
    work = tmp_path / "alice-work"
    propose(alice, url, work, "main", "gotchas/jwt-refresh.md", GOTCHA)
    propose(alice, url, work, "share/own", "facts/ports.md", "# Ports\n\nThe API listens on 8080.\n")
    merge(alice, url, work, "share/own")
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        known = tier.read(memories["Carol"].project.team(), ["gotchas/jwt-refresh.md", "facts/ports.md"])
        assert known["gotchas/jwt-refresh.md"] == tier.Provenance(alice.ident, False, None)
        assert known["facts/ports.md"] == tier.Provenance(alice.ident, False, None)
        held = memories["Carol"].recall(PROMPT)
        assert held.pages == ()
        why = {v.candidate.path: v.reason for v in held.verdicts}
        assert "not reviewed" in why["team:gotchas/jwt-refresh.md"]
        (carol.base / "wm" / "config.toml").write_text('[team]\nrecall = "all"\n')
        handed = memories["Carol"].recall(PROMPT)
        assert handed.pages == ("team:gotchas/jwt-refresh.md",)
        assert "team page by Alice <alice@example.com>, not reviewed" in handed.text


def test_wrong_marked_by_a_teammate_is_wrong_for_everyone_with_the_reason(
    people, code_repo, file_team, monkeypatch, tmp_path
):
    url, bare = file_team
    bob, carol = people["Bob"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    land_gotcha(people, url, tmp_path)
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        assert memories["Carol"].recall(PROMPT).pages == ("team:gotchas/jwt-refresh.md",)
    with acting(bob, monkeypatch):
        memories["Bob"].sync_tiers()
        marked = memories["Bob"].mark("team:gotchas/jwt-refresh.md", "wrong", reason="the retry was never the cause")
        assert marked.status == "wrong"
        memories["Bob"].sync_tiers()
    assert "mark: wrong gotchas/jwt-refresh" in git(bare, "log", "-1", "--format=%s", "main")
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        after = memories["Carol"].recall(PROMPT)
        view = memories["Carol"].read("team:gotchas/jwt-refresh.md")
    assert after.pages == ()
    assert view.page.status == "wrong"
    assert view.page.meta["status_reason"] == "the retry was never the cause"
    assert view.page.meta["status_by"] == bob.ident


def test_concurrent_edits_of_a_team_page_keep_both_versions(people, code_repo, team_remote, monkeypatch, tmp_path):
    url, bare = team_remote
    alice, bob = people["Alice"], people["Bob"]
    memories = joined(people, code_repo, url, monkeypatch)
    with acting(alice, monkeypatch):
        memories["Alice"].team().write("Deploy freeze", "Deploys stop on Fridays.", "decision")
        memories["Alice"].sync_tiers()
    with acting(bob, monkeypatch):
        memories["Bob"].sync_tiers()
        memories["Bob"].team().write("Deploy freeze", "Deploys stop on Thursdays at noon.", "decision")
    with acting(alice, monkeypatch):
        memories["Alice"].team().write("Deploy freeze", "Deploys stop on Fridays after 15:00.", "decision")
        memories["Alice"].sync_tiers()
    with acting(bob, monkeypatch):
        done = memories["Bob"].sync_tiers()
    assert done.team is not None and done.team.conflicts
    page, copy = done.team.conflicts[0]
    assert page == "decisions/deploy-freeze.md"
    texts = git(bare, "show", f"main:{page}") + git(bare, "show", f"main:{copy}")
    assert "Thursdays at noon" in texts and "Fridays after 15:00" in texts


def test_forget_on_the_team_tier_reaches_a_clone(people, code_repo, team_remote, monkeypatch):
    url, bare = team_remote
    alice, carol = people["Alice"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    secret = "db-internal-7f3a.example.net"
    with acting(alice, monkeypatch):
        memories["Alice"].team().write("Staging database", f"The staging database is {secret}.", "fact")
        memories["Alice"].sync_tiers()
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
    carol_wiki = Path(carol.base / "wm").glob("projects/*/team/wiki")
    carol_wiki = next(iter(carol_wiki))
    assert secret in git(carol_wiki, "log", "-p", "--all")
    with acting(alice, monkeypatch):
        memories["Alice"].forget_on([secret], [], team=True)
        memories["Alice"].sync_tiers(team_only=True, replace_remote_history=True)
    assert secret not in git(bare, "log", "-p", "main")
    with acting(carol, monkeypatch):
        done = memories["Carol"].sync_tiers()
    assert done.team is not None and done.team.adopted is not None
    assert secret not in git(carol_wiki, "log", "-p", "main")


def test_leave_refuses_unpushed_work_and_never_touches_the_remote(people, code_repo, file_team, monkeypatch):
    url, bare = file_team
    alice = people["Alice"]
    with acting(alice, monkeypatch):
        memory = Memory.at(code_repo)
        memory.team_join(url)
        before = git(bare, "rev-parse", "main")
        memory.team().write("Local only", "Not pushed yet.", "note")
        assert memory.team_status().unpushed == 1
        from wiki_memory.errors import WikiMemoryError

        with pytest.raises(WikiMemoryError, match="1 commit the team's remote does not have"):
            memory.team_leave()
        assert memory.project.has_team()
        removed = memory.team_leave(force=True)
        assert not Path(removed).exists() and not memory.project.has_team()
        assert memory.team_status().joined is False
    assert git(bare, "rev-parse", "main") == before


def test_session_start_names_team_pages_with_their_author(people, code_repo, file_team, monkeypatch, tmp_path):
    from wiki_memory.hook.startup import session_start_text

    url, _ = file_team
    carol = people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    land_gotcha(people, url, tmp_path)
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        text = session_start_text(memories["Carol"].project, "claude-code", "s-1", "startup")
    assert text is not None
    assert "team:gotchas/jwt-refresh.md; team page by Alice <alice@example.com>, merged by Bob" in text
    assert text.rstrip().endswith("</wiki-memory handoff>")


def test_session_start_keeps_room_for_the_team_when_the_personal_text_is_full(
    people, code_repo, file_team, monkeypatch, tmp_path
):
    """A handoff long enough to fill SessionStart's budget on its own gives up the team
    block's room: the team page is still named, and the whole stays within the budget."""
    from wiki_memory.consolidate import context
    from wiki_memory.hook.startup import session_start_text

    url, _ = file_team
    carol = people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    land_gotcha(people, url, tmp_path)
    # Ten long items (the most a list shows): more than the whole budget.
    steps = [
        f"Checked the token refresh against the retry in the auth client, case {n} of the login test: "
        + "the retry still used the expired token, so the refresh must move before it " * 20
        for n in range(10)
    ]
    with acting(carol, monkeypatch):
        for n in range(12):
            memories["Carol"].write(f"Preference {n} on the auth client", "Keep retries explicit. " * 12, "preference")
            memories["Carol"].write(
                f"Login test retry trap {n}",
                "The login test retry used an expired token in the auth client. " * 6,
                "gotcha",
            )
        memories["Carol"].handoff_write("Fixing the flaky login test: the retry used an expired token", done=steps)
        memories["Carol"].sync_tiers()
        text = session_start_text(memories["Carol"].project, "claude-code", "s-full", "startup")
    assert text is not None
    assert "Checked the token refresh against the retry" in text
    assert "team:gotchas/jwt-refresh.md; team page by Alice <alice@example.com>, merged by Bob" in text
    assert len(text) <= context.BUDGET


def test_session_start_offers_the_team_pages_that_arrived_last(people, code_repo, file_team, monkeypatch, tmp_path):
    """The team's SessionStart choice is by arrival on the team tier: a page written by hand
    with no `updated` is not pushed out by older pages that carry one."""
    from wiki_memory.hook.startup import session_start_text
    from wiki_memory.memory import provenance

    url, _ = file_team
    alice, bob, carol = people["Alice"], people["Bob"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    old = GOTCHA.replace("status: active\n", "status: active\nupdated: 2026-01-01T00:00:00Z\n").replace(
        "title: JWT refresh must happen before the retry", "title: Old login test retry trap"
    )
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-02T00:00:00Z")
    propose(alice, url, tmp_path / "alice-work", "share/old", "gotchas/old-retry.md", old)
    merge(bob, url, tmp_path / "bob-work", "share/old")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-02-01T00:00:00Z")
    land_gotcha(people, url, tmp_path)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.setattr(provenance, "CONTEXT_PAGES", 1)
    with acting(carol, monkeypatch):
        memories["Carol"].handoff_write("Fixing the flaky login test: the retry used an expired token")
        memories["Carol"].sync_tiers()
        text = session_start_text(memories["Carol"].project, "claude-code", "s-new", "startup")
    assert text is not None
    assert "team:gotchas/jwt-refresh.md" in text
    assert "team:gotchas/old-retry.md" not in text


def test_team_cli_join_status_and_sync(people, code_repo, file_team, monkeypatch):
    from click.testing import CliRunner

    from wiki_memory.cli import main

    url, _ = file_team
    with acting(people["Alice"], monkeypatch):
        runner = CliRunner()
        args = ["--project", str(code_repo)]
        out = runner.invoke(main, [*args, "team", "join", url])
        assert out.exit_code == 0, out.output
        assert f"joined the team at {url}" in out.output
        out = runner.invoke(main, [*args, "team", "status", "--json"])
        assert '"joined": true' in out.output
        out = runner.invoke(main, [*args, "sync"])
        assert out.exit_code == 0 and "team tier:" in out.output
        out = runner.invoke(main, [*args, "team", "join", str(Path(url[7:]).parent / "other.git")])
        assert out.exit_code == 1 and "in a team already" in out.output


def test_the_viewer_and_mcp_show_team_pages_with_their_author(people, code_repo, file_team, monkeypatch, tmp_path):
    from mcp import Client
    from mcp_helpers import call, run
    from starlette.testclient import TestClient

    from wiki_memory.mcp.server import build_server
    from wiki_memory.ui.app import Viewer, build_app

    url, _ = file_team
    alice, carol = people["Alice"], people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    land_gotcha(people, url, tmp_path)
    with acting(carol, monkeypatch):
        memory = memories["Carol"]
        memory.sync_tiers()
        memory.write("Retry policy", "Retry twice, then fail.", "decision")
        viewer = Viewer(memory.project, token="t" * 32, port=8123)
        base = f"http://127.0.0.1:8123{viewer.base}"
        with TestClient(build_app(viewer), base_url=base, follow_redirects=False) as client:
            assert client.get(f"/?token={'t' * 32}").status_code == 200
            found = client.get("/search", params={"q": "JWT refresh retry"})
            assert "team:gotchas/jwt-refresh.md" in found.text and "by Alice &lt;alice@example.com&gt;" in found.text
            shown = client.get("/page/team:gotchas/jwt-refresh.md")
            assert shown.status_code == 200, shown.text
            assert "team page by Alice &lt;alice@example.com&gt;, merged by Bob" in shown.text
        server = build_server(project_dir=str(code_repo))

        async def body():
            async with Client(server) as client:
                found = await call(client, "search", query="JWT refresh retry")
                hit = next(h for h in found["results"] if h["tier"] == "team")
                shown = (hit["path"], hit["author"], hit["reviewed"])
                assert shown == ("team:gotchas/jwt-refresh.md", alice.ident, True)
                page = await call(client, "read", page="team:gotchas/jwt-refresh.md")
                assert page["note"].startswith("team page by Alice <alice@example.com>")

        try:
            run(body)
        finally:
            server.close()


def test_the_prompt_hook_hands_a_team_page_once_and_consolidation_leaves_the_team_alone(
    people, code_repo, file_team, monkeypatch, tmp_path
):
    """The real hook process (words alone, as without the warm helper): the team page, named
    and labelled; not again in the same session; the session's consolidation writes only to
    the personal wiki."""
    import json
    import os
    import subprocess
    import sys

    from conftest import consolidate_session

    url, _ = file_team
    carol = people["Carol"]
    memories = joined(people, code_repo, url, monkeypatch)
    land_gotcha(people, url, tmp_path)
    with acting(carol, monkeypatch):
        memories["Carol"].sync_tiers()
        team_wiki = memories["Carol"].project.team().wiki
        before = git(team_wiki, "rev-parse", "HEAD")

        def prompt_hook(text: str) -> str:
            payload = {"session_id": "s-team", "cwd": str(code_repo), "hook_event_name": "UserPromptSubmit"}
            result = subprocess.run(
                [sys.executable, "-m", "wiki_memory", "hook", "claude-code", "UserPromptSubmit"],
                input=json.dumps({**payload, "prompt": text}).encode(),
                capture_output=True,
                env=dict(os.environ),
                timeout=60,
            )
            assert result.returncode == 0, result.stderr
            printed = json.loads(result.stdout) if result.stdout.strip() else None
            return printed["hookSpecificOutput"]["additionalContext"] if printed else ""

        first = prompt_hook(PROMPT)
        assert "team:gotchas/jwt-refresh.md" in first
        assert "team page by Alice <alice@example.com>, merged by Bob <bob@example.com>" in first
        assert "team:gotchas/jwt-refresh.md" not in prompt_hook(PROMPT + " again")
        consolidate_session(memories["Carol"].project, "s-team")
    assert git(team_wiki, "rev-parse", "HEAD") == before
    assert git(team_wiki, "status", "--porcelain") == ""
