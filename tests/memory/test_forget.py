"""Secrets already in memory, through the memory layer and the CLI: `scan` finds them in the
whole history, `forget` removes a string or a page for good (history, index, journals, logs,
context), and `sync` carries the rewrite to the remote and to the other machines, which
adopt it without bringing the forgotten text back. Real git repositories and a bare remote,
checked with the git CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO, git

from wiki_memory.cli import main
from wiki_memory.config import home, project_for_store
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import InputError, Memory
from wiki_memory.store import Author

sys.path.insert(0, str(REPO / "scripts"))
from bench_forget import TOKEN as BENCH_TOKEN
from bench_forget import build

TOKEN = "ghp_" + "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"  # fake, of the real shape
HOSTNAME = "db7.internal.acme-corp.example"  # no rule finds it: only `forget` removes it
CODEX = Author.agent("codex")


def all_objects(repo: Path) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True
    ).stdout


def assert_clean(repo: Path, *secrets: str) -> None:
    """No object, log entry or file of `repo` holds any of `secrets`; fsck is clean."""
    objects = all_objects(repo)
    log = git(repo, "log", "-p", "--all")
    for secret in secrets:
        assert secret.encode() not in objects, f"an object of {repo} holds it"
        assert secret not in log
    check = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True, text=True)
    assert check.returncode == 0 and "error" not in check.stderr.lower(), check.stderr
    assert git(repo, "status", "--porcelain") == ""


def memory_at(wiki: Path, host: str | None = None) -> Memory:
    memory = Memory(project_for_store(wiki))
    store = memory.store(create=True)
    if host:
        store.host = host
    return memory


def journal_with(memory: Memory, session: str, text: str) -> Path:
    """A journal line holding `text`, JSON-encoded as the hooks write it."""
    journal = memory.project.journal_dir
    journal.mkdir(parents=True, exist_ok=True)
    path = journal / f"{session}.jsonl"
    line = {"kind": "prompt", "session_id": session, "text": f"connect to {text} with the deploy key"}
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def files_holding(paths: list[Path], secret: str) -> list[Path]:
    return [p for p in paths if p.exists() and secret.encode() in p.read_bytes()]


# scan ------------------------------------------------------------------------------------------


def test_scan_finds_a_hand_written_page_and_an_old_commit(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    memory = memory_at(wiki)
    memory.write("Retry policy", "Retry twice, then fail.", "decision")
    store = memory.store()
    # An old commit (written by a version without redaction) whose secret a later edit removed.
    store.commit({"notes/deploy.md": f"# Deploy\n\nexport GITHUB_TOKEN={TOKEN}\n".encode()}, "remember: deploy", CODEX)
    store.commit({"notes/deploy.md": b"# Deploy\n\nexport GITHUB_TOKEN=$GITHUB_TOKEN\n"}, "update: deploy", CODEX)
    # A page written by hand and committed with git; another written and not committed.
    (wiki / "notes" / "db.md").write_text("# DB\n\npostgres://admin:Hx7QmL2vZp9-Kt4@db.internal/prod\n")
    git(wiki, "add", "notes/db.md")
    git(wiki, "commit", "-q", "-m", "notes: the database")
    draft = "# Draft\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLF\n"
    (wiki / "notes" / "draft.md").write_text(draft)
    memory.close()
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(wiki))

    result = CliRunner().invoke(main, ["scan"])
    assert result.exit_code == 1, result.output
    assert "notes/deploy.md:3  github-token  export GITHUB_TOKEN=[REDACTED:github-token]" in result.output
    assert "notes/db.md:3" in result.output and "url-password" in result.output
    assert "not committed  notes/draft.md:3" in result.output
    assert TOKEN not in result.output and "Hx7QmL2vZp9-Kt4" not in result.output
    assert "wiki-memory forget --string" in result.output  # what to do

    data = json.loads(CliRunner().invoke(main, ["scan", "--json"]).output)
    assert data["found"] == 3 and set(data["paths"]) == {"notes/deploy.md", "notes/db.md", "notes/draft.md"}
    by_path = {f["path"]: f for f in data["findings"]}
    assert by_path["notes/draft.md"]["commit"] is None
    assert git(wiki, "log", "-1", "--format=%s").strip() == "notes: the database"  # scan commits nothing


def test_scan_of_a_clean_wiki_exits_0(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    with memory_at(wiki) as memory:
        memory.write("Retry policy", "Retry twice, then fail. See sk-your-key-here.", "decision")
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(wiki))
    result = CliRunner().invoke(main, ["scan"])
    assert result.exit_code == 0 and "no secrets found" in result.output


# forget ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_forget_on_a_wiki_of_1000_pages_and_2000_commits(tmp_path):
    """The issue's scale: afterwards no object, log, index or journal holds the string."""
    project = project_for_store(tmp_path / "big" / "wiki")
    build(project.wiki, pages=1000, commits=2000, holding=20)
    memory = Memory(project)
    memory.reindex(embed=False)
    journal = journal_with(memory, "s-1", BENCH_TOKEN)
    log = home() / "logs" / "consolidate.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"2026-01-01T00:00:00Z read {BENCH_TOKEN} from the prompt\n")
    index_files = [project.index_path, Path(f"{project.index_path}-wal")]
    assert files_holding(index_files, BENCH_TOKEN)  # the old index holds it

    result = memory.forget([BENCH_TOKEN], embed=False)

    report = result.rewrite
    assert len(report.commits) == 20 and report.carried > 1000 and report.objects_removed > 0
    assert_clean(project.wiki, BENCH_TOKEN)
    assert len(git(project.wiki, "rev-list", "--all").split()) == 2001
    assert not files_holding(index_files, BENCH_TOKEN)
    assert result.index is not None and result.index.added == 1000
    assert not files_holding([journal, log], BENCH_TOKEN)
    assert "connect to [forgotten] with the deploy key" in journal.read_text()
    assert set(result.local_files) == {str(journal), str(log)}
    assert memory.search("[forgotten]", mode="fts").results  # the index has the new text
    memory.close()


def test_forget_a_string_also_forgets_what_redaction_left_of_it(tmp_path):
    url = "postgres://admin:Hx7QmL2vZp9-Kt4@db7.internal.acme-corp.example:5432/prod"
    memory = memory_at(tmp_path / "wiki")
    # Written through memory: the password is redacted, the host and user stay.
    memory.write("Database", f"The reporting job reads {url} nightly.", "fact")
    memory.write("Other", "export GITHUB_TOKEN=[REDACTED:github-token] stays as it is.", "note")
    journal = journal_with(memory, "s-2", url.replace("Hx7QmL2vZp9-Kt4", "[REDACTED:url-password]"))
    assert "db7.internal.acme-corp.example" in memory.read("Database").page.body

    dry = memory.forget([url], dry_run=True)
    assert dry.redacted_forms == 1 and dry.rewrite.files == ("facts/database.md",)
    assert dry.local_files == (str(journal),)
    result = memory.forget([url])

    assert memory.read("Database").page.body.strip().endswith("The reporting job reads [forgotten] nightly.")
    assert "[REDACTED:github-token] stays" in memory.read("Other").page.body  # another redaction is no match
    assert_clean(memory.wiki, "db7.internal.acme-corp.example")
    assert "db7.internal" not in journal.read_text()
    assert result.strings == 1 and result.redacted_forms == 1
    # The report never holds what was forgotten (not "db7" alone: commit ids are hex and may hold it).
    assert "db7.internal" not in json.dumps(result.as_dict())
    memory.close()


def test_forget_a_page_with_its_history_and_a_deleted_one(tmp_path):
    memory = memory_at(tmp_path / "wiki")
    memory.write("Leaky config", f"host {HOSTNAME}\n", "note")
    memory.move("Leaky config", title="Old config")
    memory.write("Scratch", f"also {HOSTNAME}", "note")
    memory.delete("Scratch")
    memory.write("Keep", "Nothing to forget here.", "note")
    result = memory.forget(pages=["Old config", "notes/scratch.md"])
    assert set(result.rewrite.files) == {"notes/leaky-config.md", "notes/old-config.md", "notes/scratch.md"}
    assert_clean(memory.wiki, HOSTNAME)
    assert memory.read("Keep").page.body.strip().endswith("Nothing to forget here.")
    with pytest.raises(WikiMemoryError):
        memory.read("Old config")
    memory.close()


@pytest.mark.usefixtures("embedding_model")
def test_the_rebuilt_index_keeps_the_vectors_of_unchanged_text(tmp_path):
    memory = memory_at(tmp_path / "wiki")
    memory.write("Deploy", f"The staging host is {HOSTNAME}.", "procedure")
    for i in range(5):
        memory.write(f"Note {i}", f"Retry number {i} waits twice as long as the one before.", "note")
    assert memory.reindex().pending == 0
    result = memory.forget([HOSTNAME])
    assert result.index is not None and result.index.added == 6
    # Nothing is embedded again but the changed page's chunk (if the commit's own indexing did not).
    assert result.index.embedded <= 1 and result.index.pending == 0
    assert memory.search("how long does a retry wait").results[0].path.startswith("notes/note-")
    memory.close()


def test_forget_refuses_what_would_rewrite_everything(tmp_path):
    memory = memory_at(tmp_path / "wiki")
    memory.write("Retry policy", "Retry twice, then fail.", "decision")
    for bad in ("", "  ", "ab", " x ", "---", "..."):
        with pytest.raises(InputError):
            memory.forget([bad])
    with pytest.raises(InputError):
        memory.forget()
    memory.close()


def test_forget_dry_run_through_the_cli_changes_nothing(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    memory = memory_at(wiki)
    memory.write("Deploy", f"The staging host is {HOSTNAME}.", "procedure")
    memory.store().commit({f"notes/{HOSTNAME}.md": b"# Staging\n"}, "notes: staging", CODEX)  # in a file name
    memory.close()
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(wiki))
    head = git(wiki, "rev-parse", "HEAD")
    before = all_objects(wiki)
    result = CliRunner().invoke(main, ["forget", "--string", "-", "--dry-run"], input=HOSTNAME + "\n")
    assert result.exit_code == 0, result.output
    assert "would rewrite 2 commits holding 1 string (2 files" in result.output
    assert "remember: procedures/deploy" in result.output and "notes/forgotten.md" in result.output
    assert HOSTNAME not in result.output
    json_out = CliRunner().invoke(main, ["forget", "--string", HOSTNAME, "--dry-run", "--json"]).output
    assert json.loads(json_out)["dry_run"] and HOSTNAME not in json_out
    assert git(wiki, "rev-parse", "HEAD") == head and all_objects(wiki) == before
    assert "--purge" in CliRunner().invoke(main, ["forget", "procedures/deploy.md"]).output
    result = CliRunner().invoke(main, ["forget", "--string", "ab"])
    assert result.exit_code == 1 and "at least 3 characters" in result.output


def test_a_running_process_reopens_the_wiki_after_a_forget_elsewhere(tmp_path):
    """An MCP server keeps its Memory open; a forget in another process deletes the packs and
    the index file it holds. Its next call sees the new history and the new index."""
    wiki = tmp_path / "wiki"
    server = memory_at(wiki)
    server.write("Deploy", f"The staging host is {HOSTNAME}.", "procedure")
    assert server.search(HOSTNAME, mode="fts").results
    other = memory_at(wiki)
    other.forget([HOSTNAME], embed=False)
    other.close()
    assert not server.search(HOSTNAME, mode="fts").results
    assert server.read("Deploy").page.body.strip().endswith("The staging host is [forgotten].")
    server.write("After", "written after the forget", "note")
    assert_clean(wiki, HOSTNAME)
    server.close()


# sync after a forget ------------------------------------------------------------------------


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(path))
    return path


def machine(tmp_path: Path, name: str, remote: Path) -> Memory:
    memory = memory_at(tmp_path / name / "wiki", host=name)
    memory.add_remote("origin", str(remote))
    return memory


def cli(monkeypatch, memory: Memory, *args: str, code: int = 0) -> str:
    monkeypatch.setenv("WIKI_MEMORY_STORE", str(memory.wiki))
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def shared(tmp_path, remote):
    """Machines A and B hold the same history, in which a token was written twice."""
    a = machine(tmp_path, "a", remote)
    a.write("Retry policy", "Retry twice, then fail.", "decision")
    store = a.store()
    store.commit({"notes/deploy.md": f"# Deploy\n\nexport GITHUB_TOKEN={TOKEN}\n".encode()}, "remember: deploy", CODEX)
    a.write("Cache", "The cache is per worker process.", "fact")
    store.commit({"notes/ci.md": f"# CI\n\nThe runner uses {TOKEN} too.\n".encode()}, "remember: ci", CODEX)
    a.sync()
    b = machine(tmp_path, "b", remote)
    received = b.sync()
    found = {(f.path, f.family) for f in received.secrets}
    assert found == {("notes/deploy.md", "github-token"), ("notes/ci.md", "github-token")}
    yield a, b
    a.close()
    b.close()


def test_forget_then_replace_the_remote_and_another_machine_adopts_it(shared, remote, tmp_path, monkeypatch):
    a, b = shared
    # B works on after its sync: one commit of its own, and a journal that captured the token.
    b.write("Deploy on Fridays", "Never deploy on Fridays.", "preference")
    b_journal = journal_with(b, "s-b", TOKEN)

    out = cli(monkeypatch, a, "forget", "--string", TOKEN)
    assert "still to do:" in out and "wiki-memory sync --replace-remote-history" in out
    # A plain sync would fetch the old history back: it refuses in one line, fetching nothing.
    out = cli(monkeypatch, a, "sync", code=1)
    assert "--replace-remote-history" in out and len(out.strip().splitlines()) == 1
    assert_clean(a.wiki, TOKEN)
    out = cli(monkeypatch, a, "sync", "--replace-remote-history")
    assert "replaced origin's history" in out
    assert git(remote, "rev-parse", "main") == git(a.wiki, "rev-parse", "HEAD")

    report = b.sync()

    assert report.adopted is not None and [r.subject for r in report.adopted.replayed] == [
        "remember: preferences/deploy-on-fridays"
    ]
    assert report.sent_commits == 1
    assert_clean(b.wiki, TOKEN)
    assert not files_holding([b_journal, b.project.index_path], TOKEN)
    log_b = git(b.wiki, "log", "--format=%s").splitlines()
    assert log_b[0] == "remember: preferences/deploy-on-fridays"
    assert git(b.wiki, "rev-parse", "HEAD~1") == git(a.wiki, "rev-parse", "HEAD")  # the new history, then B's
    assert b.read("Deploy on Fridays").page.body.strip().endswith("Never deploy on Fridays.")
    assert b.read("notes/ci.md").page.body.strip().endswith("The runner uses [forgotten] too.")
    assert b.search("Fridays", mode="fts").results

    a.sync()  # A takes B's commit
    assert git(a.wiki, "rev-parse", "HEAD") == git(b.wiki, "rev-parse", "HEAD")
    # A third machine, and a plain git clone of the remote, never see it.
    c = machine(tmp_path, "c", remote)
    c.sync()
    assert_clean(c.wiki, TOKEN)
    c.close()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(remote), str(clone))  # as over the network
    assert_clean(clone, TOKEN)
    # The remote keeps the old objects, unreachable, until it is garbage-collected (the to-do says so).
    assert TOKEN.encode() in all_objects(remote)
    git(remote, "gc", "-q", "--prune=now")
    assert TOKEN.encode() not in all_objects(remote)


def test_an_own_commit_holding_the_forgotten_string_is_replayed_without_it(shared, monkeypatch):
    a, b = shared
    b.store().commit({"notes/runbook.md": f"# Runbook\n\nuse {TOKEN}\n".encode()}, "remember: runbook", CODEX)
    a.forget([TOKEN])
    a.sync(replace_remote_history=True)
    out = cli(monkeypatch, b, "sync")
    assert "kept your commit" in out and "forgotten text replaced by [forgotten] in: notes/runbook.md" in out
    assert_clean(b.wiki, TOKEN)
    assert b.read("notes/runbook.md").page.body.strip().endswith("use [forgotten]")


def test_a_purged_page_edited_on_another_machine_does_not_come_back(shared):
    a, b = shared
    b.edit("notes/deploy.md", "append", text="Then watch the dashboard.")
    b.write("Unrelated", "Something else B learned.", "note")
    a.forget(pages=["notes/deploy.md"])
    a.sync(replace_remote_history=True)
    report = b.sync()
    assert report.adopted is not None and report.adopted.forgotten_pages == ("notes/deploy.md",)
    replayed = {r.subject: r for r in report.adopted.replayed}
    assert replayed["update: notes/deploy (append)"].left_out == ("notes/deploy.md",)
    assert replayed["update: notes/deploy (append)"].new is None
    assert not (b.wiki / "notes" / "deploy.md").exists()
    assert "export GITHUB_TOKEN" not in git(b.wiki, "log", "-p", "--all")
    assert b.read("Unrelated").page.body.strip().endswith("Something else B learned.")


def test_replacing_refuses_when_someone_pushed_meanwhile(shared, remote, monkeypatch):
    a, b = shared
    a.forget([TOKEN])
    b.write("Pushed meanwhile", "B pushed onto the old history.", "note")
    b.sync()
    pushed = git(remote, "rev-parse", "main")
    out = cli(monkeypatch, a, "sync", "--replace-remote-history", code=1)
    assert "moved since this wiki's history was rewritten" in out and "--keep-remote-history" in out
    assert git(remote, "rev-parse", "main") == pushed  # nothing was overwritten
    # Giving up the replacement brings B's commit (and the old history) back; forget again.
    cli(monkeypatch, a, "sync", "--keep-remote-history")
    assert a.read("Pushed meanwhile")
    a.forget([TOKEN])
    cli(monkeypatch, a, "sync", "--replace-remote-history")
    b.sync()
    assert_clean(b.wiki, TOKEN)
    assert git(b.wiki, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")


def test_sync_warns_of_secrets_in_pages_written_elsewhere_and_keeps_them(tmp_path, remote, monkeypatch):
    a = machine(tmp_path, "a", remote)
    b = machine(tmp_path, "b", remote)
    a.write("Retry policy", "Retry twice, then fail.", "decision")
    a.sync()
    b.sync()
    # B runs an old version (no redaction on write), or someone edited a page there by hand.
    b.store().commit({"notes/ci.md": f"# CI\n\nThe runner uses {TOKEN} too.\n".encode()}, "remember: ci", CODEX)
    b.sync()
    out = cli(monkeypatch, a, "sync")
    assert "warning: notes/ci.md:3 (github-token" in out and "wiki-memory forget" in out
    assert TOKEN not in out
    assert TOKEN in (a.wiki / "notes" / "ci.md").read_text()  # never silently altered
    assert git(a.wiki, "rev-parse", "HEAD") == git(b.wiki, "rev-parse", "HEAD")
    report = json.loads(cli(monkeypatch, a, "sync", "--json"))
    assert report["secrets"] == []  # only what arrives is checked
    a.close()
    b.close()


def test_a_machine_that_synced_before_the_secret_merges_as_usual(tmp_path, remote):
    a = machine(tmp_path, "a", remote)
    a.write("Retry policy", "Retry twice, then fail.", "decision")
    a.sync()
    d = machine(tmp_path, "d", remote)
    d.sync()
    d.write("Cache", "The cache is per worker process.", "fact")  # d never syncs again until the end
    a.store().commit({"notes/deploy.md": f"# Deploy\n\nuse {TOKEN}\n".encode()}, "remember: deploy", CODEX)
    a.sync()
    a.forget([TOKEN])
    a.sync(replace_remote_history=True)
    report = d.sync()
    assert report.adopted is None and report.merge_commit is not None
    assert_clean(d.wiki, TOKEN)
    assert d.read("notes/deploy.md").page.body.strip().endswith("use [forgotten]")
    a.sync()
    assert git(a.wiki, "rev-parse", "HEAD") == git(d.wiki, "rev-parse", "HEAD")
    a.close()
    d.close()


def test_an_automatic_sync_adopts_a_rewrite_and_scrubs_the_journals(shared):
    a, b = shared
    b_journal = journal_with(b, "s-auto", TOKEN)
    a.forget([TOKEN])
    a.sync(replace_remote_history=True)
    (home() / "config.toml").write_text("[sync]\nauto = true\n")
    b.auto_sync()  # as after a consolidation
    assert "adopted its rewritten history" in (home() / "logs" / "sync.log").read_text()
    assert_clean(b.wiki, TOKEN)
    assert not files_holding([b_journal, b.project.index_path], TOKEN)
    # A's plain sync refused meanwhile would have been logged, not raised: A is in step now.
    a.auto_sync()
    assert git(a.wiki, "rev-parse", "HEAD") == git(b.wiki, "rev-parse", "HEAD")


def test_a_machine_learns_what_was_forgotten_from_the_rewrite_itself():
    """Another machine is never told the string: it reads it off its own old commits, where
    their copies have `[forgotten]`, to scrub its journals and its own new commits."""
    from wiki_memory.sync.rewritten import _replaced

    key = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
    old = b"# Deploy\n\nuse " + TOKEN.encode() + b" and " + TOKEN.encode() + b"\n" + key + b"\n[forgotten] stays\nend\n"
    new = b"# Deploy\n\nuse [forgotten] and [forgotten]\n[forgotten]\n[forgotten] stays\nend\n"
    assert _replaced(old, new) == {TOKEN.encode(), key}
    assert _replaced(b"a\nb\n", b"a\nc\n") == set()
