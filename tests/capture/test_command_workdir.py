"""A shell call that names the directory it runs in (Codex's `workdir`): captured by the hook
and by the rollout reader, and used where a `cd x &&` would be (the files a command wrote,
the directory a distilled procedure and the handoff name)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import git
from journals import codex_rollout

from wiki_memory.capture.codex import ADAPTER, read_rollout
from wiki_memory.capture.toolcalls import tool_facts
from wiki_memory.config import resolve_project
from wiki_memory.memory import Memory, import_transcripts
from wiki_memory.pages import parse_page

SID = "019982b8-3422-79e0-8b3b-05abaf4f3c3e"
DOCS_PACKAGE = {"name": "docs", "scripts": {"serve": "vitepress dev --port 5174"}}


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "docs" / "scripts").mkdir(parents=True)
    (code_repo / "docs" / "scripts" / "build_docs.py").write_text("print('built')\n")
    (code_repo / "docs" / "conf.py").write_text("theme = 'alabaster'\n")
    (code_repo / "docs" / "package.json").write_text(json.dumps(DOCS_PACKAGE) + "\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "docs")
    return resolve_project(code_repo)


def rollout(folder: Path, cwd: Path, calls: list[tuple[dict, str]]) -> Path:
    return codex_rollout(
        folder, cwd, calls, prompt="rebuild the docs with the new theme", answer="Docs rebuilt.", session_id=SID
    )


def ran(output: str) -> str:
    return json.dumps({"output": output, "metadata": {"exit_code": 0}})


def test_the_stated_workdir_is_recorded_and_files_are_read_from_it(tmp_path: Path):
    root = tmp_path / "app"
    edit = ["bash", "-lc", "sed -i 's/alabaster/furo/' conf.py"]
    facts = tool_facts("shell", {"command": edit, "workdir": str(root / "docs")}, "", str(root))
    assert facts.workdir == str(root / "docs") and facts.files == ("docs/conf.py",)
    # No directory named: the session's own, as before.
    facts = tool_facts("shell", {"command": edit}, "", str(root))
    assert facts.workdir is None and facts.files == ("conf.py",)

    # The hook path (Codex's PostToolUse) records it in the observation's meta.
    payload = {"session_id": SID, "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "make html", "workdir": "docs"}, "tool_response": ""}  # fmt: skip
    [o] = ADAPTER.parse("PostToolUse", payload)
    assert o.meta["workdir"] == "docs"

    # And so does the rollout reader.
    path = rollout(tmp_path / "rollouts", root, [({"command": edit, "workdir": str(root / "docs")}, ran(""))])
    [step] = [o for o in read_rollout(path) if o.kind == "tool"]
    assert step.meta["workdir"] == str(root / "docs") and step.files == ("docs/conf.py",)


def test_a_script_run_in_a_subdirectory_is_a_procedure_in_that_directory(project, tmp_path: Path):
    root = project.root
    docs = str(root / "docs")
    path = rollout(tmp_path / "rollouts", root, [
        ({"command": ["bash", "-lc", "sed -i 's/alabaster/furo/' conf.py"], "workdir": docs}, ran("")),
        ({"command": ["bash", "-lc", "python scripts/build_docs.py"], "workdir": docs}, ran("built\n")),
        ({"command": ["bash", "-lc", "cat package.json"], "workdir": docs}, ran(json.dumps(DOCS_PACKAGE))),
    ])  # fmt: skip
    import_transcripts("codex", [path], project=project)
    page = project.wiki / "procedures" / "how-to-run-the-projects-scripts.md"
    found = parse_page(page.read_text(encoding="utf-8"), "procedures/how-to-run-the-projects-scripts.md")
    assert [(c["command"], c["dir"]) for c in found.meta["commands"]] == [("python scripts/build_docs.py", "docs")]
    assert "Run `python scripts/build_docs.py` in `docs`." in found.body
    with Memory(project) as memory:
        view = memory.handoff()
    assert view is not None and view.text is not None
    assert "Run `python scripts/build_docs.py` in `docs`." in view.text
    assert "Files touched: " + os.path.join("docs", "conf.py") in view.text
    # A manifest printed there is that directory's, anchored to it (there is none at the root).
    facts = sorted(p.name for p in (project.wiki / "facts").glob("*.md"))
    assert facts == ["facts-from-docs-package-json.md"]
    fact = parse_page((project.wiki / "facts" / facts[0]).read_text(encoding="utf-8"), "facts/" + facts[0])
    assert fact.meta["manifest"] == "docs/package.json"
    assert [a["path"] for a in fact.meta["anchors"]] == ["docs/package.json"]
