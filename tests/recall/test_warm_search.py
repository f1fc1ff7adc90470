"""`wiki-memory search` in a process of its own: a search by words loads neither the memory
layer's git store, nor numpy, nor the embedding model; a search by meaning asks the warm
helper, which holds the model and the vectors, and falls back to loading them itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from wiki_memory.config import home, resolve_project
from wiki_memory.recall import meaning
from wiki_memory.store import Author

# Run the CLI, then print the modules it loaded (stderr's last line).
PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['wiki-memory'] + sys.argv[1:]\nfrom wiki_memory.entry import main\nmain()\n"
)
HEAVY = ("numpy", "fastembed", "onnxruntime", "dulwich.porcelain", "wiki_memory.memory.memory", "wiki_memory.store")
QUERY = "background jobs execute synchronously during testing"
CELERY = "gotchas/celery-eager-mode-masks-broker-timeouts.md"


def run_search(code_repo, *args: str) -> tuple[list[dict], set[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "search", *args, "--json"],
        cwd=code_repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    modules = next(line for line in out.stderr.splitlines() if line.startswith("MODULES "))
    return json.loads(out.stdout), set(json.loads(modules[len("MODULES ") :]))


@pytest.fixture
def project(code_repo):
    from wiki_memory.memory import Memory
    from wiki_memory.pages import Page

    project = resolve_project(code_repo)
    with Memory(project) as memory:
        memory.store(create=True).write_many(
            [
                Page.new(
                    "Celery eager mode masks broker timeouts",
                    "gotcha",
                    "With CELERY_TASK_ALWAYS_EAGER set, tasks run inline and the broker is never contacted.",
                ),
                Page.new("Retry policy", "decision", "Retry twice; ERR_CONN_RESET is retried, 4xx is not."),
            ],
            Author.agent("test"),
        )
        memory.reindex()
    return project


def test_a_search_by_words_imports_no_numpy_model_or_git_store(project, code_repo):
    results, modules = run_search(code_repo, "ERR_CONN_RESET", "--mode", "fts")
    assert [r["path"] for r in results] == ["decisions/retry-policy.md"]
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
    # With a filter too (its chunks are kept in a table, not a numpy array).
    results, modules = run_search(code_repo, "retry", "--mode", "fts", "--type", "decision", "--status", "active")
    assert [r["path"] for r in results] == ["decisions/retry-policy.md"]
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.usefixtures("embedding_model")
def test_a_search_by_meaning_is_answered_by_the_warm_helper(project, code_repo, monkeypatch):
    monkeypatch.setenv("WIKI_MEMORY_RECALL", "on")
    where = str(home())
    # No helper yet: the search loads the model itself, and starts the helper for the next.
    results, modules = run_search(code_repo, QUERY)
    assert results[0]["path"] == CELERY and "vector" in results[0]["retrievers"]
    assert "fastembed" in modules
    try:
        deadline = time.time() + 120
        while not meaning.running(where) and time.time() < deadline:
            time.sleep(0.2)
        assert meaning.running(where), "the search did not start the helper"
        warm, modules = run_search(code_repo, QUERY)
        assert warm == results  # the same search, by the helper
        assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
        assert "wiki_memory.index.index" not in modules  # not even the index is opened here
        # Filters and modes travel to the helper; words alone stay here.
        only, modules = run_search(code_repo, QUERY, "--mode", "vector", "--type", "decision")
        assert [r["path"] for r in only] == ["decisions/retry-policy.md"] and "numpy" not in modules
    finally:
        meaning.stop(where)
        deadline = time.time() + 30
        while os.path.exists(meaning.socket_path(where)) and time.time() < deadline:
            time.sleep(0.1)


@pytest.mark.usefixtures("embedding_model")
def test_a_helper_of_another_model_is_not_asked(project, code_repo, monkeypatch):
    """The helper embeds with the model of the home that started it; a search whose
    settings name another model searches by itself (vectors of two models never meet)."""
    monkeypatch.setenv("WIKI_MEMORY_RECALL", "on")
    where = str(home())
    helper = subprocess.Popen(
        [sys.executable, "-m", "wiki_memory.recall.helper", "--home", where, "--idle", "60"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 120
        while not meaning.running(where) and time.time() < deadline:
            time.sleep(0.2)
        request = {"op": "search", "project": project.fields(), "model": "another/model", "query": QUERY, "k": 3}
        assert meaning.ask(where, request, timeout=30) is None
        request["model"] = "sentence-transformers/all-MiniLM-L6-v2"
        request["mode"] = "hybrid"
        answer = meaning.ask(where, request, timeout=30)
        assert answer is not None and answer["results"][0]["path"] == CELERY
    finally:
        meaning.stop(where)
        helper.wait(timeout=60)
