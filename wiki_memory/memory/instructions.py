"""Instruction files in: the rules and notes a user keeps for their agents imported as
pages (`import_instructions`); writing the durable pages back out is `instructions_export`.

Import rules:
- each section of each file (`memory.instruction_files`) is one page, titled by the user's
  heading, their wording as its body, its source in `sources` (`file:CLAUDE.md`) and in
  `imported` (file, heading, a hash of the text); a file of the code repository is also an
  anchor, so recall and review say "may be stale (CLAUDE.md changed since)" once it changes;
- importing again changes nothing unless a source did: a changed section updates its page, a
  section gone from a file that was read marks its page stale, with the reason;
- the same text in two files (`CLAUDE.md` importing `@AGENTS.md`) is one page with both sources;
- a title that already names a page not imported from there gets the file's name after it.

"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import PageError, WikiMemoryError
from wiki_memory.memory.instruction_files import (
    Section,
    Source,
    display_name,
    folder_files,
    home_files,
    project_files,
    read_sections,
)
from wiki_memory.memory.records import Actor
from wiki_memory.memory.rules import Scrubber
from wiki_memory.pages import FOLDERS, Page, folder_for, parse_page, path_for, slugify
from wiki_memory.pages.drift import blob_of_file, git_dir

if TYPE_CHECKING:
    from wiki_memory.memory.memory import Memory

IMPORTER = Actor()  # the user's own words: committed under their identity


@dataclass(frozen=True)
class PlannedPage:
    """What importing one section does: `created`, `updated`, `unchanged` or `stale`."""

    path: str
    title: str
    type: str
    action: str
    sources: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "type": self.type, "action": self.action,
                "sources": list(self.sources)}  # fmt: skip


@dataclass(frozen=True)
class InstructionImport:
    """An import of instruction files: the files read, each page's fate, the commit."""

    files: tuple[str, ...]
    pages: tuple[PlannedPage, ...] = ()
    commit: str | None = None
    dry_run: bool = False
    redacted: tuple[str, ...] = ()  # kinds of secret replaced by [REDACTED:<kind>]

    def count(self, action: str) -> int:
        return sum(1 for p in self.pages if p.action == action)

    def as_dict(self) -> dict[str, Any]:
        return {"files": list(self.files), "pages": [p.as_dict() for p in self.pages], "commit": self.commit,
                "dry_run": self.dry_run, "redacted": list(self.redacted)}  # fmt: skip


@dataclass
class _Planned:
    sections: list[Section]
    page: Page | None = None
    action: str = "created"
    extra: dict[str, Any] = field(default_factory=dict)


def find_instruction_files(memory: Memory, paths: Sequence[str | Path] = (), home: Path | None = None) -> list[Path]:
    """The files an import reads: those named (a folder: what it holds), else the project's
    and the user's own (see `instruction_files`)."""
    home = home or Path.home()
    root = memory.project.root
    if paths:
        out: list[Path] = []
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_dir():
                out += folder_files(path)
            elif path.is_file():
                out.append(path)
            else:
                raise WikiMemoryError(f"{raw}: no such file or folder")
        return out
    return (project_files(Path(root)) if root is not None else []) + home_files(Path(root) if root else None, home)


def import_instructions(
    memory: Memory, paths: Sequence[str | Path] = (), *, dry_run: bool = False, home: Path | None = None
) -> InstructionImport:
    """Import instruction files as pages (see the module docstring); one commit, or none when
    nothing changed or on `dry_run`."""
    home = home or Path.home()
    root = Path(memory.project.root) if memory.project.root is not None else None
    files = find_instruction_files(memory, paths, home)
    sections = read_sections(files, root, home)
    names = tuple(dict.fromkeys(s.source.name for s in sections))
    # Every file that was read, even when it has no section left (its pages then go stale).
    read_names = {display_name(p, root, home) for p in files} | set(names)
    scrub = Scrubber()  # secrets in the user's files stay out of the wiki, as in every write
    grouped: dict[str, list[Section]] = {}
    for section in sections:
        grouped.setdefault(_text_hash(section.text), []).append(section)
    store = memory.store(create=not dry_run) if (memory.exists or not dry_run) else None
    existing = _imported_pages(store) if store is not None else {}
    plans: list[PlannedPage] = []
    writes: list[Page] = []
    seen_paths: set[str] = set()
    for group in grouped.values():
        first = group[0]
        keys = [s.key for s in group]
        old = next((existing[k] for k in keys if k in existing), None)
        sources = tuple(f"file:{s.source.name}" for s in group)
        imported = [{"from": s.source.name, "section": s.title, "sha": s.sha} for s in group]
        anchors = [a for a in (_anchor(s.source, root) for s in group) if a]
        if old is not None:
            if _same_import(old.meta.get("imported"), imported) and old.status != "stale":
                plans.append(PlannedPage(old.path, old.title, old.type, "unchanged", sources))
                seen_paths.add(old.path)
                continue
            page = Page(old.path, dict(old.meta), _body(first.title, scrub(first.text)))
            # A page gone stale with its section is active again; a person's mark (wrong,
            # archived, superseded) stays: the file changing does not overrule them.
            status = "active" if old.status == "stale" else old.status
            page = page.with_meta(
                imported=imported, sources=_merged(old.sources, sources), status=status, stale_reason=None
            )
            if anchors:
                page = page.with_meta(anchors=anchors)
            action = "updated"
        else:
            title = first.title
            path = _free_path(store, title, first.type, seen_paths)
            if path is None:
                title = f"{first.title} ({first.source.name.rsplit('/', 1)[-1]})"
                path = _free_path(store, title, first.type, seen_paths) or _numbered(store, title, first.type)
            extra: dict[str, Any] = {"imported": imported}
            if anchors:
                extra["anchors"] = anchors
            body = _body(scrub(title), scrub(first.text))
            page = Page.new(scrub(title), first.type, body, sources=list(sources), extra=extra, path=path)
            action = "created"
        seen_paths.add(page.path)
        writes.append(page)
        plans.append(PlannedPage(page.path, page.title, page.type, action, sources))
    writes += _gone_stale(existing, read_names, plans)
    commit = None
    if writes and not dry_run and store is not None:
        created, updated = sum(p.action == "created" for p in plans), sum(p.action == "updated" for p in plans)
        stale = sum(p.action == "stale" for p in plans)
        subject = f"import: {created} new, {updated} updated, {stale} stale pages from instruction files"
        body = "Read: " + ", ".join(names) if names else ""
        # `stale_reason` is ours: a section back in its file takes it off its page.
        results = store.write_many(
            writes, IMPORTER.author(memory.wiki), message=subject, body=body, owns=("stale_reason",)
        )
        commit = next((r.commit for r in results if r.commit), None)
        if commit:
            after_bulk_commit(memory)
    return InstructionImport(tuple(names), tuple(plans), commit, dry_run, tuple(dict.fromkeys(scrub.found)))


def _gone_stale(existing: dict[str, Page], read_names: set[str], plans: list[PlannedPage]) -> list[Page]:
    """Sections gone from a file that was read: their pages go stale, saying why (each added
    to `plans` too)."""
    stale: list[Page] = []
    kept = {p.path for p in plans}
    for key, old in existing.items():
        name = key.split("#", 1)[0]
        if name not in read_names or old.path in kept or old.status != "active":
            continue
        kept.add(old.path)
        reason = f"its section is gone from {name}"
        stale.append(old.with_meta(status="stale", stale_reason=reason))
        plans.append(PlannedPage(old.path, old.title, old.type, "stale", tuple(old.sources)))
    return stale


def after_bulk_commit(memory: Memory) -> None:
    """After a commit of many pages (an import, a prune): the search index takes them and the
    SessionStart context is rebuilt now, so the next prompt or start sees them; never raises
    (both are derived data, rebuilt next time anyway)."""
    from wiki_memory.consolidate import context_build  # deferred: the consolidator, not loaded with Memory
    from wiki_memory.consolidate.state import log  # deferred: the consolidator, not loaded with Memory

    try:
        memory.reindex()
        context_build.refresh(memory.project, memory.store(), memory.index)
    except Exception as e:  # noqa: BLE001 - the pages are committed whatever happens here
        log(f"index or context after a bulk commit failed ({type(e).__name__}: {e})")


def _text_hash(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode()).hexdigest()


def _body(title: str, text: str) -> str:
    return f"# {title}\n\n{text.strip(chr(10))}\n"


def _merged(old: Sequence[str], new: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*old, *new]))


def _same_import(old: Any, new: list[dict[str, str]]) -> bool:
    if not isinstance(old, list):
        return False
    pairs = {(str(e.get("from")), str(e.get("section")), str(e.get("sha"))) for e in old if isinstance(e, dict)}
    return pairs == {(e["from"], e["section"], e["sha"]) for e in new}


def _anchor(source: Source, root: Path | None) -> dict[str, str] | None:
    """The source file as an anchor, when it is a file of the code repository."""
    if root is None or git_dir(root) is None:
        return None
    try:
        rel = source.path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
    blob = blob_of_file(source.path)
    return {"path": rel, "blob": blob} if blob else None


def _imported_pages(store: Any) -> dict[str, Page]:
    """The pages an earlier import wrote, by section key (`file#heading`)."""
    out: dict[str, Page] = {}
    for path, blob in store.page_files():
        data = store.repo[blob].as_raw_string()
        if b"imported:" not in data:
            continue
        try:
            page = parse_page(data.decode("utf-8", "replace"), path)
        except PageError:
            continue
        for entry in page.meta.get("imported") or []:
            if isinstance(entry, dict) and entry.get("from") and entry.get("section") is not None:
                out.setdefault(f"{entry['from']}#{entry['section']}", page)
    return out


def _free_path(store: Any, title: str, page_type: str, planned: set[str]) -> str | None:
    """Where a new page of this title goes, or None when the title names a page already."""
    if store is None:
        path = path_for(title, page_type)
        return None if path in planned else path
    path, exists = store.titled_path(folder_for(page_type), title)
    if exists or path in planned:
        return None
    # The same title under another type's folder is another page of that title: refused too.

    slug = slugify(title)
    for folder in FOLDERS.values():
        if "YYYY" in folder or folder == folder_for(page_type):
            continue
        if store.blob_at(f"{folder}/{slug}.md") is not None:
            return None
    return path


def _numbered(store: Any, title: str, page_type: str) -> str:
    base = path_for(title, page_type).removesuffix(".md")
    n = 2
    while store is not None and store.blob_at(f"{base}-{n}.md") is not None:
        n += 1
    return f"{base}-{n}.md"
