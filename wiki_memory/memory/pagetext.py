"""A page's whole file, front matter and body, read and written as a person edits it in an
editor: `wiki-memory edit PAGE` through $EDITOR, and front ends with a text box (the web
viewer). The commit is the person's edit (`edit: <path>`). The editor starts from a
version (its blob); when the page changed while it was open (an agent wrote, a sync
arrived, the viewer saved), the two changes are merged line by line as sync merges, and
where they overlap both are kept: the page as it is now, with a link to a conflict copy
holding the person's version. Nothing either side wrote is lost."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from dulwich.objects import ObjectID

from wiki_memory.errors import ConflictError, PageError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.records import Actor, Written
from wiki_memory.memory.rules import InputError, Scrubber, check_text
from wiki_memory.memory.writing import PERSON
from wiki_memory.pages import parse_page
from wiki_memory.sync.merge import conflict_copy, conflict_path, merge_text

if TYPE_CHECKING:
    from wiki_memory.pages import Page


@dataclass(frozen=True)
class PageText:
    """A page's file text and the git blob it was read from (the version an edit starts from)."""

    path: str
    text: str
    blob: str


def utf8_text(path: str, data: bytes) -> str:
    """A page's bytes as text, or InputError when they are not UTF-8 (a page saved by hand
    in Latin-1): an edit of the text decoded with replacement characters would write the
    damage over the person's bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"{path} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}: saved in another encoding, "
            "such as Latin-1?); nothing was changed: convert it to UTF-8 (`iconv -f latin1 -t utf-8`) and edit again"
        ) from None


class PageTexts:
    """A page's file as text, read and saved whole (the viewer's editor)."""

    def __init__(self, context: MemoryContext, reading: Reading) -> None:
        self.context = context
        self.reading = reading

    def page_source(self, ref: str) -> PageText:
        """The committed file text of a page, with its blob id."""
        store = self.context.store()
        path = self.reading.find(ref)
        blob = store.blob_at(path)
        if blob is None:  # (find only returns committed pages)
            raise ConflictError(f"{path} is not committed")
        return PageText(path, utf8_text(path, store.read_bytes(path)), blob.decode())

    def save_text(self, ref: str, text: str, *, base: str | None = None, actor: Actor = PERSON) -> Written:
        """Commit `text` as the whole file of a page, as `actor`'s edit (the person's, by
        default). With `base` (the blob id the editor started from), refused when the page
        changed since; text whose front matter does not parse, or with no body, is refused;
        secrets are redacted as in every write."""
        # Browsers send a text area's lines ending in CRLF; pages are written with LF.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        check_text("text", text)
        scrub = Scrubber()
        text = scrub(text)
        if not text.endswith("\n"):
            text += "\n"
        store = self.context.store()
        with store.lock:
            path = self.reading.find(ref)
            store.commit_pending(paths=[path])  # a person's unsaved editor change is theirs, first
            current = store.blob_at(path)
            try:
                page = parse_page(text, path)
            except PageError as e:
                raise InputError(f"{e}; nothing was committed") from None
            if not page.body.strip():
                raise InputError("the page would have no body; delete the page to remove it")
            if base is not None and (current is None or current.decode() != base):
                return self._save_over_a_change(path, text, base, page, actor, tuple(scrub.found))
            commit = store.commit(
                {path: text.encode("utf-8")},
                f"edit: {path}",
                actor.author(self.context.wiki),
                session_id=actor.session_id,
                agent=actor.agent,
                commit_hand_edits=False,
            )
        return Written(path, commit, False, page, "edit", None, tuple(scrub.found))

    def _save_over_a_change(
        self, path: str, text: str, base: str, page: Page, actor: Actor, redacted: tuple[str, ...]
    ) -> Written:
        """The page changed since the editor opened it at `base`: both changes merged, or
        (where they overlap) the page kept as it is now, with a link to a conflict copy of
        the person's version. Under the writer lock."""
        store = self.context.store()
        last = store.page_log(path, 1)
        since = last[0][0].short if last else "?"
        try:
            base_data: bytes | None = store.repo[ObjectID(base.encode("ascii"))].as_raw_string()
        except (KeyError, ValueError, UnicodeEncodeError, AssertionError):
            base_data = None  # an unknown version: no common ancestor, the two are kept apart
        current = store.read_bytes(path) if store.blob_at(path) is not None else b""
        mine = text.encode("utf-8")
        merged = merge_text(path, base_data, current, mine) if base_data is not None and current else None
        author = actor.author(self.context.wiki)
        if merged is not None:
            commit = store.commit(
                {path: merged},
                f"edit: {path}\n\nMerged with {since}, made while the editor was open.",
                author,
                session_id=actor.session_id,
                agent=actor.agent,
                commit_hand_edits=False,
            )
            page = parse_page(merged.decode("utf-8", "replace"), path)
            return Written(path, commit, False, page, "edit", None, redacted, merged=since)
        date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        copy = conflict_path(
            path, "edit", date, lambda p: store.blob_at(p) is not None or (self.context.wiki / p).exists()
        )
        changes = {copy: conflict_copy(copy, mine, path)}
        if current:
            note = (
                f"> **Edit conflict**: this page was changed ({since}) while it was open in an editor, at the "
                f"same lines. This is the version saved meanwhile; the editor's version is kept in "
                f"[[{copy.removesuffix('.md')}]]. Merge what you need into this page, then delete that one.\n"
            )
            changes[path] = current + (b"" if current.endswith(b"\n") else b"\n") + b"\n" + note.encode("utf-8")
        commit = store.commit(
            changes,
            f"edit: {path} (kept beside it: changed meanwhile in {since})",
            author,
            session_id=actor.session_id,
            agent=actor.agent,
            commit_hand_edits=False,
        )
        return Written(path, commit, False, page, "edit", None, redacted, conflict_copy=copy, merged=since)
