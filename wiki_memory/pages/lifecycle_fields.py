"""A page's lifecycle in its front matter, read leniently: `status` (see `status`),
`superseded_by` / `supersedes`, `expires` (a date after which the page needs a look), and
what is wrong with them when a hand edit left them inconsistent.

    status: superseded
    superseded_by: decisions/use-postgres.md
    expires: 2027-06-30

Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import re

from wiki_memory.pages.status import STATUSES, normal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})")


def expires_on(value: Any) -> str | None:
    """The `expires` value as `YYYY-MM-DD` (a YAML date, a datetime, or text starting with
    one), or None when it is absent or not a date."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    m = _DATE.match(str(value))
    if not m:
        return None
    try:
        return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def is_expired(value: Any, today: str | None = None) -> bool:
    """Has the page's `expires` date passed (`today`: `YYYY-MM-DD`, default: today in UTC)?"""
    date = expires_on(value)
    if date is None:
        return False
    today = today or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    return date < today


def path_list(value: Any) -> list[str]:
    """`supersedes` (one path or a list of them) as a list of non-empty strings."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [str(v).strip() for v in items if v is not None and str(v).strip()]


def problems(meta: Mapping[str, Any]) -> list[str]:
    """What is inconsistent in a page's lifecycle fields, one sentence each ([] when nothing)."""
    out: list[str] = []
    written = meta.get("status")
    status = normal(written) if written not in (None, "") else None
    if status is not None and status not in STATUSES:
        out.append(f"status {written!r} is not one of {', '.join(STATUSES)}")
    successor = meta.get("superseded_by")
    if str(status or "") == "superseded" and not successor:
        out.append("it is superseded but names no superseded_by")
    if successor and str(status or "active") != "superseded":
        out.append(f"it names superseded_by {successor} but its status is {status or 'active'}")
    if meta.get("expires") not in (None, "") and expires_on(meta.get("expires")) is None:
        out.append(f"expires {meta.get('expires')!r} is not a date (YYYY-MM-DD)")
    return out
