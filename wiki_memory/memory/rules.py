"""What every front end's input must be before it reaches memory: one rule, one message.

The CLI, the MCP server and the web viewer all pass what a person or an agent typed
through these checks, so that an empty body, a title of 300 characters, a tag with a
comma or text that is not valid UTF-8 is refused the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from wiki_memory.errors import WikiMemoryError
from wiki_memory.pages import PAGE_TYPES, STATUSES

MAX_BODY_BYTES = 2 * 1024 * 1024  # the store's page limit; a memory page should be far shorter
MAX_TITLE = 200
MAX_QUERY = 2000
MAX_TAG = 60


class InputError(WikiMemoryError):
    """An argument a caller can fix: empty, too long, not text, not one of the choices."""


# What a user may say of a page (`Memory.mark`): here, with the other rules, so a front end
# can offer them without loading the memory layer.
VERDICTS = ("helpful", "wrong", "stale", "archived", "active")


def check_text(name: str, value: str | None, *, limit: int = MAX_BODY_BYTES) -> str:
    """`value`, refused when empty, not valid UTF-8 or over `limit` bytes."""
    if value is None or not value.strip():
        raise InputError(f"`{name}` is empty")
    size = len(utf8(name, value))
    if size > limit:
        raise InputError(
            f"`{name}` is {size:,} bytes, over the {limit:,}-byte limit: a memory page should be far shorter; "
            "write the essentials and link to the source"
        )
    return value


def utf8(name: str, value: str) -> bytes:
    """`value` as UTF-8, or InputError; a NUL character is refused too.

    Why: a command-line argument or a file that is not UTF-8 reaches Python as text with
    lone surrogates (`\\udcff`); written to a page it would fail deep in the commit, with a
    traceback instead of a reason. A NUL makes git (and every diff tool) take the page for
    a binary file.
    """
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = value[e.start : e.end].encode("utf-8", "surrogateescape")
        raise InputError(f"`{name}` is not valid UTF-8 text (bytes {bad!r} at character {e.start})") from None
    if "\0" in value:
        raise InputError(f"`{name}` holds a NUL character (at character {value.index(chr(0))}); text only")
    return data


def check_title(title: str | None) -> str:
    """The title with its whitespace collapsed; refused when empty or over MAX_TITLE."""
    title = " ".join((title or "").split())
    if not title:
        raise InputError("`title` is empty")
    utf8("title", title)
    if len(title) > MAX_TITLE:
        raise InputError(
            f"`title` is {len(title)} characters; keep it under {MAX_TITLE} (a title names the page, "
            "the body holds the detail)"
        )
    return title


def check_type(page_type: str, *, handoff: bool = False) -> str:
    """A page type; handoffs are refused unless `handoff` (they have their own operation)."""
    if page_type not in PAGE_TYPES:
        raise InputError(f"unknown type {page_type!r}: one of {', '.join(PAGE_TYPES)}")
    if page_type == "handoff" and not handoff:
        raise InputError("handoffs are written with `handoff write` (summary, done, failed, next steps)")
    return page_type


def check_status(status: str | None) -> str | None:
    if status is not None and status not in STATUSES:
        raise InputError(f"unknown status {status!r}: one of {', '.join(STATUSES)}")
    return status


def check_tags(tags: Sequence[str] | None) -> list[str] | None:
    """Tags in order, without duplicates; None (keep the page's) stays None."""
    if tags is None:
        return None
    if isinstance(tags, str):
        raise InputError("`tags` is a list of tags, not one string")
    clean: list[str] = []
    for tag in tags:
        tag = " ".join(str(tag).split())
        if not tag:
            raise InputError("tags may not be empty strings")
        utf8("tag", tag)
        if "," in tag or len(tag) > MAX_TAG:
            raise InputError(f"tag {tag[:MAX_TAG]!r}: one short word or phrase per tag, no commas")
        if tag not in clean:
            clean.append(tag)
    return clean


def check_query(query: str | None) -> str:
    """A search query with its whitespace collapsed; refused when empty or too long."""
    query = " ".join((query or "").split())
    if not query:
        raise InputError("`query` is empty: say what you are looking for, in words or identifiers")
    utf8("query", query)
    if len(query) > MAX_QUERY:
        raise InputError(f"`query` is {len(query):,} characters; a search query should be a sentence or a few keywords")
    return query


def check_ref(ref: str | None, what: str = "page") -> str:
    """A page reference (path, title or id), stripped; refused when empty."""
    ref = (ref or "").strip()
    if not ref:
        raise InputError(f"`{what}` is empty: give a page's path, title or id")
    utf8(what, ref)
    return ref


class Scrubber:
    """Secrets out of what a caller writes, before anything is committed: each text passed
    through the same redaction the hooks use, and the families found kept, so the writer
    can be told (`[REDACTED:github-token]` in the page, "1 secret redacted" in the answer)."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def __call__(self, text: str) -> str:
        from wiki_memory.capture.redact import (
            redact_found,  # deferred: the redaction rules compile their patterns on import
        )

        clean, findings = redact_found(text)
        self.found.extend(f.family for f in findings)
        return clean

    def all(self, texts: Sequence[str]) -> list[str]:
        return [self(text) for text in texts]
