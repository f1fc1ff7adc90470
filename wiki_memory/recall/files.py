"""The pages about one code file: anchored to it (`pages.anchors`), or naming its path.

A file is named by its path relative to the code repository's root (`src/auth/client.py`).
A page that names it as written counts, and so does one that names a shorter tail of it
with at least one folder (`auth/client.py`), but not one whose path only ends the same
way (`services/export/package.json` does not name the root `package.json`).
"""

from __future__ import annotations

import json
import os
import re

from wiki_memory.recall.find import Candidate

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

ROWS = 200  # chunks read for the path's words
_TOKEN = re.compile(r"[^\W_]+")
_BEFORE = re.compile(r"[\w./@-]$")
_AFTER = re.compile(r"^(?:[\w/@-]|\.\w)")


def relative(file: str, root: Path | None, cwd: str | None = None) -> str | None:
    """`file` relative to the code repository's root, with forward slashes; None when it is
    outside it or empty."""
    if not file or "\n" in file:
        return None
    path = file.replace("\\", "/")
    if not os.path.isabs(path):
        base = cwd or (str(root) if root else None)
        path = os.path.join(base, path) if base else path
    path = os.path.normpath(path).replace("\\", "/")
    if root is not None and os.path.isabs(path):
        top = os.path.normpath(str(root)).replace("\\", "/").rstrip("/")
        if path == top or not path.startswith(top + "/"):
            return None
        path = path[len(top) + 1 :]
    path = path.lstrip("/")
    return path or None


def names(text: str, rel: str) -> bool:
    """Does `text` name the file `rel` (or a tail of it with a folder) as a whole path?"""
    parts = rel.split("/")
    tails = ["/".join(parts[i:]) for i in range(len(parts)) if i == 0 or len(parts) - i >= 2]
    low = text.lower()
    for tail in tails:
        needle = tail.lower()
        start = 0
        while (at := low.find(needle, start)) >= 0:
            start = at + 1
            if at and _BEFORE.search(low[:at]):
                continue
            if _AFTER.match(low[at + len(needle) :]):
                continue
            return True
    return False


def pages_about(conn: sqlite3.Connection, rel: str) -> list[Candidate]:
    """The pages anchored to `rel` (first), then those naming it, as candidates (`exact`:
    anchored)."""
    found: dict[str, Candidate] = {}
    like = '%"path":' + json.dumps(rel).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    for path, title, type_, status, anchors in conn.execute(
        "SELECT path, title, type, status, anchors FROM pages WHERE anchors LIKE ? ESCAPE '\\'", (like,)
    ):
        try:
            listed = {a.get("path") for a in json.loads(anchors) if isinstance(a, dict)}
        except (ValueError, TypeError):
            continue
        if rel in listed:
            found[path] = Candidate(path, title, type_, status, anchors, 1.0, (), (), 0, True, "", 0.0)
    for path in [p for p, c in found.items() if not c.chunk]:
        first = conn.execute("SELECT text FROM chunks WHERE page = ? ORDER BY ordinal LIMIT 1", (path,)).fetchone()
        if first:
            found[path] = found[path]._replace(chunk=first[0])
    parts = rel.split("/")
    tokens = [t.lower() for t in _TOKEN.findall("/".join(parts[-2:]))]
    if not tokens:
        return list(found.values())
    phrase = '"' + " ".join(tokens).replace('"', '""') + '"'
    rows = conn.execute(
        "SELECT c.page, c.text, p.title, p.type, p.status, p.anchors FROM chunks_fts f "
        "JOIN chunks c ON c.id = f.rowid JOIN pages p ON p.path = c.page WHERE chunks_fts MATCH ? LIMIT ?",
        (phrase, ROWS),
    ).fetchall()
    for page, text, title, type_, status, anchors in rows:
        if page in found:
            continue
        if names(text, rel) or names(title, rel):
            found[page] = Candidate(page, title, type_, status, anchors, 0.9, (), (), 0, False, text, 0.0)
    return sorted(found.values(), key=lambda c: (not c.exact, c.path))
