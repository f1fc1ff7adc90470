"""Forgetting a string or a page for good: the steps of a forget, in the only order that
is safe (see the package's docstring), and its report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from dulwich.objects import Commit, ObjectID, Tag
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError
from wiki_memory.store.durable import crash_point
from wiki_memory.store.paths import normalize_path
from wiki_memory.store.reading import BRANCH
from wiki_memory.store.rewrite.journal import clear_journal, interrupted, write_journal
from wiki_memory.store.rewrite.packing import drop_unreachable, pack_objects, reachable
from wiki_memory.store.rewrite.rewriter import Rewrite, page_paths
from wiki_memory.store.rewrite.walk import commits_parents_first, ref_targets

if TYPE_CHECKING:
    from dulwich.refs import Ref

    from wiki_memory.store.store import Store

#: Where a forget can be killed, in order (`store.durable.crash_point`): the memory layer adds its own.
CRASH_POINTS = ("forget:packed", "forget:journal", "forget:branch", "forget:refs", "forget:pruned")


@dataclass(frozen=True)
class RewrittenCommit:
    """A commit whose own change or message held what was forgotten."""

    old: str
    new: str | None  # None: nothing of it was left, so it was dropped
    subject: str  # as rewritten
    paths: tuple[str, ...]  # files of its change that were scrubbed or removed
    message: bool  # its message held a forgotten string


@dataclass(frozen=True)
class ForgetReport:
    dry_run: bool
    head_before: str | None
    head_after: str | None
    commits: tuple[RewrittenCommit, ...]
    carried: int  # commits rewritten only because an ancestor was (new ids, same content)
    files: tuple[str, ...]  # every path scrubbed or removed somewhere in history
    refs: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # ref -> (old, new; None: deleted)
    commit_map: dict[str, str | None] = field(default_factory=dict)  # old commit -> new (None: dropped)
    pending_edits: tuple[str, ...] = ()  # uncommitted edits holding it (committed and rewritten unless dry run)
    objects_removed: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.commits or self.files or self.refs)

    def as_dict(self) -> dict[str, object]:
        return {
            "dry_run": self.dry_run,
            "head_before": self.head_before,
            "head_after": self.head_after,
            "commits": [vars(c) for c in self.commits],
            "carried": self.carried,
            "files": list(self.files),
            "refs": {k: list(v) for k, v in self.refs.items()},
            "pending_edits": list(self.pending_edits),
            "objects_removed": self.objects_removed,
        }


def forget(
    store: Store,
    *,
    strings: Iterable[str] = (),
    paths: Iterable[str] = (),
    dry_run: bool = False,
    keep_journal: bool = False,
) -> ForgetReport:
    """Remove every occurrence of `strings` and every version of the pages at `paths` from
    the wiki's whole history; with `dry_run`, only report what would change.
    `keep_journal`: the caller has steps of its own to finish (the memory layer's index and
    local files) and removes the journal (`clear_journal`) once they are done."""
    needles = tuple(dict.fromkeys(s.encode("utf-8") for s in strings if s))
    targets = tuple(normalize_path(p, page=False) for p in paths)
    if not needles and not targets:
        raise ValueError("nothing to forget: give a string or a page path")
    with store.lock:
        if interrupted(store):
            raise ConflictError(
                "an earlier `forget` was interrupted and is not finished: run `wiki-memory forget` or "
                "`wiki-memory sync` again, either finishes it first"
            )
        pending = tuple(
            sorted(
                p
                for p, data in store.pending().items()
                if any(p == t or p.startswith(t + "/") for t in targets)
                or (data is not None and any(n in data for n in needles))
            )
        )
        if not dry_run:
            store.commit_edits()
        repo = store.repo
        head = store.head()
        refs = ref_targets(repo)
        history = commits_parents_first(repo, refs.values())
        rewrite = Rewrite(repo, needles, page_paths(repo, history, targets) if targets else ())
        for commit in history:
            rewrite.commit(commit)
        report = _report(repo, rewrite, history, refs, head, pending, dry_run)
        if dry_run or not report.changed:
            return report
        keep = _write_pack(repo, rewrite, refs)
        crash_point("forget:packed")
        if store.pending():
            raise ConflictError("the wiki was edited during forget; nothing was changed, try again")
        write_journal(store, rewrite.tips, refs, report.refs, needles)
        crash_point("forget:journal")
        _move_refs(store, rewrite, refs, head)
        crash_point("forget:refs")
        removed = drop_unreachable(repo, store.git_dir, keep)
        crash_point("forget:pruned")
        if not keep_journal:
            clear_journal(store)
    return replace(report, objects_removed=removed)


def _report(
    repo: Repo,
    rewrite: Rewrite,
    history: Sequence[Commit],
    refs: dict[Ref, ObjectID],
    head: bytes | None,
    pending: tuple[str, ...],
    dry_run: bool,
) -> ForgetReport:
    commits = []
    carried = 0
    for old in history:
        new = rewrite.commits[old.id]
        if new == old.id:
            continue
        touched = []
        if old.id in rewrite.touching or old.id in rewrite.dropped:
            parent_tree = rewrite.old_trees[old.parents[0]] if old.parents else None
            for (old_path, path), _, (_, sha) in repo.object_store.tree_changes(parent_tree, old.tree):
                name = (path or old_path or b"").decode("utf-8", "surrogateescape")
                if (
                    (sha is not None and rewrite.blobs.get(sha, sha) != sha)
                    or (rewrite.purge and rewrite.purged(name))
                    or (rewrite.needles and rewrite.holds(name.encode("utf-8", "surrogateescape")))
                ):
                    touched.append(name)
        scrubbed = bool(rewrite.needles) and rewrite.holds(old.message)
        if not touched and not scrubbed and old.id not in rewrite.dropped:
            carried += 1
            continue
        kept = None if old.id in rewrite.dropped else new.decode()
        message = rewrite.scrub(old.message) if rewrite.needles else old.message
        subject = message.decode("utf-8", "replace").split("\n", 1)[0]
        commits.append(RewrittenCommit(old.id.decode(), kept, subject, tuple(sorted(set(touched))), scrubbed))
    ref_changes: dict[str, tuple[str, str | None]] = {}
    for ref, target in refs.items():
        new = rewrite.commits[target]
        if new != target:
            moved = ref.startswith((b"refs/heads/", b"refs/tags/"))
            ref_changes[ref.decode()] = (target.decode(), new.decode() if moved else None)
    commit_map = {
        old.decode(): (None if old in rewrite.dropped else new.decode())
        for old, new in rewrite.commits.items()
        if new != old
    }
    return ForgetReport(
        dry_run=dry_run,
        head_before=head.decode() if head else None,
        head_after=next((new.decode() for old, new in rewrite.commits.items() if old == head), None),
        commits=tuple(commits),
        carried=carried,
        files=tuple(sorted(rewrite.files)),
        refs=ref_changes,
        commit_map=commit_map,
        pending_edits=pending,
    )


def _new_tips(repo: Repo, rewrite: Rewrite, refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
    """The refs after the rewrite: branches and tags moved (an annotated tag re-made
    around its new commit), remote-tracking refs whose history changed left out."""
    tips: dict[Ref, ObjectID] = {}
    for ref, target in refs.items():
        new = rewrite.commits[target]
        if new == target:
            tips[ref] = repo.refs[ref]
            continue
        if not ref.startswith((b"refs/heads/", b"refs/tags/")):
            continue
        obj = repo[repo.refs[ref]]
        if isinstance(obj, Tag):
            tag = Tag.from_string(obj.as_raw_string())
            tag.object = (Commit, new)
            tag.message = rewrite.scrub(tag.message) if rewrite.needles else tag.message
            if getattr(tag, "signature", None) is not None:
                tag.signature = None
            rewrite.objects[tag.id] = tag
            new = tag.id
        tips[ref] = new
    return tips


def _write_pack(repo: Repo, rewrite: Rewrite, refs: dict[Ref, ObjectID]) -> str:
    """One pack holding everything the rewritten refs reach; returns its file name without
    extension. Until the refs move, the old history stays whole beside it: a crash here
    leaves the wiki as it was."""
    rewrite.tips = _new_tips(repo, rewrite, refs)
    return pack_objects(repo, reachable(repo, rewrite.objects, rewrite.tips.values()))


def _move_refs(store: Store, rewrite: Rewrite, refs: dict[Ref, ObjectID], head: bytes | None) -> None:
    """The branch by compare-and-swap (the working tree and index follow), then the rest."""
    repo = store.repo
    tips = rewrite.tips
    branch_target = next((target for ref, target in tips.items() if ref == BRANCH), None)
    if head is not None and branch_target is not None and branch_target != head:
        store.advance(branch_target, reflog="forget: history rewritten")
        crash_point("forget:branch")
    for ref in refs:
        if ref == BRANCH:
            continue
        current = repo.refs[ref]
        if ref not in tips:
            repo.refs.remove_if_equals(ref, current)
        elif tips[ref] != current and not repo.refs.set_if_equals(ref, current, tips[ref]):
            raise ConflictError(f"{ref.decode()} moved during forget")
