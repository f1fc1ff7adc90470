"""The editor watcher: commit what a person saves in the wiki folder as their own edit.

Editors save in several steps (write a temporary file and rename it over the page; vim's
`.swp` and `4913` probes, `~` backups, Emacs' `.#` locks, JetBrains' `___jb_tmp___`), so
events are only noted as they come, and a path is committed once its folder has been
quiet for a moment (`quiet` seconds; at most `max_wait` after the first event of a
burst). What is committed is decided by the store, from the files as they are then,
not from the events: temporary files are ignored, a rename is one commit
(`edit: <old> -> <new>`), a deletion is committed, and our own writes (an agent's page)
are recognised as already committed. A page with broken front matter is committed all
the same (the person's text is never lost) and reported once, until it is fixed.

watchdog is imported when a watcher starts.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wiki_memory import logs
from wiki_memory.errors import PageError, WikiMemoryError
from wiki_memory.pages import parse_page
from wiki_memory.store import Author, Edit, Store, is_ignored, is_page_path

if TYPE_CHECKING:
    from wiki_memory.index import Index

log = logs.Log("watch")

QUIET = 0.5  # seconds a burst of events must have been over before its files are committed
MAX_WAIT = 5.0  # a file saved continuously is still committed this often
RESCAN = 60.0  # a full scan this often when nothing happens (events a platform dropped)
_IGNORED_EVENTS = frozenset({"opened", "closed_no_write"})


class Watcher:
    """Follows a wiki folder and commits each settled change as the person's edit.

    `on_edit(edit)` hears about each commit, `on_problem(message)` about pages that do not
    parse and anything that kept a change from being committed (it is retried).
    With the project's open search `index`, the index is updated for the pages of
    each batch of commits.
    """

    def __init__(
        self,
        store: Store,
        *,
        quiet: float = QUIET,
        max_wait: float = MAX_WAIT,
        rescan: float = RESCAN,
        on_edit: Callable[[Edit], None] | None = None,
        on_problem: Callable[[str], None] | None = None,
        author: Author | None = None,
        index: Index | None = None,
    ):
        self.store = store
        self.quiet = quiet
        self.max_wait = max_wait
        self.rescan = rescan
        self.author = author
        self.on_edit = on_edit or (lambda edit: log.info("%s %s", edit.commit[:8], edit.subject))
        self.on_problem = on_problem or (lambda message: log.warning("%s", message))
        self.edits: list[Edit] = []  # every commit this watcher made
        self._root = str(store.root)  # watchdog reports paths under the one it was given
        self._cond = threading.Condition()
        self._paths: set[str] = set()
        self._full_scan = False
        self._first: float | None = None
        self._last = 0.0
        self._last_scan = time.monotonic()
        self._stopping = False
        self._broken: set[str] = set()  # pages reported as not parsing, until they are fixed
        self._refused: set[str] = set()  # files whose names cannot be committed, reported once
        self._failures = 0
        self._not_before = 0.0  # after a failed commit, wait before trying again
        self._observer: Any = None
        self._index = index  # the project's search index, owned by the caller

    # Events (the observer's thread) ------------------------------------------------------

    def _relative(self, path: str | bytes) -> str | None:
        rel = os.path.relpath(os.fsdecode(path), self._root).replace(os.sep, "/")
        if rel == "." or rel.startswith("../") or rel == "..":
            return None
        return rel

    def note(self, event: Any) -> None:
        """Record a filesystem event (watchdog's); the work happens in `step`."""
        if event.event_type in _IGNORED_EVENTS:
            return
        paths = [event.src_path] + ([event.dest_path] if getattr(event, "dest_path", "") else [])
        wanted: list[str] = []
        full = False
        for path in paths:
            rel = self._relative(path)
            if rel is None or is_ignored(rel):
                continue
            if event.is_directory:
                # A folder deleted or renamed takes its pages with it; in a folder just
                # created, files may come and go before its watch is in place: look at
                # everything (a scan compares stat data with git's index, so it is cheap).
                full = full or event.event_type in ("deleted", "moved", "created")
            else:
                wanted.append(rel)
        if not wanted and not full:
            return
        with self._cond:
            self._paths.update(wanted)
            self._full_scan = self._full_scan or full
            now = time.monotonic()
            if self._first is None:
                self._first = now
            self._last = now
            self._cond.notify_all()

    # Committing (the caller's thread) -----------------------------------------------------

    def _take(self) -> tuple[list[str] | None, bool]:
        paths, full = sorted(self._paths), self._full_scan
        self._paths.clear()
        self._full_scan = False
        self._first = None
        return (None if full else paths), bool(paths) or full

    def step(self, timeout: float | None = None) -> list[Edit]:
        """Wait (at most `timeout` seconds) for a burst of changes to settle, then commit it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                if self._stopping:
                    return []
                if self._paths or self._full_scan:
                    settle = min(self._last + self.quiet, (self._first or now) + self.max_wait)
                    settle = max(settle, self._not_before)
                    if now >= settle:
                        paths, _ = self._take()
                        break
                    wait = settle - now
                elif self.rescan and now - self._last_scan >= self.rescan:
                    paths = None
                    break
                else:
                    wait = self.rescan - (now - self._last_scan) if self.rescan else 3600.0
                if deadline is not None:
                    if now >= deadline:
                        return []
                    wait = min(wait, deadline - now)
                self._cond.wait(max(wait, 0.001))
        return self.commit(paths)

    def commit(self, paths: list[str] | None = None) -> list[Edit]:
        """Commit the hand edits among `paths` (None: anywhere in the wiki), re-index, and
        report pages that do not parse. A failure is reported and the paths retried."""
        if paths is None:
            self._last_scan = time.monotonic()
        refused: dict[str, str] = {}
        try:
            edits = self.store.commit_edits(paths, self.author, refused=refused)
        except (WikiMemoryError, OSError) as e:
            # A git command holding the index, a full disk: try again, less often each time.
            self._failures += 1
            delay = min(60.0, 2.0**self._failures)
            what = "the changes" if paths is None else ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")
            self.on_problem(f"could not commit {what} yet ({e}); retrying in {delay:.0f} s")
            with self._cond:
                if paths is None:
                    self._full_scan = True
                else:
                    self._paths.update(paths)
                self._last = time.monotonic()
                self._first = self._first or self._last
                self._not_before = self._last + delay
            return []
        self._failures = 0
        self._not_before = 0.0
        for path, why in refused.items():
            if path not in self._refused:
                self._refused.add(path)
                self.on_problem(f"{why}: not committed; rename the file to keep it in memory")
        for edit in edits:
            self.edits.append(edit)
            self.on_edit(edit)
        if edits:
            self._check_pages(edits)
            self._reindex()
        return edits

    def _check_pages(self, edits: list[Edit]) -> None:

        for edit in edits:
            for path in edit.paths:
                if not is_page_path(path):
                    continue
                if path in edit.deleted:
                    self._broken.discard(path)
                    continue
                try:
                    text = self.store.read_bytes(path).decode("utf-8", errors="replace")
                    parse_page(text, path)
                except PageError as e:
                    if path not in self._broken:
                        self._broken.add(path)
                        self.on_problem(f"{e} (committed as you wrote it; fix the front matter and save again)")
                    continue
                except WikiMemoryError:
                    continue
                if path in self._broken:
                    self._broken.discard(path)
                    self.on_problem(f"{path}: front matter fixed")

    def _reindex(self) -> None:
        if self._index is None:
            return
        try:
            self._index.sync(self.store)
        except Exception as e:  # noqa: BLE001 - the index is derived: the commit stands, the index catches up later
            self.on_problem(f"the search index was not updated ({e})")

    # Running ----------------------------------------------------------------------------

    def once(self) -> list[Edit]:
        """Commit whatever is pending in the whole wiki (`watch --once`)."""
        return self.commit(None)

    def start(self) -> None:
        """Start following the folder, after committing what changed while nobody watched."""
        from watchdog.events import (
            FileSystemEventHandler,  # deferred: watchdog, only for a watcher that follows the editor (not --once)
        )
        from watchdog.observers import (
            Observer,  # deferred: watchdog, only for a watcher that follows the editor (not --once)
        )

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                watcher.note(event)

        self._stopping = False
        self._observer = Observer()
        self._observer.schedule(Handler(), str(self.store.root), recursive=True)
        self._observer.start()
        self.commit(None)

    def run(self, stop: threading.Event | None = None) -> None:
        """Commit settled changes until `stop` is set (or Ctrl-C in the caller's thread)."""
        if self._observer is None:
            self.start()
        while not self._stopping and not (stop is not None and stop.is_set()):
            self.step(timeout=0.2 if stop is not None else 1.0)

    def stop(self) -> list[Edit]:
        """Stop following the folder; what is still pending is committed now."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        with self._cond:
            self._take()
        # Everything, not only what was noted: events still queued at stop are not lost.
        return self.commit(None)

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
