"""Embedding providers: a server speaking OpenAI's embeddings API (here a fake one on
127.0.0.1 that embeds with the real local model), a change of model and its rebuild in the
background, and a provider that fails, hangs or answers with vectors of the wrong size."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest
from conftest import MODEL_HELP, new_embedder, runbook_body
from fake_embeddings import FakeEmbeddings

from wiki_memory.config import Settings, load_settings, project_for_store
from wiki_memory.index import Index, ModelUnavailableWarning
from wiki_memory.index import embed as embed_module
from wiki_memory.index import vectors as vectors_module
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store

AGENT = Author.agent("claude-code")
CELERY = "gotchas/celery-eager-mode-masks-broker-timeouts.md"
PAGES = [
    (
        "Celery eager mode masks broker timeouts",
        "gotcha",
        "With CELERY_TASK_ALWAYS_EAGER set, tasks run inline and the broker is never contacted, so a "
        "missing Redis connection only shows up in production. Turn eager mode off in CI.",
    ),
    (
        "Retry policy for outbound HTTP",
        "decision",
        "Retry idempotent requests twice with exponential backoff, then fail. ERR_CONN_RESET and "
        "timeouts are retried; 4xx responses are not.",
    ),
    ("Frontend uses pnpm", "preference", "Install JavaScript dependencies with pnpm, never npm or yarn."),
]
# Shares not one word with the Celery page: only meaning finds it.
PARAPHRASE = "background jobs execute synchronously during testing"


@pytest.fixture(scope="module")
def model():
    embedder = new_embedder()
    if not embedder.available():
        pytest.fail(MODEL_HELP.format(why=embedder.error), pytrace=False)
    return embedder


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(embed_module, "_warned", set())


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store.create(tmp_path / "wiki")
    store.write_many([Page.new(t, ty, b) for t, ty, b in PAGES], AGENT)
    return store


def remote(url: str, **extra) -> dict:
    return {"provider": "openai-compatible", "base_url": url, "model": "text-embedding-3-small", **extra}


def write_config(index: dict) -> None:
    """config.toml in the home (what another process, such as the rebuild, reads)."""
    path = load_settings().path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["[index]"] + [f"{k} = {v!r}".replace("'", '"') for k, v in index.items()]
    path.write_text("\n".join(lines) + "\n")


def vector_models(index: Index) -> dict[str, int]:
    return dict(index.conn.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())


def test_a_server_embeds_the_pages_and_the_queries(store, model, monkeypatch):
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-test-123")
    with FakeEmbeddings(model) as server:
        settings = Settings({"index": remote(server.url, api_key_env="TEST_EMBED_KEY", batch_size=2)})
        with Index.open(project_for_store(store.root), settings=settings) as index:
            stats = index.sync(store)
            assert stats.pending == 0 and stats.embedded >= 3
            assert set(vector_models(index)) == {"openai-compatible:text-embedding-3-small"}
            top = index.search(PARAPHRASE, k=1, mode="vector")
            assert [r.path for r in top] == [CELERY]
            assert set(index.search(PARAPHRASE, k=1)[0].retrievers) >= {"vector"}
        sent = server.embedding_requests()
        assert all(r["headers"]["Authorization"] == "Bearer sk-test-123" for r in sent)
        assert all(r["body"]["model"] == "text-embedding-3-small" for r in sent)
        assert max(len(r["body"]["input"]) for r in sent) == 2  # batch_size texts a request
        assert sent[-1]["body"]["input"] == [PARAPHRASE]


def test_dimensions_are_asked_for_and_recorded_with_the_model(store, model):
    with FakeEmbeddings(model) as server:
        settings = Settings({"index": remote(server.url, dimensions=128)})
        with Index.open(project_for_store(store.root), settings=settings) as index:
            index.sync(store)
            dims = index.conn.execute("SELECT DISTINCT model, dim FROM vectors").fetchall()
            assert dims == [("openai-compatible:text-embedding-3-small@128", 128)]
            assert [r.path for r in index.search(PARAPHRASE, k=1, mode="vector")] == [CELERY]
        assert {r["body"]["dimensions"] for r in server.embedding_requests()} == {128}


def search_falls_back_to_words(index: Index, store: Store) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index.sync(store)  # the pages are indexed by their words; no vector is made
        results = index.search("broker timeouts", k=2)
        again = index.search("exponential backoff", k=2)
    assert results[0].path == CELERY and set(results[0].retrievers) == {"fts"}
    assert again[0].path == "decisions/retry-policy-for-outbound-http.md"
    assert index.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    return [str(w.message) for w in caught if issubclass(w.category, ModelUnavailableWarning)]


def test_a_failing_provider_means_words_with_one_warning(store, model):
    with FakeEmbeddings(model, mode="error") as server:
        with Index.open(project_for_store(store.root), settings=Settings({"index": remote(server.url)})) as index:
            said = search_falls_back_to_words(index, store)
        assert len(said) == 1 and "HTTP 500" in said[0] and "overloaded" in said[0]
        # The failure is remembered: the searches after it did not ask again.
        assert len(server.embedding_requests()) == 1


def test_a_provider_that_does_not_answer_times_out_into_words(store, model):
    with FakeEmbeddings(model, mode="block") as server:
        settings = Settings({"index": remote(server.url, timeout=0.5)})
        with Index.open(project_for_store(store.root), settings=settings) as index:
            said = search_falls_back_to_words(index, store)
        assert len(said) == 1 and "timed out" in said[0]
        assert len(server.embedding_requests()) == 1


def test_vectors_of_the_wrong_size_are_refused(store, model):
    with FakeEmbeddings(model, mode="wrong-dims") as server:
        settings = Settings({"index": remote(server.url, dimensions=64)})
        with Index.open(project_for_store(store.root), settings=settings) as index:
            said = search_falls_back_to_words(index, store)
        assert len(said) == 1 and "65 dimensions, expected 64" in said[0]


def test_a_server_that_changes_size_is_refused_not_compared(store, model):
    with FakeEmbeddings(model) as server:
        settings = Settings({"index": remote(server.url)})
        with Index.open(project_for_store(store.root), settings=settings) as index:
            index.sync(store)
            assert index.search(PARAPHRASE, k=1, mode="vector")[0].path == CELERY
            server.mode = "wrong-dims"  # 385 now, where it gave 384
            with pytest.warns(ModelUnavailableWarning, match="385 dimensions, expected 384"):
                results = index.search("broker timeouts", k=1)
            assert results[0].path == CELERY and set(results[0].retrievers) == {"fts"}


def test_an_unknown_provider_is_one_clear_warning(store):
    settings = Settings({"index": {"provider": "ollama-direct"}})
    with pytest.warns(ModelUnavailableWarning, match="provider = 'ollama-direct' is not one of fastembed"):
        index = Index.open(project_for_store(store.root), settings=settings)
    with index:
        index.sync(store)
        assert index.search("broker timeouts", k=1)[0].path == CELERY


def test_a_model_change_rebuilds_in_the_background_while_search_uses_words(tmp_path, model, monkeypatch):
    store = Store.create(tmp_path / "wiki")
    pages = [Page.new(t, ty, b) for t, ty, b in PAGES] + [Page.new("Ingest runbook", "procedure", runbook_body(6))]
    store.write_many(pages, AGENT)
    project = project_for_store(store.root)
    with Index.open(project, embedder=model) as before:
        before.sync(store)
        chunks = before.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        assert vector_models(before) == {model.name: chunks}
    # A backlog above what one search embeds (a small wiki here: the bar is lowered).
    monkeypatch.setattr(vectors_module, "PENDING_IN_SEARCH", 2)
    with FakeEmbeddings(model) as server:
        write_config(remote(server.url))
        with Index.open(project) as index:
            assert index.embedder.name == "openai-compatible:text-embedding-3-small"
            results = index.search(PARAPHRASE, k=3)
            # Words alone meanwhile: the old model's vectors are never compared with the new.
            assert all(set(r.retrievers) == {"fts"} for r in results)
            assert CELERY not in [r.path for r in results]
            assert index.rebuilder is not None
            assert index.rebuilder.wait(timeout=120) == 0
            # Every chunk has the new model's vector, and the old model's are gone.
            assert vector_models(index) == {"openai-compatible:text-embedding-3-small": chunks}
            found = {r.path: r.retrievers for r in index.search(PARAPHRASE, k=3)}
            assert "vector" in found[CELERY]  # by meaning, now the new model's vectors are all made
    # The rebuild process asked the server, not this one.
    assert len(server.embedding_requests()) >= 2


def test_the_rebuild_runs_once_per_index(tmp_path, store):
    """A second rebuild while one holds the lock exits at once, embedding nothing."""
    import fcntl

    from wiki_memory.index import rebuild

    with Index.open(project_for_store(store.root)) as index:
        index.sync(store, embed=False)
        path = index.path
    with open(rebuild.lock_path(path), "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert rebuild.main([str(path)]) == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    conn.close()
    assert Path(rebuild.lock_path(path)).exists()


def test_the_helper_embeds_through_the_server_and_a_hook_never_waits_on_it(store, model, monkeypatch):
    """The warm helper uses the configured provider (its vectors are the CLI's); a hook asks
    the helper and waits its own short timeout, never the provider's (an hour here)."""
    import subprocess
    import sys
    import time

    from wiki_memory.config import home
    from wiki_memory.recall import meaning

    monkeypatch.setenv("WIKI_MEMORY_RECALL", "on")
    where = str(home())
    with FakeEmbeddings(model) as server:
        write_config(remote(server.url, timeout=3600))
        with Index.open(project_for_store(store.root)) as index:
            index.sync(store)
            path = str(index.path)
        helper = subprocess.Popen(
            [sys.executable, "-m", "wiki_memory.recall.helper", "--home", where, "--idle", "60"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 60
            while not meaning.running(where) and time.time() < deadline:
                time.sleep(0.2)
            pages = [CELERY, "preferences/frontend-uses-pnpm.md"]
            sims = meaning.similarities(where, path, PARAPHRASE, pages, timeout=30)
            assert sims is not None and sims[CELERY] > sims["preferences/frontend-uses-pnpm.md"]
            assert server.embedding_requests()[-1]["body"]["input"] == [PARAPHRASE]
            server.mode = "block"
            # The hook's own timeout (a quarter second) ends its wait: words alone this time.
            assert meaning.similarities(where, path, "a prompt the server never answers", pages) is None
            server.release()
            assert meaning.stop(where)
            assert helper.wait(timeout=60) == 0
        finally:
            server.release()
            if helper.poll() is None:
                helper.kill()
