"""The merge rules on their own: one file, three versions."""

from __future__ import annotations

from wiki_memory.pages import parse_page
from wiki_memory.sync.merge import conflict_copy, conflict_path, merge_meta, merge_text, with_conflict_link

BASE = b"""---
id: 01JD7Q2M4T8V9X0Y1Z2A3B4C5D
title: Retry policy
type: decision
tags: [http]
created: 2026-11-01T08:00:00Z
updated: 2026-11-01T08:00:00Z
---
# Retry policy

First paragraph.

Second paragraph.

Third paragraph.
"""


def edit(text: bytes, old: bytes, new: bytes) -> bytes:
    assert old in text
    return text.replace(old, new)


def test_changes_to_different_lines_merge_and_keep_the_text_exactly():
    ours = edit(BASE, b"First paragraph.", b"First paragraph, ours.")
    theirs = edit(BASE, b"Third paragraph.", b"Third paragraph, theirs.")
    merged = merge_text("decisions/retry-policy.md", BASE, ours, theirs)
    assert merged == edit(ours, b"Third paragraph.", b"Third paragraph, theirs.")


def test_the_same_lines_changed_differently_do_not_merge():
    ours = edit(BASE, b"Second paragraph.", b"Second, ours.")
    theirs = edit(BASE, b"Second paragraph.", b"Second, theirs.")
    assert merge_text("decisions/retry-policy.md", BASE, ours, theirs) is None


def test_updated_takes_the_later_value_and_the_body_still_merges():
    ours = edit(
        edit(BASE, b"updated: 2026-11-01T08:00:00Z", b"updated: 2026-11-03T09:00:00Z"),
        b"First paragraph.",
        b"First, ours.",
    )
    theirs = edit(
        edit(BASE, b"updated: 2026-11-01T08:00:00Z", b"updated: 2026-11-02T17:00:00Z"),
        b"Third paragraph.",
        b"Third, theirs.",
    )
    merged = merge_text("decisions/retry-policy.md", BASE, ours, theirs)
    assert merged is not None
    page = parse_page(merged.decode(), "decisions/retry-policy.md")
    assert page.updated == "2026-11-03T09:00:00Z"
    assert "First, ours." in page.body and "Third, theirs." in page.body
    # The front matter block is ours, exactly as written, since the merged keys equal ours.
    assert merged.startswith(ours.split(b"# Retry policy")[0])


def test_a_real_front_matter_conflict_is_a_conflict():
    ours = edit(BASE, b"title: Retry policy", b"title: Retry rules")
    theirs = edit(BASE, b"title: Retry policy", b"title: Retry strategy")
    assert merge_text("decisions/retry-policy.md", BASE, ours, theirs) is None


def test_meta_lists_take_both_sides_additions_and_removals():
    base = {"tags": ["a", "b", "c"], "updated": "1", "title": "T"}
    ours = {"tags": ["a", "c", "ours"], "updated": "3", "title": "T"}  # removed b
    theirs = {"tags": ["a", "b", "theirs"], "updated": "2", "title": "T"}  # removed c
    assert merge_meta(base, ours, theirs) == {"tags": ["a", "ours", "theirs"], "updated": "3", "title": "T"}


def test_meta_key_removed_on_one_side_and_unchanged_on_the_other_is_removed():
    assert merge_meta({"a": 1, "b": 2}, {"a": 1}, {"a": 1, "b": 2, "c": 3}) == {"a": 1, "c": 3}


def test_binary_files_never_merge():
    assert merge_text("assets/x.png", b"\x89PNG\0a", b"\x89PNG\0b", b"\x89PNG\0c") is None


def test_conflict_paths_are_named_for_the_host_and_date_and_never_reuse_a_name():
    taken = {"notes/x.conflict-laptop-2026-11-30.md"}
    assert (
        conflict_path("notes/x.md", "laptop", "2026-11-30", taken.__contains__)
        == "notes/x.conflict-laptop-2026-11-30-2.md"
    )
    assert (
        conflict_path(".gitignore", "laptop", "2026-11-30", taken.__contains__)
        == ".gitignore.conflict-laptop-2026-11-30"
    )
    assert conflict_path("x.md", "desk", "2026-11-30", taken.__contains__) == "x.conflict-desk-2026-11-30.md"


def test_the_conflict_copy_is_a_page_of_its_own_with_the_text_unchanged():
    copy = conflict_copy("decisions/retry-policy.md", BASE, "decisions/retry-policy.md")
    page = parse_page(copy.decode(), "decisions/retry-policy.conflict-h-d.md")
    original = parse_page(BASE.decode(), "decisions/retry-policy.md")
    assert page.id != original.id and page.meta["conflict_of"] == "decisions/retry-policy.md"
    assert page.body == original.body and page.title == original.title
    hand_written = b"# No front matter\n\nJust words.\n"
    assert conflict_copy("notes/n.md", hand_written, "notes/n.md") == hand_written


def test_the_kept_page_links_to_the_copy():
    linked = with_conflict_link(b"# Page\n\nText", "notes/p.conflict-laptop-2026-11-30.md", "laptop", "origin")
    assert linked.startswith(b"# Page\n\nText\n\n")
    assert b"[[notes/p.conflict-laptop-2026-11-30]]" in linked
