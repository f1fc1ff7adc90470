"""Rewriting a wiki's history: find secrets in every commit, and forget a string or a page for good.

A git-backed memory keeps everything: a secret that reached one commit is in every clone.
`scan(store, rules)` looks for secrets in every commit's changed files and message, with
the rules it is given (the redaction rules: `wiki_memory.capture.redact.find`; the store
does not import capture). `forget(store, strings=..., paths=...)` removes them:

1. under the writer lock, a person's uncommitted edits are committed first (they are
   history too, and may hold the string);
2. every commit reachable from any ref is rewritten in memory, parents first: the string is
   replaced by `[forgotten]` in every file, file name and commit message that holds it; a
   forgotten page is dropped from every commit, under every path its id ever had; authors,
   dates, every other file and every other byte of a message are kept; a commit left with
   no change of its own (it only added the forgotten page) is dropped;
3. one new pack is written with every object the rewritten refs reach;
4. the branch moves with a compare-and-swap (`Store.advance`, so the working tree and the
   git index follow it), tags are rewritten, and remote-tracking refs are deleted: the
   remote still has the old history, and their old ids (in the report) are what a
   force-push with a lease must expect;
5. reflogs are expired and every other pack and loose object is deleted, so that
   `git cat-file --batch-all-objects` holds no trace and `git fsck --full --strict` is clean.

Between 3 and 4, a journal (`.git/wiki-memory/forget-pending`) is written and flushed to
the disk: every ref's old and new value, the remote-tracking refs' old commits (the leases
`sync` needs to replace the remote's history) and what was forgotten. A `forget` killed
after that leaves it; `recover` (run before the next `forget` or `sync`) undoes the
rewrite if no ref had moved yet, and finishes it otherwise. Without it, a forget killed
between moving the refs and recording the leases let the next `sync` fetch the old history
back and push it.

The search index, the journals and the remote are the caller's to bring along.

Why one module of near 600 lines: scanning and forgetting walk the same history the same
way, and the rewrite's steps are only safe in the order above, read together.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tag, Tree
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError
from wiki_memory.store.durable import crash_point, fsync_dir, fsync_file, remove_durably, write_durably
from wiki_memory.store.paths import normalize_path
from wiki_memory.store.reading import BRANCH
from wiki_memory.store.records import TREE_MODE
from wiki_memory.store.store import Store

if TYPE_CHECKING:
    from dulwich.refs import Ref

FORGOTTEN = b"[forgotten]"
FORGOTTEN_NAME = b"forgotten"  # in file names: brackets are no wiki path's
GITLINK_MODE = 0o160000
EMPTY_TREE = Tree().id
JOURNAL = "forget-pending"  # in .git/wiki-memory; not *.json, which `forget` scrubs as a local file
#: Where a forget can be killed, in order (`store.durable.crash_point`): the memory layer adds its own.
CRASH_POINTS = ("forget:packed", "forget:journal", "forget:branch", "forget:refs", "forget:pruned")

#: The rules `scan` applies: text -> (start, end, family) of each secret in it.
Rules = Callable[[str], Iterable[tuple[int, int, str]]]


@dataclass(frozen=True)
class Finding:
    """A secret in a wiki's history. `path` None: in the commit's message; `commit` None:
    in a file not committed yet (a hand edit). `preview` is the line it is on with every
    secret on it redacted: the report never holds one."""

    commit: str | None
    path: str | None
    family: str
    line: int
    preview: str

    def as_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "path": self.path,
            "family": self.family,
            "line": self.line,
            "preview": self.preview,
        }


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


# Scanning --------------------------------------------------------------------------------------


def scan(
    store: Store, rules: Rules, *, include: Iterable[bytes] | None = None, exclude: Iterable[bytes] = ()
) -> list[Finding]:
    """Every secret `rules` finds in the history: each commit's message, and each file
    version once, at the commit that introduced it (oldest first). With `include` or
    `exclude`, only the commits `include` (default: every ref) reaches and `exclude` does
    not: what a sync brought in."""
    repo = store.repo
    seen: set[bytes] = set()
    findings: list[Finding] = []
    tips = [ObjectID(t) for t in include] if include is not None else list(_ref_targets(repo).values())
    stop = [ObjectID(t) for t in exclude]
    if include is None and not stop:
        commits = _commits(repo, tips)
    else:
        commits = [entry.commit for entry in repo.get_walker(include=tips, exclude=stop)][::-1]
    for commit in commits:
        cid = commit.id.decode()
        findings += findings_in(rules, commit.message.decode("utf-8", "replace"), cid, None)
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        for (_, path), (_, mode), (_, sha) in repo.object_store.tree_changes(parent_tree, commit.tree):
            if sha is None or path is None or sha in seen or mode in (TREE_MODE, GITLINK_MODE):
                continue
            seen.add(sha)
            data = repo[sha].as_raw_string()
            if b"\0" in data[:8000]:
                continue  # binary
            findings += findings_in(rules, data.decode("utf-8", "replace"), cid, path.decode("utf-8", "replace"))
    return findings


def findings_in(rules: Rules, text: str, commit: str | None, path: str | None) -> list[Finding]:
    """The secrets `rules` finds in one text (a file version or a commit message)."""
    hits = sorted(rules(text))
    out = []
    for start, end, family in hits:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        pieces, last = [], line_start
        for s, e, f in hits:  # every secret on the line goes, not only this one
            if e > line_start and s < line_end and s >= last:
                pieces += [text[last:s], f"[REDACTED:{f}]"]
                last = min(e, line_end)
        preview = ("".join(pieces) + text[last:line_end]).strip()
        out.append(Finding(commit, path, family, text.count("\n", 0, start) + 1, preview[:200]))
    return out


# The history -------------------------------------------------------------------------------------


def _ref_targets(repo: Repo) -> dict[Ref, ObjectID]:
    """Every ref (HEAD's symbolic link left out) -> the commit it names, tags peeled."""
    targets: dict[Ref, ObjectID] = {}
    for ref, sha in repo.refs.as_dict().items():
        if ref == b"HEAD":
            continue
        obj = repo[sha]
        while isinstance(obj, Tag):
            obj = repo[obj.object[1]]
        if isinstance(obj, Commit):
            targets[ref] = obj.id
    return targets


def _commits(repo: Repo, tips: Iterable[ObjectID]) -> list[Commit]:
    """Every commit the tips reach, each after all its parents."""
    order: list[Commit] = []
    seen: set[ObjectID] = set()
    stack: list[tuple[ObjectID, bool]] = [(sha, False) for sha in tips]
    while stack:
        sha, done = stack.pop()
        if done:
            order.append(repo[sha])  # type: ignore[arg-type]
            continue
        if sha in seen:
            continue
        seen.add(sha)
        stack.append((sha, True))
        stack.extend((p, False) for p in repo[sha].parents if p not in seen)  # type: ignore[attr-defined]
    return order


# A page's id in its front matter, block style (`id: X`) or flow style (`{title: T, id: X}`).
_FRONT_MATTER = re.compile(rb"\A---[ \t]*\r?\n(.{0,4096}?)\r?\n---", re.S)
_PAGE_ID = re.compile(rb"(?:^|[\s{,])id:[ \t]*['\"]?([^\s,'\"}]+)")


class _Rewrite:
    """The rewritten history, built in memory: new objects, and old id -> new id maps."""

    def __init__(self, repo: Repo, needles: Sequence[bytes], purge: Iterable[str]):
        self.repo = repo
        self.needles = tuple(needles)
        self.purge = set(purge)
        self.objects: dict[ObjectID, ShaFile] = {}
        self.blobs: dict[ObjectID, ObjectID] = {}
        self.trees: dict[tuple[ObjectID, str], ObjectID] = {}
        self.commits: dict[ObjectID, ObjectID] = {}  # old -> new (a dropped commit -> what replaced it)
        self.dropped: set[ObjectID] = set()
        self.files: set[str] = set()
        self.tips: dict[Ref, ObjectID] = {}  # ref -> what it names once rewritten
        self.old_trees: dict[ObjectID, ObjectID] = {}  # old commit -> its tree (no second read)
        self.events = 0  # blobs scrubbed, names scrubbed, paths purged: for the first time
        self.touching: set[ObjectID] = set()  # commits whose own change caused events

    def scrub(self, data: bytes, replacement: bytes = FORGOTTEN) -> bytes:
        for needle in self.needles:
            data = data.replace(needle, replacement)
        return data

    def holds(self, data: bytes) -> bool:
        return any(needle in data for needle in self.needles)

    def purged(self, path: str) -> bool:
        return path in self.purge or any(path.startswith(p + "/") for p in self.purge)

    def blob(self, sha: ObjectID) -> ObjectID:
        new = self.blobs.get(sha)
        if new is None:
            data = self.repo[sha].as_raw_string()
            if self.needles and self.holds(data):
                blob = Blob.from_string(self.scrub(data))
                self.objects[blob.id] = blob
                new = blob.id
                self.events += 1
            else:
                new = sha
            self.blobs[sha] = new
        return new

    def tree(self, sha: ObjectID, prefix: str = "") -> ObjectID:
        key = (sha, prefix if self.purge else "")
        new_id = self.trees.get(key)
        if new_id is not None:
            return new_id
        old: Tree = self.repo[sha]  # type: ignore[assignment]
        changes: list[tuple[bytes, bytes | None, int, ObjectID]] = []  # (name, new name or None: gone, ...)
        needles, blobs = self.needles, self.blobs
        for name, mode, sub in old.iteritems():
            path = prefix + name.decode("utf-8", "surrogateescape") if self.purge or mode == TREE_MODE else ""
            if self.purge and self.purged(path):
                self.files.add(path)
                self.events += 1
                changes.append((name, None, mode, sub))
                continue
            new_name = name
            if needles and any(n in name for n in needles):
                new_name = self.scrub(name, FORGOTTEN_NAME)
                self.files.add(prefix + name.decode("utf-8", "surrogateescape"))
                self.events += 1
            if mode == TREE_MODE:
                new_sub = self.tree(sub, path + "/")
            elif mode == GITLINK_MODE:
                new_sub = sub
            else:
                new_sub = blobs.get(sub) or self.blob(sub)
                if new_sub != sub:
                    self.files.add(prefix + name.decode("utf-8", "surrogateescape"))
            if mode == TREE_MODE and new_sub == EMPTY_TREE:
                changes.append((name, None, mode, sub))
            elif new_name != name or new_sub != sub:
                changes.append((name, new_name, mode, new_sub))
        if not changes:
            self.trees[key] = sha
            return sha
        new = Tree.from_raw_string(Tree.type_num, old.as_raw_string())  # a copy: only the changes are applied
        assert isinstance(new, Tree)
        for name, _, _, _ in changes:
            del new[name]
        for _, renamed, mode, new_sub in changes:
            if renamed is not None:
                while renamed in new:  # two names scrubbed alike: keep both
                    renamed = b"_" + renamed
                new[renamed] = (mode, new_sub)
        self.objects[new.id] = new
        self.trees[key] = new.id
        return new.id

    def tree_of(self, commit_id: ObjectID) -> ObjectID:
        if commit_id in self.old_trees and self.commits.get(commit_id) == commit_id:
            return self.old_trees[commit_id]
        obj = self.objects.get(commit_id) or self.repo[commit_id]
        assert isinstance(obj, Commit)
        return obj.tree

    def commit(self, old: Commit) -> None:
        self.old_trees[old.id] = old.tree
        parents = list(dict.fromkeys(self.commits.get(p, p) for p in old.parents))
        events = self.events
        tree = self.tree(old.tree)
        if self.events > events:
            self.touching.add(old.id)  # its tree held something met for the first time: its own change
        message = self.scrub(old.message) if self.needles else old.message
        own_change = not old.parents or old.tree != self.old_trees[old.parents[0]]
        if old.parents and own_change and len(parents) == 1 and tree == self.tree_of(parents[0]):
            self.commits[old.id] = parents[0]  # nothing of its change is left
            self.dropped.add(old.id)
            return
        if tree == old.tree and message == old.message and parents == old.parents:
            self.commits[old.id] = old.id
            return
        new = Commit.from_string(old.as_raw_string())  # every header kept: dates, zones, encoding
        new.tree = tree
        new.parents = parents
        new.message = message
        if new.gpgsig is not None:
            new.gpgsig = None  # a signature of other content would not verify
        self.objects[new.id] = new
        self.commits[old.id] = new.id


def _page_paths(repo: Repo, commits: Sequence[Commit], paths: Iterable[str]) -> set[str]:
    """The given paths and every other path their pages had (same front-matter id):
    "a page with its whole history" follows its renames."""
    wanted = set(paths)
    versions: dict[str, set[ObjectID]] = {}
    for commit in commits:
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        for (_, raw), (_, mode), (_, sha) in repo.object_store.tree_changes(parent_tree, commit.tree):
            if sha is not None and raw is not None and mode not in (TREE_MODE, GITLINK_MODE):
                versions.setdefault(raw.decode("utf-8", "surrogateescape"), set()).add(sha)

    def page_id(sha: ObjectID) -> bytes | None:
        front = _FRONT_MATTER.match(repo[sha].as_raw_string())
        found = _PAGE_ID.search(front.group(1)) if front else None
        return found.group(1) if found else None

    ids = {page_id(sha) for path in wanted for sha in versions.get(path, ())} - {None}
    if ids:
        wanted |= {p for p, shas in versions.items() if p.endswith(".md") and any(page_id(s) in ids for s in shas)}
    return wanted


# Forgetting ----------------------------------------------------------------------------------


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
        refs = _ref_targets(repo)
        history = _commits(repo, refs.values())
        rewrite = _Rewrite(repo, needles, _page_paths(repo, history, targets) if targets else ())
        for commit in history:
            rewrite.commit(commit)
        report = _report(repo, rewrite, history, refs, head, pending, dry_run)
        if dry_run or not report.changed:
            return report
        keep = _write_pack(repo, rewrite, refs)
        crash_point("forget:packed")
        if store.pending():
            raise ConflictError("the wiki was edited during forget; nothing was changed, try again")
        _write_journal(store, rewrite, refs, report, needles)
        crash_point("forget:journal")
        _move_refs(store, rewrite, refs, head)
        crash_point("forget:refs")
        removed = _drop_unreachable(repo, store.git_dir, keep)
        crash_point("forget:pruned")
        if not keep_journal:
            clear_journal(store)
    return replace(report, objects_removed=removed)


# An interrupted forget ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Interrupted:
    """A forget that was killed, as `recover` left it: `finished` (its rewrite had become
    visible, and the refs and objects were brought to its end) or undone (no ref had moved:
    the wiki is as it was). `refs` as `ForgetReport.refs`; `needles` what was forgotten, for
    the caller's own steps (the index, the local files)."""

    finished: bool
    refs: dict[str, tuple[str, str | None]]
    needles: tuple[bytes, ...]


def _journal_path(store: Store) -> Path:
    return store.git_dir / "wiki-memory" / JOURNAL


def interrupted(store: Store) -> bool:
    """A forget was killed and its journal stands (a stat)."""
    return _journal_path(store).exists()


def clear_journal(store: Store) -> None:
    remove_durably(_journal_path(store))


def _write_journal(
    store: Store, rewrite: _Rewrite, refs: dict[Ref, ObjectID], report: ForgetReport, needles: Sequence[bytes]
) -> None:
    """What `recover` needs, on the disk before any ref moves. It holds what is forgotten
    (the local files are scrubbed from it); it goes once the forget is done."""
    repo = store.repo
    moves = {}
    for ref in refs:
        old = repo.refs[ref]
        new = rewrite.tips.get(ref)
        if new != old:
            moves[ref.decode()] = [old.decode(), new.decode() if new is not None else None]
    record = {"version": 1, "moves": moves, "refs": report.refs, "needles": [n.hex() for n in needles]}
    write_durably(_journal_path(store), json.dumps(record).encode())


def _descends(repo: Repo, start: bytes | None, new: bytes, old: bytes) -> bool:
    """Whether the branch at `start` is on the rewritten history (reaches `new`) rather
    than the old one (reaches `old`): a writer may have committed on either since."""
    seen: set[bytes] = set()
    stack = [start] if start is not None else []
    while stack:
        sha = stack.pop()
        if sha == new:
            return True
        if sha == old or sha in seen:
            continue
        seen.add(sha)
        try:
            stack.extend(repo[ObjectID(sha)].parents)  # type: ignore[attr-defined]
        except KeyError:
            continue
    return False


def recover(store: Store) -> Interrupted | None:
    """Bring an interrupted forget to an end, under the writer lock: undone if no ref had
    moved (the journal says which would), else finished: the other refs moved, the old
    history's objects deleted. None when no forget was interrupted. The caller finishes its
    own steps, then `clear_journal`."""
    path = _journal_path(store)
    with store.lock:
        try:
            record = json.loads(path.read_bytes())
            moves = {
                ref.encode(): (old.encode(), new.encode() if new is not None else None)
                for ref, (old, new) in record["moves"].items()
            }
            refs = {ref: (old, new) for ref, (old, new) in record["refs"].items()}
            needles = tuple(bytes.fromhex(n) for n in record["needles"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ConflictError(
                f"{path} (the journal of an interrupted `forget`) is damaged ({e}); delete it and run the forget again"
            ) from None
        repo = store.repo
        current = repo.refs.as_dict()
        branch = moves.get(BRANCH)
        if branch is not None and branch[1] is not None:
            visible = _descends(repo, current.get(BRANCH), branch[1], branch[0])
        else:
            visible = any(current.get(ref) != old for ref, (old, _new) in moves.items())
        if visible:
            for ref, (old, new) in moves.items():
                if current.get(ref) != old:
                    continue  # moved already (or since, by someone else: theirs stands)
                if ref == BRANCH and new is not None:
                    store.advance(new, reflog="forget: history rewritten (finished after an interruption)")
                elif new is None:
                    repo.refs.remove_if_equals(ref, old)
                else:
                    repo.refs.set_if_equals(ref, old, new)
            prune(store)
        return Interrupted(visible, refs, needles)


def prune(store: Store) -> int:
    """Keep only what the refs reach: one pack of it; the reflogs expired and every other
    pack and loose object deleted, as `forget` leaves a wiki. For a history adopted from
    elsewhere (a sync after another machine's forget): the old history's objects go.
    Returns how many object files (loose objects and packs) were deleted."""
    with store.lock:
        repo = store.repo
        tips = [sha for ref, sha in repo.refs.as_dict().items() if ref != b"HEAD"]  # tag objects kept as they are
        keep = _pack(repo, _reachable(repo, _Rewrite(repo, (), ()), tips))
        return _drop_unreachable(repo, store.git_dir, keep)


def _report(
    repo: Repo,
    rewrite: _Rewrite,
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


def _reachable(repo: Repo, rewrite: _Rewrite, tips: Iterable[ObjectID]) -> Iterator[ShaFile]:
    """Every object the tips reach, new or old, each once."""
    seen: set[ObjectID] = set()
    stack = list(tips)
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        obj = rewrite.objects.get(sha) or repo[sha]
        yield obj
        if isinstance(obj, Commit):
            stack.append(obj.tree)
            stack.extend(obj.parents)
        elif isinstance(obj, Tree):
            stack.extend(entry.sha for entry in obj.iteritems() if entry.mode != GITLINK_MODE)
        elif isinstance(obj, Tag):
            stack.append(obj.object[1])


def _new_tips(repo: Repo, rewrite: _Rewrite, refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
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


def _write_pack(repo: Repo, rewrite: _Rewrite, refs: dict[Ref, ObjectID]) -> str:
    """One pack holding everything the rewritten refs reach; returns its file name without
    extension. Until the refs move, the old history stays whole beside it: a crash here
    leaves the wiki as it was."""
    rewrite.tips = _new_tips(repo, rewrite, refs)
    return _pack(repo, _reachable(repo, rewrite, rewrite.tips.values()))


def _pack(repo: Repo, reachable: Iterable[ShaFile]) -> str:
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


def _move_refs(store: Store, rewrite: _Rewrite, refs: dict[Ref, ObjectID], head: bytes | None) -> None:
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


def _drop_unreachable(repo: Repo, git_dir: Path, keep: str) -> int:
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
