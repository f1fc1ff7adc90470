"""Edits of a page body that refuse rather than guess: append (to the page or to one
section), replace one section by its heading, find-and-replace with an expected count.

Pure functions over text: the caller reads the page and writes the result.
"""

from __future__ import annotations

import re

from wiki_memory.errors import WikiMemoryError

OPERATIONS = ("append", "replace_section", "find_replace", "set_status")

_SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")


class EditError(WikiMemoryError):
    """The edit cannot be applied as asked; nothing was changed."""


def _norm_heading(text: str) -> str:
    return " ".join(text.strip().lstrip("#").strip().rstrip("#").split()).casefold()


def _section(body: str, heading: str) -> tuple[int, int, list[str]]:
    """(first content line, end line, lines) of the one section titled `heading`.

    The section runs from the line after its heading to the next heading of the same or a
    higher level (or the end). Zero or several matching headings are refused, naming the
    headings there are.
    """
    wanted = _norm_heading(heading)
    if not wanted:
        raise EditError("give the heading of the section (its text, with or without the #)")
    from wiki_memory.pages import headings  # deferred: markdown-it, for a section edit only

    found = headings(body)
    matches = [h for h in found if _norm_heading(h.text) == wanted]
    if len(matches) != 1:
        names = ", ".join(repr(h.text) for h in found) or "none"
        if not matches:
            raise EditError(f"no section headed {heading.strip()!r}; the page's headings are: {names}")
        raise EditError(
            f"{len(matches)} sections are headed {heading.strip()!r}; rename one or use "
            "find_replace with text unique to the one you mean"
        )
    target = matches[0]
    lines = body.split("\n")
    start = target.line + 1
    # A setext heading ("Title" over "=====") spans two lines.
    if start < len(lines) and not lines[target.line].lstrip().startswith("#") and _SETEXT_UNDERLINE.match(lines[start]):
        start += 1
    end = len(lines)
    for h in found:
        if h.line > target.line and h.level <= target.level:
            end = h.line
            break
    return start, end, lines


def append(body: str, text: str, heading: str | None = None) -> str:
    """`text` added at the end of the page, or at the end of the section under `heading`."""
    text = text.strip("\n")
    if not text.strip():
        raise EditError("append needs a non-empty `text`")
    if heading is None or not heading.strip():
        return body.rstrip("\n") + "\n\n" + text + "\n"
    start, end, lines = _section(body, heading)
    # Insert after the section's last non-blank line, keeping one blank line before what follows.
    last = end
    while last > start and not lines[last - 1].strip():
        last -= 1
    before = lines[:last]
    after = lines[end:]
    middle = ([""] if last > start else []) + text.split("\n")
    if after:
        middle.append("")
    return "\n".join(before + middle + after).rstrip("\n") + "\n"


def replace_section(body: str, heading: str, text: str) -> str:
    """The section under `heading` (its heading line kept) replaced by `text`."""
    start, end, lines = _section(body, heading)
    new = text.strip("\n").split("\n") if text.strip() else []
    after = lines[end:]
    middle = [""] + new if new else []
    if after:
        middle.append("")
    return "\n".join(lines[:start] + middle + after).rstrip("\n") + "\n"


def find_replace(body: str, find: str, replace: str, expected_count: int = 1) -> tuple[str, int]:
    """`find` replaced by `replace` exactly `expected_count` times, or refused."""
    if not find:
        raise EditError("find_replace needs a non-empty `find` text")
    if expected_count < 1:
        raise EditError("expected_count is how many occurrences you expect to replace: 1 or more")
    count = body.count(find)
    if count == 0:
        raise EditError(
            f"the page does not contain {find[:80]!r} (the match is exact, case and spaces "
            "included); read the page and copy the text to replace"
        )
    if count != expected_count:
        raise EditError(
            f"found {count} occurrences of {find[:80]!r}, expected {expected_count}; give "
            f"expected_count={count} to replace them all, or a longer `find` text that "
            "matches only the one you mean"
        )
    return body.replace(find, replace), count
