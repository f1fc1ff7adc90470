"""The lifecycle of a page: marks and supersede through the CLI and MCP land as commits by
their author with their reason; wrong pages never reach SessionStart; anchors drift when
their file changes and not when another does; review lists what needs a look; usage is
counted outside git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from mcp import Client
from mcp_helpers import call, fail, run
from mcp_types import Implementation

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.handoff import handoff_for_next_session
from wiki_memory.hook import startup
from wiki_memory.mcp.server import build_server
from wiki_memory.memory import Actor, Memory
from wiki_memory.pages import drift as drift_module
from wiki_memory.pages import usage
from wiki_memory.pages.drift import drift_note, drifted

EXE = str(Path(sys.executable).parent / "wiki-memory")


def cli(repo: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([EXE, *args], cwd=repo, capture_output=True, text=True, env=dict(os.environ))
    if ok:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def repo(code_repo: Path) -> Path:
    (code_repo / "src").mkdir()
    (code_repo / "src" / "api.py").write_text("def orders():\n    return []\n")
    (code_repo / "src" / "db.py").write_text("URL = 'sqlite://'\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return code_repo


def last_commit(repo: Path) -> dict[str, str]:
    wiki = resolve_project(repo).wiki
    fmt = "%an <%ae>%n%s" + "".join(
        f"%n%(trailers:key={k},valueonly,separator=%x2C)" for k in ("Reason", "Verdict", "Agent")
    )
    author, subject, reason, verdict, agent = git(wiki, "log", "-1", f"--format={fmt}").split("\n")[:5]
    return {"author": author, "subject": subject, "reason": reason, "verdict": verdict, "agent": agent}


def status_of(repo: Path, rel: str) -> dict[str, object]:
    from wiki_memory.pages import parse_page

    wiki = resolve_project(repo).wiki
    return dict(parse_page((wiki / rel).read_text(), rel).meta)


def test_marks_and_supersede_through_the_cli_are_commits_by_their_author_with_the_reason(repo):
    cli(repo, "write", "-t", "Use SQLite for orders", "--type", "decision", "--body", "SQLite in src/db.py.")
    cli(repo, "write", "-t", "Use Postgres for orders", "--type", "decision", "--body", "Postgres, for concurrency.")
    out = cli(repo, "mark", "Use SQLite for orders", "wrong", "--reason", "we never shipped SQLite").stdout
    assert out.startswith("decisions/use-sqlite-for-orders.md: wrong (commit ")
    assert last_commit(repo) == {
        "author": "Test Person <person@example.com>", "subject": "mark: wrong decisions/use-sqlite-for-orders",
        "reason": "we never shipped SQLite", "verdict": "wrong", "agent": "",
    }  # fmt: skip
    assert status_of(repo, "decisions/use-sqlite-for-orders.md")["status"] == "wrong"
    again = cli(repo, "mark", "Use SQLite for orders", "wrong").stdout
    assert "nothing to commit" in again  # it already read so

    cli(repo, "mark", "Use SQLite for orders", "active", "--agent", "codex", "--session", "s-42")
    cli(repo, "supersede", "Use SQLite for orders", "Use Postgres for orders", "--reason", "load", "--agent", "codex")
    commit = last_commit(repo)
    assert commit["author"] == "codex <codex@wiki-memory>" and commit["agent"] == "codex"
    assert commit["subject"] == "supersede: decisions/use-sqlite-for-orders by decisions/use-postgres-for-orders"
    assert commit["reason"] == "load"
    wiki = resolve_project(repo).wiki
    changed = git(wiki, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["decisions/use-postgres-for-orders.md", "decisions/use-sqlite-for-orders.md"]
    assert (
        status_of(repo, "decisions/use-sqlite-for-orders.md")["superseded_by"] == "decisions/use-postgres-for-orders.md"
    )
    assert status_of(repo, "decisions/use-postgres-for-orders.md")["supersedes"] == [
        "decisions/use-sqlite-for-orders.md"
    ]

    helpful = json.loads(cli(repo, "mark", "Use Postgres for orders", "helpful", "--json").stdout)
    assert helpful["helpful"] == 1 and helpful["commit"] and last_commit(repo)["verdict"] == "helpful"
    bad = cli(repo, "mark", "Use Postgres for orders", "great", ok=False)
    assert bad.returncode == 2 and "great" in bad.stderr and "Traceback" not in bad.stderr
    refused = cli(repo, "supersede", "Use Postgres for orders", "Use SQLite for orders", ok=False)
    assert refused.returncode == 1 and "is superseded itself" in refused.stderr
    git(wiki, "fsck", "--strict")


def test_feedback_and_supersede_through_mcp_are_commits_by_the_calling_agent(repo, monkeypatch):
    monkeypatch.setenv("WIKI_MEMORY_SESSION_ID", "9b1e-session")
    server = build_server(project_dir=str(repo))

    async def body():
        async with Client(server, client_info=Implementation(name="codex", version="1")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "misled you" in tools["feedback"].description
            assert "decision changed" in tools["supersede"].description
            await call(client, "write", title="Retry forever", body="Retry until it works.", type="decision")
            await call(client, "write", title="Retry twice", body="Retry twice, then fail.", type="decision")
            out = await call(client, "feedback", page="Retry forever", verdict="wrong", reason="it hung the worker")
            assert out["status"] == "wrong" and len(out["commit"]) == 40
            assert last_commit(repo) | {"author": ""} == {
                "author": "", "subject": "mark: wrong decisions/retry-forever", "reason": "it hung the worker",
                "verdict": "wrong", "agent": "codex",
            }  # fmt: skip
            assert last_commit(repo)["author"] == "codex <codex@wiki-memory>"
            found = await call(client, "search", query="retry until it works")
            assert "decisions/retry-forever.md" not in [h["path"] for h in found["results"]]
            assert "verdict" in await fail(client, "feedback", page="Retry twice", verdict="meh")
            done = await call(client, "supersede", old="Retry forever", new="Retry twice", reason="we changed it")
            assert done["commit"] and done["new"] == "decisions/retry-twice.md"
            assert "superseded" in (await fail(client, "supersede", old="Retry twice", new="Retry forever"))

    run(body)
    server.close()
    wiki = resolve_project(repo).wiki
    assert "Session-Id: 9b1e-session" in git(wiki, "log", "-1", "--format=%B")


def _decision_in_session_start(repo: Path, title: str) -> str:
    """SessionStart's text after a session whose handoff names the decision's words."""
    from conftest import consolidate_session
    from journals import Session

    project = resolve_project(repo)
    Session(project, "s-start-0001").start().prompt(f"Work on {title} in src/db.py").edit("src/db.py").stop(
        "Done."
    ).end().write()
    consolidate_session(project, "s-start-0001")
    return startup.session_start_text(project, "codex", "s-next", "startup") or ""


def test_a_wrong_page_never_reaches_session_start(repo):
    with Memory.at(repo) as memory:
        memory.write("Orders database connection", "Orders use the URL in src/db.py.", "decision")
    text = _decision_in_session_start(repo, "Orders database connection")
    assert "decisions/orders-database-connection.md" in text
    with Memory.at(repo) as memory:
        memory.mark("Orders database connection", "wrong", reason="it is read from the environment")
    project = resolve_project(repo)
    after = startup.session_start_text(project, "codex", "s-next-2", "startup") or ""
    assert "orders-database-connection" not in after
    with Memory.at(repo) as memory:
        assert memory.search("orders database connection").results == [] or all(
            r.path != "decisions/orders-database-connection.md" for r in memory.search("orders database").results
        )
        found = memory.search("orders database connection", status="wrong").results
        assert [r.path for r in found] == ["decisions/orders-database-connection.md"]


def test_anchors_drift_when_their_file_changes_not_when_another_does(repo, monkeypatch):
    blob = git(repo, "hash-object", "src/api.py").strip()
    anchors = [{"path": "src/api.py", "blob": blob}]
    hashed: list[str] = []
    real = drift_module.blob_of_file
    monkeypatch.setattr(drift_module, "blob_of_file", lambda p, a="sha1": hashed.append(str(p)) or real(p, a))
    assert drifted(repo, anchors) == [] and hashed == []  # the git index vouched: nothing hashed
    (repo / "src" / "db.py").write_text("URL = 'postgres://db/orders'\n")
    assert drifted(repo, anchors) == []
    (repo / "src" / "api.py").write_text("def orders():\n    return ['x']\n")
    found = drifted(repo, anchors)
    assert [(d.path, d.reason) for d in found] == [("src/api.py", "changed")]
    assert hashed == [str(repo / "src" / "api.py")]  # only the file whose stat moved
    assert drift_note(found) == "may be stale (src/api.py changed since)"
    git(repo, "checkout", "--", "src/api.py")
    assert drifted(repo, anchors) == []
    git(repo, "mv", "src/api.py", "src/orders.py")
    assert drift_note(drifted(repo, anchors)) == "may be stale (src/api.py moved to src/orders.py since)"
    os.remove(repo / "src" / "orders.py")
    git(repo, "rm", "-q", "--cached", "src/orders.py")
    assert drift_note(drifted(repo, anchors)) == "may be stale (src/api.py deleted since)"


def test_an_anchored_page_is_flagged_wherever_it_is_handed_out_and_in_review(repo):
    with Memory.at(repo) as memory:
        memory.write("Orders endpoint returns a list", "orders() in src/api.py returns a list.", "fact")
        memory.write("DB URL lives in db.py", "The URL is in src/db.py.", "fact")
        anchored = memory.anchor("Orders endpoint returns a list", ["src/api.py"], reason="written from the code")
        memory.anchor("DB URL lives in db.py", [str(repo / "src" / "db.py")])
    assert anchored.page.meta["anchors"] == [
        {"path": "src/api.py", "blob": git(repo, "hash-object", "src/api.py").strip()}
    ]
    (repo / "src" / "api.py").write_text("def orders():\n    return {}\n")
    with Memory.at(repo) as memory:
        hits = memory.search("orders endpoint returns a list")
        assert hits.drift == {"facts/orders-endpoint-returns-a-list.md": "may be stale (src/api.py changed since)"}
        assert memory.read("Orders endpoint returns a list").drift == "may be stale (src/api.py changed since)"
        assert memory.read("DB URL lives in db.py").drift is None
        items = memory.review().of_kind("drift")
        path = "facts/orders-endpoint-returns-a-list.md"
        assert [(i.paths, i.command) for i in items] == [
            ((path,), f"wiki-memory mark {path} active|stale|wrong  (active: still true, re-anchored)")
        ]
        memory.mark("Orders endpoint returns a list", "active", reason="checked: it still returns a collection")
        assert memory.review().of_kind("drift") == []  # re-anchored at the file as it is now
    assert "   may be stale (src/api.py changed since)" not in cli(repo, "search", "orders endpoint").stdout


def test_review_lists_what_needs_a_look_each_with_its_command(repo):
    with Memory.at(repo) as memory:
        memory.write("Retry policy", "Retry twice. See [[Old retry policy]].", "decision")
        memory.write("Old retry policy", "Retry forever.", "decision")
        memory.mark("Old retry policy", "wrong", reason="it hung the workers")
        memory.write("Deploy freeze", "No deploys during the audit.", "fact")
        memory.edit("Deploy freeze", "append", text="Until the audit ends.")
    wiki = resolve_project(repo).wiki
    page = wiki / "facts/deploy-freeze.md"
    page.write_text(page.read_text().replace("status: active", "status: active\nexpires: 2020-01-31"))
    (wiki / "notes").mkdir()
    (wiki / "notes/half-done.md").write_text("---\ntitle: Half done\nstatus: superseded\n---\n# Half done\n\nOld.\n")
    with Memory.at(repo) as memory:
        memory.commit_hand_edits()
        items = {(i.kind, i.paths): i for i in memory.review().items}
    assert items[("expired", ("facts/deploy-freeze.md",))].message == "facts/deploy-freeze.md expired on 2020-01-31"
    link = items[("wrong-link", ("decisions/retry-policy.md", "decisions/old-retry-policy.md"))]
    assert link.command == "wiki-memory edit decisions/retry-policy.md"
    assert items[("lifecycle", ("notes/half-done.md",))].command == "wiki-memory supersede notes/half-done.md NEW-PAGE"
    data = json.loads(cli(repo, "review", "--json").stdout)
    assert {(i["kind"], tuple(i["paths"])) for i in data["items"]} == set(items)
    assert all(i["command"].startswith("wiki-memory ") for i in data["items"])
    text = cli(repo, "review").stdout
    assert (
        "[expired] facts/deploy-freeze.md expired on 2020-01-31\n   -> wiki-memory mark facts/deploy-freeze.md archived"
        in text
    )


@pytest.mark.usefixtures("embedding_model")
def test_review_finds_likely_duplicates_and_contradicting_decisions(repo):
    with Memory.at(repo) as memory:
        memory.write("Run the tests with tox", "Run the tests with tox before pushing.", "procedure")
        memory.write("Run tests with tox", "Run the tests using tox before you push.", "procedure")
        memory.write("Use Postgres for the orders database", "We store orders in Postgres.", "decision")
        memory.write("Use MySQL for the orders database", "We store orders in MySQL.", "decision")
        memory.write("Use pnpm for the web app", "Install with pnpm.", "decision")
        memory.reindex()
        found = memory.review()
    assert [set(i.paths) for i in found.of_kind("duplicate")] == [
        {"procedures/run-the-tests-with-tox.md", "procedures/run-tests-with-tox.md"}
    ]
    contradictions = found.of_kind("contradiction")
    assert [set(i.paths) for i in contradictions] == [
        {"decisions/use-postgres-for-the-orders-database.md", "decisions/use-mysql-for-the-orders-database.md"}
    ]
    assert contradictions[0].command.startswith("wiki-memory supersede decisions/use-")


def test_review_keeps_what_the_index_gave_until_the_index_changes(repo, monkeypatch):
    """A viewer or server asks again and again: the pairwise comparisons are kept while the
    index stays as it was, and done again after any write, by this process or another."""
    from wiki_memory.index import Index

    with Memory.at(repo) as memory:
        memory.write("Run the tests with tox", "Run the tests with tox before pushing.", "procedure")
        memory.write("Run tests with tox", "Run the tests using tox before you push.", "procedure")
        memory.reindex()
        reads: list[int] = []
        real = Index.first_vectors
        monkeypatch.setattr(Index, "first_vectors", lambda self, paths: reads.append(len(paths)) or real(self, paths))
        first = memory.review()
        assert memory.review() == first and len(reads) == 1
        assert len(first.of_kind("duplicate")) == 1
        with Memory.at(repo) as other:  # another process's write moves the index on
            other.supersede("Run tests with tox", "Run the tests with tox", reason="one page")
        assert memory.review().of_kind("duplicate") == [] and len(reads) == 2
        # Drift is looked at each time: the code changes without the index.
        memory.anchor("Run the tests with tox", ["src/api.py"])
        assert memory.review().of_kind("drift") == []
        (repo / "src" / "api.py").write_text("def orders():\n    return None\n")
        assert [i.paths for i in memory.review().of_kind("drift")] == [("procedures/run-the-tests-with-tox.md",)]


def test_usage_is_counted_outside_git(repo):
    with Memory.at(repo) as memory:
        memory.write("Orders database connection", "Orders use the URL in src/db.py.", "decision")
    text = _decision_in_session_start(repo, "Orders database connection")
    assert "orders-database-connection" in text
    project = resolve_project(repo)
    before = git(project.wiki, "rev-list", "--count", "HEAD")
    with Memory.at(repo) as memory:
        memory.read("Orders database connection")
        memory.search("orders database connection")
        memory.mark("Orders database connection", "helpful")
    counts = usage.counts(project)["decisions/orders-database-connection.md"]
    assert counts == {"handed": 1, "read": 1, "found": 1, "helpful": 1}
    # Reads and hand-outs made no commit; the helpful mark made one.
    assert int(git(project.wiki, "rev-list", "--count", "HEAD")) == int(before) + 1
    assert handoff_for_next_session(project, session_id="s-x").shown


def test_marks_are_refused_in_one_line_for_bad_input(repo):
    with Memory.at(repo) as memory:
        memory.write("A note", "Text.", "note")
        with pytest.raises(Exception, match="unknown verdict"):
            memory.mark("A note", "great")
        with pytest.raises(Exception, match="reason"):
            memory.mark("A note", "wrong", reason="x" * 600)
        with pytest.raises(Exception, match="cannot supersede itself"):
            memory.supersede("A note", "A note")
        with pytest.raises(Exception, match="no such file"):
            memory.anchor("A note", ["src/nope.py"])
        with pytest.raises(Exception, match="no such file"):
            memory.anchor("A note", ["../outside.py"])
        assert memory.mark("A note", "stale", actor=Actor("codex", "s1")).status == "stale"
