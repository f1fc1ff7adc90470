from __future__ import annotations

import re

import pytest

from wiki_memory.errors import PageError
from wiki_memory.pages import (
    Page,
    chunk_text,
    headings,
    new_id,
    parse_page,
    path_for,
    render_page,
    slugify,
    wiki_links,
)

HAND_WRITTEN = """\
---
title: Retry policy
zeta: keep me
id: 01JD7Q2M4T8V9X0Y1Z2A3B4C5D
type: decision
custom:
  nested: [1, 2]
created: 2026-11-30T08:12:44Z
tags: [auth, flaky-tests]
---
# Retry policy

Retry twice. See [[Auth service overview]].
"""


def test_round_trip_keeps_key_order_unknown_keys_and_dates():
    page = parse_page(HAND_WRITTEN, "decisions/retry-policy.md")
    assert list(page.meta) == ["title", "zeta", "id", "type", "custom", "created", "tags"]
    assert page.meta["zeta"] == "keep me"
    assert page.meta["custom"] == {"nested": [1, 2]}
    assert page.created == "2026-11-30T08:12:44Z"  # a string, not a datetime
    assert render_page(page) == HAND_WRITTEN


def test_typed_view_of_front_matter():
    page = parse_page(HAND_WRITTEN, "decisions/retry-policy.md")
    assert (page.id, page.title, page.type, page.tags, page.status) == (
        "01JD7Q2M4T8V9X0Y1Z2A3B4C5D",
        "Retry policy",
        "decision",
        ("auth", "flaky-tests"),
        "active",
    )


def test_new_page_has_schema_keys_and_heading():
    page = Page.new(
        "JWT refresh must happen before the retry", "gotcha", "Body.", tags=["auth"], sources=["claude-code:2624e4c8"]
    )
    assert page.path == "gotchas/jwt-refresh-must-happen-before-the-retry.md"
    assert list(page.meta) == ["id", "title", "type", "tags", "status", "created", "updated", "sources"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", page.created)
    assert page.body.startswith("# JWT refresh must happen before the retry\n\nBody.")
    again = parse_page(render_page(page), page.path)
    assert dict(again.meta) == dict(page.meta) and again.body == page.body


def test_dated_types_go_under_year_and_month():
    assert path_for("Session x", "session", "2026-11-30T08:00:00Z") == "sessions/2026/11/session-x.md"
    assert path_for("Handoff y", "handoff", "2027-01-02T08:00:00Z") == "handoffs/2027/01/handoff-y.md"


@pytest.mark.parametrize(
    "title,slug",
    [
        ("JWT refresh must happen before the retry", "jwt-refresh-must-happen-before-the-retry"),
        ("Café résumé: naïve approach!", "cafe-resume-naive-approach"),
        ("Überblick über Köln", "uberblick-uber-koln"),
        ("数据库迁移", "数据库迁移"),
        ("नमस्ते दुनिया", "नमस्ते-दुनिया"),
        ("Don't use `rm -rf /`", "dont-use-rm-rf"),
    ],
)
def test_slugs(title, slug):
    assert slugify(title) == slug


def test_slug_of_symbols_only_is_stable_and_long_titles_are_cut():
    assert slugify("🎉🎉") == slugify("🎉🎉") and slugify("🎉🎉").startswith("page-")
    assert len(slugify("word " * 100)) <= 80


def test_unicode_page_round_trip():
    page = Page.new("Überblick: 数据库迁移", "fact", "Ça marche — 日本語も。")
    text = render_page(page)
    assert "Überblick: 数据库迁移" in text  # not escaped
    assert parse_page(text, page.path).body == page.body


def test_hand_written_page_without_front_matter():
    page = parse_page("# Deploy checklist\n\n1. Tag.\n", "procedures/deploy.md")
    assert not page.has_front_matter
    assert (page.title, page.type, page.status, page.id) == ("Deploy checklist", "procedure", "active", None)
    assert render_page(page) == "# Deploy checklist\n\n1. Tag.\n"
    untitled = parse_page("just text\n", "gotchas/flaky-login_test.md")
    assert untitled.title == "flaky login test" and untitled.type == "gotcha"


@pytest.mark.parametrize(
    "text,line",
    [
        ("---\ntitle: x\ntags: [a, b\n---\nbody\n", 4),
        ("---\ntitle: x\nbad: a: b\n---\n", 3),
        ("---\ntitle: x\n", 1),
        ("---\n- a list\n---\nbody", 2),
    ],
)
def test_broken_front_matter_names_file_and_line(text, line):
    with pytest.raises(PageError) as e:
        parse_page(text, "gotchas/broken.md")
    assert str(e.value).startswith(f"gotchas/broken.md: line {line}:")


def test_wiki_links_outside_code_only():
    body = (
        "See [[Auth service overview]] and [[decisions/retry-policy|the policy]] and "
        "[[Deploy#Rollback]].\n\n`[[not a link]]`\n\n```\n[[nor this]]\n```\n"
    )
    links = wiki_links(body)
    assert [(link.target, link.heading, link.alias) for link in links] == [
        ("Auth service overview", None, None),
        ("decisions/retry-policy", None, "the policy"),
        ("Deploy", "Rollback", None),
    ]


def test_headings_skip_code_blocks():
    body = "# Title\n\n```\n# not a heading\n```\n\n## Real\n\nSetext\n------\n"
    assert [(h.level, h.text) for h in headings(body)] == [(1, "Title"), (2, "Real"), (2, "Setext")]


def test_chunks_follow_headings_and_stay_under_the_word_limit():
    long_section = "\n\n".join(" ".join(f"w{p}_{i}" for i in range(70)) for p in range(6))
    body = f"# Title\n\nIntro text.\n\n## Symptom\n\nIt fails.\n\n## Details\n\n{long_section}\n"
    chunks = chunk_text(body, "Title", max_words=200)
    assert [c.heading for c in chunks[:2]] == ["Title", "Symptom"]
    detail = [c for c in chunks if c.heading == "Details"]
    assert len(detail) >= 3
    assert all(len(c.text.split()) <= 200 for c in chunks)
    # Nothing is lost: every word of the section is in some chunk.
    words = set(long_section.split())
    assert words == set(" ".join(c.text for c in detail).split())
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_a_single_huge_paragraph_is_split_by_words():
    chunks = chunk_text(" ".join(["word"] * 1000))
    assert len(chunks) == 5 and all(len(c.text.split()) == 200 for c in chunks)


def test_ulids_are_unique_sortable_and_crockford():
    ids = [new_id(1_700_000_000 + i) for i in range(50)]
    assert all(re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", i) for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 50


def test_anchors_are_read_leniently_and_never_escape_the_repository():
    from wiki_memory.pages.anchors import Anchor, anchors_json, clean_path, parse_anchors

    value = [
        {"path": "src\\x.py", "blob": "not-a-blob"},
        "src/x.py",  # the same path again: kept once
        {"path": "/etc/passwd"},
        "a/../../b",
        {"blob": "abc"},
        ["nested"],
        "docs/./guide.md",
    ]
    assert parse_anchors(value) == (Anchor("src/x.py", None), Anchor("docs/guide.md", None))
    assert parse_anchors("src/one.py") == (Anchor("src/one.py"),)
    assert parse_anchors(None) == ()
    assert clean_path("C:/Windows") is None
    assert anchors_json([]) is None
    assert Anchor("a.py", "f" * 40).as_meta() == {"path": "a.py", "blob": "f" * 40}
    assert Anchor("a.py").as_meta() == "a.py"


def test_a_hand_written_page_of_scalar_keys_takes_a_new_key():
    """Front matter of scalars only (no tags) is rewritten one key per line, not as one
    `{...}` line that no key can then be found in."""
    from wiki_memory.pages import parse_page, render_page

    page = parse_page("---\ntitle: Ports\ntype: fact\n---\n# Ports\n\nThe API listens on 8080.\n", "facts/ports.md")
    text = render_page(page.with_meta(status="wrong", status_reason="it moved to 9090"))
    assert text.startswith("---\ntitle: Ports\ntype: fact\nstatus: wrong\nstatus_reason: it moved to 9090\n---\n")
