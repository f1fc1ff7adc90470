"""A history rewritten by `forget`, as sync meets it on each machine.

**On the machine that forgot**, `forget` deletes the remote-tracking refs: the remote still
has the old history. `remember` records, per remote, the commit its `main` was then. While
that record stands, a plain sync refuses to fetch (it would bring the old history, and what
was forgotten, back); `sync --replace-remote-history` force-pushes with that commit as the
lease, and `sync --keep-remote-history` drops the record (the old history comes back).

**On another machine**, the remote's new `main` no longer contains the commit this machine
last synced with (`tracked`), but contains a rewritten copy of it. `find_rewrite` pairs
each commit of the old history with its copy: a rewrite keeps every header of a commit
(author, committer, dates) and maps its parents, so a copy has the same headers and the
copies of its parents as parents; a commit the rewrite dropped (it only held a forgotten
page) stands for its parent. `adopt` then:

1. learns what was forgotten from the pairs themselves: where a file or message of the old
   commit differs from its copy's `[forgotten]`, the text it replaced; a file the copy no
   longer has is a forgotten page. These texts stay in memory, never printed or stored;
2. replays the commits this machine made since it last synced onto the new history, each
   as a three-way merge of its own change (the conflict copy, if any, named for this
   machine), with the forgotten texts replaced by `[forgotten]` in them too (see `adopt`
   for why) and its changes to forgotten pages left out;
3. moves the branch (the working tree and git index follow), points refs that named old
   commits at their copies or deletes them, and drops the old history's objects
   (`store.rewrite.prune`).

The caller scrubs its journals and logs of the forgotten texts and rebuilds the index.

Only a machine whose last-synced commit was rewritten adopts: a machine that never synced
the rewritten commits, or a fresh clone, simply takes the new history by the usual merge.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref

from wiki_memory.store import Store, litter
from wiki_memory.store.durable import remove_durably, write_durably
from wiki_memory.store.reading import BRANCH
from wiki_memory.store.records import TREE_MODE
from wiki_memory.store.rewrite import FORGOTTEN, prune
from wiki_memory.sync.merge import merge_trees

RECORD = "rewritten.json"
MAX_MARKS = 16  # `[forgotten]` marks in one changed block beyond which its texts are not worked out
_TRACKING = re.compile(r"refs/remotes/([^/]+)/main")


# The record on the machine that forgot -----------------------------------------------------------


def _record_path(store: Store) -> Any:
    return store.git_dir / "wiki-memory" / RECORD


def _load(store: Store) -> dict[str, str]:
    try:
        data = json.loads(_record_path(store).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _save(store: Store, state: Mapping[str, str]) -> None:
    path = _record_path(store)
    if not state:
        remove_durably(path)
        return
    # Durable: it is what keeps the next sync from fetching the forgotten history back.
    write_durably(path, (json.dumps(dict(state), indent=2) + "\n").encode())


def remember(store: Store, refs: Mapping[str, tuple[str, str | None]]) -> list[str]:
    """Record, for each remote whose tracking ref a rewrite deleted (`ForgetReport.refs`:
    ref -> (old commit, None)), the commit the remote's `main` then was: the lease of the
    force-push that replaces it. Returns the remotes' names."""
    state = _load(store)
    names = []
    for ref, (old, new) in refs.items():
        found = _TRACKING.fullmatch(ref)
        if found and new is None:
            # An earlier rewrite's record stands: the remote still has that history.
            state.setdefault(found.group(1), old)
            names.append(found.group(1))
    _save(store, state)
    return names


def recorded(store: Store, remote: str) -> str | None:
    """The commit `remote`'s `main` was when this wiki's history was rewritten, if it was
    and the remote has not been replaced since."""
    return _load(store).get(remote)


def clear(store: Store, remote: str) -> None:
    state = _load(store)
    if state.pop(remote, None) is not None:
        _save(store, state)


# Adopting a rewrite made elsewhere --------------------------------------------------------------


@dataclass
class Replayed:
    """One commit this machine made since its last sync, replayed onto the new history."""

    old: str
    new: str | None  # None: nothing of its change was left
    subject: str
    scrubbed: tuple[str, ...] = ()  # its files that held forgotten text (replaced by [forgotten])
    left_out: tuple[str, ...] = ()  # its changes to forgotten pages, not replayed

    def as_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "subject": self.subject,
            "scrubbed": list(self.scrubbed),
            "left_out": list(self.left_out),
        }


@dataclass
class Adoption:
    """What a sync did to adopt a history another machine rewrote."""

    old_head: str
    new_head: str
    remote_head: str
    rewritten: int  # commits of the old history the remote has as rewritten copies (or dropped)
    replayed: list[Replayed] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (page, the copy of this machine's version)
    forgotten_pages: tuple[str, ...] = ()
    objects_removed: int = 0
    since: str = ""  # the copy of the commit we last synced with: what came in is after it
    changed: tuple[str, ...] = ()  # files the working tree changed in
    # The texts forgotten there, as this machine's old commits held them: for scrubbing its
    # journals and logs. Never printed or serialised.
    forgotten: tuple[bytes, ...] = field(default=(), repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "old_head": self.old_head,
            "new_head": self.new_head,
            "remote_head": self.remote_head,
            "rewritten": self.rewritten,
            "replayed": [r.as_dict() for r in self.replayed],
            "conflicts": [{"page": p, "copy": c} for p, c in self.conflicts],
            "forgotten_pages": list(self.forgotten_pages),
            "forgotten_texts": len(self.forgotten),
            "objects_removed": self.objects_removed,
        }


@dataclass
class Rewrite:
    """Our old history paired with the remote's rewritten one (see `find_rewrite`)."""

    copies: dict[bytes, bytes]  # old commit -> its copy (a dropped one -> the copy of its parent)
    dropped: set[bytes]
    own: list[Commit]  # commits made here since the last sync, parents first
    tracked_copy: bytes  # the copy of the commit we last synced with


def _key(commit: Commit) -> tuple[Any, ...]:
    return (
        commit.author,
        commit.committer,
        commit.author_time,
        commit.author_timezone,
        commit.commit_time,
        commit.commit_timezone,
    )


def _parents_first(commits: Iterable[Commit]) -> list[Commit]:
    by_id: dict[bytes, Commit] = {c.id: c for c in commits}
    order: list[Commit] = []
    seen: set[bytes] = set()
    for start in by_id:
        stack: list[tuple[bytes, bool]] = [(start, False)]
        while stack:
            sha, done = stack.pop()
            if done:
                order.append(by_id[sha])
                continue
            if sha in seen:
                continue
            seen.add(sha)
            stack.append((sha, True))
            stack.extend((p, False) for p in by_id[sha].parents if p in by_id and p not in seen)
    return order


def _walk(store: Store, include: Iterable[bytes], exclude: Iterable[bytes]) -> list[Commit]:
    walker = store.repo.get_walker(include=[ObjectID(i) for i in include], exclude=[ObjectID(e) for e in exclude])
    return [entry.commit for entry in walker]


def find_rewrite(store: Store, ours: bytes, theirs: bytes, tracked: bytes | None) -> Rewrite | None:
    """Our history paired with the remote's, when the remote rewrote what we last synced
    (`tracked`: our remote-tracking ref before this fetch); None otherwise.

    Trigger: `tracked` is no longer an ancestor of the remote's `main`.
    Why pair only what we had synced: a commit we made since cannot have been rewritten
    elsewhere, and two machines committing as the same agent in the same second, on the
    same parent, must never be taken for a rewrite of each other (that would drop ours).
    """
    if tracked is None or ObjectID(tracked) not in store.repo.object_store:
        return None
    published = _walk(store, [tracked], [theirs])
    if not published:
        return None  # it is an ancestor of theirs: nothing was rewritten under us
    pool: dict[tuple[Any, ...], list[Commit]] = defaultdict(list)
    for commit in _walk(store, [theirs], [ours]):
        pool[_key(commit)].append(commit)
    old = {c.id for c in published}
    copies: dict[bytes, bytes] = {}
    dropped: set[bytes] = set()
    for commit in _parents_first(published):
        parents = [copies.get(p) if p in old else p for p in commit.parents]
        if any(p is None for p in parents):
            continue
        mapped = list(dict.fromkeys(p for p in parents if p is not None))  # as the rewrite maps them
        candidates = [c for c in pool.get(_key(commit), ()) if list(c.parents) == mapped]
        if candidates:
            copy = next((c for c in candidates if c.message == commit.message), candidates[0])
            pool[_key(commit)].remove(copy)
            copies[commit.id] = copy.id
        elif len(mapped) == 1 and commit.parents:
            copies[commit.id] = mapped[0]  # dropped: nothing of its change was left
            dropped.add(commit.id)
    if tracked not in copies or len(dropped) == len(copies):
        return None  # the remote's history is not a rewrite of ours: the usual merge
    own = _parents_first(_walk(store, [ours], [theirs, tracked]))
    return Rewrite(copies, dropped, own, copies[tracked])


def _replaced(old: bytes, new: bytes) -> set[bytes]:
    """The texts of `old` that `new` has as `[forgotten]`, block by changed block."""
    if FORGOTTEN not in new:
        return set()
    found: set[bytes] = set()
    a, b = old.splitlines(True), new.splitlines(True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "replace":
            continue
        if i2 - i1 == j2 - j1:  # line for line (a text within lines): each pair on its own
            pairs = list(zip(a[i1:i2], b[j1:j2], strict=True))
        else:  # a text across lines (a key block)
            pairs = [(b"".join(a[i1:i2]), b"".join(b[j1:j2]))]
        for before, after in pairs:
            pieces = after.split(FORGOTTEN)
            if len(pieces) < 2 or len(pieces) > MAX_MARKS + 1:
                continue
            # Literal text between the marks, any text in each: the old text, read against it.
            match = re.fullmatch(b"(.+?)".join(re.escape(piece) for piece in pieces), before, re.S)
            if match:
                found.update(g for g in match.groups() if g != FORGOTTEN)
    return found


def learn(store: Store, rewrite: Rewrite) -> tuple[set[bytes], set[str]]:
    """(texts forgotten, paths of pages forgotten), read from our old commits and their copies."""
    repo = store.repo
    texts: set[bytes] = set()
    pages: set[str] = set()
    blobs: set[tuple[bytes, bytes]] = set()
    seen: set[tuple[bytes, bytes, str]] = set()
    for old_id, copy_id in rewrite.copies.items():
        old: Commit = repo[old_id]  # type: ignore[assignment]
        copy: Commit = repo[copy_id]  # type: ignore[assignment]
        if old_id in rewrite.dropped:
            parent_tree = repo[old.parents[0]].tree  # type: ignore[attr-defined]
            pages.update(
                path
                for path, _, _ in store.changed_files(parent_tree, old.tree)
                if store.tree_entry(copy.tree, path) is None
            )
            continue
        if old.message != copy.message:
            texts |= _replaced(old.message, copy.message)
        _differences(repo, old.tree, copy.tree, "", seen, blobs, pages)
    for before, after in blobs:
        texts |= _replaced(repo[before].as_raw_string(), repo[after].as_raw_string())
    return texts, pages


def _differences(
    repo: Any,
    old: bytes,
    new: bytes,
    prefix: str,
    seen: set[tuple[bytes, bytes, str]],
    blobs: set[tuple[bytes, bytes]],
    gone: set[str],
) -> None:
    """The blob pairs and the paths gone between two trees, each pair of subtrees compared
    once: the copies of 2,000 commits share nearly all of them (dulwich's `tree_changes`
    walked every entry of every differing folder again, for every commit)."""
    if old == new or (old, new, prefix) in seen:
        return
    seen.add((old, new, prefix))
    after = {entry.path: (entry.mode, entry.sha) for entry in repo[new].iteritems()}
    for entry in repo[old].iteritems():
        other = after.get(entry.path)
        if other == (entry.mode, entry.sha):
            continue
        path = prefix + entry.path.decode("utf-8", "replace")
        if other is None:
            # A folder left empty goes with its last page: its files are what went, not the folder.
            gone.update(_files(repo, entry.sha, path + "/") if entry.mode == TREE_MODE else [path])
        elif entry.mode == TREE_MODE and other[0] == TREE_MODE:
            _differences(repo, entry.sha, other[1], path + "/", seen, blobs, gone)
        elif entry.mode != TREE_MODE and other[0] != TREE_MODE:
            blobs.add((entry.sha, other[1]))


def _files(repo: Any, tree: bytes, prefix: str) -> list[str]:
    out: list[str] = []
    for entry in repo[tree].iteritems():
        path = prefix + entry.path.decode("utf-8", "replace")
        out += _files(repo, entry.sha, path + "/") if entry.mode == TREE_MODE else [path]
    return out


def _scrub(data: bytes, texts: Iterable[bytes]) -> bytes:
    for text in texts:
        data = data.replace(text, FORGOTTEN)
    return data


def adopt(store: Store, rewrite: Rewrite, theirs: bytes, *, host: str, remote: str) -> Adoption:
    """Adopt the remote's rewritten history (under the writer lock): replay our own commits
    onto it, move the branch and the refs, drop the old objects.

    Our own commits get the forgotten texts replaced by `[forgotten]` too. Why, rather than
    refusing or keeping them as a conflict copy: the owner of this memory asked for that
    text to be gone from it everywhere; a conflict copy would hold it and push it right
    back, and a refusal would leave this machine on the old history with no way forward but
    being told the secret. They are this machine's own commits, not pushed yet and
    replayed with new ids anyway, and each scrub is reported.
    """
    head = store.head()
    assert head is not None
    texts, pages = learn(store, rewrite)
    ordered = sorted(texts, key=len, reverse=True)  # a longer text before any text inside it
    adoption = Adoption(
        old_head=head.decode(),
        new_head=theirs.decode(),
        remote_head=theirs.decode(),
        rewritten=len(rewrite.copies),
        forgotten_pages=tuple(sorted(pages)),
        forgotten=tuple(ordered),
        since=rewrite.tracked_copy.decode(),
    )
    tip = theirs
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    for commit in rewrite.own:
        tip = _replay(store, commit, tip, ordered, pages, adoption, host=host, remote=remote, date=date)
    adoption.new_head = tip.decode()
    adoption.changed = store.advance(tip, reflog=f"sync: adopted {remote}'s rewritten history")
    _move_other_refs(store, rewrite, remote)
    adoption.objects_removed = prune(store)
    return adoption


def _forgotten_page(path: str, pages: set[str]) -> bool:
    return path in pages or any(path.startswith(p + "/") for p in pages)


def _replay(
    store: Store,
    commit: Commit,
    tip: bytes,
    texts: list[bytes],
    pages: set[str],
    adoption: Adoption,
    *,
    host: str,
    remote: str,
    date: str,
) -> bytes:
    """`commit`'s own change, merged onto `tip` as a new commit; returns the new tip."""
    repo = store.repo
    parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
    tip_tree = repo[tip].tree  # type: ignore[attr-defined]
    base: dict[str, bytes | None] = {}
    mine: dict[str, bytes | None] = {}
    modes: dict[str, int] = {}
    scrubbed, left_out = [], []
    for path, before, after in store.changed_files(parent_tree, commit.tree):
        if _forgotten_page(path, pages):
            left_out.append(path)
            continue
        old_data = repo[before].as_raw_string() if before else None
        new_data = repo[after].as_raw_string() if after else None
        base[path] = _scrub(old_data, texts) if old_data is not None else None
        mine[path] = _scrub(new_data, texts) if new_data is not None else None
        if new_data is not None and mine[path] != new_data:
            scrubbed.append(path)
        entry = store.tree_entry(commit.tree, path)
        if entry is not None:
            modes[path] = entry[0]
    subject = _subject(_scrub(commit.message, texts))

    def shown(paths: list[str]) -> tuple[str, ...]:  # a forgotten text in a file name is not printed
        return tuple(_scrub(p.encode(), texts).decode("utf-8", "replace") for p in paths)

    replayed = Replayed(commit.id.decode(), None, subject, shown(scrubbed), shown(left_out))
    adoption.replayed.append(replayed)
    if not base:
        return tip
    # Both sides of the change laid over the new tip: the merge sees only this change.
    base_tree = store.write_tree(tip_tree, base, modes)
    mine_tree = store.write_tree(tip_tree, mine, modes)
    result = merge_trees(
        store, base_tree, tip_tree, mine_tree, host=remote, date=date, source=host, their_host=lambda _path: host
    )
    tree = store.write_tree(tip_tree, result.changes, result.modes)
    if tree == tip_tree:
        return tip
    adoption.conflicts.extend(result.conflicts)
    new = Commit.from_string(commit.as_raw_string())  # author, committer and dates kept
    new.tree = ObjectID(tree)
    new.parents = [ObjectID(tip)]
    new.message = _scrub(commit.message, texts)
    if new.gpgsig is not None:
        new.gpgsig = None
    litter.add_object(repo.object_store, new)
    replayed.new = new.id.decode()
    return new.id


def _subject(message: bytes) -> str:
    return message.decode("utf-8", "replace").split("\n", 1)[0]


def _move_other_refs(store: Store, rewrite: Rewrite, remote: str) -> None:
    """Refs other than the branch and this remote's tracking ref that name an old commit:
    a tag or branch moves to its copy; a remote-tracking ref (another remote's old view)
    goes. A ref left on the old history would keep the forgotten text on disk."""
    repo = store.repo
    ours = f"refs/remotes/{remote}/main".encode()
    for ref, target in repo.refs.as_dict().items():
        if ref in (b"HEAD", BRANCH, ours) or target not in rewrite.copies:
            continue
        if ref.startswith((b"refs/heads/", b"refs/tags/")):
            repo.refs.set_if_equals(Ref(ref), target, ObjectID(rewrite.copies[target]))
        else:
            repo.refs.remove_if_equals(Ref(ref), target)
