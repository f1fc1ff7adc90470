"""The git-backed page store: a wiki is a git repository of Markdown pages, and every
change to a page is one commit, written with dulwich.

`Store` is the one facade over plain parts that share one `context.Context` (the wiki's
root, the dulwich repository, the writer lock) and call each other explicitly:

- `reading.Reader`: objects, files and pages at any revision, finding a page;
- `worktree.WorkTree`: the working tree and the git index as a mirror of HEAD, and a
  person's uncommitted edits (`pending`);
- `commits.Committer`: the one way to commit, as a transaction a killed writer's
  successor finishes;
- `edits.HandEdits`: committing a person's edits as theirs, before any write;
- `history.History`: log, page history (following renames), diffs;
- `writing.Writer`: the page operations (write, move, delete, revert) and the
  fast-forward that sync lands;
- `create`: making a new wiki; `records`: the value objects; `rewrite`: scanning and
  rewriting the whole history (functions over a `Store`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from dulwich.objects import Commit

from wiki_memory.errors import full_disk_is_one_line
from wiki_memory.pages import Page
from wiki_memory.store.commits import Changes, Committer
from wiki_memory.store.context import Context
from wiki_memory.store.create import create_wiki
from wiki_memory.store.edits import HandEdits
from wiki_memory.store.history import History
from wiki_memory.store.reading import Reader
from wiki_memory.store.records import Author, CommitInfo, Edit, WriteResult
from wiki_memory.store.worktree import WorkTree
from wiki_memory.store.writing import Note, Writer


class Store:
    """A wiki: a git repository of Markdown pages. All writes go through `commit`."""

    def __init__(self, root: Path | str):
        context = Context(root)
        self.root, self.repo, self.git_dir = context.root, context.repo, context.git_dir
        self.lock, self.on_commit = context.lock, context.on_commit
        self._context = context
        self._reader = Reader(context)
        self._worktree = WorkTree(context, self._reader)
        self._committer = Committer(context, self._reader, self._worktree)
        self._edits = HandEdits(context, self._reader, self._worktree, self._committer)
        self._history = History(context, self._reader, self._worktree)
        self._writer = Writer(context, self._reader, self._edits, self._committer, self._history)

    @classmethod
    def create(cls, root: Path | str, author: Author | None = None) -> Store:
        """A new wiki at `root`, or the existing one: a normal git repository on `main`,
        made whole or not at all (see `create.create_wiki`)."""
        root = Path(root).absolute()
        create_wiki(root, author)
        return cls(root)

    @property
    def host(self) -> str:
        """This machine's name, as commits record it (`Host:`); settable (a test plays two
        machines), and every part's next commit says the new one."""
        return self._context.host

    @host.setter
    def host(self, name: str) -> None:
        self._context.host = name

    def close(self) -> None:
        self._context.close()

    # Reading ---------------------------------------------------------------------------

    def head(self) -> bytes | None:
        """The commit the branch is at; None in a wiki with no commits."""
        return self._reader.head()

    def resolve_rev(self, rev: str) -> str:
        """The full id of the commit a revision names (`HEAD~2`, a short id)."""
        return self._reader.resolve_rev(rev)

    def tree_entry(self, tree_id: bytes, path: str) -> tuple[int, bytes] | None:
        """(mode, object id) of `path` in a tree, or None."""
        return self._reader.tree_entry(tree_id, path)

    def blob_at(self, path: str, rev: str | bytes | None = None) -> bytes | None:
        """The blob id of `path` at a revision (HEAD by default), or None."""
        return self._reader.blob_at(path, rev)

    def read_bytes(self, path: str, rev: str | bytes | None = None) -> bytes:
        """The bytes of any file at a revision (HEAD by default)."""
        return self._reader.read_bytes(path, rev)

    def read(self, path: str, rev: str | bytes | None = None) -> Page:
        """The page at `path` as committed at `rev` (HEAD by default)."""
        return self._reader.read(path, rev)

    def exists(self, path: str, rev: str | bytes | None = None) -> bool:
        return self._reader.exists(path, rev)

    def files(self, rev: str | bytes | None = None) -> Iterator[tuple[str, bytes]]:
        """(path, blob id) of every file at a revision, in tree order."""
        return self._reader.files(rev)

    def page_files(self, rev: str | bytes | None = None) -> Iterator[tuple[str, bytes]]:
        """(path, blob id) of every page (Markdown file that is memory) at a revision."""
        return self._reader.page_files(rev)

    def pages(self, rev: str | bytes | None = None, *, errors: list[str] | None = None) -> Iterator[Page]:
        """Every page at a revision; a page that does not parse is reported in `errors`."""
        return self._reader.pages(rev, errors=errors)

    def find(self, ref: str, rev: str | bytes | None = None) -> str:
        """The path of a page named by its path, its title or its id."""
        return self._reader.find(ref, rev)

    def find_by_slug(self, title: str, rev: str | bytes | None = None) -> str | None:
        """The page titled `title` among those its slug names (see `Reader.find_by_slug`)."""
        return self._reader.find_by_slug(title, rev)

    def slug_family(self, folder: str, title: str, rev: str | bytes | None = None) -> list[tuple[str, str | None]]:
        """(path, title) of the pages in `folder` named by `title`'s slug, in order."""
        return self._reader.slug_family(folder, title, rev)

    def titled_path(self, folder: str, title: str) -> tuple[str, bool]:
        """Where the page titled `title` is in `folder` (and True), or where a new one goes
        (and False); see `Reader.titled_path`."""
        return self._reader.titled_path(folder, title)

    def case_clash(self, tree_id: bytes | None, path: str) -> str | None:
        """A path in the tree that differs from `path` only in case, or None."""
        return self._reader.case_clash(tree_id, path)

    # History ---------------------------------------------------------------------------

    def changed_files(
        self, old_tree: bytes | None, new_tree: bytes | None
    ) -> list[tuple[str, bytes | None, bytes | None]]:
        """(path, old blob, new blob) for every file that differs between two trees."""
        return self._history.changed_files(old_tree, new_tree)

    def commit_info(self, commit: Commit, with_paths: bool = True) -> CommitInfo:
        return self._history.commit_info(commit, with_paths)

    def log(self, path: str | None = None, n: int | None = 20, *, rev: str | None = None) -> list[CommitInfo]:
        """Commits, newest first: of the whole wiki, or of one page following its renames."""
        return self._history.log(path, n, rev=rev)

    def page_log(
        self, path: str, n: int | None = 20, *, rev: str | None = None
    ) -> list[tuple[CommitInfo, str, str | None]]:
        """The commits that changed one page, newest first, with its path in each and in
        the parent (see `History.page_log`)."""
        return self._history.page_log(path, n, rev=rev)

    def diff(self, rev_a: str | None = None, rev_b: str | None = None, path: str | None = None) -> str:
        """A unified diff: no revision = uncommitted hand edits; one = since it; two = between."""
        return self._history.diff(rev_a, rev_b, path)

    # Hand edits ------------------------------------------------------------------------

    def pending(self, paths: Iterable[str] | None = None, *, refresh: bool = False) -> dict[str, bytes | None]:
        """Files a person changed in the working tree and did not commit (path -> bytes or
        None if deleted); see `WorkTree.pending`."""
        return self._worktree.pending(paths, refresh=refresh)

    def commit_pending(self, author: Author | None = None, paths: Iterable[str] | None = None) -> str | None:
        """Commit what a person edited by hand (all files, or those among `paths`) as their
        edit (`edit: <path>`). None if there was nothing."""
        return self._edits.commit_pending(author, paths)

    def commit_edits(
        self,
        paths: Iterable[str] | None = None,
        author: Author | None = None,
        *,
        group_above: int = 20,
        refused: dict[str, str] | None = None,
    ) -> list[Edit]:
        """Commit a person's hand edits one change at a time, as the watcher does (see
        `HandEdits.commit_edits`). Files that cannot be committed under their name are left
        alone and, given a `refused` dict, listed there with the reason."""
        edits, skipped = self._edits.commit_edits(paths, author, group_above)
        if refused is not None:
            refused.update(skipped)
        return edits

    # Committing ------------------------------------------------------------------------

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
        trailers: Sequence[tuple[str, str]] = (),
    ) -> str | None:
        """Apply `changes` (path -> bytes, or None to delete) as one commit; None if nothing changed.

        A person's uncommitted edits of those files are committed first, as theirs (unless
        `commit_hand_edits` is False: the caller did). `modes` gives a path's file mode where
        the working tree cannot (a file a merge brings in from another machine); otherwise
        the file on disk decides. `from_files`: the changes were read from the working tree
        (hand edits), so the files are left exactly as they are rather than rewritten: a
        person saving again meanwhile, or an editor holding the file open, is never
        disturbed. A full disk is DiskFullError."""
        with self.lock, full_disk_is_one_line(self.root):
            if commit_hand_edits:
                self._edits.before_write(changes)
            message = self._committer.message(subject, session_id, agent, body, trailers)
            return self._committer.commit(
                changes, message, author, parents_extra=parents_extra, modes=modes, from_files=from_files
            )

    def write_tree(self, base_tree: bytes | None, changes: Changes, modes: Mapping[str, int] | None = None) -> bytes:
        """The id of `base_tree` with `changes` applied, its objects written; nothing is
        committed (see `Committer.write_tree`)."""
        return self._committer.write_tree(base_tree, changes, modes)

    def pack(self) -> None:
        """Move every loose object into a pack (under the writer lock)."""
        self._committer.pack()

    # Writing pages ---------------------------------------------------------------------

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
        note = Note(session_id, agent, body, trailers)
        return self._writer.write_many([page], author, note, message, owns)[0]

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
        return self._writer.write_many(pages, author, Note(session_id, agent, body, trailers), message, owns)

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
        return self._writer.move(src, dst, author, title, Note(session_id, agent))

    def delete(self, path: str, author: Author, *, session_id: str | None = None, agent: str | None = None) -> str:
        """Remove a page (it stays in history: `git log --all -- <path>`). Returns the commit id."""
        return self._writer.delete(path, author, Note(session_id, agent))

    def revert(self, rev: str, author: Author, *, session_id: str | None = None, agent: str | None = None) -> str:
        """Undo one commit with a new commit. Later edits to the same lines are kept, or refused."""
        return self._writer.revert(rev, author, Note(session_id, agent))

    def advance(self, target: str | bytes, *, reflog: str = "sync: fast-forward") -> tuple[str, ...]:
        """Move the branch to the commit `target` (a fast-forward to what another machine
        pushed), bringing the working tree and index along for the files that differ.
        Hand edits are committed first. Returns the changed paths."""
        return self._writer.advance(target, reflog)
