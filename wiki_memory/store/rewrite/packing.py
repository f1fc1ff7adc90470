"""Packing a rewritten history: one pack of every object the refs reach, then every other
pack and loose object deleted (and the reflogs expired), so that no trace of what was
forgotten is left on the disk."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.objects import Commit, ObjectID, ShaFile, Tag, Tree
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError
from wiki_memory.store.durable import fsync_dir, fsync_file
from wiki_memory.store.rewrite.walk import GITLINK_MODE

if TYPE_CHECKING:
    from wiki_memory.store.store import Store


def prune(store: Store) -> int:
    """Keep only what the refs reach: one pack of it; the reflogs expired and every other
    pack and loose object deleted, as `forget` leaves a wiki. For a history adopted from
    elsewhere (a sync after another machine's forget): the old history's objects go.
    Returns how many object files (loose objects and packs) were deleted."""
    with store.lock:
        repo = store.repo
        tips = [sha for ref, sha in repo.refs.as_dict().items() if ref != b"HEAD"]  # tag objects kept as they are
        keep = pack_objects(repo, reachable(repo, {}, tips))
        return drop_unreachable(repo, store.git_dir, keep)


def reachable(repo: Repo, new: Mapping[ObjectID, ShaFile], tips: Iterable[ObjectID]) -> Iterator[ShaFile]:
    """Every object the tips reach, each once: from `new` (a rewrite's objects, not written
    yet), else from the repository."""
    seen: set[ObjectID] = set()
    stack = list(tips)
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        obj = new.get(sha) or repo[sha]
        yield obj
        if isinstance(obj, Commit):
            stack.append(obj.tree)
            stack.extend(obj.parents)
        elif isinstance(obj, Tree):
            stack.extend(entry.sha for entry in obj.iteritems() if entry.mode != GITLINK_MODE)
        elif isinstance(obj, Tag):
            stack.append(obj.object[1])


def pack_objects(repo: Repo, reachable: Iterable[ShaFile]) -> str:
    """Write the objects as one pack, on the disk before anything names it; the pack's file
    name without extension."""
    objects = [(obj, None) for obj in reachable]
    pack_dir = Path(repo.object_store.path) / "pack"
    before = {p.name for p in pack_dir.glob("pack-*.pack")}
    written = repo.object_store.add_objects(objects)
    new = [p.name for p in pack_dir.glob("pack-*.pack") if p.name not in before]
    if new:
        # On the disk before the journal that names it, and before any ref points into it.
        for name in new:
            for suffix in (".pack", ".idx"):
                fsync_file(pack_dir / name.replace(".pack", suffix))
        fsync_dir(pack_dir)
        return new[0].removesuffix(".pack")
    if written is not None:  # the same objects were packed already: that pack is the one
        return f"pack-{written.name().decode('ascii')}"
    raise ConflictError("the rewritten history could not be packed")


def drop_unreachable(repo: Repo, git_dir: Path, keep: str) -> int:
    """Expire the reflogs, then delete every pack and loose object but the pack `keep`,
    which holds all the refs need: the forgotten objects are gone from disk. Returns how
    many objects' files (loose objects and packs) went."""
    logs = git_dir / "logs"
    for path in sorted(logs.rglob("*"), reverse=True) if logs.exists() else ():
        if path.is_file():
            path.unlink()
    for name in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD"):
        (git_dir / name).unlink(missing_ok=True)
    removed = 0
    objects_dir = Path(repo.object_store.path)
    # Indexes over the old packs and commits (git's, if git ran here) would name the dropped ones.
    for derived in ("info/commit-graph", "info/packs", "pack/multi-pack-index"):
        (objects_dir / derived).unlink(missing_ok=True)
    graphs = objects_dir / "info" / "commit-graphs"
    for path in graphs.iterdir() if graphs.is_dir() else ():
        path.unlink()
    for entry in objects_dir.iterdir():
        if len(entry.name) == 2 and entry.is_dir():
            for loose in entry.iterdir():
                loose.unlink()
                removed += 1
            entry.rmdir()
    for pack in (objects_dir / "pack").iterdir():
        if pack.name.startswith("pack-") and not pack.name.startswith(keep + "."):
            pack.unlink()
            removed += pack.suffix == ".pack"
    repo.object_store.close()  # forget the deleted packs' handles; they reopen on demand
    return removed
