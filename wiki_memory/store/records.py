"""The store's value objects: who made a change, what a commit says, what a write did."""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dulwich.config import StackedConfig
from dulwich.repo import Repo

from wiki_memory.config import load_settings
from wiki_memory.pages import Page

# Git file modes.
FILE_MODE = 0o100644
EXEC_MODE = 0o100755
LINK_MODE = 0o120000
TREE_MODE = 0o040000


@dataclass(frozen=True)
class Author:
    """Who made a change: an agent (`claude-code <claude-code@wiki-memory>`) or a person."""

    name: str
    email: str

    @classmethod
    def agent(cls, agent: str) -> Author:
        return cls(agent, f"{agent}@wiki-memory")

    @classmethod
    def person(cls, repo_path: Path | None = None) -> Author:
        """The user's git identity (env, repository and global config), else login@host."""
        name = os.environ.get("GIT_AUTHOR_NAME")
        email = os.environ.get("GIT_AUTHOR_EMAIL")
        if not (name and email):
            try:
                config = StackedConfig.default()
                if repo_path is not None:
                    config = Repo(str(repo_path)).get_config_stack()
                name = name or config.get((b"user",), b"name").decode("utf-8", "replace")
                email = email or config.get((b"user",), b"email").decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - KeyError when unset; anything odd in a config: fall back
                pass
        user = getpass.getuser() if not name or not email else ""
        return cls(name or user, email or f"{user}@{socket.gethostname()}")

    def ident(self) -> bytes:
        return f"{self.name} <{self.email}>".encode()


@dataclass(frozen=True)
class CommitInfo:
    id: str
    author: str
    email: str
    time: str  # ISO 8601, UTC
    message: str
    trailers: Mapping[str, str] = field(default_factory=dict)
    paths: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        return self.id[:8]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "short": self.short,
            "author": self.author,
            "email": self.email,
            "time": self.time,
            "subject": self.subject,
            "message": self.message,
            "trailers": dict(self.trailers),
            "paths": list(self.paths),
        }


@dataclass(frozen=True)
class WriteResult:
    path: str
    commit: str | None  # None when the page was already exactly so
    created: bool
    page: Page

    @property
    def changed(self) -> bool:
        return self.commit is not None


@dataclass(frozen=True)
class Edit:
    """One commit of a person's hand edits: `edit: <path>` (or `edit: <old> -> <new>`)."""

    commit: str
    subject: str
    paths: tuple[str, ...]
    deleted: tuple[str, ...] = ()


def blob_id(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().encode("ascii")


def machine_name() -> str:
    """This machine, as commits record it (`Host:`) and conflict copies are named: the
    `[sync] host` setting, else the short host name as a file-name-safe slug (`laptop`)."""
    try:
        pinned = load_settings().sync.host
    except Exception:  # noqa: BLE001 - a broken config.toml must not stop a commit
        pinned = ""
    name = pinned or socket.gethostname().split(".", 1)[0]
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "host"


def commit_message(
    subject: str,
    session_id: str | None,
    agent: str | None,
    body: str = "",
    host: str | None = None,
    trailers_first: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The message of a commit: subject, body, then the trailers (`trailers_first`, such as
    `Reason:`, before `Session-Id:`, `Agent:` and `Host:`), one line each."""
    text = subject.strip()
    if body.strip():
        text += "\n\n" + body.strip()
    trailers = [f"{key}: {' '.join(value.split())}" for key, value in trailers_first if value and value.strip()]
    trailers += [
        f"Session-Id: {session_id}" if session_id else "",
        f"Agent: {agent}" if agent else "",
        f"Host: {host}" if host else "",
    ]
    trailers = [t for t in trailers if t]
    if trailers:
        text += "\n\n" + "\n".join(trailers)
    return (text + "\n").encode("utf-8")


def parse_trailers(message: str) -> dict[str, str]:
    paragraphs = message.strip().split("\n\n")
    if len(paragraphs) < 2:
        return {}  # a subject alone is not a trailer block
    last = paragraphs[-1]
    found: dict[str, str] = {}
    for line in last.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            found[key] = value.strip()
    return found
