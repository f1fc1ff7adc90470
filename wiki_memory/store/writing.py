"""Writing pages: create or update, move or retitle, delete, revert a commit, and the
fast-forward that sync lands. Each is one commit through the committer, after a person's
uncommitted edits of the same files are committed as theirs."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from wiki_memory.errors import ConflictError, NotFoundError, PageError, PathError
from wiki_memory.pages import Page, now_iso, parse_page, render_page, slugify
from wiki_memory.store.commits import Committer
from wiki_memory.store.context import Context
from wiki_memory.store.edits import HandEdits
from wiki_memory.store.history import History
from wiki_memory.store.paths import check_inside, normalize_path
from wiki_memory.store.reading import Reader
from wiki_memory.store.records import Author, WriteResult

MAX_PAGE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Note:
    """What a commit says besides its subject: the session and agent that wrote it (the
    `Session-Id:` and `Agent:` trailers), a body, and extra trailer lines before those
    (`("Reason", "...")`)."""

    session_id: str | None = None
    agent: str | None = None
    body: str = ""
    trailers: Sequence[tuple[str, str]] = ()


class Writer:
    """The part of a `Store` that writes pages and moves the branch."""

    def __init__(self, context: Context, reader: Reader, edits: HandEdits, committer: Committer, history: History):
        self.context = context
        self.reader = reader
        self.edits = edits
        self.committer = committer
        self.history = history

    def _commit(
        self, changes: Mapping[str, bytes | None], subject: str, author: Author, note: Note, body: str = ""
    ) -> str | None:
        """One commit of `changes`, the person's edits of those files already committed."""
        message = self.committer.message(subject, note.session_id, note.agent, body or note.body, note.trailers)
        return self.committer.commit(changes, message, author)

    def write_many(
        self, pages: Iterable[Page], author: Author, note: Note, subject: str | None, owns: Collection[str]
    ) -> list[WriteResult]:
        """Create or update pages in one commit (see `Store.write_many`); `subject` None:
        one that names them."""
        pages = [page.with_path(normalize_path(page.path)) for page in pages]
        for page in pages:
            check_inside(self.context.root, page.path)
        with self.context.lock:
            self.edits.before_write(page.path for page in pages)
            changes: dict[str, bytes | None] = {}
            results: list[tuple[str, bool, Page]] = []
            for page in pages:
                path = page.path
                merged, created, text = self._merge_with_existing(page, owns)
                if text is not None:
                    changes[path] = text
                results.append((path, created, merged))
            subject = subject or self._subject(results, changes)
            commit = self._commit(changes, subject, author, note) if changes else None
            return [
                WriteResult(path, commit if path in changes else None, created, page) for path, created, page in results
            ]

    @staticmethod
    def _subject(results: list[tuple[str, bool, Page]], changes: Mapping[str, object]) -> str:
        changed = [(path, created) for path, created, _ in results if path in changes]
        if len(changed) == 1:
            path, created = changed[0]
            return f"{'remember' if created else 'update'}: {path.removesuffix('.md')}"
        return f"remember: {len(changed)} pages ({', '.join(p.removesuffix('.md') for p, _ in changed)})"

    def _merge_with_existing(self, page: Page, owns: Collection[str] = ()) -> tuple[Page, bool, bytes | None]:
        """(page as it will be written, created?, its bytes or None if nothing changes)."""
        blob = self.reader.blob_at(page.path)
        existing: Page | None = None
        if blob is not None:
            old_data = self.reader.data(blob)
            try:
                old_text = old_data.decode("utf-8")
            except UnicodeDecodeError as e:
                # Saved by hand in another encoding: decoded with replacement characters and
                # written back, the person's text would be damaged for good.
                raise PageError(
                    f"{page.path} is not UTF-8 text (byte 0x{old_data[e.start]:02x} at offset {e.start}: saved in "
                    "another encoding, such as Latin-1?); nothing was written: convert it to UTF-8 "
                    "(`iconv -f latin1 -t utf-8`) and write again"
                ) from None
            try:
                existing = parse_page(old_text, page.path)
            except PageError:
                existing = None  # a broken page is replaced; its text stays in history
        meta = dict(page.meta)
        if existing is not None:
            # Keys only the old page had survive, unless the writer owns them; identity and
            # birth date are the old page's.
            merged = {**{k: v for k, v in existing.meta.items() if k not in owns}, **meta}
            for key in ("id", "created"):
                if existing.meta.get(key):
                    merged[key] = existing.meta[key]
            candidate = Page(page.path, merged, page.body, front_text=existing.front_text)
            unchanged = render_page(candidate.with_meta(updated=existing.meta.get("updated"))) == render_page(existing)
            if unchanged:
                return existing, False, None
        else:
            candidate = page
        new = candidate.with_meta(updated=now_iso()) if existing is not None else candidate
        if not new.meta.get("created"):
            new = new.with_meta(created=new.meta.get("updated") or now_iso())
        data = render_page(new).encode("utf-8")
        if len(data) > MAX_PAGE_BYTES:
            raise PageError(f"{page.path}: {len(data):,} bytes is over the {MAX_PAGE_BYTES:,}-byte page limit")
        return new, existing is None and blob is None, data

    def move(self, src: str, dst: str | None, author: Author, title: str | None, note: Note) -> WriteResult:
        """Rename a page, retitle it, or both (see `Store.move`)."""
        src = normalize_path(src)
        with self.context.lock:
            self.edits.before_write([src] + ([normalize_path(dst)] if dst else []))
            page = self.reader.read(src)
            if title:
                title = " ".join(title.split())
                page = page.with_meta(title=title)
                first, _, rest = page.body.partition("\n")
                if first.startswith("# "):
                    page = page.with_body(f"# {title}\n{rest}")
            if dst:
                dst = normalize_path(dst)
            elif title and "/" in src:
                # The new title's name in its folder, one no other page holds (see `titled_path`);
                # a page whose name the new title also makes stays where it is.
                folder = src.rsplit("/", 1)[0]
                dst, exists = self.reader.titled_path(folder, page.title)
                if exists and dst != src:
                    raise ConflictError(f"{dst} is already titled {page.title!r}; choose another title")
                if src in {path for path, _ in self.reader.slug_family(folder, page.title)}:
                    dst = src
            elif title:
                dst = f"{slugify(page.title)}.md"
            else:
                dst = src
            check_inside(self.context.root, dst)
            if dst == src and not title:
                raise ConflictError(f"{src} is already at {dst}")
            self.edits.before_write([dst])
            if dst != src and self.reader.exists(dst):
                raise ConflictError(f"{dst} already exists; move or remove it first")
            if page.has_front_matter:
                page = page.with_meta(updated=now_iso())
            changes: dict[str, bytes | None] = {src: None}
            changes[dst] = render_page(page).encode("utf-8")
            subject = (
                f"move: {src.removesuffix('.md')} -> {dst.removesuffix('.md')}"
                if dst != src
                else f"retitle: {src.removesuffix('.md')}"
            )
            commit = self._commit(changes, subject, author, note)
            return WriteResult(dst, commit, False, page.with_path(dst))

    def delete(self, path: str, author: Author, note: Note) -> str:
        """Remove a page (it stays in history); the commit id."""
        path = normalize_path(path)
        with self.context.lock:
            self.edits.before_write([path])
            if not self.reader.exists(path):
                raise NotFoundError(f"no page {path!r}")
            commit = self._commit({path: None}, f"forget: {path.removesuffix('.md')}", author, note)
            assert commit is not None
            return commit

    def revert(self, rev: str, author: Author, note: Note) -> str:
        """Undo one commit with a new commit (see `Store.revert`)."""
        with self.context.lock:
            target = self.reader.commit_at(rev)
            if target is None:
                raise NotFoundError("the wiki has no commits yet")
            if len(target.parents) > 1:
                raise ConflictError(f"{target.id.decode()[:8]} is a merge; revert its changes page by page")
            if not target.parents:
                raise ConflictError("the first commit of the wiki cannot be reverted")
            changed = self.history.changed_files(self.reader.commit_object(target.parents[0]).tree, target.tree)
            self.edits.before_write(path for path, _, _ in changed)
            short = target.id.decode()[:8]
            changes = {path: self._undone(path, old, new, short) for path, old, new in changed}
            subject = target.message.decode("utf-8", "replace").split("\n", 1)[0]
            body = f"This reverts commit {target.id.decode()}."
            commit = self._commit(changes, f"revert: {subject}", author, note, body)
            if commit is None:
                raise ConflictError(f"{target.id.decode()[:8]} is already undone; nothing to revert")
            return commit

    def _undone(self, path: str, old_blob: bytes | None, new_blob: bytes | None, short: str) -> bytes | None:
        """What `path` becomes when the change old_blob -> new_blob (of commit `short`) is
        undone: its old content, or, if it changed again since, the undo merged into that."""
        current = self.reader.blob_at(path)
        wanted = self.reader.data(old_blob) if old_blob else None
        if current == new_blob:
            return wanted
        if current is None or new_blob is None or old_blob is None:
            raise ConflictError(f"{path} changed again after {short}; revert the later change first or edit the page")
        base = self.reader.data(new_blob).splitlines(True)
        ours = self.reader.data(current).splitlines(True)
        theirs = wanted.splitlines(True) if wanted else []
        import merge3  # deferred: only a person's edit merged under an agent's needs it

        merged = merge3.Merge3(base, ours, theirs)
        if any(group[0] == "conflict" for group in merged.merge_groups()):
            raise ConflictError(
                f"{path} changed again after {short} on the same lines; revert the later change first or edit the page"
            )
        return b"".join(merged.merge_lines())

    def advance(self, target: str | bytes, reflog: str) -> tuple[str, ...]:
        """Move the branch to the commit `target` (see `Store.advance`); the changed paths."""
        target_id = target.encode() if isinstance(target, str) else target
        with self.context.lock:
            self.edits.commit_edits(None, None)
            head = self.reader.head()
            if head == target_id:
                return ()
            new = self.reader.commit_object(target_id)
            old_tree = self.reader.commit_object(head).tree if head else None
            changes: dict[str, tuple[tuple[int, bytes] | None, bytes | None]] = {}
            for path, _old, new_sha in self.history.changed_files(old_tree, new.tree):
                if normalize_path(path, page=False) != path:
                    raise PathError(f"{path!r} in commit {target_id.decode()[:8]} is not a clean wiki path")
                check_inside(self.context.root, path)
                if new_sha is None:
                    changes[path] = (None, None)
                else:
                    entry = self.reader.tree_entry(new.tree, path)
                    assert entry is not None
                    changes[path] = (entry, self.reader.data(new_sha))
            self.committer.land(head, target_id, changes, reflog=reflog.encode("utf-8"))
        self.committer.notify(target_id, tuple(changes))
        return tuple(changes)
