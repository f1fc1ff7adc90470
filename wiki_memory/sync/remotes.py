"""The wiki's git remotes, kept where git keeps them (`[remote "NAME"]` in `.git/config`),
so `git -C <wiki> remote -v`, `git push` and `git pull` see the same ones."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from wiki_memory.errors import ConflictError, NotFoundError, WikiMemoryError

if TYPE_CHECKING:
    from dulwich.config import ConfigFile

    from wiki_memory.store import Store

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_URL_SCHEMES = ("file", "ssh", "git+ssh", "ssh+git", "http", "https", "git")
_SCP_LIKE = re.compile(r"^(?:[^@/:\s]+@)?[^@/:\s]+:(?!//)[^\s]*$")


@dataclass(frozen=True)
class Remote:
    name: str
    url: str

    @property
    def shown(self) -> str:
        """The URL as printed: a password or token in it is masked."""
        return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:***@", self.url)

    @property
    def local_path(self) -> Path | None:
        """The repository's folder when the remote is on this machine (a path or file://)."""
        return local_path(self.url)

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "url": self.shown}


def local_path(url: str) -> Path | None:
    if url.startswith("file://"):
        return Path(unquote(urlsplit(url).path))
    if "://" in url or (_SCP_LIKE.match(url) and not url.startswith(("/", ".", "~"))):
        return None
    return Path(url)


def check_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name or name.endswith(".lock"):
        raise WikiMemoryError(
            f"{name!r} is not a usable remote name (letters, digits, '.', '_', '-'; for example origin)"
        )
    return name


def check_url(url: str, base: Path | None = None) -> str:
    """The URL to store: a network URL as given, a local path made absolute.

    Accepted: `https://host/org/wiki.git`, `ssh://user@host/path`, `user@host:path`
    (scp-like), `git://`, `file:///path` and local paths.
    """
    url = url.strip()
    if not url:
        raise WikiMemoryError("the remote URL is empty")
    if re.search(r"[\x00-\x1f\s]", url):
        raise WikiMemoryError(f"{url!r}: a remote URL has no spaces or control characters")
    scheme, sep, _ = url.partition("://")
    if sep:
        if scheme.lower() not in _URL_SCHEMES:
            raise WikiMemoryError(
                f"{url}: unsupported scheme {scheme!r} (use https://, ssh://, git://, file:// or a path)"
            )
        return url
    if _SCP_LIKE.match(url) and not url.startswith(("/", ".", "~")):
        return url  # git@github.com:acme/wiki.git
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return str(Path(os.path.normpath(path)))


def _config(store: Store) -> ConfigFile:
    return store.repo.get_config()


def list_remotes(store: Store) -> list[Remote]:
    """The wiki's remotes, in the order of its git config."""
    config = _config(store)
    found = []
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                url = config.get(section, b"url").decode("utf-8", "replace")
            except KeyError:
                continue
            found.append(Remote(section[1].decode("utf-8", "replace"), url))
    return found


def add_remote(store: Store, name: str, url: str) -> Remote:
    """Record a remote (`git remote add` semantics: the name must be new)."""
    name = check_name(name)
    url = check_url(url)
    if any(r.name == name for r in list_remotes(store)):
        raise ConflictError(
            f"there is already a remote named {name!r}; remove it first (`wiki-memory remote remove {name}`)"
        )
    with store.lock:
        config = _config(store)
        section = (b"remote", name.encode())
        config.set(section, b"url", url.encode())
        config.set(section, b"fetch", f"+refs/heads/*:refs/remotes/{name}/*".encode())
        config.write_to_path()
    return Remote(name, url)


def remove_remote(store: Store, name: str) -> Remote:
    """Forget a remote and its remote-tracking refs; nothing in the wiki changes."""
    remote = get_remote(store, name)
    with store.lock:
        config = _config(store)
        del config[(b"remote", name.encode())]
        config.write_to_path()
        prefix = f"refs/remotes/{name}/".encode()
        for ref in list(store.repo.refs.keys()):
            if ref.startswith(prefix):
                store.repo.refs.remove_if_equals(ref, None)
    return remote


def get_remote(store: Store, name: str) -> Remote:
    for remote in list_remotes(store):
        if remote.name == name:
            return remote
    known = ", ".join(r.name for r in list_remotes(store)) or "none yet"
    raise NotFoundError(f"no remote named {name!r} (remotes: {known})")


def default_remote(store: Store, preferred: str | None = None) -> Remote:
    """The remote to sync with: the one named, else `[sync] remote` from config.toml (passed
    as `preferred`), else the only one, else `origin`."""
    if preferred:
        return get_remote(store, preferred)
    remotes = list_remotes(store)
    if not remotes:
        raise NotFoundError(
            "this wiki has no remote yet; add one with "
            "`wiki-memory remote add origin <url>` (any git host, or a bare repository)"
        )
    if len(remotes) == 1:
        return remotes[0]
    for remote in remotes:
        if remote.name == "origin":
            return remote
    raise WikiMemoryError(
        f"this wiki has {len(remotes)} remotes ({', '.join(r.name for r in remotes)}); "
        "name the one to sync with, or set `remote` under [sync] in config.toml"
    )
