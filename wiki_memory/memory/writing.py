"""Writing memory, with the rules every front end shares: a title names one page (of one
type), an update keeps the page's id, tags, status, sources and unknown keys unless told
otherwise, empty input is refused, and a person's uncommitted edit of a page is committed
as theirs before anyone writes over it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from glob import escape as glob_escape
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import ConflictError
from wiki_memory.memory import edits
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.reading import Reading, existing_page
from wiki_memory.memory.records import Actor, Deleted, Written
from wiki_memory.memory.rules import (
    InputError,
    Scrubber,
    check_status,
    check_tags,
    check_text,
    check_title,
    check_type,
    utf8,
)
from wiki_memory.pages import FOLDERS, STATUSES, Page, folder_for, slugify
from wiki_memory.pages.model import DATED_TYPES
from wiki_memory.store.paths import normalize_path

if TYPE_CHECKING:
    from pathlib import Path

    from wiki_memory.store import Edit, Store, WriteResult

PERSON = Actor()


def with_sources(*groups: Sequence[str] | None) -> list[str]:
    """The sources of the groups in turn, each once."""
    out: list[str] = []
    for group in groups:
        for source in group or ():
            if source and source not in out:
                out.append(source)
    return out


#: The front-matter keys a status change sets or clears (a cleared one is dropped, not kept
#: as a key only the old page had).
OWNED = ("superseded_by",)


def write_as(store: Store, pages: list[Page], actor: Actor, wiki: Path, **how: Any) -> list[WriteResult]:
    """`pages` written in one commit by `actor` (its author, session and agent), with
    `how` as `Store.write_many` takes it (message, trailers, ...)."""
    return store.write_many(pages, actor.author(wiki), session_id=actor.session_id, agent=actor.agent, **how)


@dataclass(frozen=True)
class EditRequest:
    """One change to part of a page, as `Memory.edit` takes it: `page` (a path, title or
    id), the `operation` (one of `edits.OPERATIONS`) and what that operation needs. Front
    ends build one from their input and hand it to `Memory.apply_edit`."""

    page: str
    operation: str
    text: str | None = None
    heading: str | None = None
    find: str | None = None
    replace: str | None = None
    expected_count: int = 1
    status: str | None = None
    superseded_by: str | None = None
    actor: Actor = PERSON


class Writing:
    """The operations that write; each is one commit (or none, when nothing changes)."""

    def __init__(self, context: MemoryContext, reading: Reading) -> None:
        self.context = context
        self.reading = reading

    def write(
        self,
        title: str,
        body: str,
        type: str = "note",
        *,
        tags: Sequence[str] | None = None,
        path: str | None = None,
        status: str | None = None,
        sources: Sequence[str] = (),
        actor: Actor = PERSON,
    ) -> Written:
        """Create or update a page. A title that exists updates that page (same id, history
        kept; tags, status and sources kept unless given); the same title under another
        type is refused (pass `path` to update that page)."""
        scrub = Scrubber()
        title = scrub(check_title(title))
        body = scrub(check_text("body", body))
        check_type(type)
        clean_tags = check_tags(tags)
        clean_tags = scrub.all(clean_tags) if clean_tags is not None else None
        check_status(status)
        extra_sources = [s.strip() for s in sources if s and s.strip()]
        for source in extra_sources:
            utf8("source", source)
        extra_sources = scrub.all(extra_sources)
        if path:
            utf8("path", path)
        explicit = bool(path and path.strip())
        target = normalize_path(path) if path and explicit else ""
        store = self.context.store(create=True)
        with store.lock:
            if not explicit:
                target = self._path_for_title(title, type)
            # A person's uncommitted edit of this page first, as theirs, so none is overwritten.
            # Why only this page: scanning the whole wiki for edits costs every write time that
            # grows with the wiki; other pages' edits are not at risk and wait for `watch`.
            store.commit_pending(paths=[target])
            existing = existing_page(store, target)
            page = Page.new(
                title,
                type,
                body,
                tags=clean_tags if clean_tags is not None else (list(existing.tags) if existing else []),
                sources=with_sources(existing.sources if existing else (), extra_sources, [actor.source or ""]),
                status=status or (existing.status if existing and existing.status in STATUSES else "active"),
                path=target,
            )
            result = write_as(store, [page], actor, self.context.wiki)[0]
        return Written.of(result, redacted=scrub.found)

    def _path_for_title(self, title: str, page_type: str) -> str:
        """The page titled exactly `title` in its type's folder, or where a new one goes (a
        file name belongs to one page: see `Store.titled_path`). Called under the lock."""
        store = self.context.store()
        folder = folder_for(page_type)
        # A person's uncommitted pages of this name first, as theirs, so the name chosen sees them.
        slug = slugify(title)
        on_disk = [p.relative_to(store.root).as_posix() for p in (store.root / folder).glob(f"{glob_escape(slug)}*.md")]
        if on_disk:
            store.commit_pending(paths=on_disk)
        target, exists = store.titled_path(folder, title)
        if not exists and page_type not in DATED_TYPES:
            self._refuse_other_type(title, page_type)
        return target

    def _refuse_other_type(self, title: str, page_type: str) -> None:
        # Trigger: the same title already has a page of another type (gotchas/x.md vs notes/x.md).
        # Why: writing would make a second page of that title; updating it would change its type.
        store = self.context.store()
        for other_type, folder in FOLDERS.items():
            if other_type == page_type or other_type in DATED_TYPES:
                continue
            other, exists = store.titled_path(folder, title)
            if exists:
                raise ConflictError(
                    f"a {other_type} page titled like this exists: {other}; pass path={other!r} (--path) to "
                    "update it, or choose another title"
                )

    def edit(self, request: EditRequest) -> Written:
        """Make the change `request` asks for (see `Memory.edit`). Refuses rather than
        guesses: nothing is written when the heading or text is not found as asked."""
        operation, actor = request.operation, request.actor
        if operation not in edits.OPERATIONS:
            raise InputError(f"unknown operation {operation!r}: one of {', '.join(edits.OPERATIONS)}")
        store = self.context.store()
        with store.lock:
            path, current = self.reading.current(request.page)  # what the person sees, not a stale copy
            updated, replaced = _edited(current, request)
            if operation == "set_status":
                updated = self._with_status(current, request.status, request.superseded_by)
            if not updated.body.strip() or updated.body.strip() == f"# {updated.title}":
                raise InputError("the edit would leave the page empty; delete the page to remove it")
            check_text("body", updated.body)
            scrub = Scrubber()
            updated = updated.with_body(scrub(updated.body))
            if actor.source and updated.has_front_matter:
                updated = updated.with_meta(sources=with_sources(updated.sources, [actor.source]))
            message = f"update: {path.removesuffix('.md')} ({operation})"
            owns = OWNED if operation == "set_status" else ()
            result = write_as(store, [updated], actor, self.context.wiki, message=message, owns=owns)[0]
        return Written.of(result, operation, replaced, scrub.found)

    def _with_status(self, page: Page, status: str | None, superseded_by: str | None) -> Page:
        if status not in STATUSES:
            raise InputError(f"set_status needs `status`: one of {', '.join(STATUSES)}")
        successor = None
        if superseded_by:
            successor = self.reading.find(superseded_by)
        elif status == "superseded":
            raise InputError("a superseded page names its successor: give `superseded_by`")
        return page.with_meta(status=status, superseded_by=successor if status == "superseded" else None)

    def move(self, ref: str, dest: str | None = None, *, title: str | None = None, actor: Actor = PERSON) -> Written:
        """Move or retitle a page (its id stays): to `dest`, or with `title` alone to the new
        title's file name."""
        if not (dest and dest.strip()) and title is None:
            raise InputError("give a destination path, or a new title")
        new_title = Scrubber()(check_title(title)) if title is not None else None
        if dest:
            utf8("destination", dest)
        store = self.context.store()
        with store.lock:  # (the store commits a person's edits of both paths first)
            result = store.move(
                self.reading.find(ref),
                dest.strip() if dest and dest.strip() else None,
                actor.author(self.context.wiki),
                title=new_title,
                session_id=actor.session_id,
                agent=actor.agent,
            )
        return Written.of(result, "move")

    def delete(self, ref: str, *, actor: Actor = PERSON) -> Deleted:
        """Remove a page (one commit; it stays in history)."""
        store = self.context.store()
        with store.lock:
            path = self.reading.find(ref)  # (the store commits a person's edit of it first)
            commit = store.delete(path, actor.author(self.context.wiki), session_id=actor.session_id, agent=actor.agent)
        return Deleted(path, commit)

    def revert(self, rev: str, *, actor: Actor = PERSON) -> tuple[str, str]:
        """Undo a commit with a new one; (the commit undone, the new commit)."""
        store = self.context.store()
        with store.lock:  # (the store commits a person's edits of the pages it reverts first)
            target = self.reading.resolve_rev(rev)
            new = store.revert(target, actor.author(self.context.wiki), session_id=actor.session_id, agent=actor.agent)
        return target, new

    def commit_hand_edits(self, paths: Sequence[str] | None = None) -> list[Edit]:
        """Commit what a person changed in the wiki folder as their edits, one commit per
        page (`edit: <path>`), renames followed."""
        store = self.context.store()
        return store.commit_edits(list(paths) if paths is not None else None, PERSON.author(self.context.wiki))


def _edited(page: Page, request: EditRequest) -> tuple[Page, int | None]:
    """The page with the text change of `request` made (and how many times `find_replace`
    replaced); `set_status` changes no text."""
    operation, text, heading = request.operation, request.text, request.heading
    if heading is not None:
        utf8("heading", heading)
    if operation == "append":
        return page.with_body(edits.append(page.body, check_text("text", text), heading)), None
    if operation == "replace_section":
        if not heading:
            raise InputError("replace_section needs `heading` (the section's heading) and `text`")
        if text is not None and text.strip():
            check_text("text", text)
        return page.with_body(edits.replace_section(page.body, heading, text or "")), None
    if operation == "find_replace":
        find, replace = request.find, request.replace
        if find is None or replace is None:
            raise InputError("find_replace needs `find` and `replace` (and `expected_count` if not 1)")
        utf8("find", find)
        utf8("replace", replace)
        body, replaced = edits.find_replace(page.body, find, replace, request.expected_count)
        return page.with_body(body), replaced
    return page, None
