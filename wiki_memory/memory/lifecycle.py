"""The lifecycle of a page, every change a commit with its reason: marks (helpful, wrong,
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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wiki_memory.memory.records import Actor, Marked, Superseded, Written
from wiki_memory.memory.rules import VERDICTS, InputError, Scrubber, utf8
from wiki_memory.memory.writing import PERSON, Writing
from wiki_memory.pages import HIDDEN, Page

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


class Lifecycle(Writing):
    """Marks, supersede, anchors and drift (see the module docstring)."""

    def mark(self, page: str, verdict: str, *, reason: str | None = None, actor: Actor = PERSON) -> Marked:
        """Mark a page helpful, wrong, stale, archived or active (one commit, unless it
        already reads so; `helpful` always counts)."""
        from wiki_memory.pages import usage

        if verdict not in VERDICTS:
            raise InputError(f"unknown verdict {verdict!r}: one of {', '.join(VERDICTS)}")
        target, page = self.tier_of(page)
        if target is not self:
            # A team page: marked on the team tier (its next sync carries the mark to
            # everyone), its provenance and SessionStart context worked out again now.
            marked = target.mark(page, verdict, reason=reason, actor=actor)
            self.refresh_team()
            return marked
        why = _reason(reason)
        store = self.store()
        with store.lock:
            path = self.find(page)
            store.commit_pending(paths=[path])
            current: Page = store.read(path)
            updated = self._marked(current, verdict)
            if self.is_team_tier and verdict != "helpful":
                # Why in the page itself: every member sees the reason a teammate gave,
                # whichever front end shows the page, not only in the commit's trailer.
                who = actor.author(self.wiki)
                updated = updated.with_meta(status_reason=why, status_by=f"{who.name} <{who.email}>")
            commit = self._commit_lifecycle(
                [updated], f"mark: {verdict} {path.removesuffix('.md')}", why, verdict, actor
            )
        if verdict == "helpful":
            usage.record(self.project, "helpful", [path], agent=actor.agent)
        if commit:
            self._refresh_context()
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
        from wiki_memory.pages.anchors import parse_anchors
        from wiki_memory.pages.drift import git_index

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
        from wiki_memory.pages.lifecycle_fields import path_list

        why = _reason(reason)
        store = self.store()
        with store.lock:
            old_path, new_path = self.find(old), self.find(new)
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
            commit = self._commit_lifecycle([replaced, successor], subject, why, "supersede", actor)
        if commit:
            self._refresh_context()
        return Superseded(old_path, new_path, commit, why)

    def anchor(
        self, page: str, files: Sequence[str] = (), *, reason: str | None = None, actor: Actor = PERSON
    ) -> Written:
        """Anchor a page to code files (paths relative to the project's repository), each at
        its current blob; with no files, re-anchor the page's anchors as the files are now."""
        from wiki_memory.pages.anchors import clean_path, parse_anchors
        from wiki_memory.pages.drift import git_index

        why = _reason(reason)
        root = self.project.root
        if root is None:
            raise InputError("this project has no code repository to anchor pages to")
        index = git_index(root)
        store = self.store()
        with store.lock:
            path = self.find(page)
            store.commit_pending(paths=[path])
            current: Page = store.read(path)
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
            result = store.write(
                updated,
                actor.author(self.wiki),
                session_id=actor.session_id,
                agent=actor.agent,
                message=f"anchor: {path.removesuffix('.md')}",
                trailers=[("Reason", why or "")],
            )
        return Written.of(result, "anchor")

    def drift(self, page: str) -> list[Drift]:
        """The page's anchored files that changed, went or moved since it was written."""
        from wiki_memory.pages.drift import drifted

        current = self.store().read(self.find(page))
        return drifted(self.project.root, current.meta.get("anchors"))

    def _commit_lifecycle(
        self, pages: list[Page], subject: str, reason: str | None, verdict: str, actor: Actor
    ) -> str | None:
        if actor.source:
            from wiki_memory.memory.writing import _with_sources

            pages = [p.with_meta(sources=_with_sources(p.sources, [actor.source])) for p in pages]
        results = self.store().write_many(
            pages,
            actor.author(self.wiki),
            session_id=actor.session_id,
            agent=actor.agent,
            message=subject,
            trailers=[("Reason", reason or ""), ("Verdict", verdict)],
        )
        return next((r.commit for r in results if r.commit), None)

    def _refresh_context(self) -> None:
        """The SessionStart context rebuilt now: a page marked wrong must not be handed out
        by a start that comes before the next consolidation."""
        from wiki_memory.consolidate import context_build

        try:
            context_build.refresh(self.project, self.store(), self.index)
        except Exception as e:  # noqa: BLE001 - the mark is committed; the next start rebuilds it anyway
            from wiki_memory.consolidate.state import log

            log(f"context rebuild after a mark failed ({type(e).__name__}: {e})")


def _relative_to(root: str, path: str) -> str:
    import os

    if os.path.isabs(path):
        rel = os.path.relpath(os.path.normpath(path), os.path.normpath(root))
        return rel
    return path
