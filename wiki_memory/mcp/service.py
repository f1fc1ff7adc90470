"""The memory operations behind the MCP tools, as plain Python: one `Workspace` per project
(its `Store` and `Index`, opened once and kept), and functions that take a workspace and a
caller and return the result models.

A workspace does all its work on one thread of its own: dulwich repositories and SQLite
connections are not to be shared between threads, and one thread per project also
serialises the calls that reach it. Writers in other processes are kept out by the store's
cross-process lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from wiki_memory.config import Project
from wiki_memory.errors import ConflictError, NotFoundError, WikiMemoryError
from wiki_memory.mcp import edits
from wiki_memory.mcp.models import (
    CommitOut,
    DeleteOutput,
    HandoffOutput,
    HistoryOutput,
    LinkOut,
    LinksOutput,
    PageOutput,
    ProjectRef,
    RecentOutput,
    RecentPage,
    SearchHit,
    SearchOutput,
    WriteOutput,
)
from wiki_memory.mcp.scope import Caller

log = logging.getLogger("wiki_memory.mcp")

T = TypeVar("T")

MAX_BODY_BYTES = 2 * 1024 * 1024  # the store's page limit; a memory page should be far shorter
MAX_TITLE = 200
MAX_QUERY = 2000
FALLBACK_AGENT = "mcp-client"
VECTOR_SLICE_S = 1.0  # embedding between calls: the longest a call waits behind it


class InputError(WikiMemoryError):
    """An argument a caller can fix (empty body, a title over the limit, ...)."""


class Workspace:
    """One project open in the server: its store and index, opened on first use, kept."""

    def __init__(self, project: Project):
        self.project = project
        self.ref = ProjectRef(id=project.id, name=project.name, root=str(project.root) if project.root else None)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"wiki-memory-{project.id}")
        self._store: Any = None
        self._index: Any = None
        self._closed = False
        self._vectors_queued = False  # touched on the workspace thread only

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        """Run `fn(self, *args, **kwargs)` on the workspace's thread."""
        return self._executor.submit(self._run, fn, args, kwargs)

    def _run(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        try:
            return fn(self, *args, **kwargs)
        finally:
            self._queue_vectors()

    def _queue_vectors(self) -> None:
        """After a call, queue a slice of embedding behind whatever is queued.

        Why: a write embeds its chunks for a second at most and a search catches up a second's
        worth, so a huge page or an import would make every search wait a second for a long
        time; worked off in slices between calls, the backlog goes while the server is idle,
        and a call waits for one slice at most."""
        index = self._index
        if self._closed or self._vectors_queued or index is None or not index.embedder.loaded:
            return
        try:
            if not index.may_lack_vectors():
                return
        except Exception:  # noqa: BLE001 - the call's own error, if any, is what the caller hears about
            return
        self._vectors_queued = True
        try:
            self._executor.submit(self._vectors_slice)
        except RuntimeError:  # shut down
            self._vectors_queued = False

    def _vectors_slice(self) -> None:
        self._vectors_queued = False
        if self._closed or self._index is None:
            return
        try:
            more = self._index.embed_some(VECTOR_SLICE_S)
        except Exception:  # derived data: the next search or `reindex` tries again
            log.debug("embedding between calls failed", exc_info=True)
            return
        if more:
            self._queue_vectors()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """The same, waiting for the result (for callers that are not async)."""
        return self.submit(fn, *args, **kwargs).result()

    # Opened lazily, on the workspace thread -------------------------------------------

    def store(self, create: bool = False) -> Any:
        """The project's store; None when the wiki does not exist yet and `create` is false."""
        if self._store is None:
            from wiki_memory.store import Store

            wiki = self.project.wiki
            if not (wiki / ".git").is_dir():
                if not create:
                    return None
                from wiki_memory.cli import write_project_file

                self._store = Store.create(wiki)
                write_project_file(self.project)
            else:
                self._store = Store(wiki)
        return self._store

    def index(self) -> Any:
        """The project's search index, attached to the store (our writes reach it at once; the
        index catches up by itself with what other processes and people committed)."""
        store = self.store()
        if store is None:
            return None
        if self._index is None:
            from wiki_memory.index import Index

            self._index = Index.open(self.project).attach(store)
        return self._index

    def warm(self) -> None:
        """Open what the first call will need while the client is still connecting: the store,
        the index, and the index brought up to the wiki's HEAD (words only; the embedding
        model loads on the first search that needs it)."""
        index = self.index()
        if index is not None:
            from wiki_memory.index import read_head

            if read_head(self.project.wiki) != index.head:
                index.sync(self.store(), embed=False)

    def close(self) -> None:
        def _close(ws: Workspace) -> None:
            ws._closed = True
            for thing in (ws._index, ws._store):
                closer = getattr(thing, "close", None)
                if closer is not None:
                    try:
                        closer()
                    except Exception:  # closing is best effort
                        log.debug("closing %r failed", thing, exc_info=True)

        try:
            self.call(_close)
        finally:
            self._executor.shutdown(wait=False)


class Workspaces:
    """Every project this server process has touched, each opened once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Workspace] = {}

    def get(self, project: Project) -> Workspace:
        key = str(project.wiki)
        with self._lock:
            ws = self._open.get(key)
            if ws is None:
                ws = self._open[key] = Workspace(project)
            return ws

    def close(self) -> None:
        with self._lock:
            open_, self._open = self._open, {}
        for ws in open_.values():
            ws.close()


# Helpers -----------------------------------------------------------------------------


def _author(caller: Caller) -> Any:
    from wiki_memory.store import Author

    return Author.agent(caller.agent or FALLBACK_AGENT)


def _require_store(ws: Workspace) -> Any:
    store = ws.store()
    if store is None:
        raise NotFoundError(
            f"no memory yet in project {ws.project.name} ({ws.project.wiki}): nothing has "
            "been written; `write` creates it"
        )
    return store


def _check_text(name: str, value: str, *, limit: int = MAX_BODY_BYTES) -> str:
    if not value or not value.strip():
        raise InputError(f"`{name}` is empty")
    size = len(value.encode("utf-8"))
    if size > limit:
        raise InputError(
            f"`{name}` is {size:,} bytes, over the {limit:,}-byte limit: a memory page should be "
            "far shorter; write the essentials and link to the source"
        )
    return value


def _check_title(title: str) -> str:
    title = " ".join((title or "").split())
    if not title:
        raise InputError("`title` is empty")
    if len(title) > MAX_TITLE:
        raise InputError(
            f"`title` is {len(title)} characters; keep it under {MAX_TITLE} (a title names the "
            "page, the body holds the detail)"
        )
    return title


def _check_tags(tags: Sequence[str] | None) -> list[str] | None:
    if tags is None:
        return None
    clean: list[str] = []
    for tag in tags:
        tag = " ".join(str(tag).split())
        if not tag:
            raise InputError("tags may not be empty strings")
        if "," in tag or len(tag) > 60:
            raise InputError(f"tag {tag[:60]!r}: one short word or phrase per tag, no commas")
        if tag not in clean:
            clean.append(tag)
    return clean


def _with_source(sources: Iterable[str], caller: Caller) -> list[str]:
    out = list(sources)
    if caller.source and caller.source not in out:
        out.append(caller.source)
    return out


def _find(ws: Workspace, store: Any, ref: str, rev: str | None = None) -> str:
    """The path of the page `ref` names (a path, a title or an id)."""
    if not ref or not ref.strip():
        raise InputError("`page` is empty: give a page's path, title or id")
    if rev is None:
        found = _find_by_index(ws, store, ref.strip())
        if found is not None:
            return found
    return store.find(ref, rev)


def _find_by_index(ws: Workspace, store: Any, ref: str) -> str | None:
    """A page found without `Store.find`'s scan, when the index is in step with the wiki.

    Why: `Store.find` parses every page to match a title or an id it cannot derive a path
    from (15 s at 10,000 pages here), and so for every name that matches nothing; the index
    has every page's title and id in one table. The order is the store's: a path, a title's
    conventional path, then a title or id. None means "ask the store" (a refused path, a file
    not committed yet, an index that is behind or unavailable).
    """
    import sqlite3

    from wiki_memory.errors import PathError
    from wiki_memory.index import read_head
    from wiki_memory.pages import FOLDERS, slugify
    from wiki_memory.pages.model import DATED_TYPES
    from wiki_memory.store.paths import normalize_path

    index = ws.index()
    if index is None or index.head is None or index.head != read_head(ws.project.wiki):
        return None
    candidates = []
    for candidate in (ref, ref + ".md"):
        try:
            candidates.append(normalize_path(candidate))
        except PathError:
            continue
    if not candidates or any((store.root / c).is_file() and not store.exists(c) for c in candidates):
        return None  # refused (`../x.md`), or written by hand and not committed: the store says so
    slug = slugify(ref)
    candidates += [f"{folder}/{slug}.md" for kind, folder in FOLDERS.items() if kind not in DATED_TYPES]
    for path in candidates:
        if store.exists(path):
            return path
    try:
        # The index's `pages` table (path, id, title); should it change, the store answers.
        rows = index.conn.execute("SELECT path, id, title FROM pages").fetchall()
    except sqlite3.Error:
        return None
    wanted = ref.casefold()
    matches = sorted(path for path, page_id, title in rows if page_id == ref or (title or "").casefold() == wanted)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise NotFoundError(f"{ref!r} names {len(matches)} pages: {', '.join(matches)}; give a path")
    raise NotFoundError(f"no page with path, title or id {ref!r}")


def _page_output(ws: Workspace, page: Any, rev: str | None = None, **fields: Any) -> PageOutput:
    from wiki_memory.pages import CORE_KEYS

    return PageOutput(
        project=ws.ref,
        path=page.path,
        id=page.id,
        title=page.title,
        type=page.type,
        tags=list(page.tags),
        status=page.status,
        created=page.created,
        updated=page.updated,
        sources=list(page.sources),
        body=page.body,
        rev=rev,
        extra=_jsonable({k: v for k, v in page.meta.items() if k not in CORE_KEYS}),
        **fields,
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # dates a person typed unquoted, and anything else YAML can make


def _write_output(ws: Workspace, result: Any, operation: str = "write", replaced: int | None = None) -> WriteOutput:
    return WriteOutput(
        project=ws.ref,
        path=result.path,
        id=result.page.id,
        title=result.page.title,
        commit=result.commit,
        created=result.created,
        changed=result.changed,
        operation=operation,
        replaced=replaced,
    )


# The operations ------------------------------------------------------------------------


def search(
    ws: Workspace, query: str, k: int = 8, type: str | None = None, tag: str | None = None, max_chars: int | None = None
) -> SearchOutput:
    query = " ".join((query or "").split())
    if not query:
        raise InputError("`query` is empty: say what you are looking for, in words or identifiers")
    if len(query) > MAX_QUERY:
        raise InputError(f"`query` is {len(query):,} characters; a search query should be a sentence or a few keywords")
    index = ws.index()
    if index is None:
        return SearchOutput(project=ws.ref, query=query, results=[], note="this project has no memory yet")
    found = index.search(query, k=k, type=type, tag=tag, max_chars=max_chars)
    hits = [
        SearchHit(
            path=r.path,
            title=r.title,
            type=r.type,
            heading=r.heading or "",
            snippet=r.snippet,
            score=round(float(r.score), 6),
            retrievers=list(r.retrievers),
            tags=list(getattr(r, "tags", ()) or ()),
            status=getattr(r, "status", "active") or "active",
            updated=getattr(r, "updated", None),
        )
        for r in found
    ]
    note = None
    if index.embedder.error:
        note = f"searched by words only: no embedding model ({index.embedder.error[:160]})"
    return SearchOutput(project=ws.ref, query=query, results=hits, note=note)


def read(ws: Workspace, page: str, rev: str | None = None) -> PageOutput:
    store = _require_store(ws)
    rev = rev.strip() if rev and rev.strip() else None
    commit = store.resolve_rev(rev) if rev else None
    path = _find(ws, store, page, commit)
    found = store.read(path, commit)
    note = None
    if commit is None and store.pending([path]):
        note = (
            "a person has edited this page and not committed it yet; this is the committed text "
            "(their edit becomes memory at the next write)"
        )
    links, backlinks = _links(ws, path) if commit is None else ([], [])
    return _page_output(ws, found, commit, links=links, backlinks=backlinks, note=note)


def _links(ws: Workspace, path: str) -> tuple[list[LinkOut], list[str]]:
    index = ws.index()
    if index is None:
        return [], []
    return [LinkOut(target=link.target, path=link.path) for link in index.links(path)], list(index.backlinks(path))


def links(ws: Workspace, page: str) -> LinksOutput:
    store = _require_store(ws)
    path = _find(ws, store, page)
    out, back = _links(ws, path)
    return LinksOutput(project=ws.ref, path=path, links=out, backlinks=back)


def write(
    ws: Workspace,
    caller: Caller,
    title: str,
    body: str,
    type: str,
    tags: Sequence[str] | None = None,
    path: str | None = None,
) -> WriteOutput:
    from wiki_memory.pages import FOLDERS, PAGE_TYPES, Page, path_for, slugify
    from wiki_memory.pages.model import DATED_TYPES
    from wiki_memory.store.paths import normalize_path

    title = _check_title(title)
    body = _check_text("body", body)
    if type not in PAGE_TYPES:
        raise InputError(f"unknown type {type!r}: one of {', '.join(PAGE_TYPES)}")
    if type == "handoff":
        raise InputError("handoffs are written with `handoff_write` (summary, done, failed, next steps)")
    clean_tags = _check_tags(tags)
    target = normalize_path(path) if path and path.strip() else path_for(title, type)
    store = ws.store(create=True)
    with store.lock:
        if not (path and path.strip()) and type not in DATED_TYPES and not store.exists(target):
            # Trigger: the same title already has a page of another type (gotchas/x.md vs notes/x.md).
            # Why: writing would make a second page of that title; updating it would change its type.
            slug = slugify(title)
            for other_type, folder in FOLDERS.items():
                other = f"{folder}/{slug}.md"
                if other_type != type and store.exists(other):
                    raise ConflictError(
                        f"a {other_type} page titled like this exists: {other}; pass "
                        f"path={other!r} to update it, or choose another title"
                    )
        store.commit_pending(paths=[target])  # the person's words first, so none is overwritten
        existing = _existing(store, target)
        page = Page.new(
            title,
            type,
            body,
            tags=clean_tags if clean_tags is not None else (list(existing.tags) if existing else []),
            sources=_with_source(existing.sources if existing else (), caller),
            status=existing.status if existing else "active",
            path=target,
        )
        result = store.write(page, _author(caller), session_id=caller.session_id, agent=caller.agent)
    return _write_output(ws, result)


def _existing(store: Any, path: str) -> Any:
    from wiki_memory.errors import PageError

    if not store.exists(path):
        return None
    try:
        return store.read(path)
    except PageError:
        return None  # broken front matter: the write replaces it; its text stays in history


def edit(
    ws: Workspace,
    caller: Caller,
    page: str,
    operation: str,
    text: str | None = None,
    heading: str | None = None,
    find: str | None = None,
    replace: str | None = None,
    expected_count: int = 1,
    status: str | None = None,
    superseded_by: str | None = None,
) -> WriteOutput:
    from wiki_memory.pages import STATUSES

    if operation not in edits.OPERATIONS:
        raise InputError(f"unknown operation {operation!r}: one of {', '.join(edits.OPERATIONS)}")
    store = _require_store(ws)
    with store.lock:
        path = _find(ws, store, page)
        store.commit_pending(paths=[path])  # edit what the person sees, not a stale copy
        current = store.read(path)
        replaced: int | None = None
        updated = current
        if operation == "append":
            updated = current.with_body(edits.append(current.body, _check_text("text", text or ""), heading))
        elif operation == "replace_section":
            if not heading:
                raise InputError("replace_section needs `heading` (the section's heading) and `text`")
            if text is not None and text.strip():
                _check_text("text", text)
            updated = current.with_body(edits.replace_section(current.body, heading, text or ""))
        elif operation == "find_replace":
            if find is None or replace is None:
                raise InputError("find_replace needs `find` and `replace` (and `expected_count` if not 1)")
            body, replaced = edits.find_replace(current.body, find, replace, expected_count)
            updated = current.with_body(body)
        else:  # set_status
            if status not in STATUSES:
                raise InputError(f"set_status needs `status`: one of {', '.join(STATUSES)}")
            successor = None
            if superseded_by:
                successor = _find(ws, store, superseded_by)
            elif status == "superseded":
                raise InputError("a superseded page names its successor: give `superseded_by`")
            updated = current.with_meta(status=status, superseded_by=successor if status == "superseded" else None)
        if not updated.body.strip() or updated.body.strip() == f"# {updated.title}":
            raise InputError("the edit would leave the page empty; use `delete` to remove a page")
        _check_text("body", updated.body)
        if caller.source and updated.has_front_matter:
            updated = updated.with_meta(sources=_with_source(updated.sources, caller))
        result = store.write(
            updated,
            _author(caller),
            session_id=caller.session_id,
            agent=caller.agent,
            message=f"update: {path.removesuffix('.md')} ({operation})",
        )
    return _write_output(ws, result, operation, replaced)


def delete(ws: Workspace, caller: Caller, page: str) -> DeleteOutput:
    store = _require_store(ws)
    with store.lock:
        path = _find(ws, store, page)
        commit = store.delete(path, _author(caller), session_id=caller.session_id, agent=caller.agent)
    return DeleteOutput(project=ws.ref, path=path, commit=commit)


MAX_RECENT_COMMITS = 5000  # how far back `recent` looks for pages of a rare type


def recent(ws: Workspace, n: int = 10, type: str | None = None) -> RecentOutput:
    """The pages changed most recently (by commit, so hand edits count), newest first."""
    store = ws.store()
    head = store.head() if store is not None else None
    if head is None:
        return RecentOutput(project=ws.ref, pages=[])
    out: list[RecentPage] = []
    seen: set[str] = set()
    repo = store.repo
    trees: dict[bytes, dict[bytes, tuple[int, bytes]]] = {}
    in_step = _index_in_step(ws)
    for walked, entry in enumerate(repo.get_walker(include=[head])):
        if walked >= MAX_RECENT_COMMITS:
            break
        commit = entry.commit
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None
        fresh = [p for p in sorted(_changed_files(repo, parent_tree, commit.tree, trees)) if p not in seen]
        seen.update(fresh)
        author = commit.author.decode("utf-8", "replace").split(" <", 1)[0]
        subject = commit.message.decode("utf-8", "replace").split("\n", 1)[0]
        for path, meta in _page_meta(ws, store, fresh, in_step).items():
            if type and meta["type"] != type:
                continue
            out.append(RecentPage(path=path, **meta, commit=commit.id.decode(), author=author, subject=subject))
            if len(out) >= n:
                return RecentOutput(project=ws.ref, pages=out)
    return RecentOutput(project=ws.ref, pages=out)


def _changed_files(
    repo: Any, old: bytes | None, new: bytes, trees: dict[bytes, Any], prefix: str = ""
) -> Iterable[str]:
    """Files added or changed from tree `old` to tree `new`, descending only into folders
    that differ. Why not dulwich's `tree_changes`: it walks every entry of a changed folder
    through Python objects, 20 ms a commit in a 10,000-page wiki; this compares two dicts."""
    if old == new:
        return
    before = _tree_dict(repo, old, trees) if old else {}
    for name, (mode, sha) in _tree_dict(repo, new, trees).items():
        was = before.get(name)
        if was == (mode, sha):
            continue
        path = prefix + name.decode("utf-8", "surrogateescape")
        if mode == 0o040000:
            yield from _changed_files(repo, was[1] if was and was[0] == 0o040000 else None, sha, trees, path + "/")
        else:
            yield path


def _tree_dict(repo: Any, tree_id: bytes, trees: dict[bytes, Any]) -> dict[bytes, tuple[int, bytes]]:
    found = trees.get(tree_id)
    if found is None:
        found = trees[tree_id] = {e.path: (e.mode, e.sha) for e in repo[tree_id].iteritems()}
    return found


def _index_in_step(ws: Workspace) -> Any:
    """The index when it reflects the wiki's HEAD, else None."""
    from wiki_memory.index import read_head

    index = ws.index()
    if index is None or index.head is None or index.head != read_head(ws.project.wiki):
        return None
    return index


def _page_meta(ws: Workspace, store: Any, paths: list[str], index: Any) -> dict[str, dict[str, Any]]:
    """title, type, status, tags, updated of those of `paths` that are pages at HEAD, in order:
    from the index when it is in step (no page parsed), else from the pages themselves."""
    import json
    import sqlite3

    from wiki_memory.errors import PageError
    from wiki_memory.store import is_page_path

    paths = [p for p in paths if is_page_path(p)]
    if not paths:
        return {}
    if index is not None:
        try:
            rows = {}
            for start in range(0, len(paths), 500):
                part = paths[start : start + 500]
                rows.update(
                    {
                        row[0]: row[1:]
                        for row in index.conn.execute(
                            f"SELECT path, title, type, status, tags, updated FROM pages WHERE path IN "
                            f"({', '.join('?' * len(part))})",
                            part,
                        )
                    }
                )
            return {
                p: {
                    "title": rows[p][0],
                    "type": rows[p][1],
                    "status": rows[p][2] or "active",
                    "tags": list(json.loads(rows[p][3] or "[]")),
                    "updated": rows[p][4],
                }
                for p in paths
                if p in rows
            }
        except (sqlite3.Error, ValueError, TypeError):
            pass  # the index's table changed: read the pages
    out = {}
    for path in paths:
        if not store.exists(path):
            continue
        try:
            page = store.read(path)
        except PageError:
            continue
        out[path] = {
            "title": page.title,
            "type": page.type,
            "status": page.status,
            "tags": list(page.tags),
            "updated": page.updated,
        }
    return out


def history(ws: Workspace, page: str | None = None, n: int = 20) -> HistoryOutput:
    from wiki_memory.store.paths import normalize_path

    store = ws.store()
    if store is None:
        return HistoryOutput(project=ws.ref, page=None, commits=[])
    path = None
    if page is not None and page.strip():
        try:
            path = _find(ws, store, page)
        except NotFoundError:
            # A deleted page keeps its history: look its path up in the log.
            path = normalize_path(page if page.strip().endswith(".md") else page.strip() + ".md")
            if not store.log(path, 1):
                raise
    commits = [
        CommitOut(**{k: v for k, v in c.as_dict().items() if k in CommitOut.model_fields}) for c in store.log(path, n)
    ]
    return HistoryOutput(project=ws.ref, page=path, commits=commits)


def handoff(ws: Workspace) -> HandoffOutput:
    """Exactly what a session starting now would be handed (the SessionStart text)."""
    from wiki_memory.consolidate.handoff import handoff_for_next_session

    # Like `wiki-memory handoff`: a context left stale by a write elsewhere is rebuilt first.
    view = handoff_for_next_session(ws.project, refresh=ws.store() is not None)
    if view is None:
        return HandoffOutput(project=ws.ref, text=None, handoffs=[])
    return HandoffOutput(project=ws.ref, text=view.text, handoffs=[str(p) for p in view.handoffs])


def handoff_write(
    ws: Workspace,
    caller: Caller,
    summary: str,
    done: Sequence[str] = (),
    failed: Sequence[str] = (),
    next_steps: Sequence[str] = (),
    open_questions: Sequence[str] = (),
    files: Sequence[str] = (),
) -> WriteOutput:
    """An explicit handoff from the calling agent (the consolidator validates and redacts it)."""
    from wiki_memory.consolidate.handoff import write_explicit_handoff

    store = ws.store(create=True)
    with store.lock:
        result = write_explicit_handoff(
            ws.project,
            store,
            summary=summary,
            done=tuple(done),
            failed=tuple(failed),
            next_steps=tuple(next_steps),
            open_questions=tuple(open_questions),
            files=tuple(files),
            agent=caller.agent or FALLBACK_AGENT,
            session_id=caller.session_id,
        )
    return _write_output(ws, result, "handoff_write")


def page_text(ws: Workspace, path: str) -> str:
    """The file text of a page (the `wiki://page/{path}` resource)."""
    from wiki_memory.pages import render_page

    store = _require_store(ws)
    return render_page(store.read(_find(ws, store, path)))
