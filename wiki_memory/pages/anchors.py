"""Anchors: the code files a page is about, each with the git blob id it was written against.

In front matter::

    anchors:
      - path: src/auth/client.py
        blob: 3b18e512dba79e4c8300dd08aeb37f8e728b8dad
      - src/auth/admin_client.py        # a bare path: anchored, no blob recorded yet

`path` is relative to the code repository's root, with forward slashes; `blob` is what
`git hash-object <file>` printed when the page was written (None when not known). The index
keeps them as JSON (`anchors_json`), so the hook path can read them with the standard library.
Whether an anchored file changed since is `pages.drift`'s question.

Light on purpose (the hook path reads anchors at SessionStart): no `dataclasses`, no
`typing` at run time.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, NamedTuple

    class _Anchor(NamedTuple):
        path: str
        blob: str | None = None

else:
    _Anchor = namedtuple("Anchor", "path blob", defaults=(None,))

_BLOB = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")


class Anchor(_Anchor):
    """A code file a page is about: `path` (repository-relative) and the `blob` id it was
    written against (None: not recorded). `Anchor(path, blob)`; immutable."""

    __slots__ = ()

    def as_meta(self) -> dict[str, str] | str:
        """How it is written in front matter: a mapping with its blob, or the bare path."""
        return {"path": self.path, "blob": self.blob} if self.blob else self.path


def clean_path(value: str) -> str | None:
    """A repository-relative path with forward slashes, or None for one that escapes the
    repository or is empty (`../x`, `/etc/passwd`)."""
    path = value.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if not path or path.startswith("/") or re.match(r"^[A-Za-z]:/", path):
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def parse_anchors(value: Any) -> tuple[Anchor, ...]:
    """The anchors of a front-matter value, leniently: a list of mappings (`path`, `blob`)
    or bare paths; entries that are neither, or whose path escapes the repository, are
    skipped (a hand edit must not make the page unreadable). Each path appears once."""
    if value is None:
        return ()
    items: Iterable[Any] = value if isinstance(value, (list, tuple)) else [value]
    out: dict[str, Anchor] = {}
    for item in items:
        raw_path: Any
        raw_blob: Any = None
        if isinstance(item, str):
            raw_path = item
        elif isinstance(item, dict):
            raw_path, raw_blob = item.get("path"), item.get("blob")
        else:
            continue
        if not isinstance(raw_path, str):
            continue
        path = clean_path(raw_path)
        if path is None:
            continue
        blob = raw_blob.strip().lower() if isinstance(raw_blob, str) else None
        out.setdefault(path, Anchor(path, blob if blob and _BLOB.match(blob) else None))
    return tuple(out.values())


def anchors_json(anchors: Iterable[Anchor]) -> str | None:
    """The index's column: `[{"path": ..., "blob": ...}, ...]`, or None for no anchors."""
    rows = [{"path": a.path, "blob": a.blob} for a in anchors]
    return json.dumps(rows, separators=(",", ":")) if rows else None


def anchors_from_json(text: str | None) -> tuple[Anchor, ...]:
    """The anchors of an index row (see `anchors_json`); bad JSON reads as none."""
    if not text:
        return ()
    try:
        rows = json.loads(text)
    except ValueError:
        return ()
    return parse_anchors(rows)
