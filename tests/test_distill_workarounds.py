"""The user's rules as real users type them: a "dont" typed without its apostrophe, kept
with the question it answered; and the tempting shapes that must not become pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import consolidate_session, git
from journals import Session

from wiki_memory.config import resolve_project
from wiki_memory.pages import parse_page


@pytest.fixture
def project(code_repo: Path):
    (code_repo / "scripts").mkdir()
    (code_repo / "scripts" / "new-feature.sh").write_text('#!/bin/sh\ngit checkout -b "$1"\n')
    git(code_repo, "add", ".")
    git(code_repo, "commit", "-qm", "code")
    return resolve_project(code_repo)


def pages(project, folder: str) -> dict[str, tuple[dict, str]]:
    base = project.wiki / folder
    out = {}
    for path in sorted(base.glob("*.md")) if base.exists() else []:
        page = parse_page(path.read_text(encoding="utf-8"), str(path.relative_to(project.wiki)))
        out[path.name] = (dict(page.meta), page.body)
    return out


def test_a_rule_typed_without_its_apostrophe_is_kept_with_the_question_it_answered(project):
    s = Session(project, "s-pref-dont").start()
    s.prompt("how do we make sure that 1password always prompts for my YubiKey when we login? "
             "I dont want unlock to be only a alphanum password")  # fmt: skip
    s.prompt("dont you think the vault is slow?")  # a question: no rule
    s.stop("Set 'Require YubiKey' in 1Password's security settings.").end().write()
    consolidate_session(project, "s-pref-dont")
    [(meta, body)] = pages(project, "preferences").values()
    assert meta["statement"] == "I dont want unlock to be only a alphanum password"
    assert "Said right after: \u201cHow do we make sure that 1password always prompts for my YubiKey" in body
