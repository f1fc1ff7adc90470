"""The Page: front matter (kept in file order, unknown keys included) and a Markdown body."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from wiki_memory.pages.slug import slugify
from wiki_memory.pages.status import STATUSES, normal

# type -> folder; session and handoff pages go under YYYY/MM of their date.
FOLDERS: dict[str, str] = {
    "decision": "decisions",
    "gotcha": "gotchas",
    "procedure": "procedures",
    "fact": "facts",
    "preference": "preferences",
    "note": "notes",
    "session": "sessions",
    "handoff": "handoffs",
}
PAGE_TYPES: tuple[str, ...] = tuple(FOLDERS)
DATED_TYPES = frozenset({"session", "handoff"})
# The order of the keys we write on a new page; a parsed page keeps its own order.
CORE_KEYS: tuple[str, ...] = (
    "id",
    "title",
    "type",
    "tags",
    "status",
    "created",
    "updated",
    "sources",
)

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(now: float | None = None) -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32 (26 chars)."""
    ms = int((time.time() if now is None else now) * 1000)
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def folder_for(page_type: str, date: str | None = None) -> str:
    """The folder a page of this type lives in (`sessions/2026/11` for dated types)."""
    if page_type not in FOLDERS:
        raise ValueError(f"unknown page type {page_type!r} (one of: {', '.join(PAGE_TYPES)})")
    folder = FOLDERS[page_type]
    if page_type in DATED_TYPES:
        date = date or now_iso()
        folder = f"{folder}/{date[0:4]}/{date[5:7]}"
    return folder


def path_for(title: str, page_type: str, date: str | None = None) -> str:
    """`<folder>/<slug-of-title>.md`."""
    return f"{folder_for(page_type, date)}/{slugify(title)}.md"


def type_from_path(path: str) -> str | None:
    top = path.split("/", 1)[0]
    for page_type, folder in FOLDERS.items():
        if folder == top:
            return page_type
    return None


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple, set)):
        return tuple(str(v).strip() for v in value if v is not None and str(v).strip())
    return (str(value),)


@dataclass(frozen=True)
class Page:
    """A page as stored: its path in the wiki, its front matter and its Markdown body.

    `meta` keeps the front matter exactly as read, in file order, unknown keys included;
    the properties below give the typed view with the fallbacks DESIGN.md describes for
    hand-written pages (title from the first heading or file name, type from the folder).
    """

    path: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    body: str = ""
    has_front_matter: bool = True
    # The front matter as it was written (None: a new page): rendering keeps its style and
    # changes only the keys whose values changed.
    front_text: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @classmethod
    def new(
        cls,
        title: str,
        page_type: str,
        body: str = "",
        *,
        tags: tuple[str, ...] | list[str] = (),
        sources: tuple[str, ...] | list[str] = (),
        status: str = "active",
        path: str | None = None,
        extra: Mapping[str, Any] | None = None,
        date: str | None = None,
    ) -> Page:
        """A fresh page with a new id, timestamps and the conventional path for its type."""
        title = " ".join(title.split())
        if not title:
            raise ValueError("a page needs a title")
        if page_type not in FOLDERS:
            raise ValueError(f"unknown page type {page_type!r} (one of: {', '.join(PAGE_TYPES)})")
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r} (one of: {', '.join(STATUSES)})")
        stamp = date or now_iso()
        meta: dict[str, Any] = {
            "id": new_id(),
            "title": title,
            "type": page_type,
            "tags": list(_as_tuple(list(tags))),
            "status": status,
            "created": stamp,
            "updated": stamp,
            "sources": list(_as_tuple(list(sources))),
        }
        for key, value in (extra or {}).items():
            meta.setdefault(key, value)
        body = body.strip("\n")
        if not body.lstrip().startswith("# "):
            body = f"# {title}\n\n{body}" if body else f"# {title}\n"
        return cls(path or path_for(title, page_type, stamp), meta, body.rstrip("\n") + "\n")

    # The typed view --------------------------------------------------------------

    @property
    def id(self) -> str | None:
        value = self.meta.get("id")
        return str(value) if value not in (None, "") else None

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        if value not in (None, ""):
            return str(value)
        from wiki_memory.pages.markdown import (  # deferred: markdown-it only for a title from a heading
            first_heading,
        )

        heading = first_heading(self.body)
        if heading:
            return heading
        stem = self.path.rsplit("/", 1)[-1].removesuffix(".md")
        return stem.replace("-", " ").replace("_", " ").strip() or stem

    @property
    def type(self) -> str:
        value = self.meta.get("type")
        if isinstance(value, str) and value:
            return value
        return type_from_path(self.path) or "note"

    @property
    def tags(self) -> tuple[str, ...]:
        return _as_tuple(self.meta.get("tags"))

    @property
    def status(self) -> str:
        """The status normalised (`pages.status.normal`): what every reader compares."""
        return normal(self.meta.get("status"))

    @property
    def superseded_by(self) -> str | None:
        """The page that replaces this one, as written (a hand edit may have made it a
        number: `superseded_by: 5` names "5"); None when absent or not a single value."""
        value = self.meta.get("superseded_by")
        if value is None or isinstance(value, (dict, list, tuple, bool)):
            return None
        return str(value).strip() or None

    @property
    def created(self) -> str | None:
        value = self.meta.get("created")
        return str(value) if value else None

    @property
    def updated(self) -> str | None:
        value = self.meta.get("updated")
        return str(value) if value else self.created

    @property
    def sources(self) -> tuple[str, ...]:
        return _as_tuple(self.meta.get("sources"))

    # Changes return new pages -----------------------------------------------------

    def with_meta(self, **changes: Any) -> Page:
        """A copy with front-matter keys set (None removes a key); order is kept."""
        meta = dict(self.meta)
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return replace(self, meta=meta, has_front_matter=True)

    def with_body(self, body: str) -> Page:
        return replace(self, body=body.rstrip("\n") + "\n")

    def with_path(self, path: str) -> Page:
        return replace(self, path=path)
