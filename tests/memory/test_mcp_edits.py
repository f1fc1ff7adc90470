"""The body edits behind the `edit` tool: exact, or refused."""

from __future__ import annotations

import pytest

from wiki_memory.memory.edits import EditError, append, find_replace, replace_section

PAGE = """# Title

Intro.

## Symptom

Tests hang.

```sh
# not a heading: a comment in a code block
make test
```

## Fix

Old fix.

### Detail

x = 1

## Links

None.
"""


def test_append_to_the_page_and_to_a_section():
    assert append("# T\n\nBody.\n", "More.") == "# T\n\nBody.\n\nMore.\n"
    out = append(PAGE, "Also on CI.", heading="Symptom")
    assert "make test\n```\n\nAlso on CI.\n\n## Fix" in out
    # A section runs to the next heading of its level or higher: ### Detail belongs to ## Fix.
    out = append(PAGE, "See the broker logs.", heading="fix")
    assert "x = 1\n\nSee the broker logs.\n\n## Links" in out
    assert append(PAGE, "End.", heading="## Links").endswith("None.\n\nEnd.\n")


def test_replace_a_section_keeps_its_heading_and_subsections_go_with_it():
    out = replace_section(PAGE, "Fix", "Set eager mode off.")
    assert "## Fix\n\nSet eager mode off.\n\n## Links" in out
    assert "Old fix" not in out and "### Detail" not in out
    assert out.startswith("# Title\n\nIntro.\n\n## Symptom")
    emptied = replace_section(PAGE, "Symptom", "")
    assert "## Symptom\n\n## Fix" in emptied


def test_a_hash_line_in_a_code_block_is_not_a_heading():
    with pytest.raises(EditError, match="no section headed 'not a heading"):
        replace_section(PAGE, "not a heading: a comment in a code block", "x")


def test_setext_headings():
    page = "Title\n=====\n\nIntro.\n\nPart\n----\n\nOld.\n\nNext\n----\n\nKeep.\n"
    out = replace_section(page, "Part", "New.")
    assert out == "Title\n=====\n\nIntro.\n\nPart\n----\n\nNew.\n\nNext\n----\n\nKeep.\n"


def test_missing_or_ambiguous_headings_are_refused():
    with pytest.raises(EditError) as info:
        replace_section(PAGE, "Cause", "x")
    assert "no section headed 'Cause'" in str(info.value) and "'Symptom', " in str(info.value)
    twice = "# T\n\n## Notes\n\na\n\n## Notes\n\nb\n"
    with pytest.raises(EditError, match="2 sections are headed 'Notes'"):
        append(twice, "c", heading="Notes")
    with pytest.raises(EditError, match="give the heading"):
        replace_section(PAGE, "  ##  ", "x")


def test_find_replace_counts_exactly():
    body, n = find_replace("a b a", "a", "c", expected_count=2)
    assert (body, n) == ("c b c", 2)
    with pytest.raises(EditError, match="found 2 occurrences of 'a', expected 1"):
        find_replace("a b a", "a", "c")
    with pytest.raises(EditError, match="does not contain 'A'"):
        find_replace("a b a", "A", "c")
    with pytest.raises(EditError, match="non-empty `find`"):
        find_replace("a", "", "c")
    assert find_replace("keep this, drop that", ", drop that", "") == ("keep this", 1)


def test_append_refuses_empty_text():
    with pytest.raises(EditError, match="non-empty `text`"):
        append(PAGE, "\n\n")
