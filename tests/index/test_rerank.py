"""The optional reranker: a Cohere/Jina-style rerank endpoint (a fake one on 127.0.0.1
speaking the real wire format) and a fastembed cross-encoder (a tiny ONNX model the tests
build, whose scores they can predict); a reranker that fails or times out leaves the fused
order with one warning; `search --explain` shows what it did."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import tiny_cross_encoder
from click.testing import CliRunner
from conftest import MODEL_PATH
from fake_embeddings import FakeEmbeddings

from wiki_memory.cli import main
from wiki_memory.config import Settings, load_settings, project_for_store
from wiki_memory.index import Index
from wiki_memory.index.rerank import RerankFailedWarning
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store

AGENT = Author.agent("claude-code")
CANARY = "procedures/canary-hosts-go-first.md"
PAGES = [
    (
        "Deploy with the release script",
        "procedure",
        "To deploy, run the release script: deploy deploy, then deploy the docs.",
    ),
    ("Deploy freeze on Fridays", "decision", "No deploy on Fridays; a deploy on Friday waits for Monday."),
    ("Canary hosts go first", "procedure", "Every deploy reaches one canary host for an hour before the rest."),
]
QUERY = "how do we deploy"


def canaries(query: str, document: str) -> float:
    """The fake endpoint's score: how often the document says "canary"."""
    return float(document.lower().count("canary"))


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store.create(tmp_path / "wiki")
    store.write_many([Page.new(t, ty, b) for t, ty, b in PAGES], AGENT)
    return store


def endpoint(url: str, **extra) -> Settings:
    return Settings({"search": {"rerank_url": url, "rerank_model": "rerank-test", **extra}})


def search(store: Store, settings: Settings, **asked) -> tuple[list, list, list[str]]:
    """(the results reranked, the fused results, the reranker's warnings)."""
    with Index.open(project_for_store(store.root), settings=settings) as index:
        index.sync(store)
        fused = index.search(QUERY, k=3, rerank=False, **asked)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = index.search(QUERY, k=3, **asked)
            index.search(QUERY, k=3, **asked)  # a second search: no second warning
    return results, fused, [str(w.message) for w in caught if issubclass(w.category, RerankFailedWarning)]


def test_an_endpoint_reorders_the_fused_candidates(store, monkeypatch):
    monkeypatch.setenv("TEST_RERANK_KEY", "jina-test-1")
    with FakeEmbeddings(None, scorer=canaries) as server:
        results, fused, said = search(store, endpoint(server.url, rerank_api_key_env="TEST_RERANK_KEY"))
    fused_paths = [r.path for r in fused]
    assert fused_paths.index(CANARY) > 0  # the words alone put it below the others
    assert results[0].path == CANARY and results[0].rerank == 2.0  # title and passage
    assert results[0].fused_rank == fused_paths.index(CANARY) + 1
    assert [r.fused_rank for r in results[1:]] == [fused_paths.index(r.path) + 1 for r in results[1:]]
    assert said == []
    sent = server.rerank_requests()[0]
    assert sent["headers"]["Authorization"] == "Bearer jina-test-1"
    assert sent["body"]["model"] == "rerank-test" and sent["body"]["query"] == QUERY
    assert sent["body"]["top_n"] == len(sent["body"]["documents"]) == 3
    assert any("canary" in d.lower() for d in sent["body"]["documents"])


def test_a_failing_endpoint_keeps_the_fused_order_with_one_warning(store):
    with FakeEmbeddings(None, mode="error") as server:
        results, fused, said = search(store, endpoint(server.url))
    assert [r.path for r in results] == [r.path for r in fused]
    assert all(r.rerank is None and r.fused_rank is None for r in results)
    assert len(said) == 1 and "HTTP 500" in said[0]
    assert len(server.rerank_requests()) == 1  # the failure is remembered for a while


def test_an_endpoint_that_does_not_answer_times_out_into_the_fused_order(store):
    with FakeEmbeddings(None, mode="block") as server:
        results, fused, said = search(store, endpoint(server.url, rerank_timeout=0.3))
    assert [r.path for r in results] == [r.path for r in fused]
    assert len(said) == 1 and "timed out" in said[0]


def test_off_by_default_the_search_is_the_fused_one(store):
    with Index.open(project_for_store(store.root), settings=Settings({})) as index:
        index.sync(store)
        assert not index.reranker.enabled
        results = index.search(QUERY, k=3)
        assert [r.path for r in results] == [r.path for r in index.search(QUERY, k=3, rerank=False)]
        assert all(r.rerank is None for r in results)


def test_a_fastembed_cross_encoder_reorders_the_candidates(store, tmp_path):
    folder = tiny_cross_encoder.build(tmp_path / "tiny-ce", Path(MODEL_PATH or ""))
    tiny_cross_encoder.register()
    settings = Settings({"search": {"rerank": tiny_cross_encoder.NAME, "rerank_path": str(folder)}})
    results, fused, said = search(store, settings)
    assert said == []
    assert [r.path for r in fused].index(CANARY) > 0
    assert results[0].path == CANARY
    # The model counts "canary" in the document: the title and the passage say it twice.
    assert results[0].rerank == 2.0 and all(r.rerank == 0.0 for r in results[1:])


def test_a_missing_cross_encoder_keeps_the_fused_order_with_one_warning(store, tmp_path):
    settings = Settings({"search": {"rerank": "nobody/no-such-reranker", "rerank_path": str(tmp_path / "none")}})
    results, fused, said = search(store, settings)
    assert [r.path for r in results] == [r.path for r in fused]
    assert len(said) == 1 and "no model folder" in said[0]


def test_search_explain_shows_the_scores_and_the_move(code_repo, monkeypatch):
    monkeypatch.chdir(code_repo)
    runner = CliRunner()

    def cli(*args: str):
        result = runner.invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    cli("init")
    for title, page_type, body in PAGES:
        cli("write", "-t", title, "--type", page_type, "--body", body)
    with FakeEmbeddings(None, scorer=canaries) as server:
        config = load_settings().path
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'[search]\nrerank_url = "{server.url}"\nrerank_model = "rerank-test"\n')
        out = cli("search", QUERY, "--mode", "fts", "--explain", "-k", "3").output
    first = out.splitlines()[:2]
    assert "Canary hosts go first" in first[0]
    assert "rerank 2.000" in first[1] and "moved up by the reranker" in first[1] and "words " in first[1]


RELEASES = [
    ("Release deploy to hosts", "procedure", "Deploy the release to all hosts with the release script."),
    ("Canary release deploy to hosts", "procedure", "Deploy the release to one canary host, then the other hosts."),
]
RELEASE_PROMPT = "how do we deploy the release to the hosts"


def recall_with(code_repo: Path, search: dict) -> list:
    """The verdicts of the pages kept for RELEASE_PROMPT, recalled by words (no helper)
    with `[search]` in config.toml."""
    from wiki_memory.config import resolve_project
    from wiki_memory.memory import Memory
    from wiki_memory.recall.settings import RecallSettings

    config = load_settings().path
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[search]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in search.items()))
    with Memory(resolve_project(code_repo)) as memory:
        if not memory.exists:
            memory.store(create=True).write_many([Page.new(t, ty, b) for t, ty, b in RELEASES], AGENT)
            memory.reindex(embed=False)
        found = memory.recall(RELEASE_PROMPT, settings=RecallSettings(meaning=False))
    return [v for v in found.verdicts if v.kept]


def test_recall_is_reranked_only_when_asked(code_repo):
    second: list[str] = []  # the title of the page the evidence put second: the reranker's pick

    def prefers_the_second(query: str, document: str) -> float:
        return 1.0 if document.startswith(second[0] + "\n") else 0.0

    with FakeEmbeddings(None, scorer=prefers_the_second) as server:
        off = recall_with(code_repo, {"rerank_url": server.url})
        assert len(off) == 2 and all(v.rerank is None for v in off)
        assert server.rerank_requests() == []  # rerank_recall is off by default
        second.append(off[1].candidate.title)
        on = recall_with(code_repo, {"rerank_url": server.url, "rerank_recall": True})
    assert [v.candidate.title for v in on] == [off[1].candidate.title, off[0].candidate.title]
    assert [v.rerank for v in on] == [1.0, 0.0]
    assert "rerank 1.000 (#2 by evidence)" in on[0].reason
    assert server.rerank_requests()[0]["body"]["query"] == RELEASE_PROMPT


def test_the_mcp_search_is_reranked(code_repo):
    from mcp import Client
    from mcp_helpers import call, run

    from wiki_memory.mcp.server import build_server

    with FakeEmbeddings(None, scorer=canaries) as server:
        config = load_settings().path
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'[search]\nrerank_url = "{server.url}"\nrerank_model = "rerank-test"\n')
        mcp = build_server(project_dir=str(code_repo))

        async def body() -> list:
            async with Client(mcp) as client:
                for title, page_type, text in PAGES:
                    await call(client, "write", title=title, type=page_type, body=text)
                return (await call(client, "search", query=QUERY, k=3))["results"]

        try:
            hits = run(body)
        finally:
            mcp.close()
    assert hits[0]["path"] == CANARY and hits[0]["rerank"] == 2.0
    assert [h["rerank"] for h in hits[1:]] == [0.0, 0.0]
    assert server.rerank_requests()


def test_a_superseded_page_stays_below_its_replacement_whatever_the_reranker_says(store):
    freeze = "decisions/deploy-freeze-on-fridays.md"
    store.write(store.read(freeze).with_meta(status="superseded", superseded_by=CANARY), AGENT)

    def prefers_the_freeze(query: str, document: str) -> float:
        return 1.0 if "Fridays" in document else 0.0

    with FakeEmbeddings(None, scorer=prefers_the_freeze) as server:
        results, _, said = search(store, endpoint(server.url))  # the index hides no status
    paths = [r.path for r in results]
    assert said == [] and paths.index(freeze) == paths.index(CANARY) + 1  # just below it
    assert [r.rerank for r in results if r.path == freeze] == [1.0]
