"""The `search`, `reindex` and `links` commands, and the write path keeping the index current."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from wiki_memory.cli import main


@pytest.fixture
def cli(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    runner = CliRunner()

    def run(*args, input=None, ok=True):
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    run("init")
    return run


@pytest.mark.usefixtures("embedding_model")
def test_a_page_written_by_the_cli_is_found_by_the_next_search(cli):
    cli(
        "write",
        "-t",
        "Celery eager mode masks broker timeouts",
        "--type",
        "gotcha",
        "--tag",
        "ci",
        "--body",
        "With CELERY_TASK_ALWAYS_EAGER the broker is never contacted in CI.",
    )
    cli("write", "-t", "Retry policy", "--type", "decision", "--body", "Retry twice; ERR_CONN_RESET is retried.")
    rows = json.loads(cli("search", "ERR_CONN_RESET", "--json").output)
    assert rows[0]["path"] == "decisions/retry-policy.md"
    assert set(rows[0]) >= {
        "path",
        "title",
        "type",
        "heading",
        "snippet",
        "score",
        "retrievers",
        "tags",
        "status",
        "updated",
    }
    meaning = json.loads(cli("search", "background jobs execute synchronously during testing", "--json").output)
    assert meaning[0]["path"] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    assert meaning[0]["retrievers"] == ["vector"]
    text = cli("search", "broker", "--mode", "fts").output
    assert "1. Celery eager mode masks broker timeouts  [gotcha]" in text
    assert json.loads(cli("search", "retry", "--type", "gotcha", "--mode", "fts", "--json").output) == []
    assert json.loads(cli("search", "broker", "--tag", "ci", "--json").output)[0]["tags"] == ["ci"]


@pytest.mark.usefixtures("embedding_model")
def test_a_superseded_page_names_its_replacement_in_the_results(cli):
    cli("write", "-t", "Release with goreleaser", "--type", "procedure", "--body", "Run goreleaser release on a tag.")
    cli("write", "-t", "Release through Argo CD", "--type", "procedure", "--body", "Merge the release PR; Argo syncs.")
    cli("edit", "Release with goreleaser", "--status", "superseded", "--superseded-by", "Release through Argo CD")
    # Not handed out by default; asked for, it comes after its replacement and names it.
    default = json.loads(cli("search", "how do I release with goreleaser", "--json").output)
    assert [r["path"] for r in default] == ["procedures/release-through-argo-cd.md"]
    text = cli("search", "how do I release with goreleaser", "--status", "any").output
    lines = text.splitlines()
    # The old page matches best by far, and still comes after the page that replaced it.
    new = next(i for i, line in enumerate(lines) if "procedures/release-through-argo-cd.md" in line)
    old = next(i for i, line in enumerate(lines) if "procedures/release-with-goreleaser.md" in line)
    assert new < old and "(superseded)" in lines[old]
    assert lines[old + 1] == "   superseded by procedures/release-through-argo-cd.md"
    rows = json.loads(cli("search", "how do I release with goreleaser", "--status", "any", "--json").output)
    assert [r["superseded_by"] for r in rows] == [None, "procedures/release-through-argo-cd.md"]
    # What a relevance floor can read: the cosine and the share of the query's words held.
    assert all(0 < r["similarity"] <= 1 and 0 <= r["coverage"] <= 1 for r in rows)


def test_search_output_fits_max_chars(cli):
    for i in range(6):
        cli(
            "write", "-t", f"Deploy note {i}", "--body", f"Deploy step {i}: " + "run the deploy script carefully. " * 20
        )
    rows = json.loads(cli("search", "deploy script", "--max-chars", "900", "--json").output)
    assert rows and sum(len(r["snippet"]) for r in rows) <= 900


def test_fts_syntax_is_text_on_the_command_line(cli):
    cli("write", "-t", "Quoting", "--body", "NEAR and AND are words here.")
    for query in ['"', "a*", "NEAR(", "x -y", "AND OR NOT", "col:umn"]:
        result = cli("search", query, "--mode", "fts", "--json")
        assert isinstance(json.loads(result.output), list)


@pytest.mark.usefixtures("embedding_model")
def test_reindex_and_links(cli):
    cli("write", "-t", "Auth overview", "--type", "fact", "--body", "See [[JWT refresh]] and [[Missing page]].")
    cli("write", "-t", "JWT refresh", "--type", "gotcha", "--body", "Refresh first.")
    stats = json.loads(cli("reindex", "--json").output)
    assert stats["pending"] == 0 and stats["removed"] == 0
    full = json.loads(cli("reindex", "--full", "--json").output)
    assert full["added"] == 2 and full["embedded"] == 2
    assert "2 unchanged" in cli("reindex").output
    data = json.loads(cli("links", "Auth overview", "--json").output)
    assert data["links"] == [
        {"target": "JWT refresh", "path": "gotchas/jwt-refresh.md", "heading": None, "alias": None},
        {"target": "Missing page", "path": None, "heading": None, "alias": None},
    ]
    back = cli("links", "gotchas/jwt-refresh.md").output
    assert "backlinks (1):\n  facts/auth-overview.md" in back


@pytest.mark.usefixtures("embedding_model")
def test_reindex_embeds_on_every_core_unless_threads_are_configured(cli, monkeypatch, model_threads):
    """`reindex` is waited for: its model runs one inference thread per core; a search keeps
    one (agents and their tools share the cores); a configured thread count always wins."""
    cli("write", "-t", "Threads", "--body", "Embedding many chunks at once.")
    cli("reindex", "--full")
    assert model_threads and set(model_threads) == {os.cpu_count()}
    model_threads.clear()
    cli("search", "embedding")
    assert model_threads and set(model_threads) == {1}
    model_threads.clear()
    monkeypatch.setenv("WIKI_MEMORY_EMBED_THREADS", "1")
    cli("reindex", "--full")
    assert model_threads and set(model_threads) == {1}


@pytest.mark.usefixtures("embedding_model")
def test_status_says_how_far_the_index_is(cli, code_repo):
    """`status` shows the index: its chunks, those still without a vector (a CLI write has
    no model loaded), and whether it has seen the wiki's last commit."""
    from wiki_memory.config import resolve_project

    assert "index:    not built yet" in cli("status").output
    cli("reindex")
    cli("write", "-t", "Status page", "--body", "Words now, a vector later.")
    index = json.loads(cli("status", "--json").output)["index"]
    assert index["chunks"] >= 1 and index["without_vectors"] >= 1 and index["current"] is True
    assert "without a vector yet" in cli("status").output
    cli("reindex")
    index = json.loads(cli("status", "--json").output)["index"]
    assert index["without_vectors"] == 0 and index["current"] is True
    wiki = resolve_project(code_repo).wiki
    (wiki / "notes" / "by-hand.md").write_text("---\ntitle: By hand\ntype: note\n---\nCommitted with git.\n")
    subprocess.run(["git", "-C", str(wiki), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(wiki), "commit", "-qm", "by hand"], check=True)
    assert json.loads(cli("status", "--json").output)["index"]["current"] is False
    assert "behind the wiki" in cli("status").output


def test_user_errors_are_one_line(cli):
    bad = cli("search", "x", "--since", "yesterday-ish", ok=False)
    assert bad.exit_code == 1 and "--since" in bad.output and "Traceback" not in bad.output
    missing = cli("links", "No such page", ok=False)
    assert missing.exit_code == 1 and "no page" in missing.output


def test_search_before_init_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["search", "anything"])
    assert result.exit_code == 0 and "no match" in result.output
    result = CliRunner().invoke(main, ["reindex"])
    assert result.exit_code == 1 and "wiki-memory init" in result.output


def test_write_does_not_load_the_embedding_model(cli, code_repo):
    # A separate process, as a real `wiki-memory write` is: fastembed must stay unimported.
    code = (
        "import sys; from wiki_memory.cli import main\n"
        "try:\n    main(['write', '-t', 'Fast write', '--body', 'quick words'])\n"
        "except SystemExit:\n    pass\n"
        "print('fastembed' in sys.modules, 'onnxruntime' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=code_repo, capture_output=True, text=True, env=os.environ.copy(), timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False False"
    # ...yet the page is in the index already (words now, vector on the next search).
    rows = json.loads(cli("search", "quick words", "--mode", "fts", "--json").output)
    assert rows[0]["path"] == "notes/fast-write.md"


def test_offline_without_a_model_searches_words_at_once(cli, code_repo, tmp_path):
    """No local copy, nothing cached, no network: one clear warning and word search, at once.

    fastembed alone would retry its download for ~40 s (sleeps of 3, 9, 27 s) in every
    `wiki-memory search`, and log each attempt at ERROR."""
    cli(
        "write",
        "-t",
        "Celery eager mode masks broker timeouts",
        "--type",
        "gotcha",
        "--body",
        "With CELERY_TASK_ALWAYS_EAGER the broker is never contacted in CI.",
    )
    with socket.socket() as s:  # a port nobody listens on: the hub "cannot be reached"
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "WIKI_MEMORY_EMBED_MODEL_PATH",
            "HF_HUB_OFFLINE",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        )
    }
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{closed}", FASTEMBED_CACHE_PATH=str(tmp_path / "empty-cache"))
    out = subprocess.run(
        [sys.executable, "-m", "wiki_memory", "search", "broker timeouts", "--json"],
        cwd=code_repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["path"] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    warnings = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1, out.stderr
    assert "no embedding model could be loaded" in warnings[0] and "127.0.0.1 cannot be reached" in warnings[0]
    assert "words only" in warnings[0]


def test_hf_hub_offline_means_no_connection_at_all(cli, code_repo, tmp_path):
    """With HF_HUB_OFFLINE set and no cached model, nothing reaches for the hub, not even a probe."""
    cli("write", "-t", "Retry policy", "--type", "decision", "--body", "Retry twice, then give up.")
    with socket.socket() as hub:
        hub.bind(("127.0.0.1", 0))
        hub.listen()
        hub.setblocking(False)
        env = {k: v for k, v in os.environ.items() if k != "WIKI_MEMORY_EMBED_MODEL_PATH"}
        env.update(
            HF_HUB_OFFLINE="1",
            HF_ENDPOINT=f"http://127.0.0.1:{hub.getsockname()[1]}",
            FASTEMBED_CACHE_PATH=str(tmp_path / "empty-cache"),
        )
        out = subprocess.run(
            [sys.executable, "-m", "wiki_memory", "search", "retry", "--json"],
            cwd=code_repo,
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
        )
        with pytest.raises(BlockingIOError):
            hub.accept()  # nobody knocked
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["path"] == "decisions/retry-policy.md"
    assert "HF_HUB_OFFLINE is set" in out.stderr
