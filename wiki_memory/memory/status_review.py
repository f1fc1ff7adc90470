"""`Memory.review()`: what in the wiki's lifecycle needs a person or an agent, each item
with the command that resolves it (a `Review` of `ReviewAction`s). Read from the index (no
page is parsed), the code repository's git index (for drift) and the embedding vectors the
index already holds (for duplicates and contradictions).

Kinds, in order:
- `drift`: an active page whose anchored code file changed, went or moved since;
- `expired`: a page past its `expires` date;
- `duplicate`: two pages of one type that say the same (the rule of `distill.dedup`);
- `contradiction`: two active decisions on one topic that choose differently;
- `wrong-link`: a page handed out that links to a wrong or superseded page;
- `lifecycle`: lifecycle fields that do not fit together (superseded with no successor ...);
- `flag`: a contradiction an LLM distillation flagged and left for a person.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.page_problems import PageProblems
from wiki_memory.memory.records import Review, ReviewAction
from wiki_memory.pages import HIDDEN, STATUSES, handed_out
from wiki_memory.pages.drift import drift_note, drifted
from wiki_memory.pages.lifecycle_fields import is_expired

if TYPE_CHECKING:
    from wiki_memory.index import Index
    from wiki_memory.index.page_lifecycle import LifecycleRow

DURABLE = ("decision", "gotcha", "procedure", "fact", "preference", "note")
FLAGS_FILE = "review-flags.jsonl"
BLOCK = 1024  # rows of the similarity matrix computed at a time


def _q(path: str) -> str:
    return path if all(c.isalnum() or c in "/._-" for c in path) else json.dumps(path)


@dataclass(frozen=True)
class _FromIndex:
    """What the review reads from the index alone, worked out once per index generation."""

    rows: list[LifecycleRow]
    by_path: dict[str, LifecycleRow]
    items: list[ReviewAction]  # duplicates, contradictions, wrong links, lifecycle fields
    note: str | None


class StatusReview:
    """`Memory.review()` (see the module docstring)."""

    def __init__(self, context: MemoryContext, problems: PageProblems) -> None:
        self.context = context
        self.project = context.project
        self.problems = problems
        self._review_kept: tuple[str, _FromIndex] | None = None  # (the index's generation, what it gave)

    def review(self, *, today: str | None = None) -> Review:
        """Everything that needs a look (see the module docstring)."""
        if not self.context.exists:
            return Review((), 0, "this project has no memory yet")
        found = self._from_index(self.context.require_index())
        rows = found.rows
        items: list[ReviewAction] = self._page_file_items()
        # Drift, expiry and flags are looked at each time: the code, the date and the flags
        # file change without the index.
        items += self._drift_items(rows)
        for r in rows:
            if handed_out(r.status) and r.expires and is_expired(r.expires, today):
                items.append(
                    ReviewAction(
                        "expired",
                        (r.path,),
                        f"{r.path} expired on {r.expires}",
                        f"wiki-memory mark {_q(r.path)} archived  (or edit its `expires:` if it still holds)",
                    )
                )
        items += found.items
        items += self._flag_items(found.by_path)
        return Review(tuple(items), len(rows), found.note)

    def _page_file_items(self) -> list[ReviewAction]:
        """Pages whose front matter does not parse, and conflict copies a sync or an edit
        left beside a page (as the viewer's review lists them)."""
        out = []
        wiki = self.context.wiki
        for item in self.problems.review_items():
            if item.kind == "broken":
                out.append(
                    ReviewAction(
                        "broken",
                        (item.path,),
                        f"{item.path}: {item.detail}; no command can read it until it is fixed",
                        f"fix its front matter in {wiki / item.path}  (`wiki-memory watch --once` commits it)",
                    )
                )
            elif item.kind == "conflict":
                out.append(
                    ReviewAction(
                        "conflict",
                        (item.path, *((item.other,) if item.other else ())),
                        f"{item.path}: {item.detail}",
                        f"merge what you need into {item.other}, then `wiki-memory rm {_q(item.path)}`",
                    )
                )
        return out

    def _from_index(self, index: Index) -> _FromIndex:
        """The pages, duplicates, contradictions, wrong links and lifecycle fields, kept
        until the index changes: comparing every page with every other costs about half a
        second at 10,000 pages, and a viewer or a server asks again and again."""
        generation = index.generation()
        kept = self._review_kept
        if kept is not None and generation is not None and kept[0] == generation:
            return kept[1]
        rows = index.lifecycle_rows()
        by_path = {r.path: r for r in rows}
        note = None
        vectors = self._vectors(index, [r for r in rows if r.type in DURABLE and handed_out(r.status)])
        if vectors is None:
            note = "duplicates and contradictions compared by words only (no vectors in the index yet)"
        items = self._duplicate_items(index, rows, vectors)
        items += self._contradiction_items(index, rows, vectors)
        items += self._link_items(index, by_path)
        items += self._lifecycle_items(rows, by_path)
        found = _FromIndex(rows, by_path, items, note)
        if generation is not None:
            self._review_kept = (generation, found)
        return found

    # Drift ------------------------------------------------------------------------------

    def _drift_items(self, rows: Sequence[LifecycleRow]) -> list[ReviewAction]:
        root = self.project.root
        if root is None:
            return []
        items = []
        for r in rows:
            # A page already marked stale has been flagged; a hidden page is never handed out.
            if not r.anchors or r.status != "active":
                continue
            note = drift_note(drifted(root, r.anchors))
            if note:
                items.append(
                    ReviewAction(
                        "drift",
                        (r.path,),
                        f"{r.path} {note}",
                        f"wiki-memory mark {_q(r.path)} active|stale|wrong  (active: still true, re-anchored)",
                    )
                )
        return items

    # Duplicates and contradictions ----------------------------------------------------------

    def _vectors(self, index: Index, rows: Sequence[LifecycleRow]) -> dict[str, Any] | None:
        found = index.first_vectors([r.path for r in rows])
        return found if found and len(found) >= max(1, len(rows) // 2) else None

    def _close_pairs(
        self, rows: Sequence[LifecycleRow], vectors: dict[str, Any] | None, floor: float
    ) -> list[tuple[LifecycleRow, LifecycleRow, float | None]]:
        """Pairs of rows of one type that may be alike: by cosine >= `floor` when vectors are
        known, else sharing at least two rare title words."""
        out: list[tuple[LifecycleRow, LifecycleRow, float | None]] = []
        by_type: dict[str, list[LifecycleRow]] = {}
        for r in rows:
            by_type.setdefault(r.type, []).append(r)
        for group in by_type.values():
            if vectors is not None:
                out += _pairs_by_vector([r for r in group if r.path in vectors], vectors, floor)
            else:
                out += _pairs_by_words(group)
        return out

    def _duplicate_items(
        self, index: Index, rows: Sequence[LifecycleRow], vectors: dict[str, Any] | None
    ) -> list[ReviewAction]:
        from wiki_memory.consolidate.distill import dedup  # deferred: the consolidator, not loaded with Memory

        live = [r for r in rows if r.type in DURABLE and handed_out(r.status)]
        pairs = self._close_pairs(live, vectors, dedup.MEANING)
        texts = index.first_texts(sorted({p.path for a, b, _ in pairs for p in (a, b)}))
        items = []
        for a, b, cosine in pairs:
            pair = dedup.pair(f"{a.title}\n{texts.get(a.path, '')}", f"{b.title}\n{texts.get(b.path, '')}", cosine)
            if not dedup.same_page(pair):
                continue
            old, new = sorted((a, b), key=lambda r: (r.updated or "", r.path))
            meaning = f", meaning {cosine:.2f}" if cosine is not None else ""
            items.append(
                ReviewAction(
                    "duplicate",
                    (old.path, new.path),
                    f"{old.path} and {new.path} say the same (words {pair.words:.2f}{meaning})",
                    f"wiki-memory supersede {_q(old.path)} {_q(new.path)}  (after merging what only the old one says)",
                )
            )
        return items

    def _contradiction_items(
        self, index: Index, rows: Sequence[LifecycleRow], vectors: dict[str, Any] | None
    ) -> list[ReviewAction]:
        from wiki_memory.consolidate.distill import dedup  # deferred: the consolidator, not loaded with Memory

        decisions = [r for r in rows if r.type == "decision" and r.status == "active"]
        if len(decisions) < 2:
            return []
        pairs = self._close_pairs(decisions, vectors, dedup.TOPIC)
        texts = index.first_texts(sorted({p.path for a, b, _ in pairs for p in (a, b)}))
        items = []
        for a, b, cosine in pairs:
            ta, tb = f"{a.title}\n{texts.get(a.path, '')}", f"{b.title}\n{texts.get(b.path, '')}"
            pair = dedup.pair(ta, tb, cosine, _negated(ta), _negated(tb))
            if not dedup.contradicts(pair) or dedup.same_page(pair):
                continue
            old, new = sorted((a, b), key=lambda r: (r.updated or "", r.path))
            items.append(
                ReviewAction(
                    "contradiction",
                    (old.path, new.path),
                    f"{old.path} and {new.path} are active decisions on one topic that choose differently",
                    f"wiki-memory supersede {_q(old.path)} {_q(new.path)}  (if the newer holds; else mark one wrong)",
                )
            )
        return items

    # Links, fields, flags ------------------------------------------------------------------

    def _link_items(self, index: Index, by_path: dict[str, LifecycleRow]) -> list[ReviewAction]:
        items = []
        for source, target, status in index.links_into(["wrong", "superseded"]):
            successor = by_path[target].superseded_by if target in by_path else None
            instead = f"; point it at {successor}" if successor else "; remove or fix the link"
            items.append(
                ReviewAction(
                    "wrong-link",
                    (source, target),
                    f"{source} links to {target}, which is {status}{instead}",
                    f"wiki-memory edit {_q(source)}",
                )
            )
        return items

    def _lifecycle_items(self, rows: Sequence[LifecycleRow], by_path: dict[str, LifecycleRow]) -> list[ReviewAction]:
        items = []
        for r in rows:
            problem = None
            if r.status not in STATUSES:
                problem = f"status {r.status!r} is not one of {', '.join(STATUSES)}"
                command = f"wiki-memory edit {_q(r.path)} --status active"
            elif r.status == "superseded" and not r.superseded_by:
                problem = "it is superseded but names no superseded_by"
                command = f"wiki-memory supersede {_q(r.path)} NEW-PAGE"
            elif r.status == "superseded" and r.superseded_by not in by_path:
                problem = f"its superseded_by {r.superseded_by} is not a page"
                command = f"wiki-memory supersede {_q(r.path)} NEW-PAGE"
            if problem:
                items.append(ReviewAction("lifecycle", (r.path,), f"{r.path}: {problem}", command))
        return items

    def _flag_items(self, by_path: dict[str, LifecycleRow]) -> list[ReviewAction]:
        items = []
        for flag in read_flags(self.project.home / FLAGS_FILE):
            paths = tuple(p for p in flag.get("paths", []) if isinstance(p, str))
            if len(paths) < 2 or not all(p in by_path and by_path[p].status not in HIDDEN for p in paths):
                continue  # resolved since: a page went or was marked
            items.append(
                ReviewAction(
                    "flag",
                    paths,
                    f"{' and '.join(paths)} may contradict each other ({flag.get('by', 'an LLM')}: "
                    f"{str(flag.get('note', ''))[:200]})",
                    f"wiki-memory supersede {_q(paths[0])} {_q(paths[1])}  (or mark the wrong one wrong)",
                )
            )
        return items


def _negated(text: str) -> list[str]:
    from wiki_memory.consolidate.distill.statements import (
        _negated as negated,  # deferred: the consolidator, not loaded with Memory
    )

    return negated(text)


def _pairs_by_vector(
    rows: list[LifecycleRow], vectors: dict[str, Any], floor: float
) -> list[tuple[LifecycleRow, LifecycleRow, float | None]]:
    import numpy as np  # deferred: numpy, for the review's vectors only

    if len(rows) < 2:
        return []
    matrix = np.stack([vectors[r.path] for r in rows]).astype(np.float32)
    out: list[tuple[LifecycleRow, LifecycleRow, float | None]] = []
    for start in range(0, len(rows), BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        for i, j in zip(*np.nonzero(block >= floor), strict=True):
            a = start + int(i)
            if int(j) > a:
                out.append((rows[a], rows[int(j)], float(block[i, j])))
    return out


def _pairs_by_words(rows: list[LifecycleRow]) -> list[tuple[LifecycleRow, LifecycleRow, float | None]]:
    from wiki_memory.consolidate.distill.dedup import (
        words,  # deferred: the consolidator, not loaded with Memory
    )

    postings: dict[str, list[int]] = {}
    titles = [words(r.title) for r in rows]
    for n, ws in enumerate(titles):
        for w in ws:
            postings.setdefault(w, []).append(n)
    shared: dict[tuple[int, int], int] = {}
    for members in postings.values():
        if len(members) > 50:
            continue  # a common word pairs everything with everything
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                shared[(a, b)] = shared.get((a, b), 0) + 1
    return [(rows[a], rows[b], None) for (a, b), n in sorted(shared.items()) if n >= 2]


def read_flags(path: os.PathLike[str] | str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def append_flags(path: os.PathLike[str] | str, flags: Iterable[dict[str, Any]]) -> None:
    lines = [json.dumps(f, ensure_ascii=False) for f in flags]
    if not lines:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
