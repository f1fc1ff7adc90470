"""The moments table beside the index (`<project home>/moments.tsv`): for every active gotcha
and procedure, the commands and the error signatures it is about, under their program (see
`moments`). It is derived from the index and rebuilt whenever the index file changed since it
was written (a `stat` of the index and its WAL tells); each page's entries are cached by its
blob, so a rebuild parses only the pages that changed. Standard library only (the hook path).
"""

from __future__ import annotations

import json
import os

from wiki_memory.recall.moments import HIDDEN, KINDS, entries_of, filed_under, longest_word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from wiki_memory.config import Project


TABLE = "moments.tsv"
VERSION = 3  # of the table and cache formats
BUSY_MS = 2000  # how long a rebuild of the table waits on a writer's lock
CACHE = "moments-pages.json"  # each page's entries by its blob: a rebuild parses only what changed


def table_path(project: Project) -> str:
    return os.path.join(str(project.home), TABLE)


def _stamp(project: Project) -> list[int]:
    """What changes whenever the index file is written: size and time of it and its WAL."""
    out: list[int] = []
    base = str(project.index_path)
    for path in (base, base + "-wal"):
        try:
            st = os.stat(path)
            out += [st.st_size, st.st_mtime_ns]
        except OSError:
            out += [-1, -1]
    return out


def _header(text: str) -> dict[str, Any]:
    try:
        meta = json.loads(text.split("\n", 1)[0])
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) and meta.get("version") == VERSION else {}


def _stored(project: Project) -> str:
    try:
        with open(table_path(project), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def table(project: Project) -> str:
    """The table's text, rebuilt first when the index changed since it was written."""
    text = _stored(project)
    meta = _header(text)
    stamp = _stamp(project)
    if meta and meta.get("stamp") == stamp:
        return text
    if meta and meta.get("generation") is not None and meta.get("generation") == _generation(project):
        # The file was touched (a WAL checkpointed, a connection closed), its pages were not.
        body = text.split("\n", 1)[1] if "\n" in text else ""
        text = json.dumps({**meta, "stamp": stamp}) + "\n" + body
        _write(project, text)
        return text
    return refresh(project)


def _generation(project: Project) -> str | None:
    """The index's generation (it moves with every write to it), or None."""
    import _sqlite3  # deferred: SQLite loads only when the table is stale, not before every command

    from wiki_memory.index import readonly  # deferred: as _sqlite3

    try:
        conn = readonly.connect(project.index_path, BUSY_MS)
    except _sqlite3.Error:
        return None
    if conn is None:
        return None
    try:
        return readonly.generation(conn)
    except _sqlite3.Error:
        return None
    finally:
        conn.close()


def _write(project: Project, text: str, name: str = TABLE) -> None:
    path = os.path.join(str(project.home), name)
    if not os.path.isdir(str(project.home)):
        return  # a home removed under a background worker is not made anew
    try:
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError:
        pass  # a read-only home: the hook rebuilds it in memory each time, still correct


def refresh(project: Project) -> str:
    """Rebuild the table from the index (nothing when there is no index yet); its text. Each
    page's entries are kept by its blob (`moments-pages.json`), so a rebuild after a write
    reads and parses only the pages that changed."""
    stamp = _stamp(project)
    root = str(project.root) if project.root else None
    cache_path = os.path.join(str(project.home), CACHE)
    try:
        with open(cache_path, encoding="utf-8") as f:
            cached = json.load(f)
        if not isinstance(cached, dict) or cached.get("version") != VERSION or cached.get("root") != root:
            cached = {}
    except (OSError, ValueError):
        cached = {}
    known: dict[str, Any] = cached.get("pages") or {}
    generation, pages = _pages_from_index(project, known) if stamp[0] >= 0 else (None, {})
    by_command: dict[str, list[dict[str, Any]]] = {}
    by_signature: dict[str, list[dict[str, Any]]] = {}
    for path, page in pages.items():
        if "entries" not in page:
            page["entries"] = entries_of({**page, "path": path}, root)
            page.pop("text", None)
        for entry in page["entries"]:
            if entry["on"] == "command":
                by_command.setdefault(entry["cmd"][0], []).append(entry)
            else:
                by_signature.setdefault(filed_under(entry["sig"]), []).append(entry)
    lines = [json.dumps({"version": VERSION, "stamp": stamp, "generation": generation, "pages": len(pages)})]
    lines += [f"c {k}\t{json.dumps(v)}" for k, v in sorted(by_command.items()) if "\t" not in k and "\n" not in k]
    lines += [f"s {k}\t{json.dumps(v)}" for k, v in sorted(by_signature.items()) if "\t" not in k and "\n" not in k]
    # The longest word of each error: a line of output without any of them names none of them.
    keys = sorted({longest_word(e["sig"]) for entries in by_signature.values() for e in entries} - {""})
    lines.append(f"k \t{json.dumps(keys)}")
    text = "\n".join(lines) + "\n"
    _write(project, text)
    _write(project, json.dumps({"version": VERSION, "root": root, "pages": pages}), CACHE)
    return text


def _pages_from_index(project: Project, known: dict[str, Any]) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The index's generation, and every gotcha and procedure it holds, not hidden: from
    `known` (path -> what was parsed of it) when its blob and title are the same, else with
    its text, to be parsed."""
    import _sqlite3  # deferred: SQLite loads only when the table is stale, not before every command

    from wiki_memory.index import readonly  # deferred: as _sqlite3

    try:
        conn = readonly.connect(project.index_path, BUSY_MS)
    except _sqlite3.Error:
        return None, {}
    if conn is None:
        return None, {}
    try:
        conn.execute("BEGIN")  # one snapshot: the generation read is the pages'
        generation = readonly.generation(conn)
        found: dict[str, dict[str, Any]] = {}
        fresh: list[str] = []
        for path, title, kind, status, blob in readonly.pages_of_types(conn, KINDS):
            if status in HIDDEN:
                continue
            page = {"title": title, "type": kind, "status": status, "blob": blob}
            was = known.get(path)
            if isinstance(was, dict) and all(was.get(k) == v for k, v in page.items()) and "entries" in was:
                found[path] = was
            else:
                found[path] = {**page, "text": ""}
                fresh.append(path)
        for path, heading, text in readonly.chunk_texts(conn, fresh):
            title = found[path]["title"]
            found[path]["text"] += (f"\n\n## {heading}\n\n" if heading and heading != title else "\n\n") + text
        return generation, found
    except _sqlite3.Error:
        return None, {}
    finally:
        conn.close()
