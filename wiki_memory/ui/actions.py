"""The viewer's actions (POST): save a page's text, revert a commit, give a page a verdict
(stale, wrong, archived, active again) or name its replacement. Each checks the form's CSRF
token, makes one commit through `Memory` as the person (their git identity), as the CLI
would, and redirects to what changed."""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.rules import InputError
from wiki_memory.ui import render
from wiki_memory.ui.app import Refused, status_of, viewer_of

if TYPE_CHECKING:
    from starlette.datastructures import FormData

    from wiki_memory.memory import Memory, Written

#: The verdicts the viewer offers on a page, each recorded today as the page's status through
#: `Memory.edit(page, "set_status")`. When the lifecycle's `Memory.mark(page, verdict, ...)`
#: lands, `record_verdict` calls it instead, and "helpful" joins the list.
VERDICTS = ("active", "stale", "wrong", "archived")


def record_verdict(memory: Memory, page: str, verdict: str) -> Written:
    """Give `page` a verdict (one of VERDICTS), as the person: one commit."""
    if verdict not in VERDICTS:
        raise InputError(f"unknown verdict {verdict!r}: one of {', '.join(VERDICTS)}")
    return memory.edit(page, "set_status", status=verdict)


def record_supersede(memory: Memory, old: str, new: str) -> Written:
    """Mark `old` superseded by `new`, as the person: one commit."""
    return memory.edit(old, "set_status", status="superseded", superseded_by=new)


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


def _next(form: FormData, default: str) -> str:
    """Where to go after an action: a path of this viewer only."""
    target = _field(form, "next")
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
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
        written = await viewer.workspace(request).run(lambda memory: memory.save_text(path, text, base=base))
    except WikiMemoryError as e:
        # Nothing is lost: the form comes back with the person's text and the reason.
        status = status_of(e)
        return viewer.page(request, "edit.html", status=status, path=path, text=text, base=base or "", error=str(e))
    return RedirectResponse(render.page_url(written.path, committed=written.commit or "none"), status_code=303)


async def revert(request: Request) -> Response:
    viewer = viewer_of(request)
    await checked_form(request)
    rev = request.path_params["rev"]
    undone, new = await viewer.workspace(request).run(lambda memory: memory.revert(rev))
    return RedirectResponse(f"/commit/{new}?reverted={undone}", status_code=303)


async def set_status(request: Request) -> Response:
    """A verdict on a page, or (`superseded_by` given) the page that replaces it."""
    viewer = viewer_of(request)
    form = await checked_form(request)
    path = request.path_params["path"]
    verdict = _field(form, "verdict")
    successor = _field(form, "superseded_by")
    if successor is not None:
        written = await viewer.workspace(request).run(record_supersede, path, successor)
    elif verdict is not None:
        written = await viewer.workspace(request).run(record_verdict, path, verdict)
    else:
        raise InputError("give a verdict, or the page that supersedes this one")
    default = render.page_url(written.path, committed=written.commit or "none")
    return RedirectResponse(_next(form, default), status_code=303)
