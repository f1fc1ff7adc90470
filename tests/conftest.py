"""Every test runs in its own WIKI_MEMORY_HOME and HOME, with a git identity of its own; a
test under tests/e2e/ is marked `e2e` by its folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The test helpers (fakes, journals, the agent CLIs) are imported by bare name from any folder
# (`from journals import Session`): their folder goes on the path before a test module loads.
sys.path.insert(0, str(TESTS / "helpers"))
# A few test modules share a server or a fixture with another part's (`from test_mcp_http import
# http_server`): every folder of tests is on the path too, so each module stays importable by
# its basename from any folder, as when they all lay in tests/ (basenames are unique).
sys.path.extend(
    str(p) for p in sorted(TESTS.iterdir()) if p.is_dir() and p.name not in {"helpers", "fixtures", "__pycache__"}
)
E2E = TESTS / "e2e"

REPO = TESTS.parent
# The workplace's shared folder (models, LoCoMo, transcripts) sits beside the checkout, or
# beside a folder of checkouts (git worktrees); never copied into the repository.
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "models").is_dir()), REPO.parent / "shared")
DEFAULT_MODEL = SHARED / "models" / "all-MiniLM-L6-v2"

# The embedding model, found as a user's installation finds it: a local copy named by
# WIKI_MEMORY_EMBED_MODEL_PATH (or the workplace's shared copy), else fastembed's download,
# kept between runs in MODEL_CACHE (git-ignored) rather than in each test's own home.
MODEL_PATH = os.environ.get("WIKI_MEMORY_EMBED_MODEL_PATH") or (str(DEFAULT_MODEL) if DEFAULT_MODEL.is_dir() else None)
MODEL_CACHE = REPO / ".model-cache"
if MODEL_PATH is None:
    os.environ.setdefault("FASTEMBED_CACHE_PATH", str(MODEL_CACHE))
MODEL_HELP = (
    "the embedding model is not available ({why}); these tests need it: point WIKI_MEMORY_EMBED_MODEL_PATH at a "
    "local copy of sentence-transformers/all-MiniLM-L6-v2, or let fastembed download it once (huggingface.co must "
    "be reachable; it is kept in .model-cache/)"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests under tests/e2e/ and tests that drive the real agent CLIs are `e2e` (the quick loop:
    `-m "not e2e"`)."""
    for item in items:
        if item.path.is_relative_to(E2E) or "agent_clis" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def env_setup(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("env")
    # The recall helper's folder, one per test (short: a socket path must stay under ~100
    # bytes): a helper a test starts is never the user's, nor another test's, and it exits
    # when the folder is removed at the end.
    runtime = tempfile.mkdtemp(prefix="wm-", dir="/tmp")
    monkeypatch.setenv("WIKI_MEMORY_RUNTIME_DIR", runtime)
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Person\n\temail = person@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WIKI_MEMORY_HOME", str(base / "wm-home"))
    # Recall by words alone: no test starts the warm helper (a process that outlives it)
    # unless it asks for it (tests/recall/test_recall.py's helper tests).
    monkeypatch.setenv("WIKI_MEMORY_RECALL", "words")
    for var in (
        "XDG_DATA_HOME",
        "WIKI_MEMORY_STORE",
        "WIKI_MEMORY_PROJECT",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "CLAUDE_PROJECT_DIR",
    ):
        monkeypatch.delenv(var, raising=False)
    if MODEL_PATH is not None:
        monkeypatch.setenv("WIKI_MEMORY_EMBED_MODEL_PATH", MODEL_PATH)
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield base
    shutil.rmtree(runtime, ignore_errors=True)


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    """Run the real git CLI and return its stdout."""
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def runbook_body(steps: int) -> str:
    """A page body of `steps` short sections: one chunk each, for tests of big pages."""
    return "\n\n".join(f"## Step {i}\n\nDrain queue q{i}, then restart ingest worker {i}." for i in range(steps))


@pytest.fixture
def code_repo(tmp_path: Path) -> Path:
    """A code repository with a remote, as an agent would be started in."""
    repo = tmp_path / "code"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:acme/widgets.git")
    return repo


def new_embedder():
    """An embedder for the model the tests use (see MODEL_PATH)."""
    from wiki_memory.index import Embedder

    return Embedder(path=MODEL_PATH) if MODEL_PATH else Embedder()


@pytest.fixture(scope="session")
def embedding_model():
    """The embedding model, loaded once for the session; a test that needs it fails with one
    line saying how to provide it when it cannot be had (never a silent skip)."""
    embedder = new_embedder()
    if not embedder.available():
        pytest.fail(MODEL_HELP.format(why=embedder.error), pytrace=False)
    return embedder


@pytest.fixture(scope="session")
def agent_clis():
    """The real Claude Code, Codex, OpenCode and Gemini CLIs (see `agent_clis.py`), installed
    from npm into `.agent-clis/` on first use; skips, saying why, where npm or the install is
    missing."""
    from agent_clis import AgentCLIsUnavailable, ensure_agent_clis

    try:
        return ensure_agent_clis()
    except AgentCLIsUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def model_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inference thread count of the embedding model, read from its onnx session each
    time a command asks for the model during the test; WIKI_MEMORY_EMBED_THREADS unset."""
    from wiki_memory.index import embed

    threads: list[int] = []
    load = embed.Embedder._load

    def recording_load(self: embed.Embedder):
        model = load(self)
        if model is not None:
            threads.append(model.model.model.get_session_options().intra_op_num_threads)
        return model

    monkeypatch.setattr(embed.Embedder, "_load", recording_load)
    monkeypatch.delenv("WIKI_MEMORY_EMBED_THREADS", raising=False)
    return threads


# The memory library, as the hook's background process and the CLI call it --------------------


def consolidate_session(project, session_id: str, **options):
    """Consolidate one session through the memory library (what SessionEnd's process runs)."""
    from wiki_memory.memory import Memory

    with Memory(project) as memory:
        return memory.consolidate(session_id, **options)


def consolidate_pending(project, **options):
    from wiki_memory.memory import Memory

    with Memory(project) as memory:
        return memory.consolidate_pending(**options)


def open_store(project):
    """The project's store, the wiki created if needed (the caller closes it)."""
    from wiki_memory.memory import Memory

    return Memory(project).store(create=True)
