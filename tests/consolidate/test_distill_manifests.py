"""Facts the agent read from the project's manifests: one `fact` page per file, anchored to
it, updated in place by a later reading, flagged by drift when the file changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.consolidate.distill.manifest_parsers import parse
from wiki_memory.memory import Memory
from wiki_memory.pages import parse_page

PACKAGE = {
    "name": "shop-web",
    "version": "0.3.0",
    "packageManager": "pnpm@9.1.0",
    "engines": {"node": ">=20"},
    "scripts": {"dev": "next dev -p 3001", "build": "next build", "test": "vitest run"},
    "dependencies": {"next": "15.5.2", "react": "^19.0.0"},
}


def numbered(text: str) -> str:
    """A file as Claude Code's Read tool returns it (line numbers and an arrow)."""
    return "\n".join(f"{n:6}\u2192{line}" for n, line in enumerate(text.splitlines(), 1))


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
    (code_repo / "Makefile").write_text(".PHONY: test\ntest:\n\tpnpm test\nserve:\n\tuvicorn app:app --port 8000\n")
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def test_a_manifest_read_is_an_anchored_fact_page_updated_in_place_and_flagged_when_it_changes(project):
    root = project.root
    text = (root / "package.json").read_text()
    s = Session(project, "s-manif-001").start().prompt("How do I run this app?")
    s.tool("Read", f"{root}/package.json", numbered(text))
    s.bash("cat Makefile", (root / "Makefile").read_text())
    s.bash("cat node_modules/next/package.json", json.dumps({"name": "next", "scripts": {"x": "y"}}))
    s.stop("Run `pnpm run dev`; it serves on port 3001.").end().write()
    consolidate_session(project, "s-manif-001")

    facts = sorted(str(p.relative_to(project.wiki)) for p in (project.wiki / "facts").glob("*.md"))
    assert facts == ["facts/facts-from-makefile.md", "facts/facts-from-package-json.md"]
    path = "facts/facts-from-package-json.md"
    page = parse_page((project.wiki / path).read_text(encoding="utf-8"), path)
    blob = git(root, "hash-object", "package.json").strip()
    assert page.meta["anchors"] == [{"path": "package.json", "blob": blob}]
    assert page.meta["manifest"] == "package.json"
    assert "- `pnpm run dev`: `next dev -p 3001`" in page.body
    assert "- Engines: node >=20" in page.body and "- 3001 (script `dev`)" in page.body
    assert "- Dependencies: next 15.5.2, react ^19.0.0" in page.body
    makefile = (project.wiki / "facts/facts-from-makefile.md").read_text(encoding="utf-8")
    assert "- `make test`" in makefile and "- 8000 (Makefile)" in makefile

    # The file changes: the page is flagged as it is handed out.
    (root / "package.json").write_text(json.dumps({**PACKAGE, "scripts": {"dev": "next dev -p 4000"}}, indent=2))
    with Memory(project) as memory:
        assert [(d.path, d.reason) for d in memory.drift(path)] == [("package.json", "changed")]

    # A later session reads it again: the same page, updated in place, anchored anew.
    later = (root / "package.json").read_text()
    s = Session(project, "s-manif-002", agent="codex", start="2026-12-02T08:00:00").start().prompt("Start the app")
    s.bash("sed -n '1,200p' package.json", later)
    s.stop("Started.").end().write()
    consolidate_session(project, "s-manif-002")
    assert sorted(p.name for p in (project.wiki / "facts").glob("*.md")) == [
        "facts-from-makefile.md",
        "facts-from-package-json.md",
    ]
    page = parse_page((project.wiki / path).read_text(encoding="utf-8"), path)
    assert "- `pnpm run dev`: `next dev -p 4000`" in page.body and "3001" not in page.body
    assert page.meta["sources"] == ["claude-code:smanif00", "codex:smanif00"]
    assert page.meta["anchors"] == [{"path": "package.json", "blob": git(root, "hash-object", "package.json").strip()}]
    with Memory(project) as memory:
        assert memory.drift(path) == []


@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("pyproject.toml", '[project]\nname = "shop"\nrequires-python = ">=3.11"\n', "Python >=3.11 (requires-python)"),
        ("go.mod", "module github.com/acme/shop\n\ngo 1.22\n", "Go 1.22"),
        ("Cargo.toml", '[package]\nname = "shop"\nedition = "2021"\n', "Rust edition 2021"),
        ("docker-compose.yml", 'services:\n  db:\n    image: postgres:16\n    ports: ["5432:5432"]\n', "5432:5432"),
        # Unquoted, as YAML 1.1 would read a number: kept as written.
        ("compose.yaml", "services:\n  ssh:\n    image: sshd\n    ports:\n      - 2222:22\n", "2222:22"),
        ("Dockerfile", "FROM node:20-alpine\nEXPOSE 3000\n", "Base image node:20-alpine"),
        (".python-version", "3.12.4\n", "Python 3.12.4"),
        ("app/App.csproj", "<Project><PropertyGroup><TargetFramework>net10.0</TargetFramework>", "net10.0"),
    ],
)
def test_each_kind_of_manifest_says_its_versions_and_ports(name, text, expected):
    said = [line for lines in parse(name, text).values() for line in lines]
    assert any(expected in line for line in said), said


def test_a_cut_reading_keeps_what_was_whole():
    head = json.dumps(PACKAGE, indent=2).splitlines()[:10]
    cut = "\n".join(head) + "\n[... 1,234 characters omitted ...]\n  }\n}"
    topics = parse("package.json", cut)
    assert "`pnpm run build`: `next build`" in topics["scripts"]
    assert parse("package.json", "not json at all") == {}


README = """# Empire of Bits

[![build](https://ci.example/badge.svg)](https://ci.example)
<p align="center"><img src="logo.png"></p>

**Empire of Bits** is an interoperable arcade gaming ecosystem on [Solana](https://solana.com),
live at empireofbits.xyz.

## Install

Run `npm install`.
"""


def test_the_projects_readme_says_what_the_project_is_in_its_own_words(project):
    root = project.root
    (root / "README.md").write_text(README)
    (root / "docs").mkdir()
    (root / "docs" / "README.md").write_text("# Docs\n\nHow the documentation folder is laid out, page by page.\n")
    s = Session(project, "s-readme-001").start().prompt("What is this project?")
    s.tool("Read", f"{root}/README.md", numbered(README))
    s.bash("cat docs/README.md", (root / "docs" / "README.md").read_text())
    s.stop("It is an arcade gaming ecosystem on Solana.").end().write()
    consolidate_session(project, "s-readme-001")

    facts = sorted(p.name for p in (project.wiki / "facts").glob("*.md"))
    assert facts == ["facts-from-readme-md.md"]  # a folder's README is not the project's
    page = (project.wiki / "facts" / "facts-from-readme-md.md").read_text(encoding="utf-8")
    assert "## What the project is" in page
    assert "- Empire of Bits is an interoperable arcade gaming ecosystem on Solana, live at empireofbits.xyz." in page
    assert "badge" not in page and "npm install" not in page


@pytest.mark.parametrize(
    "text",
    [
        "# Tool\n\n<p align=center><img src=x></p>\n",
        "# Tool\n\n- a list\n- only\n",
        "[![ci](b.svg)](c)\n\nWIP\n",
        "A README with no title: what comes first may be a shell's noise, not the project's words.\n",
    ],
)
def test_a_readme_without_a_title_and_prose_states_nothing(text):
    assert parse("README.md", text) == {}


def test_what_comes_before_a_readmes_title_is_not_its_prose():
    noisy = "wsl: Failed to translate 'E:\\tools\\bin'\nwsl: Failed to translate 'E:\\x'\n\n"
    text = noisy + '<h1 align="center">Recruit Clerk</h1>\n\n```\nnpm i\n```\n\nScreens resumes for recruiters.\n'
    assert parse("README.md", text) == {"about": ["Recruit Clerk: Screens resumes for recruiters."]}


PYTEST_INI = """[pytest]
testpaths = tests
pythonpath = . src
addopts = --strict-markers --maxfail=5
markers =
    unit: fast tests
    integration: needs the database
"""


@pytest.mark.parametrize(
    "name,text",
    [
        ("pytest.ini", PYTEST_INI),
        ("tox.ini", "[tox]\nenvlist = py311, lint\n\n" + PYTEST_INI),
        ("setup.cfg", "[metadata]\nname = shop\n\n" + PYTEST_INI.replace("[pytest]", "[tool:pytest]")),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = [".", "src"]\n'
            'addopts = "--strict-markers --maxfail=5"\n'
            'markers = ["unit: fast tests", "integration: needs the database"]\n',
        ),
    ],
)
def test_pytests_settings_are_the_test_configuration_wherever_they_live(name, text):
    tests = parse(name, text)["tests"]
    assert "pytest testpaths: `tests`" in tests and "pytest pythonpath: `. src`" in tests
    assert "pytest addopts: `--strict-markers --maxfail=5`" in tests
    assert "pytest markers: unit, integration" in tests
    if name == "tox.ini":
        assert tests[0] == "tox environments: py311, lint"


def test_the_test_configuration_is_a_section_of_the_files_fact_page(project):
    root = project.root
    (root / "pytest.ini").write_text(PYTEST_INI)
    s = Session(project, "s-pytest-001").start().prompt("Why do the imports fail in tests?")
    s.bash("cat pytest.ini", PYTEST_INI)
    s.stop("pytest.ini puts . and src on the path.").end().write()
    consolidate_session(project, "s-pytest-001")
    page = (project.wiki / "facts" / "facts-from-pytest-ini.md").read_text(encoding="utf-8")
    assert "## Test configuration" in page and "- pytest pythonpath: `. src`" in page
