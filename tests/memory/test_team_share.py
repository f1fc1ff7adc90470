"""Sharing with the team tier (issue 28, parts 2 and 4): `share` proposes personal pages as a
branch of the team remote, `review` lists the pages worth it, `handoff share` attaches the
newest handoff to the code branch, handed once to a teammate at SessionStart.

Real git throughout: a bare team repository over file:// (and over HTTP through git's own
`git http-backend`), one WIKI_MEMORY_HOME and one git identity per person, each person's
team clone made with `git clone` as `team join` makes it, merges done with the git CLI.
The only stand-in is the host's client (`gh`) at the command-line boundary: a script on
PATH that records its arguments.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import git
from hooked import Hooked
from test_sync_transport import git_http_server

from wiki_memory.cli import main
from wiki_memory.config import resolve_project
from wiki_memory.memory import Memory
from wiki_memory.memory.share_records import ShareRefused
from wiki_memory.memory.team_hosts import Host, host_of, logged_in_client, open_request
from wiki_memory.pages import Page
from wiki_memory.store import Author

CODE_URL = "https://git.example.com/acme/widgets.git"


@dataclass
class Person:
    name: str
    email: str
    home: Path  # WIKI_MEMORY_HOME
    code: Path  # the person's checkout of the code repository

    @property
    def env(self) -> dict[str, str]:
        return {
            "WIKI_MEMORY_HOME": str(self.home),
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


class Team:
    """A bare team repository and the people around it; `act(person)` makes the process
    that person (their home and git identity)."""

    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str | None = None, bare: Path | None = None
    ):
        self.tmp = tmp_path
        self.monkeypatch = monkeypatch
        self.bare = bare or tmp_path / "team.git"
        if bare is None:
            git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.bare))
        self.url = url or f"file://{self.bare}"
        seed = tmp_path / "seed"
        git(tmp_path, "clone", "-q", str(self.bare), str(seed))
        (seed / "README.md").write_text("# The team's memory\n")
        git(seed, "add", "README.md")
        git(seed, "-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-q", "-m", "start")
        git(seed, "push", "-q", "origin", "HEAD:main")

    def person(self, name: str, branch: str = "main") -> Person:
        who = Person(name.title(), f"{name}@example.com", self.tmp / f"home-{name}", self.tmp / f"code-{name}")
        who.code.mkdir()
        git(who.code, "init", "-q", "-b", branch)
        git(who.code, "remote", "add", "origin", CODE_URL)
        (who.code / "app.py").write_text("print('widgets')\n")
        git(who.code, "add", "app.py")
        git(who.code, "-c", f"user.name={who.name}", "-c", f"user.email={who.email}", "commit", "-q", "-m", "app")
        self.act(who)
        project = resolve_project(who.code)
        git(self.tmp, "clone", "-q", self.url, str(project.team().wiki))  # what `team join URL` does
        return who

    def act(self, who: Person) -> Memory:
        for key, value in who.env.items():
            self.monkeypatch.setenv(key, value)
        return Memory.at(who.code)

    def merge(self, branch: str, as_name: str = "Reviewer") -> subprocess.CompletedProcess[str]:
        """A teammate merges the branch on the host: a clone, `git merge`, a push."""
        work = self.tmp / f"merge-{branch.replace('/', '-')}"
        if not work.exists():
            git(self.tmp, "clone", "-q", str(self.bare), str(work))
        git(work, "fetch", "-q", "origin")
        git(work, "reset", "-q", "--hard", "origin/main")
        ident = ["-c", f"user.name={as_name}", "-c", "user.email=reviewer@example.com"]
        done = subprocess.run(
            ["git", *ident, "merge", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}"],
            cwd=work,
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            git(work, "push", "-q", "origin", "HEAD:main")
        else:
            git(work, "merge", "--abort")
        return done

    def heads(self) -> dict[str, str]:
        out = git(self.tmp, "ls-remote", str(self.bare))
        return {ref: sha for sha, ref in (line.split("\t") for line in out.splitlines())}


def gotcha(memory: Memory, title: str, body: str, sessions: int = 2, author: str = "claude-code") -> str:
    page = Page.new(title, "gotcha", body, sources=[f"claude-code:s{n:04d}" for n in range(sessions)])
    return memory.store(create=True).write(page, Author.agent(author)).path


@pytest.fixture
def team(tmp_path, monkeypatch) -> Team:
    return Team(tmp_path, monkeypatch)


def test_a_shared_gotcha_becomes_a_branch_that_a_teammate_merges(team):
    alice, bob = team.person("alice"), team.person("bob")
    memory = team.act(alice)
    path = gotcha(memory, "Build cache must be cleared after a schema change", "Run `make clean` first.")
    gotcha(memory, "Seen once only", "One session is not evidence enough.", sessions=1)
    personal_head = git(memory.wiki, "rev-parse", "HEAD").strip()

    worth = memory.share_candidates()
    assert [c.path for c in worth] == [path]
    assert "2 sessions" in worth[0].why and "not on the team tier" in worth[0].why

    before = team.heads()
    proposal = memory.share_plan([path], message="bit us twice")
    assert team.heads() == before  # a proposal pushes nothing
    assert f"+++ b/{path}" in proposal.diff and "+author: Alice <alice@example.com>" in proposal.diff
    assert "+Run `make clean` first." in proposal.diff
    result = memory.share_push(proposal)
    branch = proposal.branch
    assert branch == "share/alice/build-cache-must-be-cleared-after-a-schema-change"
    heads = team.heads()
    assert heads[f"refs/heads/{branch}"] == proposal.commit
    assert heads["refs/heads/main"] == before["refs/heads/main"]  # main moves only by review
    shown = git(team.bare, "show", f"{branch}:{path}")
    assert "author: Alice <alice@example.com>" in shown and "Run `make clean` first." in shown
    assert git(team.bare, "rev-parse", f"{branch}^").strip() == before["refs/heads/main"]
    assert (
        git(team.bare, "log", "-1", "--format=%an <%ae>|%B", branch)
        .strip()
        .startswith("Alice <alice@example.com>|share:")
    )
    assert result.request is None and result.compare is None  # a bare repository: the branch is all there is
    assert memory.share_candidates() == []  # shared: not proposed again
    assert [(s.path, s.state) for s in memory.shared_pages()[0]] == [(path, "proposed")]

    assert team.merge(branch).returncode == 0  # Bob reviews and merges it with git
    git(team.bare, "fsck", "--strict")
    assert "Run `make clean` first." in git(team.bare, "show", f"main:{path}")
    team.act(alice)
    states, note = Memory.at(alice.code).shared_pages()
    assert note is None and [(s.path, s.state, s.changed) for s in states] == [(path, "merged", False)]
    assert git(memory.wiki, "rev-parse", "HEAD").strip() == personal_head  # the personal page is left as it is
    # Bob, once his team clone has main (team sync's part), has nothing of it to propose.
    bob_memory = team.act(bob)
    git(bob_memory.project.team().wiki, "pull", "-q", "origin", "main")
    gotcha(bob_memory, "Build cache must be cleared after a schema change", "Bob's own words.", sessions=3)
    assert bob_memory.share_candidates() == []


def test_sharing_again_updates_the_same_branch_on_the_current_main(team):
    alice = team.person("alice")
    memory = team.act(alice)
    path = gotcha(memory, "Flaky login test needs the refresh first", "Refresh before the retry.")
    first = memory.share_push(memory.share_plan([path]))
    git(team.tmp, "clone", "-q", str(team.bare), str(team.tmp / "other"))
    other = team.tmp / "other"
    (other / "facts").mkdir()
    (other / "facts" / "port.md").write_text("# Port\n\nThe API listens on 8080.\n")
    git(other, "add", ".")
    git(other, "-c", "user.name=C", "-c", "user.email=c@example.com", "commit", "-q", "-m", "port")
    git(other, "push", "-q", "origin", "HEAD:main")

    memory.edit(path, "append", text="Also in admin_client.py.")
    assert next(c.why for c in memory.share_candidates()).startswith("a gotcha with evidence from 2 sessions, changed")
    again = memory.share_plan([path])
    assert again.branch == first.proposal.branch and again.previous == first.proposal.commit
    assert [p.how for p in again.pages] == ["new"]
    memory.share_push(again)
    branch = first.proposal.branch
    assert git(team.bare, "rev-parse", f"{branch}^").strip() == git(team.bare, "rev-parse", "main").strip()
    assert "Also in admin_client.py." in git(team.bare, "show", f"{branch}:{path}")
    assert team.merge(branch).returncode == 0

    # After the merge, a change shared again is an update of the team's page (same id).
    file = memory.wiki / path
    file.write_text(file.read_text() + "\nAnd in the CLI.\n")  # a hand edit, not committed yet
    third = memory.share_plan([path])
    assert [p.how for p in third.pages] == ["update"] and third.previous == again.commit
    assert "+And in the CLI." in third.diff and "+Also in admin_client.py." not in third.diff


def test_concurrent_shares_of_one_page_end_in_a_conflict_copy_nothing_lost(team):
    alice, bob = team.person("alice"), team.person("bob")
    title = "Migrations must run before the seed"
    a = team.act(alice)
    path = gotcha(a, title, "Alice: run `alembic upgrade head` first.")
    a_plan = a.share_plan([path])
    b = team.act(bob)
    gotcha(b, title, "Bob: the seed fails with a missing table otherwise.")
    b_plan = b.share_plan([path])  # neither has pushed yet: both would add the same file
    team.act(alice)
    Memory.at(alice.code).share_push(a_plan)
    b = team.act(bob)
    b.share_push(b_plan)
    assert {a_plan.branch, b_plan.branch} <= {r.removeprefix("refs/heads/") for r in team.heads()}

    assert team.merge(a_plan.branch).returncode == 0
    refused = team.merge(b_plan.branch)
    assert refused.returncode != 0 and "CONFLICT" in refused.stdout  # the host would say so too
    again = b.share_plan([path])  # Bob shares again: rebuilt on main, beside Alice's page
    assert again.branch == b_plan.branch
    [placed] = again.pages
    assert placed.how == "conflict copy" and placed.beside == path
    assert placed.team_path.startswith(path.removesuffix(".md") + ".conflict-bob-")
    b.share_push(again)
    assert team.merge(b_plan.branch).returncode == 0
    files = git(team.bare, "ls-tree", "-r", "--name-only", "main").split()
    assert path in files and placed.team_path in files
    assert "Alice: run `alembic upgrade head` first." in git(team.bare, "show", f"main:{path}")
    copy = git(team.bare, "show", f"main:{placed.team_path}")
    assert "Bob: the seed fails with a missing table otherwise." in copy and f"conflict_of: {path}" in copy


def test_a_share_beside_an_open_branch_of_someone_else_is_a_conflict_copy(team):
    alice, bob = team.person("alice"), team.person("bob")
    title = "Docker builds need the cache mount"
    a = team.act(alice)
    path = gotcha(a, title, "Alice's version.")
    a_plan = a.share_plan([path])
    a.share_push(a_plan)
    b = team.act(bob)
    gotcha(b, title, "Bob's version.")
    b_plan = b.share_plan([path])
    assert [p.how for p in b_plan.pages] == ["conflict copy"]
    b.share_push(b_plan)
    assert team.merge(a_plan.branch).returncode == 0
    assert team.merge(b_plan.branch).returncode == 0
    assert "Alice's version." in git(team.bare, "show", f"main:{path}")
    assert "Bob's version." in git(team.bare, "show", f"main:{b_plan.pages[0].team_path}")


def test_a_page_with_a_secret_is_refused_before_anything_is_pushed(team):
    alice = team.person("alice")
    memory = team.act(alice)
    path = gotcha(memory, "Staging deploys need the token", "Use the staging token.")
    # A hand edit slips a credential in (hand edits are committed as they are).
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    file = memory.wiki / path
    file.write_text(file.read_text() + f"\nexport GITHUB_TOKEN={secret}\n")
    memory.commit_hand_edits()
    before = team.heads()
    with pytest.raises(ShareRefused) as refused:
        memory.share_plan([path])
    line = file.read_text().splitlines().index(f"export GITHUB_TOKEN={secret}") + 1
    assert f"{path} line {line}" in str(refused.value) and secret not in str(refused.value)
    assert team.heads() == before

    result = CliRunner().invoke(main, ["--project", str(alice.code), "share", path, "--yes"], env=alice.env)
    assert result.exit_code != 0 and "nothing was pushed" in result.output and secret not in result.output
    assert team.heads() == before
    assert memory.shared_pages(fetch=False) == ([], None)


def test_personal_pages_are_shared_only_when_named_on_purpose(team):
    alice = team.person("alice")
    memory = team.act(alice)
    written = memory.write("Tabs not spaces", "Alice likes tabs.", "preference")
    result = CliRunner().invoke(main, ["--project", str(alice.code), "share", written.path, "--dry-run"], env=alice.env)
    assert result.exit_code != 0 and "--allow preference" in result.output
    result = CliRunner().invoke(
        main, ["--project", str(alice.code), "share", written.path, "--allow", "preference", "--dry-run"], env=alice.env
    )
    assert result.exit_code == 0, result.output
    assert "+Alice likes tabs." in result.output and "new: preferences/tabs-not-spaces.md" in result.output
    assert not any("share/" in ref for ref in team.heads())  # a dry run pushes nothing


def test_share_through_the_cli_over_smart_http_opens_the_request_with_gh(tmp_path, monkeypatch):
    root = tmp_path / "srv"
    root.mkdir()
    git(root, "init", "-q", "--bare", "-b", "main", "team.git")
    with git_http_server(root) as base:
        url = f"{base}/team.git"
        team = Team(tmp_path, monkeypatch, url=url, bare=root / "team.git")
        alice = team.person("alice")
        memory = team.act(alice)
        path = gotcha(memory, "Integration tests need the fake clock", "Set FAKE_CLOCK=1.")
        log = fake_cli(tmp_path, monkeypatch, "gh", logged_in=True)
        argv = ["--project", str(alice.code), "share", path, "-m", "for everyone", "--yes"]
        result = CliRunner().invoke(main, argv, env=alice.env)
        assert result.exit_code == 0, result.output
        branch = "share/alice/integration-tests-need-the-fake-clock"
        assert "Set FAKE_CLOCK=1." in git(team.bare, "show", f"{branch}:{path}")
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        body = (
            "for everyone\n\nProposed with `wiki-memory share` for the team's memory:\n"
            f"- `{path}`: Integration tests need the fake clock (new)\n"
        )
        assert calls == [
            ["auth", "status", "--hostname", "127.0.0.1"],
            ["pr", "create", "--repo", "127.0.0.1/team", "--head", branch, "--base", "main"]
            + ["--title", "for everyone", "--body", body],
        ]
        assert "opened: https://127.0.0.1/team/pull/1" in result.output


def test_without_a_logged_in_client_the_compare_address_is_printed(tmp_path, monkeypatch):
    log = fake_cli(tmp_path, monkeypatch, "gh", logged_in=False)
    host = host_of("git@github.com:acme/widgets-memory.git")
    assert host == Host("github", "github.com", "acme/widgets-memory")
    assert logged_in_client(host) is None
    assert (
        host.compare_url("share/alice/x")
        == "https://github.com/acme/widgets-memory/compare/main...share/alice/x?expand=1"
    )
    assert [c[:2] for c in map(json.loads, log.read_text().splitlines())] == [["auth", "status"]]
    gitlab = host_of("https://gitlab.com/acme/tools/memory.git")
    assert gitlab is not None and gitlab.kind == "gitlab"
    assert gitlab.compare_url("share/a/x") == (
        "https://gitlab.com/acme/tools/memory/-/merge_requests/new?merge_request[source_branch]=share%2Fa%2Fx"
        "&merge_request[target_branch]=main"
    )
    gitea = host_of("ssh://git@codeberg.org/acme/memory.git")
    assert (
        gitea is not None
        and gitea.compare_url("share/a/x") == "https://codeberg.org/acme/memory/compare/main...share/a/x"
    )
    assert host_of(str(tmp_path / "team.git")) is None and host_of(f"file://{tmp_path}/team.git") is None


def test_gh_is_asked_for_a_github_remote_and_an_open_request_is_reused(tmp_path, monkeypatch):
    log = fake_cli(tmp_path, monkeypatch, "gh", logged_in=True, exists=True)
    found = logged_in_client(Host("github", "github.com", "acme/mem"))
    assert found is not None and found[0] == "gh"
    request = open_request("gh", found[1], "share/alice/x", "A gotcha", "body")
    assert request.existed and request.url == "https://github.com/acme/mem/pull/7"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[-1][:6] == ["pr", "create", "--repo", "github.com/acme/mem", "--head", "share/alice/x"]


def test_glab_and_tea_open_the_request_with_their_own_arguments(tmp_path, monkeypatch):
    log = fake_cli(tmp_path, monkeypatch, "glab", logged_in=True)
    found = logged_in_client(host_of("git@gitlab.com:acme/tools/memory.git"))
    assert found == ("glab", Host("gitlab", "gitlab.com", "acme/tools/memory"))
    request = open_request(*found, "share/alice/x", "A gotcha", "body")
    assert request.url == "https://gitlab.com/acme/tools/memory/pull/1" and not request.existed
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        ["auth", "status", "--hostname", "gitlab.com"],
        ["mr", "create", "--repo", "https://gitlab.com/acme/tools/memory", "--source-branch", "share/alice/x"]
        + ["--target-branch", "main", "--title", "A gotcha", "--description", "body", "--yes"],
    ]

    # tea has no `auth status`: the login for the host is found in its list and named.
    log = fake_cli(tmp_path, monkeypatch, "tea", logged_in=True)
    found = logged_in_client(host_of("https://gitea.acme.internal/acme/memory.git"))
    assert found == ("tea", Host("gitea", "gitea.acme.internal", "acme/memory", "work"))
    open_request(*found, "share/alice/x", "A gotcha", "body")
    assert logged_in_client(host_of("https://gitea.other.org/acme/memory.git")) is None  # no login for it
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        ["login", "list", "--output", "csv"],
        ["pulls", "create", "--login", "work", "--repo", "acme/memory", "--head", "share/alice/x"]
        + ["--base", "main", "--title", "A gotcha", "--description", "body"],
        ["login", "list", "--output", "csv"],
    ]


FAKE_CLI = """#!{python}
import json, os, sys
with open({log!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args[:2] == ["auth", "status"]:
    sys.exit(0 if {logged_in} else 1)
if args[:2] == ["login", "list"]:  # tea: its logins, in the CSV of `--output csv`
    print('"Name","URL","SSHHost","User","Default"')
    if {logged_in}:
        print('"codeberg","https://codeberg.org","codeberg.org","alice","true"')
        print('"work","https://gitea.acme.internal/","gitea.acme.internal","alice","false"')
    sys.exit(0)
if args[1:2] == ["create"]:
    repo = args[args.index("--repo") + 1]
    if {exists}:
        print('a pull request for branch "x" into branch "main" already exists:', file=sys.stderr)
        print("https://github.com/acme/mem/pull/7", file=sys.stderr)
        sys.exit(1)
    host, _, path = repo.removeprefix("https://").partition("/")
    print(f"https://{{host}}/{{path.removesuffix('.git')}}/pull/1")
"""


def fake_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, *, logged_in: bool, exists: bool = False
) -> Path:
    """A stand-in for the host's client on PATH that records its arguments (one JSON line each)."""
    import sys

    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.log"
    script = folder / name
    script.write_text(FAKE_CLI.format(python=sys.executable, log=str(log), logged_in=logged_in, exists=exists))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    log.touch()
    return log


def test_a_handoff_shared_with_a_branch_is_handed_once_to_a_teammate_on_it(team):
    alice = team.person("alice", branch="feature/login")
    bob = team.person("bob", branch="feature/login")
    carol = team.person("carol", branch="main")
    a = team.act(alice)
    a.handoff_write("Login flake: the refresh now runs before the retry", next_steps=["Fix admin_client.py too"])
    shared = a.handoff_share()
    assert shared.team_path == "handoffs/branches/feature-login.md" and shared.branch == "feature/login"
    page = git(team.bare, "show", f"main:{shared.team_path}")
    assert "author: Alice <alice@example.com>" in page and "branch: feature/login" in page
    assert "Fix admin_client.py too" in page
    assert git(team.bare, "log", "-1", "--format=%an", "main").strip() == "Alice"
    assert Hooked(alice.code, "a-2").start().count("branch handoff") == 0  # not handed back to its author

    for who in (bob, carol):  # their team clones catch up (team sync's part)
        git(team.act(who).project.team().wiki, "pull", "-q", "origin", "main")
    team.act(bob)
    first = Hooked(bob.code, "b-1").start()
    assert "<wiki-memory branch handoff" in first and "by Alice <alice@example.com>" in first
    shared_at = re.search(r"^shared: '?([0-9T:Z-]+)'?$", page, re.M).group(1)
    assert "Handed over with branch feature/login by Alice <alice@example.com>, shared " in first
    assert f"({shared_at}) (team:handoffs/branches/feature-login.md)" in first
    assert "Fix admin_client.py too" in first
    assert "branch handoff" not in Hooked(bob.code, "b-2").start()  # once
    team.act(carol)
    assert "branch handoff" not in Hooked(carol.code, "c-1").start()  # another branch
    git(carol.code, "checkout", "-q", "-b", "feature/login")
    assert "by Alice <alice@example.com>" in Hooked(carol.code, "c-2").start()

    # A newer share of the branch is handed again.
    a = team.act(alice)
    a.handoff_write("Admin client fixed as well", next_steps=["Ship it"])
    a.handoff_share()
    git(team.act(bob).project.team().wiki, "pull", "-q", "origin", "main")
    assert "Admin client fixed as well" in Hooked(bob.code, "b-3").start()


def test_the_age_of_a_branch_handoff_is_said_from_its_shared_time():
    from wiki_memory.consolidate.branch_handoff import render

    meta = {"author": "Alice <alice@example.com>", "shared": "2026-12-01T10:00:00Z"}
    now = 1_796_119_200.0 + 3 * 3600  # 2026-12-01T10:00:00Z plus three hours
    text = render("feature/login", "handoffs/branches/feature-login.md", meta, "Goal: fix it.", now)
    assert "by Alice <alice@example.com>, shared 3 hours ago (2026-12-01T10:00:00Z)" in text
    future = render("feature/login", "x.md", {**meta, "shared": "2027-01-01T00:00:00Z"}, "Goal.", now)
    assert "in the future" in future
    long = render("b", "x.md", meta, "line\n" * 5000, now, budget=2000)
    assert len(long) <= 2000 and long.endswith("</wiki-memory branch handoff>") and "cut to fit" in long


def test_review_and_the_viewer_list_the_pages_worth_sharing(team):
    from starlette.testclient import TestClient

    from wiki_memory.ui.app import Viewer, build_app

    alice = team.person("alice")
    memory = team.act(alice)
    path = gotcha(memory, "Cold caches make the first build slow", "Warm the cache with `make warm`.", sessions=3)
    gotcha(memory, "A one-off", "Seen in one session.", sessions=1)
    memory.write("Tabs not spaces", "Alice likes tabs.", "preference")
    result = CliRunner().invoke(main, ["--project", str(alice.code), "review"], env=alice.env)
    assert result.exit_code == 0, result.output
    assert f"[share] {path}: a gotcha with evidence from 3 sessions, not on the team tier" in result.output
    assert f"-> wiki-memory share {path}" in result.output
    assert "one-off" not in result.output and "tabs" not in result.output
    listed = CliRunner().invoke(main, ["--project", str(alice.code), "review", "--json"], env=alice.env)
    assert [c["path"] for c in json.loads(listed.output)["share"]] == [path]

    token = "k3y-" + "y" * 40
    viewer = Viewer(memory.project, token=token, port=8767)
    with TestClient(build_app(viewer), base_url="http://127.0.0.1:8767" + viewer.base) as client:
        assert client.get(f"/?token={token}").status_code == 200
        page = client.get("/review").text
    assert "Worth sharing with the team" in page and "Cold caches make the first build slow" in page
    assert "a gotcha with evidence from 3 sessions" in page and "A one-off" not in page

    memory.share_push(memory.share_plan([path]))
    after = CliRunner().invoke(main, ["--project", str(alice.code), "review"], env=alice.env)
    assert "[share]" not in after.output


def test_bad_requests_get_one_line_errors_and_change_nothing(team):
    alice = team.person("alice", branch="feature/login")
    memory = team.act(alice)
    path = gotcha(memory, "Retries need a jittered backoff", "Use the backoff helper.")
    before = team.heads()

    def refused(*argv: str) -> str:
        result = CliRunner().invoke(main, ["--project", str(alice.code), *argv], env=alice.env)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code != 0 and len(lines) == 1, result.output
        return lines[0]

    assert "no-such-page" in refused("share", "no-such-page", "--yes")
    assert "no handoff yet" in refused("handoff", "share")
    memory.handoff_write("Detached work", next_steps=["Go on"])
    git(alice.code, "checkout", "-q", "--detach")
    assert "on no branch" in refused("handoff", "share")
    assert team.heads() == before

    # Without a team tier joined, nothing here is touched: a pending hand edit stays pending.
    file = memory.wiki / path
    file.write_text(file.read_text() + "\nEdited by hand.\n")
    shutil.rmtree(memory.project.team().wiki)
    assert "team join" in refused("share", path, "--yes")
    git(alice.code, "checkout", "-q", "feature/login")
    assert "team join" in refused("handoff", "share")
    assert git(memory.wiki, "status", "--porcelain").strip() == f"M {path}"
    assert team.heads() == before
