"""Merging two machines' wikis, page by page, so that nothing either side wrote is lost.

The rules, for each file that changed since the common ancestor:

- changed on one side only: that side's version is taken (an edit, a new page, a deletion);
- changed on both sides: merged line by line (merge3) when the changes do not overlap.
  Front-matter bookkeeping never conflicts by itself: `updated` takes the later value,
  `created` the earlier, list keys (`tags`, `sources`, ...) take both sides' additions
  and removals; the body is then merged on its own;
- overlapping changes: both versions are kept. The page keeps this machine's version,
  with a link to `<page>.conflict-<host>-<date>.md`, which holds the other side's version
  as a page of its own, named for the machine that wrote it (the `Host:` trailer of its
  commit; the remote's name when the commit has none);
- deleted on one side and edited on the other: kept, edited;
- renamed on one side (same content or the same page id) and edited on the other: the
  edit is merged into the page at its new path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wiki_memory.errors import PageError

if TYPE_CHECKING:
    from wiki_memory.store import Store

FILE_MODE = 0o100644
LATER_WINS = frozenset({"updated"})
EARLIER_WINS = frozenset({"created"})
LIST_KEYS = frozenset({"tags", "sources", "aliases", "related", "links"})
_MISSING: Any = object()
_CLOSING = re.compile(rb"^-{3,}[ \t]*\r?\n?$|^\.\.\.[ \t]*\r?\n?$")

Entry = tuple[int, bytes]  # (mode, blob id)
SideChanges = dict[str, tuple["bytes | None", "bytes | None"]]  # path -> (base blob, this side's blob)


@dataclass
class MergeResult:
    """What a merge does to our side (`changes`, path -> bytes or None) and why."""

    changes: dict[str, bytes | None] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    received: list[str] = field(default_factory=list)  # changed on their side only
    merged: list[str] = field(default_factory=list)  # changed on both, merged line by line
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (page, copy of the other side's)
    kept: list[str] = field(default_factory=list)  # deleted on one side, edited on the other
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old, new) with the other's edit


# Lines -------------------------------------------------------------------------------------


def merge_lines(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> list[bytes] | None:
    """A clean line merge, or None where the two sides changed the same lines."""
    import merge3  # deferred: merge3 only for a page edited on both sides

    out: list[bytes] = []
    for group in merge3.Merge3(base, ours, theirs).merge_groups():
        if group[0] == "conflict":
            return None
        out.extend(group[1])
    return out


def _lines(data: bytes | None) -> list[bytes]:
    return data.splitlines(True) if data else []


def _split_front_matter(data: bytes) -> tuple[bytes, bytes] | None:
    """(front matter block including both `---` lines, body), or None without one."""
    lines = data.splitlines(True)
    if not lines or lines[0].rstrip(b"\r\n").rstrip() != b"---":
        return None
    for i in range(1, len(lines)):
        if _CLOSING.match(lines[i]):
            return b"".join(lines[: i + 1]), b"".join(lines[i + 1 :])
    return None


def _meta(data: bytes, path: str) -> dict[str, Any] | None:
    from wiki_memory.pages import (  # deferred: the page model loads PyYAML
        parse_page,
    )

    try:
        page = parse_page(data.decode("utf-8", errors="surrogateescape"), path)
    except PageError:
        return None
    return dict(page.meta) if page.has_front_matter else None


def _merge_list(base: Any, ours: Any, theirs: Any) -> list[Any] | None:
    lists = [[] if v is _MISSING or v is None else v for v in (base, ours, theirs)]
    if not all(isinstance(v, list) for v in lists):
        return None
    b, o, t = lists
    removed_by_them = [x for x in b if x not in t]
    out = [x for x in o if x not in removed_by_them]
    out += [x for x in t if x not in out and x not in b]
    return out


def merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any] | None:
    """Front matter merged key by key, or None when a key was changed on both sides."""
    keys = list(ours) + [k for k in theirs if k not in ours]
    out: dict[str, Any] = {}
    for key in keys:
        b, o, t = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if o == t:
            value = o
        elif o == b:
            value = t
        elif t == b:
            value = o
        elif key in LATER_WINS or key in EARLIER_WINS:
            # Bookkeeping: the later `updated` (the earlier `created`) wins; ISO 8601 sorts as text.
            present = [v for v in (o, t) if v is not _MISSING and v is not None]
            pick = max if key in LATER_WINS else min
            value = pick(present, key=str) if present else _MISSING
        elif key in LIST_KEYS:
            value = _merge_list(b, o, t)
            if value is None:
                return None
        else:
            return None
        if value is not _MISSING:
            out[key] = value
    return out


def merge_text(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """Both sides' changes to one file, or None if they overlap (or the file is binary)."""
    if b"\0" in ours or b"\0" in theirs or (base and b"\0" in base):
        return None
    lines = merge_lines(_lines(base), _lines(ours), _lines(theirs))
    if lines is not None:
        return b"".join(lines)
    if path.endswith(".md"):
        return _merge_page(path, base, ours, theirs)
    return None


def _merge_page(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """A page whose whole-text merge conflicted: front matter by key, then the body."""
    o_split, t_split = _split_front_matter(ours), _split_front_matter(theirs)
    if o_split is None or t_split is None:
        return None
    o_meta, t_meta = _meta(ours, path), _meta(theirs, path)
    if o_meta is None or t_meta is None:
        return None
    b_split = _split_front_matter(base) if base else None
    b_meta = (_meta(base, path) if base and b_split else None) or {}
    meta = merge_meta(b_meta, o_meta, t_meta)
    if meta is None:
        return None
    body = merge_lines(_lines(b_split[1] if b_split else base), _lines(o_split[1]), _lines(t_split[1]))
    if body is None:
        return None
    if meta == o_meta:
        head = o_split[0]  # the front matter exactly as written, when it is one side's
    elif meta == t_meta:
        head = t_split[0]
    else:
        from wiki_memory.pages.document import (  # deferred: the page model loads PyYAML
            render_meta,
        )

        head = b"---\n" + render_meta(meta).encode("utf-8") + b"---\n"
    return head + b"".join(body)


# Conflicts ---------------------------------------------------------------------------------


def conflict_path(path: str, host: str, date: str, taken: Callable[[str], bool]) -> str:
    """`notes/x.md` -> `notes/x.conflict-<host>-<date>.md` (then `-2`, `-3` if taken)."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""  # `.gitignore`, `Makefile`
    n = 1
    while True:
        suffix = f".conflict-{host}-{date}" + (f"-{n}" if n > 1 else "")
        candidate = (folder + "/" if folder else "") + stem + suffix + (dot + ext if dot else "")
        if not taken(candidate):
            return candidate
        n += 1


def conflict_copy(path: str, data: bytes, page_path: str) -> bytes:
    """The other side's version, kept beside the page: a page of its own (new id,
    `conflict_of` naming the page) with its text unchanged; any other file as it was."""
    if not path.endswith(".md"):
        return data
    from wiki_memory.pages import (  # deferred: the page model loads PyYAML
        new_id,
        parse_page,
        render_page,
    )

    try:
        page = parse_page(data.decode("utf-8"), path)
    except (PageError, UnicodeDecodeError):
        return data
    if not page.has_front_matter:
        return data
    return render_page(page.with_meta(id=new_id(), conflict_of=page_path)).encode("utf-8")


def with_conflict_link(data: bytes, copy_path: str, host: str, other: str) -> bytes:
    """This machine's version of the page, with a note linking to the other side's."""
    link = copy_path.removesuffix(".md")
    note = (
        f"> **Sync conflict**: this page was changed on {host} and on {other} at the same "
        f"lines. This is the version from {host}; the version from {other} is kept in "
        f"[[{link}]]. Merge what you need into this page, then delete that one.\n"
    )
    text = data if data.endswith(b"\n") or not data else data + b"\n"
    return text + b"\n" + note.encode("utf-8")


# Trees -------------------------------------------------------------------------------------


def _side_changes(store: Store, base_tree: bytes | None, tree: bytes) -> SideChanges:
    return {path: (old, new) for path, old, new in store.changed_files(base_tree, tree)}


def _entry(store: Store, tree: bytes | None, path: str) -> Entry | None:
    if tree is None:
        return None
    found = store.tree_entry(tree, path)
    return found if found is not None and found[0] != 0o040000 else None


def _data(store: Store, entry: Entry | None) -> bytes | None:
    return store.repo[entry[1]].as_raw_string() if entry else None


def _page_id(data: bytes | None) -> str | None:
    if not data:
        return None
    meta = _meta(data, "x.md")
    value = meta.get("id") if meta else None
    return str(value) if value else None


def _renames(store: Store, changes: SideChanges) -> dict[str, str]:
    """old -> new for files one side renamed (same blob, else the same page id)."""
    deleted = {p: old for p, (old, new) in changes.items() if new is None and old is not None}
    added = {p: new for p, (old, new) in changes.items() if old is None and new is not None}
    if not deleted or not added:
        return {}
    found: dict[str, str] = {}
    by_blob: dict[bytes, list[str]] = {}
    for path, blob in sorted(deleted.items()):
        by_blob.setdefault(blob, []).append(path)
    for path, blob in sorted(added.items()):
        if by_blob.get(blob):
            found[by_blob[blob].pop(0)] = path
    ids: dict[str, str] = {}
    for path, blob in sorted(deleted.items()):
        if path not in found and path.endswith(".md"):
            page_id = _page_id(store.repo[blob].as_raw_string())
            if page_id:
                ids.setdefault(page_id, path)
    for path, blob in sorted(added.items()):
        if path in found.values() or not path.endswith(".md") or not ids:
            continue
        page_id = _page_id(store.repo[blob].as_raw_string())
        if page_id in ids:
            found[ids.pop(page_id)] = path
    return found


def merge_trees(
    store: Store,
    base_tree: bytes | None,
    ours_tree: bytes,
    theirs_tree: bytes,
    *,
    host: str,
    date: str,
    source: str,
    their_host: Callable[[str], str] | None = None,
) -> MergeResult:
    """How to turn our tree into the merge of both sides: the changes to commit on ours.

    `host` names this machine in the note a conflicted page gets; `their_host(path)` names
    the machine whose version of `path` is kept as a conflict copy (default: `source`,
    the remote's name).
    """
    ours = _side_changes(store, base_tree, ours_tree)
    theirs = _side_changes(store, base_tree, theirs_tree)
    merge = _TreeMerge(
        store,
        base_tree,
        ours_tree,
        theirs_tree,
        host=host,
        date=date,
        their_host=their_host or (lambda _path: source),
        taken=set(ours) | set(theirs),
    )
    # Renamed on one side, edited on the other: the edit follows the page to its new path.
    merge.follow_renames(theirs, ours, we_renamed=False)
    merge.follow_renames(ours, theirs, we_renamed=True)
    for path in sorted(set(ours) | set(theirs)):
        if path not in merge.handled:
            merge.merge_path(path)
    return merge.result


@dataclass
class _TreeMerge:
    """One merge of two trees with their common base, as `merge_trees` runs it."""

    store: Store
    base_tree: bytes | None
    ours_tree: bytes
    theirs_tree: bytes
    host: str
    date: str
    their_host: Callable[[str], str]
    taken: set[str]  # paths that exist or will: a conflict copy must not land on one
    handled: set[str] = field(default_factory=set)  # paths a rename already merged
    result: MergeResult = field(default_factory=MergeResult)

    def follow_renames(self, side: SideChanges, other: SideChanges, *, we_renamed: bool) -> None:
        """Merge the other side's edit of each page `side` renamed into the page at its new path."""
        side_tree, other_tree = (self.ours_tree, self.theirs_tree) if we_renamed else (self.theirs_tree, self.ours_tree)
        store, result = self.store, self.result
        for old, new in _renames(store, side).items():
            other_old = _entry(store, other_tree, old)
            base_old = _entry(store, self.base_tree, old)
            if (
                other_old is None
                or base_old is None
                or other_old[1] == base_old[1]
                or new in other
                or old in self.handled
                or new in self.handled
            ):
                continue
            renamed = _entry(store, side_tree, new)
            assert renamed is not None
            base_data, other_data, renamed_data = _data(store, base_old), _data(store, other_old), _data(store, renamed)
            assert other_data is not None and renamed_data is not None
            if we_renamed:
                merged = merge_text(new, base_data, renamed_data, other_data)
                if merged is None:
                    self.keep_both(new, renamed_data, other_old, ours_mode=renamed[0], theirs_path=old)
                elif merged != renamed_data:
                    result.changes[new] = merged
                    result.modes[new] = renamed[0]
            else:
                merged = merge_text(new, base_data, other_data, renamed_data)
                if merged is None:
                    self.keep_both(new, other_data, renamed, ours_mode=other_old[0])
                else:
                    result.changes[new] = merged
                    result.modes[new] = renamed[0]
                result.changes[old] = None
            result.renamed.append((old, new))
            self.handled.update((old, new))

    def merge_path(self, path: str) -> None:
        """Merge one path that changed on either side (and was not part of a rename)."""
        store, result = self.store, self.result
        b = _entry(store, self.base_tree, path)
        o = _entry(store, self.ours_tree, path)
        t = _entry(store, self.theirs_tree, path)
        if o == t or t == b:
            return  # the same on both sides, or changed on ours only
        if o == b:
            result.changes[path] = _data(store, t)
            if t is not None:
                result.modes[path] = t[0]
            result.received.append(path)
            return
        if t is None:  # they deleted what we edited: kept, edited
            result.kept.append(path)
            return
        if o is None:  # we deleted what they edited: kept, edited
            result.changes[path] = _data(store, t)
            result.modes[path] = t[0]
            result.kept.append(path)
            return
        ours_data, theirs_data = _data(store, o), _data(store, t)
        assert ours_data is not None and theirs_data is not None
        if o[1] == t[1]:
            return  # same content, only the mode differs: ours stands
        merged = merge_text(path, _data(store, b), ours_data, theirs_data)
        if merged is None:
            self.keep_both(path, ours_data, t, ours_mode=o[0])
            return
        if merged != ours_data:
            result.changes[path] = merged
            result.modes[path] = o[0]
        result.merged.append(path)

    def keep_both(
        self,
        path: str,
        ours_data: bytes,
        theirs_entry: Entry,
        *,
        ours_mode: int = FILE_MODE,
        theirs_path: str | None = None,
    ) -> None:
        """Overlapping changes: ours stays at `path` with a link to a copy of theirs beside it."""
        other = self.their_host(theirs_path or path)
        copy = conflict_path(path, other, self.date, self._is_taken)
        self.taken.add(copy)
        theirs_data = _data(self.store, theirs_entry) or b""
        self.result.changes[copy] = conflict_copy(copy, theirs_data, path)
        self.result.modes[copy] = FILE_MODE
        self.result.changes[path] = (
            with_conflict_link(ours_data, copy, self.host, other) if path.endswith(".md") else ours_data
        )
        self.result.modes[path] = ours_mode
        self.result.conflicts.append((path, copy))

    def _is_taken(self, path: str) -> bool:
        return (
            path in self.taken
            or _entry(self.store, self.ours_tree, path) is not None
            or _entry(self.store, self.theirs_tree, path) is not None
        )
