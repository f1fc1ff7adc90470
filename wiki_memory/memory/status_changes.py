"""Changes to a page's status, every change a commit with its reason: marks (helpful, wrong,
stale, archived, active), supersede, anchors, and drift against the code.

- `mark`: `helpful` counts (front matter `helpful`, and the usage counters); `wrong`,
  `stale`, `archived` set the status; `active` sets it back and re-anchors the page to its
  files as they are now (someone checked it against the code). The commit is the marker's
  (agent or person), with `Reason:` and `Verdict:` trailers.
- `supersede`: the old page `superseded` with `superseded_by`, the new one `supersedes`,
  in one commit.
- Wrong, superseded and archived pages are never handed out (see `pages.status`): a mark
  rebuilds the SessionStart context at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.records import Actor, Marked, Superseded, Written
from wiki_memory.memory.rules import VERDICTS, InputError, Scrubber, utf8
from wiki_memory.memory.team import Teams
from wiki_memory.memory.writing import OWNED, PERSON, with_sources, write_as
from wiki_memory.pages import HIDDEN, Page, usage
from wiki_memory.pages.anchors import clean_path, parse_anchors
from wiki_memory.pages.drift import drifted, git_index
from wiki_memory.pages.lifecycle_fields import path_list

if TYPE_CHECKING:
    from wiki_memory.pages.drift import Drift

MAX_REASON = 500


def _reason(reason: str | None) -> str | None:
    if reason is None or not reason.strip():
        return None
    utf8("reason", reason)
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON:
        raise InputError(f"`reason` is {len(reason)} characters; say why in one or two sentences (<= {MAX_REASON})")
    return Scrubber()(reason)


class StatusChanges:
    """Marks, supersede, anchors and drift (see the module docstring)."""

    def __init__(self, context: MemoryContext, reading: Reading, teams: Teams) -> None:
        self.context = context
        self.project = context.project
        self.reading = reading
        self.teams = teams

    def mark(self, page: str, verdict: str, *, reason: str | None = None, actor: Actor = PERSON) -> Marked:
        """Mark a page helpful, wrong, stale, archived or active (one commit, unless it
        already reads so; `helpful` always counts)."""

        if verdict not in VERDICTS:
            raise InputError(f"unknown verdict {verdict!r}: one of {', '.join(VERDICTS)}")
        team_ref = self.teams.team_ref(page)
        if team_ref is not None:
            # A team page: marked on the team tier (its next sync carries the mark to
            # everyone), its provenance and SessionStart context worked out again now.
            marked: Marked = self.teams.team().mark(team_ref, verdict, reason=reason, actor=actor)
            self.teams.refresh_team()
            return marked
        why = _reason(reason)
        store = self.context.store()
        with store.lock:
            path, current = self.reading.current(page)
            updated = self._marked(current, verdict)
            if self.teams.is_team_tier and verdict != "helpful":
                # Why in the page itself: every member sees the reason a teammate gave,
                # whichever front end shows the page, not only in the commit's trailer.
                who = actor.author(self.context.wiki)
                updated = updated.with_meta(status_reason=why, status_by=f"{who.name} <{who.email}>")
            commit = self._commit_status([updated], f"mark: {verdict} {path.removesuffix('.md')}", why, verdict, actor)
        if verdict == "helpful":
            usage.record(self.project, "helpful", [path], agent=actor.agent)
        if commit:
            self.refresh_context()
        return Marked(path, verdict, updated.status, commit, why, int(updated.meta.get("helpful") or 0))

    def _marked(self, page: Page, verdict: str) -> Page:
        if verdict == "helpful":
            return page.with_meta(helpful=int(page.meta.get("helpful") or 0) + 1)
        updated = page.with_meta(status=verdict, superseded_by=None)
        if verdict == "active":
            anchors = self._anchors_now(page)
            if anchors is not None:
                updated = updated.with_meta(anchors=anchors)
        return updated

    def _anchors_now(self, page: Page) -> list[Any] | None:
        """The page's anchors re-recorded at the files' current blobs (None: no anchors, or
        no code repository to read them from)."""
        anchors = parse_anchors(page.meta.get("anchors"))
        if not anchors or self.project.root is None:
            return None
        index = git_index(self.project.root)
        out: list[Any] = []
        for anchor in anchors:
            blob = index.current_blob(anchor.path)
            out.append({"path": anchor.path, "blob": blob} if blob else anchor.path)
        return out

    def supersede(self, old: str, new: str, *, reason: str | None = None, actor: Actor = PERSON) -> Superseded:
        """`old` is replaced by `new`: both pages change, in one commit."""

        why = _reason(reason)
        store = self.context.store()
        with store.lock:
            old_path, new_path = self.reading.find(old), self.reading.find(new)
            if old_path == new_path:
                raise InputError("a page cannot supersede itself: name the page that replaces it")
            store.commit_pending(paths=[old_path, new_path])
            old_page, new_page = store.read(old_path), store.read(new_path)
            if new_page.status in HIDDEN:
                raise InputError(
                    f"{new_path} is {new_page.status} itself; supersede {old_path} by a page that is active "
                    f"(or mark {new_path} active first)"
                )
            replaced = old_page.with_meta(status="superseded", superseded_by=new_path)
            successor = new_page.with_meta(
                supersedes=[*(p for p in path_list(new_page.meta.get("supersedes")) if p != old_path), old_path]
            )
            subject = f"supersede: {old_path.removesuffix('.md')} by {new_path.removesuffix('.md')}"
            commit = self._commit_status([replaced, successor], subject, why, "supersede", actor)
        if commit:
            self.refresh_context()
        return Superseded(old_path, new_path, commit, why)

    def anchor(
        self, page: str, files: Sequence[str] = (), *, reason: str | None = None, actor: Actor = PERSON
    ) -> Written:
        """Anchor a page to code files (paths relative to the project's repository), each at
        its current blob; with no files, re-anchor the page's anchors as the files are now."""
        why = _reason(reason)
        root = self.project.root
        if root is None:
            raise InputError("this project has no code repository to anchor pages to")
        index = git_index(root)
        store = self.context.store()
        with store.lock:
            path, current = self.reading.current(page)
            anchors = {a.path: a.as_meta() for a in parse_anchors(current.meta.get("anchors"))}
            targets = list(files) or list(anchors)
            if not targets:
                raise InputError(f"{path} has no anchors yet: name the files it is about")
            for raw in targets:
                utf8("file", raw)
                rel = clean_path(_relative_to(str(root), raw))
                blob = index.current_blob(rel) if rel else None
                if rel is None or blob is None:
                    raise InputError(f"{raw}: no such file in {root} (give paths inside the repository)")
                anchors[rel] = {"path": rel, "blob": blob}
            updated = current.with_meta(anchors=list(anchors.values()))
            message, trailers = f"anchor: {path.removesuffix('.md')}", [("Reason", why or "")]
            result = write_as(store, [updated], actor, self.context.wiki, message=message, trailers=trailers)[0]
        return Written.of(result, "anchor")

    def drift(self, page: str) -> list[Drift]:
        """The page's anchored files that changed, went or moved since it was written."""
        current = self.context.store().read(self.reading.find(page))
        return drifted(self.project.root, current.meta.get("anchors"))

    def _commit_status(
        self, pages: list[Page], subject: str, reason: str | None, verdict: str, actor: Actor
    ) -> str | None:
        if actor.source:
            pages = [p.with_meta(sources=with_sources(p.sources, [actor.source])) for p in pages]
        trailers = [("Reason", reason or ""), ("Verdict", verdict)]
        # A status change owns `superseded_by`: clearing it must drop the key, which the store
        # otherwise keeps as a key only the old page had.
        results = write_as(
            self.context.store(), pages, actor, self.context.wiki, message=subject, trailers=trailers, owns=OWNED
        )
        return next((r.commit for r in results if r.commit), None)

    def refresh_context(self) -> None:
        """The SessionStart context rebuilt now: a page marked wrong must not be handed out
        by a start that comes before the next consolidation."""
        from wiki_memory.consolidate import context_build  # deferred: the consolidator, not loaded with Memory

        try:
            context_build.refresh(self.project, self.context.store(), self.context.index)
        except Exception as e:  # noqa: BLE001 - the mark is committed; the next start rebuilds it anyway
            from wiki_memory.consolidate.state import log  # deferred: the consolidator, not loaded with Memory

            log(f"context rebuild after a mark failed ({type(e).__name__}: {e})")


def _relative_to(root: str, path: str) -> str:
    if os.path.isabs(path):
        rel = os.path.relpath(os.path.normpath(path), os.path.normpath(root))
        return rel
    return path
