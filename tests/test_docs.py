"""The README stays a user's README that tells the truth: short, naming every command, its
test command the one CI runs, and every link (to docs/ and between them) leading somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

from wiki_memory.cli import main

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def test_the_readme_is_well_under_400_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 400


def test_the_readme_names_every_command_and_only_real_ones():
    """The first column of the README's table of commands: `wiki-memory write ...` / `rm PAGE`."""
    text = README.read_text(encoding="utf-8").split("## The commands", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in text.splitlines():
        if row.startswith("| `"):
            cell = row.split(" | ", 1)[0]
            named |= {span.split()[0] for span in re.findall(r"`(?:wiki-memory )?([^`]+)`", cell)}
    assert named - set(main.commands) == set(), "the README names commands that do not exist"
    assert set(main.commands) - named == set(), "commands the README does not name"


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for command in ("pip install -e '.[test]' && python -m pytest", "pip install . && wiki-memory demo"):
        assert command in readme
    assert "pip install -e '.[test]' && python -m pytest\n" in ci


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_every_link_leads_somewhere(doc):
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        missing_anchor = bool(anchor) and path.suffix == ".md" and path.exists() and anchor not in anchors(path)
        if not path.exists() or missing_anchor:
            broken.append(target)
    assert broken == []
