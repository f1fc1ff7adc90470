"""A whole wiki moved out and back in: `export --format markdown|json` writes every page as
it is stored (front matter included) and the history as a git bundle; `import wiki PATH`
reads such an export into a project: a project with no wiki yet gets the whole history
(every commit, as it was); one with a wiki gets the pages, byte for byte, in one commit.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.context import write_project_file
from wiki_memory.memory.instructions import after_bulk_commit
from wiki_memory.memory.records import Actor
from wiki_memory.store.create import create_wiki_from_bundle, history_bundle
from wiki_memory.store.paths import normalize_path

if TYPE_CHECKING:
    from wiki_memory.memory.memory import Memory

FORMAT = "wiki-memory-export/1"
MANIFEST = ".wiki-memory-export.json"  # beside the pages of a Markdown export
BUNDLE = ".wiki-memory-history.bundle"  # the history, beside them (`git clone` reads it)


@dataclass(frozen=True)
class WikiExport:
    """Where an export went, how many pages, in which format."""

    path: Path
    format: str
    pages: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "format": self.format, "pages": self.pages}


@dataclass(frozen=True)
class WikiImport:
    """What an import of an export wrote: new and changed pages, unchanged ones, the commit."""

    source: str
    written: tuple[str, ...]
    unchanged: int
    commit: str | None
    with_history: bool = False  # the wiki was made from the export's history

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "written": list(self.written), "unchanged": self.unchanged,
                "commit": self.commit, "with_history": self.with_history}  # fmt: skip


def _pages(memory: Memory) -> list[tuple[str, bytes]]:
    if not memory.exists:
        raise WikiMemoryError(f"no wiki yet for {memory.project.name}: nothing to export")
    store = memory.store()
    return [(path, store.repo[blob].as_raw_string()) for path, blob in store.page_files()]


def _log(memory: Memory) -> list[dict[str, str]]:
    return [{"commit": c.id, "author": c.author, "date": c.time, "subject": c.subject}
            for c in memory.history(None, n=None).commits]  # fmt: skip


def export_wiki(memory: Memory, fmt: str, out: Path) -> WikiExport:
    """Write every page to `out`: a folder of Markdown files (`markdown`), or one JSON file
    (`json`; `out` a folder gets `<project>.json` in it)."""
    pages = _pages(memory)
    project = {"id": memory.project.id, "name": memory.project.name}
    if fmt == "markdown":
        out.mkdir(parents=True, exist_ok=True)
        for path, data in pages:
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        manifest = {"format": FORMAT, "project": project, "pages": [p for p, _ in pages], "log": _log(memory)}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (out / BUNDLE).write_bytes(history_bundle(memory.wiki))
        return WikiExport(out, fmt, len(pages))
    if fmt == "json":
        target = out / f"{memory.project.name}.json" if out.is_dir() else out
        target.parent.mkdir(parents=True, exist_ok=True)
        doc = {"format": FORMAT, "project": project,
               "pages": [{"path": p, "text": d.decode("utf-8", "surrogateescape")} for p, d in pages],
               "log": _log(memory), "history": base64.b64encode(history_bundle(memory.wiki)).decode()}  # fmt: skip
        target.write_text(
            json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8", errors="surrogateescape"
        )
        return WikiExport(target, fmt, len(pages))
    raise WikiMemoryError(f"unknown format {fmt!r}: markdown or json")


def read_export(path: Path) -> tuple[list[tuple[str, bytes]], bytes | None]:
    """The pages of an export (a JSON file, or a folder of Markdown files), and its history
    bundle when it has one."""
    if path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        except ValueError as e:
            raise WikiMemoryError(f"{path}: not a wiki-memory export ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("pages"), list):
            raise WikiMemoryError(f"{path}: not a wiki-memory export (no {FORMAT!r} format)")
        pages = [(str(p["path"]), str(p["text"]).encode("utf-8", "surrogateescape")) for p in doc["pages"]]
        history = doc.get("history")
        return pages, base64.b64decode(history) if isinstance(history, str) and history else None
    if path.is_dir():
        pages = sorted(
            (f.relative_to(path).as_posix(), f.read_bytes())
            for f in path.rglob("*.md")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
        )
        return pages, (path / BUNDLE).read_bytes() if (path / BUNDLE).is_file() else None
    raise WikiMemoryError(f"{path}: no such file or folder")


def import_wiki(memory: Memory, path: Path, *, dry_run: bool = False) -> WikiImport:
    """Bring an export into this project: with no wiki yet, the wiki is made from the export's
    history (every commit); else its pages are written byte for byte in one commit (a page
    already there with other bytes is replaced; the old version stays in the history)."""
    pages, history = read_export(path)
    for rel, _data in pages:
        if normalize_path(rel, page=False) != rel:
            raise WikiMemoryError(f"{path}: {rel!r} is not a clean wiki path; nothing was imported")
    if history is not None and not memory.exists:
        if dry_run:
            return WikiImport(str(path), tuple(sorted(p for p, _ in pages)), 0, None, with_history=True)
        head = create_wiki_from_bundle(memory.wiki, history)
        write_project_file(memory.project)
        after_bulk_commit(memory)
        return WikiImport(str(path), tuple(sorted(p for p, _ in pages)), 0, head, with_history=True)
    store = memory.store(create=not dry_run) if (memory.exists or not dry_run) else None
    changes: dict[str, bytes | None] = {}
    for rel, data in pages:
        blob = store.blob_at(rel) if store is not None else None
        if blob is None or store is None or store.repo[blob].as_raw_string() != data:
            changes[rel] = data
    commit = None
    if changes and not dry_run and store is not None:
        commit = store.commit(
            changes, f"import: {len(changes)} pages from {path.name}", Actor().author(memory.wiki), body=f"From {path}."
        )
        if commit:
            after_bulk_commit(memory)
    return WikiImport(str(path), tuple(sorted(changes)), len(pages) - len(changes), commit)
