"""The viewer's actions (POST): save a page's text, revert a commit, give a page a verdict
(helpful, stale, wrong, archived, active again) or name its replacement, each with an
optional reason. Each checks the form's CSRF token, makes one commit through `Memory` as the
person (their git identity), as the CLI would, and redirects to what changed."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory import Actor, InputError
from wiki_memory.ui import render
from wiki_memory.ui.app import Refused, status_of, viewer_of

if TYPE_CHECKING:
    from starlette.datastructures import FormData

    from wiki_memory.memory import Marked, Memory, Superseded

#: The verdicts the viewer offers on a page, in the order of its buttons: the lifecycle's
#: marks (`Memory.mark`). `active` also re-anchors the page to its files as they are now.
VERDICTS = ("helpful", "active", "stale", "wrong", "archived")
PERSON = Actor()  # no agent: the commit is the person's, under their git identity


def record_verdict(memory: Memory, page: str, verdict: str, reason: str | None = None) -> Marked:
    """Give `page` a verdict (one of VERDICTS), as the person: one commit with `Reason:` and
    `Verdict:` trailers (none when the page already reads so; `helpful` always counts)."""
    if verdict not in VERDICTS:
        raise InputError(f"unknown verdict {verdict!r}: one of {', '.join(VERDICTS)}")
    return memory.mark(page, verdict, reason=reason, actor=PERSON)


def record_supersede(memory: Memory, old: str, new: str, reason: str | None = None) -> Superseded:
    """`old` is replaced by `new` (both pages change), as the person: one commit."""
    return memory.supersede(old, new, reason=reason, actor=PERSON)


async def checked_form(request: Request) -> FormData:
    """The form of an action, refused (403) unless it carries this viewer's CSRF token."""
    form = await request.form()
    given = form.get("csrf")
    expected = viewer_of(request).csrf.encode()
    if not isinstance(given, str) or not hmac.compare_digest(given.encode("utf-8"), expected):
        raise Refused("refused: the form did not carry this viewer's token (reload the page and try again)")
    return form


def _field(form: FormData, name: str) -> str | None:
    value = form.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _next(form: FormData, base: str, default: str) -> str:
    """Where to go after an action: a path of this viewer only (`next` is written without
    the viewer's prefix, `base`, which is added here)."""
    target = _field(form, "next")
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return base + target
    return default


async def save(request: Request) -> Response:
    """The edit form: the page's whole text, committed as the person's edit."""
    viewer = viewer_of(request)
    form = await checked_form(request)
    path = request.path_params["path"]
    text = form.get("text")
    text = text if isinstance(text, str) else ""
    base = _field(form, "base")
    try:
        written = await viewer.workspace(request).run(lambda ws: ws.memory.save_text(path, text, base=base))
    except WikiMemoryError as e:
        # Nothing is lost: the form comes back with the person's text and the reason.
        status = status_of(e)
        return viewer.page(request, "edit.html", status=status, path=path, text=text, blob=base or "", error=str(e))
    return RedirectResponse(
        render.page_url(viewer.base, written.path, committed=written.commit or "none"), status_code=303
    )


async def revert(request: Request) -> Response:
    viewer = viewer_of(request)
    await checked_form(request)
    rev = request.path_params["rev"]
    undone, new = await viewer.workspace(request).run(lambda ws: ws.memory.revert(rev))
    return RedirectResponse(f"{viewer.base}/commit/{new}?reverted={undone}", status_code=303)


async def set_status(request: Request) -> Response:
    """A verdict on a page, or (`superseded_by` given) the page that replaces it; `reason`,
    when given, is the commit's `Reason:`."""
    viewer = viewer_of(request)
    form = await checked_form(request)
    path = request.path_params["path"]
    verdict = _field(form, "verdict")
    successor = _field(form, "superseded_by")
    reason = _field(form, "reason")
    workspace = viewer.workspace(request)
    if successor is not None:
        replaced = await workspace.run(lambda ws: record_supersede(ws.memory, path, successor, reason))
        shown, commit = replaced.old, replaced.commit
    elif verdict is not None:
        marked = await workspace.run(lambda ws: record_verdict(ws.memory, path, verdict, reason))
        shown, commit = marked.path, marked.commit
    else:
        raise InputError("give a verdict, or the page that supersedes this one")
    default = render.page_url(viewer.base, shown, committed=commit or "none")
    return RedirectResponse(_next(form, viewer.base, default), status_code=303)
