"""The git-backed page store: every change to a page is one commit, written with dulwich.

A commit goes in this order, under the writer lock:

1. finish or discard a transaction a killed writer left behind (`_recover`);
2. commit what a person edited by hand and did not commit yet, as their edit;
3. write the new blobs, trees and commit object (loose objects: a crash leaves at most
   unreferenced objects, which `git fsck` tolerates);
4. record the transaction, take git's `index.lock`, move the branch (an atomic
   compare-and-swap on the ref file: the commit has landed or it has not);
5. update the working tree files (write a temporary file, rename over) and the index
   entries of just those paths; drop the transaction record.

The class is built from parts: `edits.HandEdits` (a person's uncommitted edits) and
`history.History` (log, page history, diffs); `records` holds the value objects.
"""

from __future__ import annotations

import json
import os
import stat as stat_mod
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError, NotFoundError, PageError, PathError
from wiki_memory.pages import Page, now_iso, parse_page, render_page, slugify, type_from_path
from wiki_memory.pages.model import FOLDERS
from wiki_memory.store import gitindex
from wiki_memory.store.edits import HandEdits
from wiki_memory.store.history import History
from wiki_memory.store.lock import WriterLock
from wiki_memory.store.paths import check_inside, is_ignored, is_page_path, normalize_path
from wiki_memory.store.records import (
    EXEC_MODE,
    FILE_MODE,
    LINK_MODE,
    TREE_MODE,
    Author,
    WriteResult,
    blob_id,
    commit_message,
    machine_name,
)

BRANCH = b"refs/heads/main"
MAX_PAGE_BYTES = 2 * 1024 * 1024

WIKI_README = """\
# Project memory (wiki-memory)

This folder is the long-term memory that AI coding agents (Claude Code, Codex, Gemini CLI,
Cursor) share for one project, kept by [wiki-memory](https://pypi.org/project/wiki-memory/).

- Every page is a Markdown file with YAML front matter (`id`, `title`, `type`, `tags`,
  `status`, `created`, `updated`, `sources`). `[[Title]]` links pages, as in Obsidian.
- Every change is a git commit whose author is the agent or person who made it, with
  `Session-Id:` and `Agent:` trailers: `git log`, `git diff`, `git blame` and `git revert`
  work here exactly as in code.
- Edit pages in any editor. `wiki-memory watch` (or the next write by any agent) commits
  your edits under your own git identity.

Folders: `decisions/`, `gotchas/`, `procedures/`, `facts/`, `preferences/`, `notes/`,
`sessions/YYYY/MM/` (what each agent session did) and `handoffs/YYYY/MM/` (what the next
session is told).
"""

WIKI_GITIGNORE = """\
# Editor litter; wiki-memory ignores these too.
*.swp
*.swo
*.swx
*~
.#*
\\#*#
4913
*___jb_tmp___
*___jb_old___
.DS_Store
.obsidian/workspace*
.trash/
*.kate-swp
.goutputstream-*
.~lock.*#
~$*
*.crswap
.syncthing.*
# A writer's temporary file, renamed over the page when complete.
.*.wm-tmp-*
"""


Changes = Mapping[str, "bytes | None"]  # path -> new content, None to delete


def _has_commit(root: Path) -> bool:
    """Does the repository at `root` have a commit on HEAD (is it more than begun)?"""
    try:
        repo = Repo(str(root))
    except Exception:  # noqa: BLE001 - dulwich's NotGitRepository: an empty or half-written `.git`
        return False
    try:
        repo.refs[b"HEAD"]
        return True
    except KeyError:
        return False
    finally:
        repo.close()


class Store(HandEdits, History):
    """A wiki: a git repository of Markdown pages. All writes go through `commit`."""

    def __init__(self, root: Path | str):
        self.root = Path(root).absolute()
        if not (self.root / ".git").is_dir():
            raise NotFoundError(f"{self.root} is not a wiki (no git repository); run `wiki-memory init`")
        self.repo = Repo(str(self.root))
        self.git_dir = self.root / ".git"
        self._state_dir = self.git_dir / "wiki-memory"
        self._state_dir.mkdir(exist_ok=True)
        self.lock = WriterLock(self.git_dir / "wiki-memory.lock")
        # Which machine wrote a commit (a `Host:` trailer): sync names conflict copies by it.
        self.host = machine_name()
        self._index_head_file = self._state_dir / "index-head"
        self._txn_file = self._state_dir / "transaction.json"
        self._index_cache: tuple[object, bytes | None, int, gitindex.Entries] | None = None
        self._trees: dict[bytes, Tree] = {}
        # Observers (the search index) hear about every landed commit: (commit id, changed paths).
        self.on_commit: list[Callable[[str, tuple[str, ...]], None]] = []

    # Creating ------------------------------------------------------------------------

    @classmethod
    def create(cls, root: Path | str, author: Author | None = None) -> Store:
        """A new wiki at `root`, or the existing one: a normal git repository on `main`.

        Made whole or not at all: the repository and its first commit are built beside the
        wiki, and its `.git` moves in with one rename. Why: a process killed while creating
        it in place (a SessionEnd consolidation, say) left a `.git` with no HEAD and a stale
        `HEAD.lock`, on which every later commit failed. Such an unfinished `.git` (no
        commit yet) is moved aside, beside the wiki, and the wiki made again.
        """
        root = Path(root).absolute()
        git_dir = root / ".git"
        if git_dir.is_dir():
            if _has_commit(root):
                return cls(root)
            try:
                git_dir.rename(root.parent / f".{root.name}.unfinished-git-{time.time_ns()}")
            except FileNotFoundError:
                pass  # another process moved it aside first
        root.mkdir(parents=True, exist_ok=True)
        import shutil
        import tempfile

        building = Path(tempfile.mkdtemp(prefix=f".{root.name}.creating-", dir=root.parent))
        try:
            repo = Repo.init(str(building))
            repo.refs.set_symbolic_ref(b"HEAD", BRANCH)
            repo.close()
            made = cls(building)
            made.commit(
                {"README.md": WIKI_README.encode(), ".gitignore": WIKI_GITIGNORE.encode()},
                "init: wiki-memory wiki",
                author or Author("wiki-memory", "wiki-memory@wiki-memory"),
                commit_hand_edits=False,
            )
            made.close()
            # The files first (renamed: the index's stat data still fits them), then the claim.
            for name in ("README.md", ".gitignore"):
                if not (root / name).exists():
                    os.replace(building / name, root / name)
            try:
                os.rename(building / ".git", git_dir)
            except OSError:
                if not git_dir.is_dir():
                    raise
                # Another process made the wiki meanwhile: theirs it is.
        finally:
            shutil.rmtree(building, ignore_errors=True)
        return cls(root)

    # Reading -------------------------------------------------------------------------

    def head(self) -> bytes | None:
        try:
            return self.repo.refs[b"HEAD"]
        except KeyError:
            return None

    def _commit_obj(self, rev: str | bytes | None) -> Commit | None:
        if rev is None or rev in ("HEAD", b"HEAD"):
            head = self.head()
            return self.repo[head] if head else None  # type: ignore[return-value]
        from dulwich.objectspec import parse_commit, parse_object

        try:
            # parse_object knows `HEAD~2` and `abc123^`; parse_commit knows short ids.
            obj = parse_object(self.repo, rev)
            return obj if isinstance(obj, Commit) else parse_commit(self.repo, obj.id)
        except (KeyError, ValueError, IndexError, TypeError, AttributeError):
            try:
                return parse_commit(self.repo, rev)
            except (KeyError, ValueError, IndexError, TypeError):
                name = rev if isinstance(rev, str) else rev.decode("utf-8", "replace")
                raise NotFoundError(f"unknown revision {name!r}") from None

    def resolve_rev(self, rev: str) -> str:
        commit = self._commit_obj(rev)
        if commit is None:
            raise NotFoundError("the wiki has no commits yet")
        return commit.id.decode()

    def _tree(self, tree_id: bytes) -> Tree:
        """A tree object, from a small cache: trees never change, and history walks and
        page lookups read the same folders over and over."""
        tree = self._trees.get(tree_id)
        if tree is None:
            tree = self.repo[tree_id]
            if len(self._trees) >= 2048:
                self._trees.clear()
            self._trees[tree_id] = tree  # type: ignore[assignment]
        return tree  # type: ignore[return-value]

    def _tree_entry(self, tree_id: bytes, path: str) -> tuple[int, bytes] | None:
        obj = self._tree(tree_id)
        parts = path.split("/")
        for i, part in enumerate(parts):
            try:
                mode, sha = obj[part.encode("utf-8")]  # type: ignore[index]
            except KeyError:
                return None
            if i == len(parts) - 1:
                return mode, sha
            if mode != TREE_MODE:
                return None
            obj = self._tree(sha)
        return None

    def blob_at(self, path: str, rev: str | bytes | None = None) -> bytes | None:
        """The blob id of `path` at a revision (HEAD by default), or None."""
        commit = self._commit_obj(rev)
        if commit is None:
            return None
        entry = self._tree_entry(commit.tree, path)
        return entry[1] if entry and entry[0] != TREE_MODE else None

    def read_bytes(self, path: str, rev: str | bytes | None = None) -> bytes:
        path = normalize_path(path, page=False)
        blob = self.blob_at(path, rev)
        if blob is None:
            where = f" at {rev if isinstance(rev, str) else rev.decode()}" if rev else ""
            raise NotFoundError(f"no page {path!r}{where}")
        return self.repo[blob].as_raw_string()  # type: ignore[union-attr]

    def read(self, path: str, rev: str | bytes | None = None) -> Page:
        """The page at `path` as committed at `rev` (HEAD by default)."""
        path = normalize_path(path)
        return parse_page(self.read_bytes(path, rev).decode("utf-8", errors="replace"), path)

    def exists(self, path: str, rev: str | bytes | None = None) -> bool:
        try:
            return self.blob_at(normalize_path(path, page=False), rev) is not None
        except PathError:
            return False

    def files(self, rev: str | bytes | None = None) -> Iterator[tuple[str, bytes]]:
        """(path, blob id) of every file at a revision, in tree order."""
        commit = self._commit_obj(rev)
        if commit is not None:
            for path, _mode, sha in self._tree_files(commit.tree):
                yield path, sha

    def _tree_files(self, tree_id: bytes) -> Iterator[tuple[str, int, bytes]]:
        stack: list[tuple[str, bytes]] = [("", tree_id)]
        while stack:
            prefix, sub_id = stack.pop()
            subtrees = []
            for entry in self.repo[sub_id].iteritems():  # type: ignore[union-attr]
                name = entry.path.decode("utf-8", errors="surrogateescape")
                if entry.mode == TREE_MODE:
                    subtrees.append((prefix + name + "/", entry.sha))
                else:
                    yield prefix + name, entry.mode, entry.sha
            stack.extend(reversed(subtrees))

    def page_files(self, rev: str | bytes | None = None) -> Iterator[tuple[str, bytes]]:
        """(path, blob id) of every page (Markdown file that is memory) at a revision."""
        return ((p, b) for p, b in self.files(rev) if is_page_path(p))

    def pages(self, rev: str | bytes | None = None, *, errors: list[str] | None = None) -> Iterator[Page]:
        """Every page at a revision; a page that does not parse is reported in `errors`."""
        for path, blob in self.page_files(rev):
            text = self.repo[blob].as_raw_string().decode("utf-8", errors="replace")  # type: ignore[union-attr]
            try:
                yield parse_page(text, path)
            except PageError as e:
                if errors is None:
                    raise
                errors.append(str(e))

    def find(self, ref: str, rev: str | bytes | None = None) -> str:
        """The path of a page named by its path, its title or its id."""
        ref = ref.strip()
        if not ref:
            raise NotFoundError("no page named ''")
        refused: list[PathError] = []
        for candidate in (ref, ref + ".md"):
            try:
                path = normalize_path(candidate)
            except PathError as e:
                refused.append(e)
                continue
            if self.blob_at(path, rev):
                return path
        if len(refused) == 2 and ("/" in ref or ref.endswith(".md")):
            raise refused[0]  # `../x.md` is refused, not looked up as a title
        for candidate in (ref, ref + ".md"):
            if len(refused) < 2 and rev is None and (self.root / candidate).is_file() and not is_ignored(candidate):
                raise NotFoundError(
                    f"{candidate} is not committed yet: your edits become memory once "
                    "committed (`wiki-memory watch --once`, or any write)"
                )
        # A title: its conventional path in every undated folder first.
        slug = slugify(ref)
        for folder in FOLDERS.values():
            path = f"{folder}/{slug}.md"
            if self.blob_at(path, rev):
                return path
        matches: list[str] = []
        wanted = ref.casefold()
        for path, blob in self.page_files(rev):
            text = self.repo[blob].as_raw_string().decode("utf-8", errors="replace")  # type: ignore[union-attr]
            try:
                page = parse_page(text, path)
            except PageError:
                continue
            if page.id == ref or page.title.casefold() == wanted:
                matches.append(path)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise NotFoundError(f"{ref!r} names {len(matches)} pages: {', '.join(matches)}; give a path")
        raise NotFoundError(f"no page with path, title or id {ref!r}")

    # Writing ---------------------------------------------------------------------------

    def write(
        self,
        page: Page,
        author: Author,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
    ) -> WriteResult:
        """Create or update one page: `updated` set now, `id` and `created` kept."""
        return self.write_many([page], author, session_id=session_id, agent=agent, message=message)[0]

    def write_many(
        self,
        pages: Iterable[Page],
        author: Author,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
    ) -> list[WriteResult]:
        """Create or update several pages in one commit (a session page and its handoff)."""
        pages = [page.with_path(normalize_path(page.path)) for page in pages]
        for page in pages:
            check_inside(self.root, page.path)
        with self.lock:
            self._prepare(page.path for page in pages)
            changes: dict[str, bytes | None] = {}
            results: list[tuple[str, bool, Page]] = []
            for page in pages:
                path = page.path
                merged, created, text = self._merge_with_existing(page)
                if text is not None:
                    changes[path] = text
                results.append((path, created, merged))
            subject = message or self._subject(results, changes)
            commit = (
                self.commit(changes, subject, author, session_id=session_id, agent=agent, commit_hand_edits=False)
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

    def _merge_with_existing(self, page: Page) -> tuple[Page, bool, bytes | None]:
        """(page as it will be written, created?, its bytes or None if nothing changes)."""
        blob = self.blob_at(page.path)
        existing: Page | None = None
        if blob is not None:
            old_text = self.repo[blob].as_raw_string().decode("utf-8", errors="replace")  # type: ignore[union-attr]
            try:
                existing = parse_page(old_text, page.path)
            except PageError:
                existing = None  # a broken page is replaced; its text stays in history
        meta = dict(page.meta)
        if existing is not None:
            # Keys only the old page had survive; identity and birth date are the old page's.
            merged = {**existing.meta, **meta}
            for key in ("id", "created"):
                if existing.meta.get(key):
                    merged[key] = existing.meta[key]
            candidate = Page(page.path, merged, page.body)
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
            dst = (
                normalize_path(dst)
                if dst
                else src.rsplit("/", 1)[0] + f"/{slugify(page.title)}.md"
                if "/" in src
                else f"{slugify(page.title)}.md"
            )
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
        import merge3

        with self.lock:
            target = self._commit_obj(rev)
            if target is None:
                raise NotFoundError("the wiki has no commits yet")
            if len(target.parents) > 1:
                raise ConflictError(f"{target.id.decode()[:8]} is a merge; revert its changes page by page")
            if not target.parents:
                raise ConflictError("the first commit of the wiki cannot be reverted")
            parent = self.repo[target.parents[0]]
            changed = self._changed(parent.tree, target.tree)  # type: ignore[attr-defined]
            self._prepare(path for path, _, _ in changed)
            changes: dict[str, bytes | None] = {}
            for path, old_blob, new_blob in changed:
                current = self.blob_at(path)
                wanted = self.repo[old_blob].as_raw_string() if old_blob else None  # type: ignore[union-attr]
                if current == new_blob:
                    changes[path] = wanted
                    continue
                if current is None or new_blob is None or old_blob is None:
                    raise ConflictError(
                        f"{path} changed again after {target.id.decode()[:8]}; "
                        "revert the later change first or edit the page"
                    )
                base = self.repo[new_blob].as_raw_string().splitlines(True)  # type: ignore[union-attr]
                ours = self.repo[current].as_raw_string().splitlines(True)  # type: ignore[union-attr]
                theirs = wanted.splitlines(True) if wanted else []
                merged = merge3.Merge3(base, ours, theirs)
                if any(group[0] == "conflict" for group in merged.merge_groups()):
                    raise ConflictError(
                        f"{path} changed again after {target.id.decode()[:8]} on the same "
                        "lines; revert the later change first or edit the page"
                    )
                changes[path] = b"".join(merged.merge_lines())
            subject = self.repo[target.id].message.decode("utf-8", "replace").split("\n", 1)[0]
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

    # The one way to commit ----------------------------------------------------------------

    def commit(
        self,
        changes: Changes,
        subject: str,
        author: Author,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        body: str = "",
        commit_hand_edits: bool = True,
        parents_extra: tuple[bytes, ...] = (),
        modes: Mapping[str, int] | None = None,
        from_files: bool = False,
    ) -> str | None:
        """Apply `changes` (path -> bytes, or None to delete) as one commit; None if nothing changed.

        `modes` gives a path's file mode where the working tree cannot (a file a merge
        brings in from another machine); otherwise the file on disk decides. `from_files`:
        the changes were read from the working tree (hand edits), so the files are left
        exactly as they are rather than rewritten: a person saving again meanwhile, or
        an editor holding the file open, is never disturbed."""
        with self.lock:
            if commit_hand_edits:
                self._prepare(changes)
            for path in changes:
                if normalize_path(path, page=False) != path:
                    raise PathError(f"{path!r} is not a clean wiki path")
                check_inside(self.root, path)
            head = self.head()
            base_tree = self.repo[head].tree if head else None  # type: ignore[attr-defined]
            objects: list[Blob | Tree | Commit] = []
            blob_changes: dict[str, tuple[int, bytes] | None] = {}
            for path, data in changes.items():
                if data is None:
                    blob_changes[path] = None
                    continue
                blob = Blob.from_string(data)
                if blob.id not in self.repo.object_store:  # a merge's incoming blobs are there
                    objects.append(blob)
                mode = modes[path] if modes and path in modes else self._mode_for(path)
                blob_changes[path] = (mode, blob.id)
            tree_id = self._apply(base_tree, blob_changes, objects)
            if tree_id == base_tree and not parents_extra:
                return None
            commit = Commit()
            commit.tree = tree_id
            commit.parents = ([head] if head else []) + list(parents_extra)
            commit.author = commit.committer = author.ident()
            now = int(time.time())
            offset = time.localtime(now).tm_gmtoff
            commit.author_time = commit.commit_time = now
            commit.author_timezone = commit.commit_timezone = offset
            commit.encoding = None
            commit.message = commit_message(subject, session_id, agent, body, self.host)
            objects.append(commit)
            for obj in objects:
                self.repo.object_store.add_object(obj)
            self._land(head, commit.id, {p: (blob_changes[p], changes[p]) for p in changes}, from_files=from_files)
            self._maybe_pack()
            landed = tuple(changes)
        for observer in list(self.on_commit):
            observer(commit.id.decode(), landed)
        return commit.id.decode()

    def _maybe_pack(self, limit: int = 6700) -> None:
        """Pack loose objects once there are many, as `git gc --auto` does (same estimate:
        the objects in one fan-out folder times 256). Reading packed history is ~4x faster."""
        try:
            sample = len(os.listdir(self.git_dir / "objects" / "17"))
        except FileNotFoundError:
            return
        if sample * 256 > limit:
            self.pack()

    def pack(self) -> None:
        """Move every loose object into a pack (under the writer lock)."""
        with self.lock:
            self.repo.object_store.pack_loose_objects()

    def _mode_for(self, path: str) -> int:
        try:
            st = os.lstat(self.root / path)
        except OSError:
            return FILE_MODE
        if stat_mod.S_ISLNK(st.st_mode):
            return LINK_MODE
        return EXEC_MODE if st.st_mode & 0o111 else FILE_MODE

    def _apply(
        self,
        tree_id: bytes | None,
        changes: Mapping[str, tuple[int, bytes] | None],
        objects: list[Blob | Tree | Commit],
    ) -> bytes:
        """The id of `tree_id` with `changes` applied; new trees are appended to `objects`."""
        tree = self.repo[tree_id] if tree_id else Tree()
        tree = Tree.from_raw_string(Tree.type_num, tree.as_raw_string()) if tree_id else tree  # a copy
        by_dir: dict[str, dict[str, tuple[int, bytes] | None]] = {}
        for path, entry in changes.items():
            head, sep, rest = path.partition("/")
            if sep:
                by_dir.setdefault(head, {})[rest] = entry
            elif entry is None:
                if path.encode() in tree:
                    del tree[path.encode()]
            else:
                tree[path.encode()] = entry
        for name, sub_changes in by_dir.items():
            key = name.encode()
            existing = tree[key][1] if key in tree and tree[key][0] == TREE_MODE else None
            sub_id = self._apply(existing, sub_changes, objects)
            if sub_id == Tree().id:
                if key in tree:
                    del tree[key]
            else:
                tree[key] = (TREE_MODE, sub_id)
        objects.append(tree)
        return tree.id

    def _land(
        self,
        parent: bytes | None,
        commit_id: bytes,
        changes: Mapping[str, tuple[tuple[int, bytes] | None, bytes | None]],
        reflog: bytes | None = None,
        from_files: bool = False,
    ) -> None:
        """Move the branch to `commit_id`, then bring the working tree and index along
        (with `from_files`, only the index: the files already hold the commit)."""
        txn = {
            "parent": parent.decode() if parent else None,
            "commit": commit_id.decode(),
            "paths": sorted(changes),
            "time": time.time(),
            "from_files": from_files,
        }
        self._txn_file.write_text(json.dumps(txn))
        index_lock = self._take_index_lock()
        try:
            commit = self.repo[commit_id]
            if not self.repo.refs.set_if_equals(
                b"HEAD",
                parent,
                commit_id,
                committer=commit.committer,
                timestamp=commit.commit_time,
                timezone=commit.commit_timezone,
                message=reflog or b"commit: " + commit.message.split(b"\n", 1)[0],
            ):
                raise ConflictError("the wiki's branch moved during the commit; try again")
            version, entries = self._index(parent)
            for path, (entry, data) in changes.items():
                key = path.encode("utf-8")
                target = self.root / path
                if entry is None:
                    if not from_files:
                        self._remove_file(target)
                    entries.pop(key, None)
                    continue
                mode, sha = entry
                if from_files:
                    entries[key] = self._entry_if_unchanged(key, target, sha, mode)
                    continue
                st = self._write_file(target, data or b"", mode)
                entries[key] = gitindex.make_entry(key, st, sha, mode)
            self._save_index(index_lock, version, entries, commit_id)
            index_lock = None
        finally:
            if index_lock is not None:
                try:
                    os.unlink(index_lock)
                except FileNotFoundError:
                    pass
        self._txn_file.unlink(missing_ok=True)

    def _entry_if_unchanged(self, key: bytes, target: Path, sha: bytes, mode: int) -> bytes:
        """The index entry of a file just committed as it was on disk: with its stat data if
        it still holds that content, else with none, so the next scan re-reads it (the
        person saved again meanwhile, and that save is theirs to commit next)."""
        try:
            before = os.lstat(target)
            if stat_mod.S_ISLNK(before.st_mode):
                data = os.readlink(target).encode("utf-8", "surrogateescape")
            else:
                with open(target, "rb") as f:
                    data = f.read()
            after = os.lstat(target)
        except OSError:
            return gitindex.empty_entry(key, sha, mode)
        same_file = (before.st_ino, before.st_mtime_ns, before.st_size) == (
            after.st_ino,
            after.st_mtime_ns,
            after.st_size,
        )
        if same_file and blob_id(data) == sha:
            return gitindex.make_entry(key, after, sha, mode)
        return gitindex.empty_entry(key, sha, mode)

    def _take_index_lock(self, timeout: float = 10.0) -> Path:
        path = self.git_dir / "index.lock"
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
                return path
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise ConflictError(
                        f"{path} exists: a git command is running in the wiki, or one crashed "
                        "(remove the file if no git command is running)"
                    ) from None
                time.sleep(0.01)

    def _write_file(self, target: Path, data: bytes, mode: int) -> os.stat_result:
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == LINK_MODE:
            target.unlink(missing_ok=True)
            os.symlink(data.decode("utf-8", "surrogateescape"), target)
            return os.lstat(target)
        tmp = target.parent / f".{target.name}.wm-tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        if mode == EXEC_MODE:
            os.chmod(tmp, 0o755)
        os.replace(tmp, target)
        return os.lstat(target)

    def _remove_file(self, target: Path) -> None:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        parent = target.parent
        while parent != self.root:
            try:
                parent.rmdir()  # only when empty
            except OSError:
                break
            parent = parent.parent

    # The index as a mirror of HEAD ------------------------------------------------------

    def _index(self, head: bytes | None) -> tuple[int, gitindex.Entries]:
        """(version, entries) of the git index, mirroring `head`'s tree exactly.

        If someone else moved HEAD (a `git commit` in the wiki, a merge), the entries are
        rebuilt from the tree, keeping the stat data of those that still match. The parse
        is cached while the index file is unchanged: a long-lived server pays it once.
        """
        path = self.git_dir / "index"
        try:
            st = os.stat(path)
            key: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            key = None
        cached = self._index_cache
        if cached is not None and cached[0] == key and cached[1] == head:
            return cached[2], dict(cached[3])
        version, entries = gitindex.read_index(path)
        recorded = self._index_head_file.read_text().strip() if self._index_head_file.exists() else ""
        if head is None or recorded != head.decode():
            fresh: gitindex.Entries = {}
            if head is not None:
                for rel, mode, sha in self._tree_files(self.repo[head].tree):  # type: ignore[attr-defined]
                    name = rel.encode("utf-8", "surrogateescape")
                    old = entries.get(name)
                    fresh[name] = (
                        old
                        if old is not None and gitindex.entry_sha(old) == sha and gitindex.entry_mode(old) == mode
                        else gitindex.empty_entry(name, sha, mode)
                    )
            entries = fresh
        self._index_cache = (key, head, version, entries)
        return version, dict(entries)

    def _save_index(self, lock_path: Path, version: int, entries: gitindex.Entries, head: bytes) -> None:
        gitindex.write_index(lock_path, version, entries)
        os.replace(lock_path, self.git_dir / "index")
        self._index_head_file.write_text(head.decode())
        st = os.stat(self.git_dir / "index")
        self._index_cache = ((st.st_mtime_ns, st.st_size, st.st_ino), head, version, dict(entries))

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
            new = self.repo[target_id]
            if not isinstance(new, Commit):
                raise NotFoundError(f"{target_id.decode()} is not a commit")
            old_tree = self.repo[head].tree if head else None  # type: ignore[attr-defined]
            changes: dict[str, tuple[tuple[int, bytes] | None, bytes | None]] = {}
            for path, _old, new_sha in self._changed(old_tree, new.tree):
                if normalize_path(path, page=False) != path:
                    raise PathError(f"{path!r} in commit {target_id.decode()[:8]} is not a clean wiki path")
                check_inside(self.root, path)
                if new_sha is None:
                    changes[path] = (None, None)
                else:
                    entry = self._tree_entry(new.tree, path)
                    assert entry is not None
                    changes[path] = (entry, self.repo[new_sha].as_raw_string())  # type: ignore[union-attr]
            self._land(head, target_id, changes, reflog=reflog.encode("utf-8"))
            landed = tuple(changes)
        for observer in list(self.on_commit):
            observer(target_id.decode(), landed)
        return landed

    def _prepare(self, paths: Iterable[str]) -> None:
        """Before a write: finish a crashed transaction, then commit a person's uncommitted
        edits of the files about to be written, so that no word of theirs is overwritten."""
        self.commit_pending(paths=list(paths))

    def _recover(self) -> None:
        """Finish the working tree of a commit whose writer was killed after it landed."""
        if not self._txn_file.exists():
            return
        try:
            txn = json.loads(self._txn_file.read_text())
        except (OSError, ValueError):
            txn = {}
        # Lock files taken after the transaction record was written are the dead writer's.
        for lock in (self.git_dir / "index.lock", self.git_dir / (BRANCH.decode() + ".lock")):
            try:
                if lock.stat().st_mtime >= float(txn.get("time", 0)) - 1:
                    lock.unlink()
            except FileNotFoundError:
                pass
        for path in txn.get("paths", []):
            target = self.root / path
            for tmp in target.parent.glob(f".{target.name}.wm-tmp-*"):
                tmp.unlink(missing_ok=True)  # the dead writer's half-written file
        head = self.head()
        if head is not None and txn.get("commit") == head.decode():
            # The commit landed; its files and index entries may not have. `index-head` still
            # names the parent, so the entries are rebuilt from HEAD's tree.
            version, entries = self._index(head)
            from_files = bool(txn.get("from_files"))
            for path in txn.get("paths", []):
                key = path.encode("utf-8")
                entry = self._tree_entry(self.repo[head].tree, path)  # type: ignore[attr-defined]
                if entry is None:
                    if not from_files:
                        self._remove_file(self.root / path)
                    entries.pop(key, None)
                elif from_files:  # hand edits: the files are the person's; only the index follows
                    entries[key] = self._entry_if_unchanged(key, self.root / path, entry[1], entry[0])
                else:
                    mode, sha = entry
                    st = self._write_file(self.root / path, self.repo[sha].as_raw_string(), mode)  # type: ignore[union-attr]
                    entries[key] = gitindex.make_entry(key, st, sha, mode)
            self._save_index(self._take_index_lock(), version, entries, head)
        self._txn_file.unlink(missing_ok=True)

    def close(self) -> None:
        self.repo.close()


def page_type_counts(store: Store) -> dict[str, int]:
    """Pages per type, by folder (fast: no page is parsed)."""
    counts: dict[str, int] = {}
    for path, _ in store.page_files():
        page_type = type_from_path(path) or "other"
        counts[page_type] = counts.get(page_type, 0) + 1
    return counts
