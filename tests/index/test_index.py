"""The search index: sync from the git store, FTS5, vectors from the real model, links."""

from __future__ import annotations

import os
import sqlite3
import threading
import warnings
from pathlib import Path

import pytest
from conftest import MODEL_HELP, git, new_embedder, runbook_body

from wiki_memory.config import project_for_store
from wiki_memory.index import Embedder, Index, ModelUnavailableWarning, SearchResult, Tuning, schema
from wiki_memory.index import embed as embed_module
from wiki_memory.index.writer import resolve_links
from wiki_memory.pages import Page
from wiki_memory.store import Author, Store

AGENT = Author.agent("claude-code")

PAGES = [
    (
        "Celery eager mode masks broker timeouts",
        "gotcha",
        "With CELERY_TASK_ALWAYS_EAGER set, tasks run inline and the broker is never contacted, so a "
        "missing Redis connection only shows up in production. Turn eager mode off in CI.",
        ["celery", "ci"],
    ),
    (
        "Retry policy for outbound HTTP",
        "decision",
        "Retry idempotent requests twice with exponential backoff, then fail. ERR_CONN_RESET and "
        "timeouts are retried; 4xx responses are not.",
        ["http"],
    ),
    (
        "JWT refresh must happen before the retry",
        "gotcha",
        "The token refresh in src/auth/jwt.py ran after the retry, so the retry reused the expired "
        "token and got a 401. Refresh first.",
        ["auth"],
    ),
    (
        "Release procedure",
        "procedure",
        "Bump the version in pyproject.toml, tag the commit, push the tag; the pipeline publishes "
        "the wheel to the package index.",
        [],
    ),
    (
        "Database connection pooling",
        "fact",
        "The service keeps at most 20 connections in its pool; the auth service resets idle "
        "connections after five minutes.",
        ["db"],
    ),
    (
        "Frontend uses pnpm",
        "preference",
        "Install JavaScript dependencies with pnpm, never npm or yarn; the lock file is pnpm-lock.yaml.",
        [],
    ),
]


def make_store(tmp_path: Path, pages=PAGES) -> Store:
    store = Store.create(tmp_path / "wiki")
    store.write_many([Page.new(t, ty, b, tags=tags) for t, ty, b, tags in pages], AGENT)
    return store


@pytest.fixture(scope="module")
def model():
    """One loaded model for the module (loading it is the slow part); tests count its calls."""
    # Module-scoped fixtures run before the autouse environment: the model as conftest finds it.
    embedder = new_embedder()
    if not embedder.available():
        pytest.fail(MODEL_HELP.format(why=embedder.error), pytrace=False)
    return embedder


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path)


@pytest.fixture
def index(store, model):
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store)
    yield idx
    idx.close()


def paths(results: list[SearchResult]) -> list[str]:
    return [r.path for r in results]


def test_a_query_sharing_no_word_finds_its_page_by_meaning(index):
    query = "background jobs execute synchronously during testing"
    assert index.search(query, mode="fts") == []  # not one word in common
    assert paths(index.search(query, k=3, mode="vector"))[0] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    assert paths(index.search(query, k=3))[0] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    # Words alone pick the wrong page here ("package"); meaning finds the right one.
    assert paths(index.search("which package manager for the web app", k=1, mode="vector")) == [
        "preferences/frontend-uses-pnpm.md"
    ]


def test_fts_finds_exact_identifiers(index):
    top = index.search("ERR_CONN_RESET", k=3, mode="fts")
    assert paths(top) == ["decisions/retry-policy-for-outbound-http.md"]  # "reset" alone is elsewhere too
    jwt = index.search("src/auth/jwt.py", k=3)
    assert paths(jwt)[0] == "gotchas/jwt-refresh-must-happen-before-the-retry.md"
    assert "fts" in jwt[0].retrievers
    assert paths(index.search("pnpm-lock.yaml", k=1))[0] == "preferences/frontend-uses-pnpm.md"


def test_results_carry_what_a_caller_needs(index):
    r = index.search("retry backoff", k=2)[0]
    assert r.path == "decisions/retry-policy-for-outbound-http.md"
    assert (r.title, r.type, r.tags, r.status) == ("Retry policy for outbound HTTP", "decision", ("http",), "active")
    assert "exponential backoff" in r.snippet and r.heading == r.title and r.score > 0
    assert set(r.retrievers) == {"fts", "vector"} and r.updated and r.id
    assert set(r.as_dict()) >= {"path", "title", "type", "heading", "snippet", "score", "retrievers"}


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "celery*",
        "NEAR(celery broker)",
        "-broker",
        "celery AND",
        "OR",
        "title:celery",
        "(celery",
        "a^b",
        "NOT",
        "'",
        "***",
        "",
    ],
)
def test_fts_syntax_in_a_query_is_text(index, query):
    results = index.search(query, k=3, mode="fts")
    assert isinstance(results, list)
    if "celery" in query:
        assert paths(results)[0] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"


def test_incremental_sync_reembeds_only_what_changed(tmp_path, store, model):
    idx = Index.open(project_for_store(store.root), embedder=model)
    before = model.texts_embedded
    first = idx.sync(store)
    assert first.added == len(PAGES) and first.embedded == len(PAGES)
    assert model.texts_embedded - before == len(PAGES)

    again = idx.sync(store)
    assert (again.added, again.updated, again.removed, again.embedded) == (0, 0, 0, 0)
    assert model.texts_embedded - before == len(PAGES)

    page = store.read("facts/database-connection-pooling.md")
    store.write(page.with_body(page.body + "\nThe pool size is set by DB_POOL_SIZE.\n"), AGENT)
    store.delete("preferences/frontend-uses-pnpm.md", AGENT)
    # A metadata-only change (tags) keeps the text the model sees: no new embedding.
    tagged = store.read("procedures/release-procedure.md")
    store.write(tagged.with_meta(tags=["release"]), AGENT)
    mark = model.texts_embedded
    stats = idx.sync(store)
    assert (stats.updated, stats.removed, stats.unchanged) == (2, 1, len(PAGES) - 3)
    assert model.texts_embedded - mark == 1  # only the edited chunk
    assert paths(idx.search("DB_POOL_SIZE", k=1)) == ["facts/database-connection-pooling.md"]
    assert "preferences/frontend-uses-pnpm.md" not in paths(idx.search("pnpm", k=8))
    assert paths(idx.search("release", k=1, tag="release")) == ["procedures/release-procedure.md"]
    idx.close()


def test_a_backlog_of_pending_chunks_is_caught_up_over_searches(tmp_path, model, monkeypatch):
    """A search embeds pending chunks only until its time is up (one batch at least), so a
    big backlog (an import, a pull) never makes one search wait for all of it; what is left
    is found by its words meanwhile, and the next searches carry on."""
    from wiki_memory.index import index as index_module

    pages = [
        (
            f"Runbook part {i}",
            "procedure",
            f"Step {i}: restart the ingest worker number {i} after draining queue q{i}.",
            [],
        )
        for i in range(40)
    ]
    pages.append(("Pelican quota", "fact", "The pelican service allows ninety uploads an hour.", []))
    store = make_store(tmp_path, pages)
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store, embed=False)
    assert idx.pending_count() == 41
    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 0.0)  # time is up after one batch
    calls = model.calls
    assert paths(idx.search("pelican uploads", k=1)) == ["facts/pelican-quota.md"]
    assert model.calls - calls == 2  # the query and one batch of documents
    assert idx.pending_count() == 41 - model.batch_size
    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 60.0)
    idx.search("ingest worker restart")
    assert idx.pending_count() == 0
    idx.close()


def test_a_huge_page_does_not_hold_its_write_for_its_embedding(tmp_path, model, monkeypatch):
    """In a process with the model loaded (the MCP server), a write embeds its own chunks
    before returning, but only until its time is up: a 2 MB page would otherwise hold the
    write (and every call queued behind it) for minutes. The searches that follow finish."""
    from wiki_memory.index import index as index_module

    store = make_store(tmp_path, PAGES)
    idx = Index.open(project_for_store(store.root), embedder=model).attach(store)
    idx.sync(store)
    assert idx.pending_count() == 0 and model.loaded
    body = runbook_body(40)
    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 0.0)  # time is up after one batch
    store.write(Page.new("Long runbook", "procedure", body), AGENT)
    chunks = idx.conn.execute("SELECT count(*) FROM chunks WHERE page = 'procedures/long-runbook.md'").fetchone()[0]
    assert chunks >= 40 and idx.pending_count() == chunks - model.batch_size
    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 60.0)
    assert paths(idx.search("restart ingest worker 7", k=1)) == ["procedures/long-runbook.md"]
    assert idx.pending_count() == 0
    idx.close()


def test_a_write_that_embeds_all_it_wrote_keeps_the_index_known_complete(tmp_path, model, monkeypatch):
    """After this process's write embedded every chunk it wrote into a complete index, the
    next search does not count chunks without a vector again; after one that left some, it does."""
    from wiki_memory.index import index as index_module

    store = make_store(tmp_path, PAGES)
    idx = Index.open(project_for_store(store.root), embedder=model).attach(store)
    idx.sync(store)
    idx.search("warm up")
    counted = []
    original = idx.vectors.pending_count
    monkeypatch.setattr(idx.vectors, "pending_count", lambda: counted.append(1) or original())
    store.write(Page.new("Small note", "note", "The staging host is zanzibar."), AGENT)
    assert paths(idx.search("staging host zanzibar", k=1)) == ["notes/small-note.md"]
    assert counted == []
    monkeypatch.setattr(index_module, "EMBED_INLINE_S", 0.0)  # one batch, then time is up
    body = runbook_body(40)
    store.write(Page.new("Long runbook", "procedure", body), AGENT)
    idx.search("restart ingest worker")
    assert counted
    idx.close()


def test_a_rebuilt_index_returns_the_same_results(index, store, model):
    queries = ["tests hang on the build server", "token expired 401", "ERR_CONN_RESET", "pool connections"]
    before = {q: [(r.path, r.heading, r.snippet) for r in index.search(q, k=4)] for q in queries}
    stats = index.sync(store, full=True)
    assert stats.added == len(PAGES) and stats.rebuilt
    after = {q: [(r.path, r.heading, r.snippet) for r in index.search(q, k=4)] for q in queries}
    assert after == before


def test_a_corrupt_index_file_is_rebuilt_not_fatal(store, model):
    project = project_for_store(store.root)
    Index.open(project, embedder=model).close()
    project.index_path.write_bytes(b"this is not a database" * 100)
    idx = Index.open(project, embedder=model)
    assert idx.rebuilt and "unreadable" in idx.rebuilt
    assert paths(idx.search("pnpm", k=1)) == ["preferences/frontend-uses-pnpm.md"]  # caught up from the store
    idx.close()


def test_another_schema_version_is_rebuilt(store, model):
    project = project_for_store(store.root)
    idx = Index.open(project, embedder=model)
    idx.sync(store)
    idx.conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    idx.close()
    idx = Index.open(project, embedder=model)
    assert "schema version 0" in idx.rebuilt
    assert idx.stats()["pages"] == 0
    assert paths(idx.search("Celery eager", k=1)) == ["gotchas/celery-eager-mode-masks-broker-timeouts.md"]
    idx.close()


def test_no_model_means_fts_with_one_warning(store, tmp_path, monkeypatch, embedding_model):
    monkeypatch.setattr(embed_module, "_warned", set())
    missing = Embedder(path=str(tmp_path / "no-model-here"))
    idx = Index.open(project_for_store(store.root), embedder=missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = idx.sync(store)
        first = idx.search("celery broker", k=2)
        second = idx.search("retry", k=2, mode="vector")
    ours = [w for w in caught if issubclass(w.category, ModelUnavailableWarning)]
    assert len(ours) == 1 and "no-model-here" in str(ours[0].message)
    assert stats.pending == len(PAGES) and stats.embedded == 0
    assert paths(first)[0] == "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    assert first[0].retrievers == ("fts",) and second[0].retrievers == ("fts",)
    idx.close()
    # Once a model is there, the pending chunks are embedded (by the next sync or search).
    idx = Index.open(project_for_store(store.root))
    assert paths(idx.search("background jobs execute synchronously during testing", k=1, mode="vector")) == [
        "gotchas/celery-eager-mode-masks-broker-timeouts.md"
    ]
    assert idx.stats()["pending"] == 0
    idx.close()


def test_the_hub_probe_gives_up_a_name_lookup_that_hangs(monkeypatch):
    """No socket timeout covers the name lookup; a resolver that times out rather than fails
    would hold every model-less search for half a minute."""
    import socket

    released = threading.Event()

    def hanging(*args, **kwargs):
        released.wait(10)
        raise socket.gaierror("answered too late")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.invalid")
    try:
        assert (
            embed_module.hub_unreachable(timeout=0.2)
            == "hub.invalid cannot be reached (looking up the name took over 0.2 s)"
        )
    finally:
        released.set()


def test_the_hub_probe_tries_every_address_of_the_name(monkeypatch):
    """A name listed with an address that refuses (IPv6 without a route, say) before one
    that answers: the hub is reachable."""
    import socket

    with socket.socket() as closed, socket.socket() as hub:
        closed.bind(("127.0.0.1", 0))
        hub.bind(("127.0.0.1", 0))
        hub.listen()
        listed = [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", closed.getsockname()[1])),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", hub.getsockname()[1])),
        ]
        monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: listed)
        for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HF_ENDPOINT", "https://hub.example")
        assert embed_module.hub_unreachable(timeout=2) is None
        listed.pop()
        assert embed_module.hub_unreachable(timeout=2).startswith("hub.example cannot be reached (")


def test_store_writes_keep_an_attached_index_current(tmp_path, model, monkeypatch):
    store = make_store(tmp_path)
    project = project_for_store(store.root)
    cold = Embedder()  # a model not loaded in this process yet
    idx = Index.open(project, embedder=cold).attach(store)
    idx.sync(store, embed=False)
    store.write(Page.new("Flaky websocket test", "gotcha", "test_ws_reconnect fails when PORT_RANGE is busy."), AGENT)
    # Searchable by words at once, with no sync; its vector is pending (no model loaded here).
    assert idx.has_page("gotchas/flaky-websocket-test.md") and not cold.loaded
    assert paths(idx.search("PORT_RANGE", k=1, mode="fts")) == ["gotchas/flaky-websocket-test.md"]
    assert idx.stats()["pending"] == len(PAGES) + 1
    idx.close()

    hot = Index.open(project, embedder=model).attach(store)
    hot.sync(store)
    store.write(Page.new("Cache warmup", "procedure", "Run make warm-cache after a deploy."), AGENT)
    assert hot.stats()["pending"] == 0  # the model is loaded in this process: embedded at once
    assert hot.head == store.head().decode()
    store.delete("gotchas/flaky-websocket-test.md", AGENT)
    assert not hot.has_page("gotchas/flaky-websocket-test.md")
    hot.close()


def test_a_commit_made_outside_wiki_memory_is_caught_up_by_search(store, index):
    page = store.root / "notes" / "hand-written.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("# Hand written\n\nThe staging host is called zanzibar.\n")
    git(store.root, "add", "notes/hand-written.md")
    git(store.root, "commit", "-q", "-m", "edit: notes/hand-written.md")
    assert paths(index.search("zanzibar", k=1)) == ["notes/hand-written.md"]
    git(store.root, "rm", "-q", "notes/hand-written.md")
    git(store.root, "commit", "-q", "-m", "forget")
    assert index.search("zanzibar", k=1, mode="fts") == []


def test_filters_and_status(tmp_path, model):
    store = make_store(
        tmp_path,
        PAGES
        + [
            ("Old retry policy", "decision", "Retry requests five times with a fixed delay.", ["http"]),
        ],
    )
    old = store.read("decisions/old-retry-policy.md")
    store.write(old.with_meta(status="superseded", superseded_by="decisions/retry-policy-for-outbound-http.md"), AGENT)
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store)
    # The superseded page matches "retry requests" as well, but ranks below the active one,
    # and names it.
    found = idx.search("retry requests five times with a fixed delay", k=3)
    ranked = paths(found)
    assert ranked.index("decisions/retry-policy-for-outbound-http.md") < ranked.index("decisions/old-retry-policy.md")
    old_result = found[ranked.index("decisions/old-retry-policy.md")]
    assert old_result.superseded_by == "decisions/retry-policy-for-outbound-http.md"
    assert old_result.as_dict()["superseded_by"] == "decisions/retry-policy-for-outbound-http.md"
    assert {r.superseded_by for r in found if r.path != old_result.path} == {None}
    assert paths(idx.search("retry", status="superseded")) == ["decisions/old-retry-policy.md"]
    assert set(paths(idx.search("retry", type="decision"))) == {
        "decisions/retry-policy-for-outbound-http.md",
        "decisions/old-retry-policy.md",
    }
    assert all(r.type == "gotcha" for r in idx.search("retry token", type="gotcha", mode="vector"))
    assert paths(idx.search("connections", tag="db", mode="vector")) == ["facts/database-connection-pooling.md"]
    assert idx.search("retry", since="2999-01-01") == []
    assert len(idx.search("retry", since="1d")) >= 2
    # What a filter lets through is kept between searches, until the wiki changes.
    store.write(store.read("decisions/old-retry-policy.md").with_meta(status="active", superseded_by=None), AGENT)
    for mode in ("fts", "vector"):
        assert idx.search("retry", status="superseded", mode=mode) == []
        assert "decisions/old-retry-policy.md" in paths(idx.search("retry five times", status="active", mode=mode))
    idx.sync(store, full=True)  # a new file, a new connection: the kept filters go with the old one
    assert "decisions/old-retry-policy.md" in paths(idx.search("retry five times", status="active", mode="fts"))
    idx.close()


def test_max_chars_gives_the_best_context_that_fits(index):
    full = index.search("connections retry token", k=5)
    total = sum(len(r.snippet) for r in full)
    budget = total // 2
    fitted = index.search("connections retry token", k=5, max_chars=budget)
    assert sum(len(r.snippet) for r in fitted) <= budget
    assert paths(fitted) == paths(full)[: len(fitted)] and fitted
    tiny = index.search("connections retry token", k=5, max_chars=40)
    assert len(tiny) == 1 and len(tiny[0].snippet) <= 40


def test_long_pages_are_chunked_at_headings_and_the_best_chunk_is_shown(tmp_path, model):
    body = "\n\n".join(
        [
            "## Setup\n\n" + "Install the toolchain and clone the repository. " * 30,
            "## Deploying\n\n" + "Deploys go through the blue green switch on the load balancer. " * 5,
            "## Rollback\n\n" + "To roll back, flip the switch back to the previous colour within ten minutes. " * 3,
        ]
    )
    store = make_store(tmp_path, [("Operations handbook", "procedure", body, [])])
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store)
    assert idx.stats()["chunks"] >= 3
    r = idx.search("how do I roll back a bad release", k=1)[0]
    assert r.heading == "Rollback" and "flip the switch" in r.snippet
    assert len(idx.search("switch", k=5)) == 1  # a page appears once
    idx.close()


def test_the_first_result_shows_a_long_passage_the_others_short_ones(tmp_path):
    # Two pages of filler lines, each with one line about the query: the best page's passage
    # grows to ~150 words around its match, the second page's to ~40, so a budget holds more pages.
    def body(line: str) -> str:
        lines = [f"Line {i} says nothing in particular about anything at all." for i in range(60)]
        lines[30] = line
        return "\n\n".join(lines)

    store = make_store(
        tmp_path,
        [
            (
                "Alpha runbook",
                "procedure",
                body("A deploy rollback on alpha: the deploy rollback takes ten minutes."),
                [],
            ),
            ("Beta runbook", "procedure", body("A deploy rollback on beta takes an hour."), []),
        ],
    )
    idx = Index.open(project_for_store(store.root), embedder=Embedder(path=str(tmp_path / "no-model")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelUnavailableWarning)
        idx.sync(store)
        first, second = idx.search("deploy rollback", k=2, mode="fts")
    assert first.path == "procedures/alpha-runbook.md" and "rollback on alpha" in first.snippet
    assert "rollback on beta" in second.snippet
    assert 120 <= len(first.snippet.split()) <= 230
    assert len(second.snippet.split()) <= 80
    idx.close()


def test_links_and_backlinks(tmp_path, model):
    store = make_store(
        tmp_path,
        [
            ("Auth service overview", "fact", "Tokens come from the auth service. See [[JWT refresh]].", []),
            (
                "JWT refresh",
                "gotcha",
                "Refresh before retry; see [[Auth service overview]], "
                "[[decisions/retry-policy]] and [[Not written yet]].",
                [],
            ),
        ],
    )
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store)
    out = idx.links("gotchas/jwt-refresh.md")
    assert [(link.target, link.path) for link in out] == [
        ("Auth service overview", "facts/auth-service-overview.md"),
        ("decisions/retry-policy", None),
        ("Not written yet", None),
    ]
    assert idx.backlinks("facts/auth-service-overview.md") == ["gotchas/jwt-refresh.md"]
    # Writing the missing page resolves the link that waited for it.
    store.write(Page.new("Retry policy", "decision", "Twice."), AGENT)
    idx.sync(store)
    assert idx.links("gotchas/jwt-refresh.md")[1].path == "decisions/retry-policy.md"
    assert idx.backlinks("decisions/retry-policy.md") == ["gotchas/jwt-refresh.md"]
    # A retitled page no longer answers to its old name; a new page of that name does.
    store.move("facts/auth-service-overview.md", None, AGENT, title="Auth gateway")
    idx.sync(store)
    assert idx.links("gotchas/jwt-refresh.md")[0].path is None
    store.write(Page.new("Auth service overview", "note", "The new overview."), AGENT)
    idx.sync(store)
    assert idx.links("gotchas/jwt-refresh.md")[0].path == "notes/auth-service-overview.md"
    assert idx.links("facts/auth-gateway.md")[0].path == "gotchas/jwt-refresh.md"
    # Re-resolving only what the changed pages can affect agrees with resolving everything.
    incremental = idx.conn.execute("SELECT source, target, resolved FROM links ORDER BY 1, 2").fetchall()
    resolve_links(idx.conn)
    assert idx.conn.execute("SELECT source, target, resolved FROM links ORDER BY 1, 2").fetchall() == incremental
    idx.close()


def test_page_names_for_links_are_kept_between_this_process_writes(tmp_path, model):
    """Each write resolves links against every page's names: kept from the last write of this
    process and updated for the pages it changed, read again after anyone else's write."""
    store = make_store(tmp_path, [("JWT refresh", "gotcha", "See [[Auth overview]] and [[retry-policy]].", [])])
    project = project_for_store(store.root)
    idx = Index.open(project, embedder=model).attach(store)
    idx.sync(store)
    assert idx.writer.names_loads == 1
    store.write(Page.new("Auth overview", "fact", "Tokens."), AGENT)
    store.write(Page.new("Retry policy", "decision", "Twice."), AGENT)
    store.move("facts/auth-overview.md", None, AGENT, title="Auth gateway")
    assert [link.path for link in idx.links("gotchas/jwt-refresh.md")] == [None, "decisions/retry-policy.md"]
    store.delete("decisions/retry-policy.md", AGENT)
    assert [link.path for link in idx.links("gotchas/jwt-refresh.md")] == [None, None]
    assert idx.writer.names_loads == 1  # four writes, the names updated in place

    elsewhere = Store(store.root)
    with Index.open(project, embedder=model) as other:
        other.attach(elsewhere)
        elsewhere.write(Page.new("Auth overview", "note", "The new overview."), AGENT)
        assert other.writer.names_loads == 1  # the other index's write read them
    elsewhere.close()
    store.write(Page.new("Retry policy", "decision", "Three times."), AGENT)
    assert idx.writer.names_loads == 2  # and ours after it: read again
    assert [link.path for link in idx.links("gotchas/jwt-refresh.md")] == [
        "notes/auth-overview.md",
        "decisions/retry-policy.md",
    ]
    left = idx.conn.execute("SELECT source, target, resolved FROM links ORDER BY 1, 2").fetchall()
    resolve_links(idx.conn)  # everything from scratch agrees with what the writes left
    assert idx.conn.execute("SELECT source, target, resolved FROM links ORDER BY 1, 2").fetchall() == left
    idx.close()


def test_the_index_is_one_sqlite_file_in_wal_mode_with_fts5(index):
    conn = sqlite3.connect(index.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"pages", "chunks", "chunks_fts", "vectors", "links", "meta"} <= tables
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "fts5" in sql and "porter unicode61" in sql
    dim, blob = conn.execute("SELECT dim, vec FROM vectors LIMIT 1").fetchone()
    assert dim == 384 and len(blob) == 384 * 2  # float16: half the bytes of float32
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == schema.SCHEMA_VERSION
    conn.close()


def test_a_broken_page_is_still_indexed_by_its_words(tmp_path, model):
    store = Store.create(tmp_path / "wiki")
    store.commit({"notes/broken.md": b"---\ntitle: [unclosed\n---\nThe word quetzal is here.\n"}, "edit", AGENT)
    idx = Index.open(project_for_store(store.root), embedder=model)
    stats = idx.sync(store)
    assert stats.errors and "notes/broken.md" in stats.errors[0]
    assert paths(idx.search("quetzal", k=1)) == ["notes/broken.md"]
    idx.close()


def test_embedding_batches_are_small(tmp_path, model):
    body = "\n\n".join(f"## Part {i}\n\nSection {i} talks about topic number {i}." for i in range(40))
    store = make_store(tmp_path, [("Many sections", "note", body, [])])
    idx = Index.open(project_for_store(store.root), embedder=model)
    calls = model.calls
    idx.sync(store)
    assert model.batch_size <= 16
    assert model.calls - calls >= 40 // model.batch_size
    idx.close()
    assert os.path.exists(idx.path)


def test_a_word_in_most_pages_neither_breaks_nor_dominates_a_search(tmp_path, model):
    pages = [
        (f"Acme note {i}", "note", f"Acme service detail number {i} about widgets and gadgets.", []) for i in range(60)
    ]
    pages.append(("Acme zanzibar host", "fact", "The Acme staging host is called zanzibar.", []))
    store = make_store(tmp_path, pages)
    idx = Index.open(project_for_store(store.root), embedder=model)
    idx.sync(store)
    # "acme" is in every chunk: it is dropped from the match, the rare word decides.
    assert paths(idx.search("acme zanzibar", k=1, mode="fts")) == ["facts/acme-zanzibar-host.md"]
    # Alone, it is still searched for.
    assert len(idx.search("acme", k=5, mode="fts")) == 5
    idx.close()


def test_common_words_leave_the_query_and_frequent_ones_only_score(tmp_path, monkeypatch):
    """A word in over half the chunks leaves the query; in a big index (Tuning.prune_from
    chunks or more, lowered here) a word in over Tuning.prune_share of them only scores the
    matches a rarer word makes, so a search costs what its selective words match."""
    from wiki_memory.index.query import parse_query

    def words_of(i: int) -> list[str]:
        return (
            ["service"]
            + (["canary"] if i % 4 == 0 else [])
            + (["zebrafish"] if i % 16 in (0, 1) else [])
            + (["narwhal"] if i in (3, 5, 7) else [])
        )

    pages = [(f"Note {i}", "note", f"The {' and '.join(words_of(i))} of this one.", []) for i in range(400)]
    store = make_store(tmp_path, pages)
    monkeypatch.setattr(embed_module, "_warned", set())
    no_model = Embedder(path=str(tmp_path / "no-model"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelUnavailableWarning)
        idx = Index.open(project_for_store(store.root), embedder=no_model)
        idx.sync(store)
    holding = {w: {f"notes/note-{i}.md" for i in range(400) if w in words_of(i)} for w in ("canary", "zebrafish")}
    query = parse_query("service canary zebrafish")

    # A small index: "service" (every chunk) leaves; canary and zebrafish both make matches.
    small = idx.ranker.without_common_words(query)
    assert (small.words, small.scoring) == (("canary", "zebrafish"), ())
    found = set(paths(idx.search(query.text, k=200, mode="fts")))
    assert found == holding["canary"] | holding["zebrafish"]

    idx.close()

    # A big one: zebrafish (50 chunks) makes the matches; canary (100) and service only score.
    idx = Index.open(project_for_store(store.root), embedder=no_model, tuning=Tuning(prune_from=100, prune_share=0.15))
    big = idx.ranker.without_common_words(query)
    assert (big.words, set(big.scoring)) == (("zebrafish",), {"service", "canary"})
    ranked = paths(idx.search(query.text, k=200, mode="fts"))
    assert set(ranked) == holding["zebrafish"]
    assert set(ranked[:25]) == holding["zebrafish"] & holding["canary"]  # canary still counts
    # Every word frequent: they all make matches, less the one in most chunks.
    every = idx.ranker.without_common_words(parse_query("service canary"))
    assert (every.words, every.scoring) == (("canary",), ())
    assert set(paths(idx.search("service canary", k=200, mode="fts"))) == holding["canary"]
    # The rarer words too rare to be the only ones making matches (3 chunks): the same.
    rare = idx.ranker.without_common_words(parse_query("service narwhal canary"))
    assert (rare.words, rare.scoring) == (("narwhal", "canary"), ())
    idx.close()


def test_a_query_of_frequent_words_ranks_the_rows_holding_them_all_first(tmp_path, monkeypatch):
    """In a big index (lowered here), a query whose every word is frequent ranks only the
    rows holding all of them (less those in over a quarter of the chunks, which only score)
    when they fill the ranking's depth: the same results, a fraction of the rows to score;
    every row holding any of them when they are too few."""
    from dataclasses import replace

    from wiki_memory.index.query import parse_query

    every = {"omega": 2, "alpha": 4, "beta": 5, "gamma": 6, "delta": 7}  # a word in the pages i % n == 0

    def words_of(i: int) -> list[str]:
        return [w for w, n in every.items() if i % n == 0] + (["zebra"] if i in (1, 3) else []) or ["plain"]

    store = make_store(
        tmp_path, [(f"Note {i}", "note", f"The {' and '.join(words_of(i))} of this one.", []) for i in range(400)]
    )
    monkeypatch.setattr(embed_module, "_warned", set())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelUnavailableWarning)
        idx = Index.open(
            project_for_store(store.root),
            embedder=Embedder(path=str(tmp_path / "no-model")),
            # Rankings 8 deep for k=1, 16 for k=2; every word above but zebra is frequent (> 40 chunks).
            tuning=Tuning(depth=8, prune_from=100, prune_share=0.1),
        )
        idx.sync(store)
    # Which FTS5 expressions the searches rank, through the ranker's public steps.
    ranked: list[str] = []
    plain_ranked = idx.ranker.ranked
    monkeypatch.setattr(
        idx.ranker, "ranked", lambda expression, *a: ranked.append(expression) or plain_ranked(expression, *a)
    )
    plain_words = idx.ranker.without_common_words

    def search_any_word(text: str, k: int) -> list[str]:
        monkeypatch.setattr(idx.ranker, "without_common_words", lambda q: replace(plain_words(q), every_first=()))
        try:
            return paths(idx.search(text, k=k, mode="fts"))
        finally:
            monkeypatch.setattr(idx.ranker, "without_common_words", plain_words)

    # 20 pages hold alpha and beta: enough for rankings 8 and 16 deep; omega (half the
    # chunks) only scores them.
    assert idx.ranker.without_common_words(parse_query("alpha beta omega")).every_first == ("alpha", "beta")
    for k in (1, 2):
        ranked.clear()
        found = paths(idx.search("alpha beta omega", k=k, mode="fts"))
        assert ranked == ['"alpha" AND "beta" OR (("alpha" AND "beta") AND ("omega"))']
        assert found == search_any_word("alpha beta omega", k)
    assert set(found) <= {f"notes/note-{i}.md" for i in range(0, 400, 20)}
    # One page holds all four of these, too few: every page holding any of them is ranked.
    ranked.clear()
    text = "alpha beta gamma delta"
    found = paths(idx.search(text, k=1, mode="fts"))
    assert ranked == [" AND ".join(f'"{w}"' for w in text.split()), " OR ".join(f'"{w}"' for w in text.split())]
    assert found == search_any_word(text, 1)
    found = paths(idx.search(text, k=300, mode="fts"))
    assert set(found) == {f"notes/note-{i}.md" for i in range(400) if set(words_of(i)) & set(text.split())}
    # An identifier must be there too: no row holds "alpha-beta", so every row holding any
    # of the words is ranked.
    ranked.clear()
    found = paths(idx.search("alpha-beta omega", k=1, mode="fts"))
    assert ranked[0] == '"alpha beta" AND "alpha" AND "beta" OR (("alpha beta" AND "alpha" AND "beta") AND ("omega"))'
    assert len(ranked) == 2 and found == search_any_word("alpha-beta omega", 1)
    # A rare word among them makes the matches, as before.
    assert idx.ranker.without_common_words(parse_query("alpha beta zebra")).every_first == ()
    idx.close()


def test_word_counts_are_kept_until_the_index_changes(tmp_path, monkeypatch):
    """Searches reuse the chunk counts of their words; a count stopped at a lower cap is
    counted on, and any change of the index (a write here or in another process) drops them."""
    pages = [(f"Note {i}", "note", f"Plain text {'kestrel ' if i < 3 else ''}number {i}.", []) for i in range(20)]
    store = make_store(tmp_path, pages)
    monkeypatch.setattr(embed_module, "_warned", set())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelUnavailableWarning)
        no_model = Embedder(path=str(tmp_path / "no-model"))
        idx = Index.open(project_for_store(store.root), embedder=no_model).attach(store)
        idx.sync(store)
    counted: list[str] = []
    idx.conn.set_trace_callback(lambda sql: counted.append(sql) if "LIMIT" in sql and "MATCH" in sql else None)

    assert idx.ranker.chunk_counts(["kestrel"], 2) == {"kestrel": 2}  # stopped at the cap
    assert idx.ranker.chunk_counts(["kestrel"], 1) == {"kestrel": 1}
    assert len(counted) == 1
    assert idx.ranker.chunk_counts(["kestrel"], 100) == {"kestrel": 3}  # counted on
    assert idx.ranker.chunk_counts(["kestrel"], 50) == {"kestrel": 3}
    assert len(counted) == 2

    store.write(Page.new("Kestrel sighting", "note", "A kestrel over the build farm."), AGENT)
    assert idx.ranker.chunk_counts(["kestrel"], 100) == {"kestrel": 4}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelUnavailableWarning)
        with Index.open(project_for_store(store.root), embedder=no_model) as other:
            other.attach(store)
            store.write(Page.new("Second kestrel", "note", "Another kestrel."), AGENT)
    assert idx.ranker.chunk_counts(["kestrel"], 100) == {"kestrel": 5}
    assert len(counted) == 4
    idx.close()


def test_writes_in_this_process_patch_the_vector_matrix_and_others_reload_it(store, model):
    """After a write, the next search sees the new vectors without reading every vector again
    (this process's writes patch the cached matrix), and ranks exactly as a fresh index does."""
    project = project_for_store(store.root)
    idx = Index.open(project, embedder=model).attach(store)
    idx.sync(store)
    idx.search("warm up", mode="vector")
    loads = idx.matrix_loads

    def same_as_fresh(query: str) -> list[str]:
        found = idx.search(query, k=5, mode="vector")
        with Index.open(project, embedder=model) as fresh:
            expected = fresh.search(query, k=5, mode="vector")
        assert [(r.path, round(r.score, 5), r.snippet) for r in found] == [
            (r.path, round(r.score, 5), r.snippet) for r in expected
        ]
        return paths(found)

    store.write(
        Page.new(
            "Flaky websocket test",
            "gotcha",
            "The websocket reconnect test fails when the port range is busy on the build agents.",
        ),
        AGENT,
    )
    assert same_as_fresh("socket reconnection flakes on CI machines")[0] == "gotchas/flaky-websocket-test.md"
    store.write(
        Page.new("Flaky websocket test", "gotcha", "Moved: see the CI runbook for port allocation."), AGENT
    )  # the same page, other chunks
    store.delete("gotchas/celery-eager-mode-masks-broker-timeouts.md", AGENT)
    found = same_as_fresh("background jobs execute synchronously during testing")
    assert "gotchas/celery-eager-mode-masks-broker-timeouts.md" not in found
    assert idx.matrix_loads == loads  # patched each time, never read whole again

    # A write by another process moves the generation past what this one patched: read again.
    elsewhere = Store(store.root)
    with Index.open(project, embedder=model) as other:
        other.attach(elsewhere)
        elsewhere.write(Page.new("Staging host", "fact", "The staging host is called zanzibar."), AGENT)
    elsewhere.close()
    assert same_as_fresh("what is the staging machine named")[0] == "facts/staging-host.md"
    assert idx.matrix_loads == loads + 1
    idx.close()


def test_an_index_file_from_before_the_vectors_by_model_index_gains_it_in_place(store, model):
    """A file of the current schema version that lacks an index added since is given it on
    open, keeping its vectors (a rebuild would embed every chunk again)."""
    project = project_for_store(store.root)
    with Index.open(project, embedder=model) as idx:
        idx.sync(store)
    conn = sqlite3.connect(project.index_path)
    conn.execute("DROP INDEX vectors_by_model")
    conn.commit()
    conn.close()
    before = model.calls
    with Index.open(project, embedder=model) as idx:
        assert idx.rebuilt is None and idx.pending_count() == 0
        assert paths(idx.search("background jobs execute synchronously during testing", k=1, mode="vector")) == [
            "gotchas/celery-eager-mode-masks-broker-timeouts.md"
        ]
    assert model.calls == before + 1  # the query alone: no chunk embedded again
    conn = sqlite3.connect(project.index_path)
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors_by_model'").fetchone()
    conn.close()


def test_the_contentless_word_index_forgets_rewritten_retagged_and_deleted_pages(tmp_path):
    """FTS5 keeps no copy of the text (the index is half the size): a page's old words go
    when it is rewritten, retagged or deleted, and the word index stays consistent."""
    store = make_store(tmp_path)
    with Index.open(project_for_store(store.root)) as index:
        index.sync(store, embed=False)
        conn = index.conn
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "chunks_fts_content" not in tables  # no second copy of every chunk's text
        celery = store.read("gotchas/celery-eager-mode-masks-broker-timeouts.md")
        store.write(celery.with_body("Eager mode hides a missing zanzibarbroker.").with_meta(tags=["quokka"]), AGENT)
        store.delete("decisions/retry-policy-for-outbound-http.md", AGENT)
        index.sync(store, embed=False)

        def found(words: str) -> list[str]:
            return [r.path for r in index.search(words, k=5, mode="fts")]

        assert found("CELERY_TASK_ALWAYS_EAGER") == []  # the old body's words are gone
        assert found("zanzibarbroker") == ["gotchas/celery-eager-mode-masks-broker-timeouts.md"]
        assert found("quokka") == ["gotchas/celery-eager-mode-masks-broker-timeouts.md"]  # tags: in the title column
        assert found("celery") == ["gotchas/celery-eager-mode-masks-broker-timeouts.md"]  # the title stays
        assert found("ERR_CONN_RESET") == []  # the deleted page
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 0)")
        # No row of the word index outlives its chunk ("tasks" was only in the old body).
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'tasks'").fetchone()[0] == 0
