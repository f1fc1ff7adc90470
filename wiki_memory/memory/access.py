"""Who may use a shared server: per-person tokens, each scoped to projects and to reading or
to reading and writing, and the log of what was refused.

A token is shown once, when it is made, and kept only as its SHA-256 in
`WIKI_MEMORY_HOME/tokens.json` (mode 0600): it is 256 random bits, so a hash without a salt
or a slow function is enough, and a presented token is checked by comparing hashes in
constant time. Refusals go to `WIKI_MEMORY_HOME/logs/access.log` (mode 0600): when, who (the
token's name, never the token), what was asked, and why it was refused.

Who gets in (`Tokens.admit`): a request with a person's token, or with the server's one
shared token (`serve --token`); with neither, only a loopback server with no tokens at all
is open, as a personal server always was. A server on any other address is never open,
even when its last token is revoked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from wiki_memory import logs
from wiki_memory.config import Project, home
from wiki_memory.errors import NotFoundError, WikiMemoryError
from wiki_memory.memory.projects import load_project
from wiki_memory.memory.rules import InputError
from wiki_memory.pages import slugify

if TYPE_CHECKING:
    from wiki_memory.store import Author

TOKEN_PREFIX = "wmt_"  # so that secret scanners and people recognise one
ALL_PROJECTS = "*"
_NAME = re.compile(r"^\w[\w .'-]{0,63}$")
_EMAIL = re.compile(r"^[^\s<>@,]+@[^\s<>@,]+$")


class AccessError(WikiMemoryError):
    """A caller's token does not allow what it asked for."""


@dataclass(frozen=True)
class Grant:
    """One person's token as stored: who, which projects (`*`: all the server reaches), and
    whether it may write. Holds the token's hash, never the token."""

    name: str
    email: str
    write: bool
    projects: tuple[tuple[str, str], ...]  # (id, name) each; (("*", "*"),) for every project
    created: str
    last_used: str | None = None
    digest: str = ""

    @property
    def all_projects(self) -> bool:
        return any(pid == ALL_PROJECTS for pid, _ in self.projects)

    @property
    def scope(self) -> str:
        return "read-write" if self.write else "read"

    @property
    def project_ids(self) -> tuple[str, ...]:
        return tuple(pid for pid, _ in self.projects if pid != ALL_PROJECTS)

    def reaches(self, project: Project) -> bool:
        return self.all_projects or project.id in self.project_ids

    def reach_text(self) -> str:
        if self.all_projects:
            return "every project the server serves"
        return ", ".join(f"{name} ({pid})" if name != pid else pid for pid, name in self.projects)

    def author(self) -> Author:
        """The git identity the holder's writes are committed under."""
        from wiki_memory.store import Author  # deferred: dulwich, not needed by `wiki-memory token`

        return Author(self.name, self.email)

    def as_json(self) -> dict[str, Any]:
        """What `token list --json` shows: everything but the hash."""
        return {
            "name": self.name,
            "email": self.email,
            "scope": self.scope,
            "projects": ["all"] if self.all_projects else [{"id": i, "name": n} for i, n in self.projects],
            "created": self.created,
            "last_used": self.last_used,
        }

    def _record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "email": self.email,
            "write": self.write,
            "projects": [{"id": i, "name": n} for i, n in self.projects],
            "created": self.created,
            "last_used": self.last_used,
            "sha256": self.digest,
        }

    @classmethod
    def _of(cls, record: Mapping[str, Any]) -> Grant:
        return cls(
            name=str(record["name"]),
            email=str(record.get("email") or ""),
            write=bool(record.get("write")),
            projects=tuple((str(p["id"]), str(p.get("name") or p["id"])) for p in record.get("projects") or ()),
            created=str(record.get("created") or ""),
            last_used=record.get("last_used") or None,
            digest=_checked_digest(record["sha256"]),
        )


@dataclass(frozen=True)
class Admission:
    """Whether a request gets in, as whom (None: the shared token or an open server: the
    server's whole reach, writes attributed to the agent), and why not."""

    allowed: bool
    grant: Grant | None = None
    reason: str = ""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _checked_digest(value: object) -> str:
    if not (isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value)):
        raise ValueError("a token's sha256 is not 64 hex digits")
    return value


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:500]


class Tokens:
    """The home's tokens (`tokens.json`) and its refusal log (`logs/access.log`).

    A server keeps one and calls `admit` on every request: the file is read again only when
    it was replaced (a token made or revoked while the server runs takes effect at once)."""

    def __init__(self, env: Mapping[str, str] | None = None):
        self.root = home(env)
        self.path = self.root / "tokens.json"
        self._seen: tuple[int, int, int] | None = None
        self._grants: list[Grant] = []

    # Reading ---------------------------------------------------------------------------

    def grants(self) -> list[Grant]:
        """Every token, in the order they were made."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._grants = None, []
            return []
        state = (st.st_ino, st.st_mtime_ns, st.st_size)
        if state != self._seen:
            self._grants = self._read()
            self._seen = state
        return list(self._grants)

    def any(self) -> bool:
        return bool(self.grants())

    def _read(self) -> list[Grant]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [Grant._of(r) for r in data.get("tokens", [])]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            # Why: a server that cannot read its tokens must not fall open; it refuses everyone.
            raise WikiMemoryError(f"cannot read {self.path}: {e}; fix or remove it") from None

    def _write(self, grants: Sequence[Grant]) -> None:
        from wiki_memory.store.durable import write_durably  # deferred: dulwich, not needed by `wiki-memory token`

        data = {"version": 1, "tokens": [g._record() for g in grants]}
        write_durably(self.path, (json.dumps(data, indent=2) + "\n").encode())  # mode 0600
        self._seen = None

    def _lock(self) -> Any:
        from wiki_memory.store.lock import WriterLock  # deferred: dulwich, not needed by `wiki-memory token`

        self.root.mkdir(parents=True, exist_ok=True)
        return WriterLock(self.root / "tokens.lock", timeout=30)

    # Changing --------------------------------------------------------------------------

    def create(
        self, name: str, projects: Sequence[Project] | None, *, write: bool, email: str | None = None
    ) -> tuple[Grant, str]:
        """A new token for `name` (projects None: every project the server serves); returns
        its record and the token itself, which is never stored nor shown again."""
        name = name.strip()
        if not _NAME.match(name):
            raise InputError(
                f"invalid token name {name!r}: a person's name or login, up to 64 letters, digits, spaces and . ' - _"
            )
        if email is not None:
            email = email.strip()
            if not _EMAIL.match(email):
                raise InputError(f"invalid email {email!r}: give one address such as ada@example.com")
        if projects is not None and not projects:
            raise InputError("a token needs at least one project (--project P) or --all-projects")
        scope = (
            ((ALL_PROJECTS, ALL_PROJECTS),)
            if projects is None
            else tuple(dict.fromkeys((p.id, p.name) for p in projects))
        )
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock():
            grants = self.grants()
            if any(g.name.casefold() == name.casefold() for g in grants):
                raise InputError(f"a token named {name!r} exists already; revoke it first (`wiki-memory token revoke`)")
            grant = Grant(
                name=name,
                email=email or _default_email(name),
                write=write,
                projects=scope,
                created=_now(),
                digest=_digest(token),
            )
            self._write([*grants, grant])
        return grant, token

    def revoke(self, name: str) -> Grant:
        """Remove `name`'s token; a server refuses it from its next request."""
        with self._lock():
            grants = self.grants()
            gone = [g for g in grants if g.name.casefold() == name.strip().casefold()]
            if not gone:
                known = ", ".join(g.name for g in grants) or "none"
                raise NotFoundError(f"no token named {name!r} (tokens: {known})")
            self._write([g for g in grants if g not in gone])
        return gone[0]

    # Serving ---------------------------------------------------------------------------

    def authenticate(self, token: str) -> Grant | None:
        """The grant whose token this is, or None; notes when it was last used (to the minute)."""
        digest = _digest(token.strip())
        found = None
        for grant in self.grants():
            # Every stored hash is compared, in constant time each: no early exit to time.
            if hmac.compare_digest(grant.digest, digest):
                found = grant
        if found is not None:
            self._note_use(found)
        return found

    def _note_use(self, grant: Grant) -> None:
        minute = _now()[:16]
        if (grant.last_used or "")[:16] == minute:
            return  # at most one write a minute per token
        try:
            with self._lock():
                grants = [replace(g, last_used=_now()) if g.digest == grant.digest else g for g in self.grants()]
                self._write(grants)
        except (OSError, WikiMemoryError):
            pass  # a read-only or full home must not lock people out

    def admit(self, authorization: str | None, *, shared: str | None = None, loopback: bool = True) -> Admission:
        """Whether a request with this `Authorization` header value gets in (see the module
        docstring): a person's token, the shared token, or an open loopback server."""
        scheme, _, given = (authorization or "").strip().partition(" ")
        token = given.strip() if scheme.lower() == "bearer" else ""
        if shared:
            ok = hmac.compare_digest(token.encode("utf-8", "surrogatepass"), shared.encode("utf-8", "surrogatepass"))
            if ok:
                return Admission(True)
        grants_exist = self.any()
        if token and grants_exist:
            grant = self.authenticate(token)
            if grant is not None:
                return Admission(True, grant)
            return Admission(False, reason="unknown or revoked token")
        if not grants_exist and not shared and loopback:
            return Admission(True)
        return Admission(False, reason="wrong token" if token else "no token")

    def refuse(self, who: str, what: str, why: str) -> None:
        """Log one refusal: when, who (a token's name, or how an unknown caller came), what, why."""
        logs.write("access", f"refused {_one_line(who)}: {_one_line(what)}: {_one_line(why)}", root=str(self.root))

    # Deciding a call -------------------------------------------------------------------

    def check_project(self, grant: Grant, project: Project, what: str) -> Project:
        """`project`, or AccessError (logged) when the grant does not reach it."""
        if grant.reaches(project):
            return project
        why = f"project {project.name} ({project.id}) is outside the token's scope"
        self.refuse(grant.name, what, why)
        raise AccessError(
            f"{grant.name}'s token does not reach project {project.name}; it reaches {grant.reach_text()}"
        )

    def check_write(self, grant: Grant, what: str) -> None:
        """AccessError (logged) when a read token asks for a change."""
        if grant.write:
            return
        self.refuse(grant.name, what, "the token may only read")
        raise AccessError(f"{grant.name}'s token may only read: {what} changes the memory and is refused")

    def default_project(self, grant: Grant, own: Project | None) -> Project | None:
        """A call's project when it names none: the server's own, if the grant reaches it,
        else the grant's one project, else None (the call must name one)."""
        if own is not None and grant.reaches(own):
            return own
        ids = grant.project_ids
        if len(ids) == 1 and not grant.all_projects:
            folder = self.root / "projects" / ids[0]
            if (folder / "project.json").is_file():
                return load_project(folder)
        return None


def _default_email(name: str) -> str:
    return f"{slugify(name, max_length=40)}@{socket.gethostname()}"
