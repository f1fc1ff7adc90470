"""A page's whole file, front matter and body, read and written as a person edits it in an
editor: what `wiki-memory edit PAGE` does through $EDITOR, for front ends with a text box
(the web viewer). The commit is the person's edit (`edit: <path>`), made only if the page
is still the version the person started from."""

from __future__ import annotations

from dataclasses import dataclass

from wiki_memory.errors import ConflictError, PageError
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.records import Actor, Written
from wiki_memory.memory.rules import InputError, Scrubber, check_text
from wiki_memory.memory.writing import PERSON


@dataclass(frozen=True)
class PageText:
    """A page's file text and the git blob it was read from (the version an edit starts from)."""

    path: str
    text: str
    blob: str


class PageTexts(Reading):
    def page_source(self, ref: str) -> PageText:
        """The committed file text of a page, with its blob id."""
        store = self.store()
        path = self.find(ref)
        blob = store.blob_at(path)
        if blob is None:  # (find only returns committed pages)
            raise ConflictError(f"{path} is not committed")
        return PageText(path, store.read_bytes(path).decode("utf-8", "replace"), blob.decode())

    def save_text(self, ref: str, text: str, *, base: str | None = None, actor: Actor = PERSON) -> Written:
        """Commit `text` as the whole file of a page, as `actor`'s edit (the person's, by
        default). With `base` (the blob id the editor started from), refused when the page
        changed since; text whose front matter does not parse, or with no body, is refused;
        secrets are redacted as in every write."""
        from wiki_memory.pages import parse_page

        # Browsers send a text area's lines ending in CRLF; pages are written with LF.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        check_text("text", text)
        scrub = Scrubber()
        text = scrub(text)
        if not text.endswith("\n"):
            text += "\n"
        store = self.store()
        with store.lock:
            path = self.find(ref)
            store.commit_pending(paths=[path])  # a person's unsaved editor change is theirs, first
            current = store.blob_at(path)
            if base is not None and (current is None or current.decode() != base):
                last = store.page_log(path, 1)
                since = f" (by {last[0][0].author} in {last[0][0].short}: {last[0][0].subject})" if last else ""
                raise ConflictError(
                    f"{path} changed since you opened it{since}; nothing was committed: copy your text, "
                    "reload the page and make your change again"
                )
            try:
                page = parse_page(text, path)
            except PageError as e:
                raise InputError(f"{e}; nothing was committed") from None
            if not page.body.strip():
                raise InputError("the page would have no body; delete the page to remove it")
            commit = store.commit(
                {path: text.encode("utf-8")},
                f"edit: {path}",
                actor.author(self.wiki),
                session_id=actor.session_id,
                agent=actor.agent,
                commit_hand_edits=False,
            )
        return Written(path, commit, False, page, "edit", None, tuple(scrub.found))
