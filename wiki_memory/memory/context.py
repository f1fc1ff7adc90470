"""The context every part of a `Memory` shares: the project, its store (opened on first use,
created on first write, with `project.json`) and its search index, attached so that every
commit made through the store lands in it; and the stamp that tells other processes the
wiki's history was rewritten."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from wiki_memory.config import Project, replace_file, resolve_project
from wiki_memory.errors import NotFoundError, WikiMemoryError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiki_memory.index import Index
    from wiki_memory.store import Store


#: Touched in the wiki's `.git/wiki-memory/` whenever its history is rewritten (`forget`, or
#: a sync adopting another machine's rewrite), so that other processes reopen it.
REWRITE_STAMP = "history-rewritten"


class NoMemoryError(NotFoundError):
    """The project has no wiki yet (nothing was ever written)."""


def project_paths(project: Project) -> dict[str, object]:
    """The project's name and every path of it (`wiki-memory path --json`, and `status`)."""
    return {
        "id": project.id,
        "name": project.name,
        "root": str(project.root) if project.root else None,
        "wiki": str(project.wiki),
        "index": str(project.index_path),
        "journal": str(project.journal_dir),
        "home": str(project.home),
    }


def write_project_file(project: Project) -> None:
    """`project.json` beside the wiki: which code repository the memory belongs to (how
    `--project ID` and the MCP `project` argument find it again)."""
    project.home.mkdir(parents=True, exist_ok=True)
    info = {
        "id": project.id,
        "name": project.name,
        "root": str(project.root) if project.root else None,
        "identity": project.identity,
        "wiki": str(project.wiki),
    }
    path = project.home / "project.json"
    text = json.dumps(info, indent=2) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    replace_file(path, text)


class MemoryContext:
    """The project, its store and its index, each opened once, on first use; one per
    `Memory`, handed to each of its parts."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._store: Store | None = None
        self._index: Index | None = None
        self._index_failed = False
        self.index_error: str | None = None  # why the index could not be opened, if it could not
        self._rewrite_seen = self._rewrite_stamp()

    @classmethod
    def at(cls, directory: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> MemoryContext:
        """The context of the project of `directory` (default: the working directory)."""
        return cls(resolve_project(directory, env))

    @property
    def wiki(self) -> Path:
        return self.project.wiki

    @property
    def exists(self) -> bool:
        """Does the project have a wiki yet?"""
        return (self.project.wiki / ".git").is_dir()

    def _rewrite_stamp(self) -> int | None:
        try:
            return os.stat(self.project.wiki / ".git" / "wiki-memory" / REWRITE_STAMP).st_mtime_ns
        except OSError:
            return None

    def mark_rewritten(self) -> None:
        """The wiki's history was rewritten by this process: other processes are told (a
        long-running MCP server reopens the wiki and the index on its next call)."""
        (self.wiki / ".git" / "wiki-memory" / REWRITE_STAMP).write_text(f"{time.time_ns()}\n")
        self._rewrite_seen = self._rewrite_stamp()

    def _reopen_if_rewritten(self) -> None:
        """Trigger: another process rewrote the wiki's history (`forget`, a sync adopting one).
        Why: the open repository holds the deleted packs' files, and the index connection a
        deleted file with the forgotten text; both are reopened (a stat per call)."""
        stamp = self._rewrite_stamp()
        if stamp != self._rewrite_seen:
            self._rewrite_seen = stamp
            self.close()

    def store(self, *, create: bool = False) -> Store:
        """The project's store; with `create`, the wiki (and `project.json`) is made on first
        use, else a project with no wiki yet is NoMemoryError."""
        self._reopen_if_rewritten()
        if self._store is None:
            self._store = self._open_store(create)
            # Every commit through this store lands in the search index at once (its words;
            # its vectors too when the model is loaded in this process).
            index = self.index
            if index is not None:
                index.attach(self._store)
        return self._store

    def _open_store(self, create: bool) -> Store:
        from wiki_memory.store import Store  # deferred: dulwich; `wiki-memory search` starts without the store

        if self.exists:
            try:
                store = Store(self.project.wiki)
                if store.head() is not None:
                    return store
                store.close()
            except WikiMemoryError:
                pass
        if not create:
            raise NoMemoryError(
                f"no memory yet for project {self.project.name} ({self.project.wiki}): nothing has been "
                "written; run `wiki-memory init`, or write a page"
            )
        self._refuse_a_plain_folder()
        from wiki_memory.store.create import (
            clean_unfinished,  # deferred: dulwich; `wiki-memory search` starts without the store
        )
        from wiki_memory.store.lock import (
            WriterLock,  # deferred: dulwich; `wiki-memory search` starts without the store
        )

        # Trigger: two sessions of a new project end at once, and both find no wiki.
        # Why: each would build a repository; the lock makes the second open the first's.
        self.project.home.mkdir(parents=True, exist_ok=True)
        wiki = self.project.wiki
        with WriterLock(self.project.home / ".create-wiki.lock", recover=lambda since: clean_unfinished(wiki, since)):
            store = Store.create(self.project.wiki)
        write_project_file(self.project)
        return store

    def _refuse_a_plain_folder(self) -> None:
        """Trigger: the wiki is outside the home (`WIKI_MEMORY_STORE`, a trusted `store`) and
        names a folder that holds files but no git repository.
        Why: turning someone's folder into our repository (and committing into it) is never
        what they meant; a new or empty folder is fine."""
        wiki = self.project.wiki
        if (wiki / ".git").exists() or wiki == self.project.home / "wiki":
            return
        try:
            held = next((p.name for p in wiki.iterdir()), None)
        except (FileNotFoundError, NotADirectoryError):
            held = None if not wiki.exists() else wiki.name
        if held is not None:
            raise WikiMemoryError(
                f"{wiki} is a folder with files in it and no git repository; wiki-memory will not make it one. "
                "Point the store at a new folder, or at an existing wiki"
            )

    @property
    def index(self) -> Index | None:
        """The search index, opened on first use and attached to the store (every commit
        through it is indexed at once); None when it cannot be opened (`index_error` says
        why): the index is derived data, and memory is written without it."""
        self._reopen_if_rewritten()
        if self._index is None and not self._index_failed:
            from wiki_memory.index import Index  # deferred: the index, opened on first use

            try:
                self._index = Index.open(self.project)
            except WikiMemoryError as e:
                self._index_failed = True
                self.index_error = str(e)
                print(
                    f"wiki-memory: warning: the search index is unavailable ({e}); `wiki-memory reindex` rebuilds it",
                    file=sys.stderr,
                )
                return None
            if self._store is not None:
                self._index.attach(self._store)
        return self._index

    @property
    def index_is_open(self) -> bool:
        return self._index is not None

    @property
    def open_index(self) -> Index | None:
        """The index if this process has opened it already (never opens it)."""
        return self._index

    def require_index(self) -> Index:
        index = self.index
        if index is None:
            raise WikiMemoryError(f"the search index is unavailable ({self.index_error})")
        return index

    def close(self) -> None:
        index, store = self._index, self._store
        self._index = self._store = None
        if index is not None:
            index.close()
        if store is not None:
            store.close()
