"""Reading a wiki at any revision: objects, files, pages, and finding a page by its path,
title or id. Nothing here writes (opening the wiki is `context.Context`'s)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from dulwich.objects import Commit, Tree
from dulwich.objectspec import parse_commit, parse_object

from wiki_memory.errors import NotFoundError, PageError, PathError
from wiki_memory.pages import Page, parse_page, slugify, type_from_path
from wiki_memory.pages.model import DATED_TYPES, FOLDERS
from wiki_memory.store.context import Context
from wiki_memory.store.paths import is_ignored, is_page_path, normalize_path
from wiki_memory.store.records import TREE_MODE

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref

    from wiki_memory.store.store import Store

BRANCH = cast("Ref", b"refs/heads/main")
HEAD = cast("Ref", b"HEAD")


def oid(sha: bytes) -> ObjectID:
    """An object id as dulwich's type hints name it (plain bytes at run time)."""
    return cast("ObjectID", sha)


class Reader:
    """The part of a `Store` that reads the repository: objects, files and pages at any
    revision, and finding a page by its path, title or id."""

    def __init__(self, context: Context):
        self.context = context
        self.repo = context.repo
        self._trees: dict[bytes, Tree] = {}

    # Objects -------------------------------------------------------------------------

    def head(self) -> bytes | None:
        """The commit the branch is at; None in a wiki with no commits."""
        try:
            return self.repo.refs[HEAD]
        except KeyError:
            return None

    def commit_object(self, commit_id: bytes) -> Commit:
        """The commit object of a full commit id."""
        obj = self.repo[commit_id]
        if not isinstance(obj, Commit):
            raise NotFoundError(f"{commit_id.decode()} is not a commit")
        return obj

    def data(self, blob: bytes) -> bytes:
        """The content of a blob."""
        return self.repo[blob].as_raw_string()

    def tree(self, tree_id: bytes) -> Tree:
        """A tree object, from a small cache: trees never change, and history walks and
        page lookups read the same folders over and over."""
        tree = self._trees.get(tree_id)
        if tree is None:
            obj = self.repo[tree_id]
            if not isinstance(obj, Tree):
                raise NotFoundError(f"{tree_id.decode()} is not a tree")
            if len(self._trees) >= 2048:
                self._trees.clear()
            self._trees[tree_id] = tree = obj
        return tree

    def commit_at(self, rev: str | bytes | None) -> Commit | None:
        """The commit a revision names (`HEAD~2`, a short id; HEAD by default), or None in a
        wiki with no commits; NotFoundError for an unknown one."""
        if rev is None or rev in ("HEAD", b"HEAD"):
            head = self.head()
            return self.commit_object(head) if head else None
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
        commit = self.commit_at(rev)
        if commit is None:
            raise NotFoundError("the wiki has no commits yet")
        return commit.id.decode()

    def tree_entry(self, tree_id: bytes, path: str) -> tuple[int, bytes] | None:
        """(mode, object id) of `path` in a tree, or None."""
        obj = self.tree(tree_id)
        parts = path.split("/")
        for i, part in enumerate(parts):
            try:
                mode, sha = obj[part.encode("utf-8")]
            except KeyError:
                return None
            if i == len(parts) - 1:
                return mode, sha
            if mode != TREE_MODE:
                return None
            obj = self.tree(sha)
        return None

    def tree_files(self, tree_id: bytes) -> Iterator[tuple[str, int, bytes]]:
        """(path, mode, blob id) of every file under a tree, in tree order."""
        stack: list[tuple[str, bytes]] = [("", tree_id)]
        while stack:
            prefix, sub_id = stack.pop()
            subtrees = []
            for entry in self.tree(sub_id).iteritems():
                name = entry.path.decode("utf-8", errors="surrogateescape")
                if entry.mode == TREE_MODE:
                    subtrees.append((prefix + name + "/", entry.sha))
                else:
                    yield prefix + name, entry.mode, entry.sha
            stack.extend(reversed(subtrees))

    # Files and pages -------------------------------------------------------------------

    def blob_at(self, path: str, rev: str | bytes | None = None) -> bytes | None:
        """The blob id of `path` at a revision (HEAD by default), or None."""
        commit = self.commit_at(rev)
        if commit is None:
            return None
        entry = self.tree_entry(commit.tree, path)
        return entry[1] if entry and entry[0] != TREE_MODE else None

    def read_bytes(self, path: str, rev: str | bytes | None = None) -> bytes:
        path = normalize_path(path, page=False)
        blob = self.blob_at(path, rev)
        if blob is None:
            where = f" at {rev if isinstance(rev, str) else rev.decode()}" if rev else ""
            raise NotFoundError(f"no page {path!r}{where}")
        return self.data(blob)

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
        commit = self.commit_at(rev)
        if commit is not None:
            for path, _mode, sha in self.tree_files(commit.tree):
                yield path, sha

    def page_files(self, rev: str | bytes | None = None) -> Iterator[tuple[str, bytes]]:
        """(path, blob id) of every page (Markdown file that is memory) at a revision."""
        return ((p, b) for p, b in self.files(rev) if is_page_path(p))

    def pages(self, rev: str | bytes | None = None, *, errors: list[str] | None = None) -> Iterator[Page]:
        """Every page at a revision; a page that does not parse is reported in `errors`."""
        for path, blob in self.page_files(rev):
            text = self.data(blob).decode("utf-8", errors="replace")
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
        found = self._find_by_path(ref, rev) or self.find_by_slug(ref, rev)
        if found:
            return found
        matches: list[str] = []
        titles: dict[str, str] = {}
        wanted = ref.casefold()
        for path, blob in self.page_files(rev):
            try:
                page = parse_page(self.data(blob).decode("utf-8", errors="replace"), path)
            except PageError:
                continue
            if page.id == ref or page.title.casefold() == wanted:
                matches.append(path)
                titles[path] = page.title
        return one_match(ref, matches, titles)

    # Titles and file names -----------------------------------------------------------------

    def slug_family(self, folder: str, title: str, rev: str | bytes | None = None) -> list[tuple[str, str | None]]:
        """(path, title) of the pages in `folder` named by `title`'s slug: `<slug>.md`, then
        `<slug>-2.md`, `<slug>-3.md`... in order (title None: a page that does not parse)."""
        slug = slugify(title)
        commit = self.commit_at(rev)
        entry = self.tree_entry(commit.tree, folder) if commit is not None else None
        if entry is None or entry[0] != TREE_MODE:
            return []
        same = re.compile(rf"{re.escape(slug)}(?:-([1-9][0-9]*))?\.md")
        found: list[tuple[int, str, bytes]] = []
        for item in self.tree(entry[1]).iteritems():
            m = same.fullmatch(item.path.decode("utf-8", "surrogateescape"))
            if m and item.mode != TREE_MODE:
                found.append((int(m.group(1) or 1), f"{folder}/{m.group(0)}", item.sha))
        family: list[tuple[str, str | None]] = []
        for _n, path, blob in sorted(found):
            try:
                page_title: str | None = parse_page(self.data(blob).decode("utf-8", "replace"), path).title
            except PageError:
                page_title = None
            family.append((path, page_title))
        return family

    def titled_path(self, folder: str, title: str) -> tuple[str, bool]:
        """Where the page titled exactly `title` is in `folder` (and True), or where a new
        page of that title goes (and False): `<slug>.md`, else the first free of
        `<slug>-2.md`, `<slug>-3.md`...

        Why: different titles make one slug ("C++ build flags" and "C build flags", "Café"
        and "Cafe", "Foo" and "foo", long titles sharing their first 80 characters), and
        the second write replaced the first page. A file name belongs to one page; a page
        that does not parse is someone's, and is not taken over either.
        """
        title = " ".join(title.split())
        family = self.slug_family(folder, title)
        for path, page_title in family:
            if page_title is not None and " ".join(page_title.split()) == title:
                return path, True
        for path, page_title in family:
            if page_title is None and self._may_be_titled(path, title):
                raise PageError(
                    f"{path} may be the page titled {title!r}, but its front matter does not parse: fix it "
                    "(`wiki-memory review` says where), then write again; nothing was written"
                )
        taken = {path for path, _ in family}
        slug = slugify(title)
        n = 1
        while True:
            path = f"{folder}/{slug}.md" if n == 1 else f"{folder}/{slug}-{n}.md"
            if path not in taken:
                return path, False
            n += 1

    def _may_be_titled(self, path: str, title: str) -> bool:
        """Whether a page that does not parse may carry `title`: its `title:` line says so,
        or it has none to say otherwise (a write would make a `-2` copy beside it)."""
        head = self.read_bytes(path)[:8192].decode("utf-8", "replace")
        found = re.search(r"^title:[ \t]*(.*?)[ \t]*$", head, re.M)
        if found is None:
            return True
        written = found.group(1).strip("'\"")
        return " ".join(written.split()).casefold() == title.casefold()

    def case_clash(self, tree_id: bytes | None, path: str) -> str | None:
        """A path in the tree that differs from `path` only in case (`Notes/x.md` beside
        `notes/x.md`), or None. Why it matters: on macOS and Windows the two are one file, so
        a clone there loses one page and shows the other as changed."""
        if tree_id is None:
            return None
        parts = path.split("/")
        current: bytes | None = tree_id
        walked: list[str] = []
        for part in parts:
            if current is None:
                return None
            names = {item.path.decode("utf-8", "surrogateescape"): item for item in self.tree(current).iteritems()}
            if part in names:
                item = names[part]
                current = item.sha if item.mode == TREE_MODE else None
                walked.append(part)
                continue
            folded = part.casefold()
            for name in names:
                if name.casefold() == folded:
                    return "/".join([*walked, name])
            return None
        return None

    def find_by_slug(self, title: str, rev: str | bytes | None = None) -> str | None:
        """The page titled `title` among those its slug names in the undated folders: the
        one with exactly that title, else the one whose title differs only in case; when no
        page has that title, the page whose file name is its slug."""
        matches: list[str] = []
        titles: dict[str, str] = {}
        wanted = " ".join(title.split())
        for kind, folder in FOLDERS.items():
            if kind in DATED_TYPES:
                continue
            for path, page_title in self.slug_family(folder, wanted, rev):
                if page_title is not None and " ".join(page_title.split()).casefold() == wanted.casefold():
                    matches.append(path)
                    titles[path] = " ".join(page_title.split())
        if not matches:
            # No page has that title: a name whose slug is a page's file name (`retry-policy`,
            # `Retry policy!`) names that page, as it always did.
            slug = slugify(wanted)
            for kind, folder in FOLDERS.items():
                if kind not in DATED_TYPES and self.blob_at(f"{folder}/{slug}.md", rev):
                    return f"{folder}/{slug}.md"
            return None
        try:
            return one_match(wanted, matches, titles)
        except NotFoundError:
            return None  # several: the full lookup says which

    def _find_by_path(self, ref: str, rev: str | bytes | None) -> str | None:
        """`ref` as a path (with or without `.md`) committed at `rev`; None if it is not one.
        A path that escapes the wiki is refused, and an uncommitted file is named as such."""
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
            if (
                len(refused) < 2
                and rev is None
                and (self.context.root / candidate).is_file()
                and not is_ignored(candidate)
            ):
                raise NotFoundError(
                    f"{candidate} is not committed yet: your edits become memory once "
                    "committed (`wiki-memory watch --once`, or any write)"
                )
        return None


def one_match(ref: str, matches: list[str], titles: dict[str, str]) -> str:
    """The one page `ref` names among `matches` (found by id, or by title in any case):
    with several, the one titled exactly `ref`; else NotFoundError naming them."""
    if len(matches) > 1:
        exact = [p for p in matches if titles.get(p) == ref.strip()]
        matches = exact if len(exact) == 1 else matches
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise NotFoundError(f"{ref!r} names {len(matches)} pages: {', '.join(matches)}; give a path")
    raise NotFoundError(f"no page with path, title or id {ref!r}")


def page_type_counts(store: Store) -> dict[str, int]:
    """Pages per type, by folder (fast: no page is parsed)."""
    counts: dict[str, int] = {}
    for path, _ in store.page_files():
        page_type = type_from_path(path) or "other"
        counts[page_type] = counts.get(page_type, 0) + 1
    return counts
