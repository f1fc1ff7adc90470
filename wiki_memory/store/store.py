"""The git-backed page store: a wiki is a git repository of Markdown pages, and every
change to a page is one commit, written with dulwich.

`Store` is built from parts, each in its own module, and adds the page operations
(write, move, delete, revert, and the fast-forward that sync uses):

- `reading.Reader`: opening the repository, reading files and pages at any revision;
- `worktree.WorkTree`: the working tree and the git index as a mirror of HEAD;
- `commits.Committer`: the one way to commit, as a transaction a killed writer's
  successor finishes;
- `edits.HandEdits`: a person's uncommitted edits, committed as theirs;
- `history.History`: log, page history (following renames), diffs;
- `create`: making a new wiki; `records`: the value objects.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from wiki_memory.errors import ConflictError, NotFoundError, PageError, PathError
from wiki_memory.pages import Page, now_iso, parse_page, render_page, slugify
from wiki_memory.store.create import create_wiki
from wiki_memory.store.edits import HandEdits
from wiki_memory.store.history import History
from wiki_memory.store.paths import check_inside, normalize_path
from wiki_memory.store.records import Author, WriteResult

MAX_PAGE_BYTES = 2 * 1024 * 1024


class Store(HandEdits, History):
    """A wiki: a git repository of Markdown pages. All writes go through `commit`."""

    @classmethod
    def create(cls, root: Path | str, author: Author | None = None) -> Store:
        """A new wiki at `root`, or the existing one: a normal git repository on `main`,
        made whole or not at all (see `create.create_wiki`)."""
        root = Path(root).absolute()
        create_wiki(root, author)
        return cls(root)

    # Writing ---------------------------------------------------------------------------

    def write(
        self,
        page: Page,
        author: Author,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
        body: str = "",
        trailers: Sequence[tuple[str, str]] = (),
        owns: Collection[str] = (),
    ) -> WriteResult:
        """Create or update one page: `updated` set now, `id` and `created` kept."""
        return self.write_many(
            [page], author, session_id=session_id, agent=agent, message=message, body=body, trailers=trailers, owns=owns
        )[0]

    def write_many(
        self,
        pages: Iterable[Page],
        author: Author,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
        body: str = "",
        trailers: Sequence[tuple[str, str]] = (),
        owns: Collection[str] = (),
    ) -> list[WriteResult]:
        """Create or update several pages in one commit (a session page and its handoff);
        `message` is the subject, `body` what follows it, `trailers` extra trailer lines
        (`("Reason", "...")`) before Session-Id, Agent and Host.

        Front-matter keys the page as it stands has and the new one lacks are kept (a
        person's key survives an agent's rewrite), except those in `owns`: keys this writer
        sets itself, so a key of its own it no longer sets is gone (the consolidator's
        `in_progress` once the session's end is consolidated)."""
        pages = [page.with_path(normalize_path(page.path)) for page in pages]
        for page in pages:
            check_inside(self.root, page.path)
        with self.lock:
            self._prepare(page.path for page in pages)
            changes: dict[str, bytes | None] = {}
            results: list[tuple[str, bool, Page]] = []
            for page in pages:
                path = page.path
                merged, created, text = self._merge_with_existing(page, owns)
                if text is not None:
                    changes[path] = text
                results.append((path, created, merged))
            subject = message or self._subject(results, changes)
            commit = (
                self.commit(
                    changes,
                    subject,
                    author,
                    session_id=session_id,
                    agent=agent,
                    body=body,
                    commit_hand_edits=False,
                    trailers=trailers,
                )
                if changes
                else None
            )
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
        blob = self.blob_at(page.path)
        existing: Page | None = None
        if blob is not None:
            old_data = self._data(blob)
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

    def move(
        self,
        src: str,
        dst: str | None,
        author: Author,
        *,
        title: str | None = None,
        session_id: str | None = None,
        agent: str | None = None,
    ) -> WriteResult:
        """Rename a page (its id stays). With `title`, retitle it too (and, without `dst`,
        move it to the new title's conventional path)."""
        src = normalize_path(src)
        with self.lock:
            self._prepare([src] + ([normalize_path(dst)] if dst else []))
            page = self.read(src)
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
                dst, exists = self.titled_path(folder, page.title)
                if exists and dst != src:
                    raise ConflictError(f"{dst} is already titled {page.title!r}; choose another title")
                if src in {path for path, _ in self.slug_family(folder, page.title)}:
                    dst = src
            elif title:
                dst = f"{slugify(page.title)}.md"
            else:
                dst = src
            check_inside(self.root, dst)
            if dst == src and not title:
                raise ConflictError(f"{src} is already at {dst}")
            self._prepare([dst])
            if dst != src and self.exists(dst):
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
            commit = self.commit(changes, subject, author, session_id=session_id, agent=agent, commit_hand_edits=False)
            return WriteResult(dst, commit, False, page.with_path(dst))

    def delete(self, path: str, author: Author, *, session_id: str | None = None, agent: str | None = None) -> str:
        """Remove a page (it stays in history: `git log --all -- <path>`). Returns the commit id."""
        path = normalize_path(path)
        with self.lock:
            self._prepare([path])
            if not self.exists(path):
                raise NotFoundError(f"no page {path!r}")
            commit = self.commit(
                {path: None},
                f"forget: {path.removesuffix('.md')}",
                author,
                session_id=session_id,
                agent=agent,
                commit_hand_edits=False,
            )
            assert commit is not None
            return commit

    def revert(self, rev: str, author: Author, *, session_id: str | None = None, agent: str | None = None) -> str:
        """Undo one commit with a new commit. Later edits to the same lines are kept, or refused."""
        with self.lock:
            target = self._commit_obj(rev)
            if target is None:
                raise NotFoundError("the wiki has no commits yet")
            if len(target.parents) > 1:
                raise ConflictError(f"{target.id.decode()[:8]} is a merge; revert its changes page by page")
            if not target.parents:
                raise ConflictError("the first commit of the wiki cannot be reverted")
            changed = self.changed_files(self._commit(target.parents[0]).tree, target.tree)
            self._prepare(path for path, _, _ in changed)
            short = target.id.decode()[:8]
            changes = {path: self._undone(path, old, new, short) for path, old, new in changed}
            subject = target.message.decode("utf-8", "replace").split("\n", 1)[0]
            commit = self.commit(
                changes,
                f"revert: {subject}",
                author,
                session_id=session_id,
                agent=agent,
                body=f"This reverts commit {target.id.decode()}.",
                commit_hand_edits=False,
            )
            if commit is None:
                raise ConflictError(f"{target.id.decode()[:8]} is already undone; nothing to revert")
            return commit

    def _undone(self, path: str, old_blob: bytes | None, new_blob: bytes | None, short: str) -> bytes | None:
        """What `path` becomes when the change old_blob -> new_blob (of commit `short`) is
        undone: its old content, or, if it changed again since, the undo merged into that."""
        import merge3

        current = self.blob_at(path)
        wanted = self._data(old_blob) if old_blob else None
        if current == new_blob:
            return wanted
        if current is None or new_blob is None or old_blob is None:
            raise ConflictError(f"{path} changed again after {short}; revert the later change first or edit the page")
        base = self._data(new_blob).splitlines(True)
        ours = self._data(current).splitlines(True)
        theirs = wanted.splitlines(True) if wanted else []
        merged = merge3.Merge3(base, ours, theirs)
        if any(group[0] == "conflict" for group in merged.merge_groups()):
            raise ConflictError(
                f"{path} changed again after {short} on the same lines; revert the later change first or edit the page"
            )
        return b"".join(merged.merge_lines())

    def advance(self, target: str | bytes, *, reflog: str = "sync: fast-forward") -> tuple[str, ...]:
        """Move the branch to the commit `target` (a fast-forward to what another machine
        pushed), bringing the working tree and index along for the files that differ.
        Hand edits are committed first. Returns the changed paths."""
        target_id = target.encode() if isinstance(target, str) else target
        with self.lock:
            self.commit_edits()
            head = self.head()
            if head == target_id:
                return ()
            new = self._commit(target_id)
            old_tree = self._commit(head).tree if head else None
            changes: dict[str, tuple[tuple[int, bytes] | None, bytes | None]] = {}
            for path, _old, new_sha in self.changed_files(old_tree, new.tree):
                if normalize_path(path, page=False) != path:
                    raise PathError(f"{path!r} in commit {target_id.decode()[:8]} is not a clean wiki path")
                check_inside(self.root, path)
                if new_sha is None:
                    changes[path] = (None, None)
                else:
                    entry = self.tree_entry(new.tree, path)
                    assert entry is not None
                    changes[path] = (entry, self._data(new_sha))
            self._land(head, target_id, changes, reflog=reflog.encode("utf-8"))
        self._notify(target_id, tuple(changes))
        return tuple(changes)
