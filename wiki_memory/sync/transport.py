"""Talking to a remote with dulwich: fetch its `main`, push ours with a compare-and-swap.

Local paths and file:// go through dulwich's local client; ssh:// and scp-like URLs
through the system's `ssh` (honouring `GIT_SSH_COMMAND` / `GIT_SSH` and `core.sshCommand`,
so keys, agents and `~/.ssh/config` work as with git); http(s):// through dulwich's smart
HTTP client. Whatever goes wrong on the way becomes one `UnreachableError` line.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dulwich.errors import GitProtocolError, NotGitRepository, SendPackError
from dulwich.objects import ObjectID
from dulwich.refs import Ref

from wiki_memory.errors import WikiMemoryError
from wiki_memory.store.litter import clean_after_dead_owner
from wiki_memory.store.lock import WriterLock
from wiki_memory.sync.remotes import Remote

if TYPE_CHECKING:
    from wiki_memory.store import Store

MAIN = b"refs/heads/main"


class SyncError(WikiMemoryError):
    """A sync could not finish; the local wiki is intact."""


class UnreachableError(SyncError):
    """The remote could not be reached or read."""


class RemoteMoved(Exception):
    """Someone pushed to the remote between our fetch and our push: fetch and merge again."""


def tracking_ref(remote: Remote) -> bytes:
    return f"refs/remotes/{remote.name}/main".encode()


def _client(store: Store, remote: Remote, operation: str) -> tuple[Any, str]:
    from dulwich.client import get_transport_and_path  # deferred: dulwich's network clients: only a sync that talks

    path = remote.local_path
    if path is not None:
        _check_local(remote, path)
    ssh_command = os.environ.get("GIT_SSH_COMMAND") or os.environ.get("GIT_SSH") or None
    try:
        return get_transport_and_path(
            remote.url, config=store.repo.get_config_stack(), operation=operation, ssh_command=ssh_command, quiet=True
        )
    except ValueError as e:
        raise SyncError(f"remote {remote.name!r}: cannot use {remote.shown}: {e}") from None


def _check_local(remote: Remote, path: Path) -> None:
    """A remote on this machine must be a bare repository: pushing into a checked-out
    branch would leave that checkout's files behind its history."""
    if not path.exists():
        raise UnreachableError(
            f"cannot reach remote {remote.name!r}: {path} does not exist "
            f"(create it with `git init --bare -b main {path}`). Your local memory is intact."
        )
    if (path / ".git").exists():
        raise SyncError(
            f"remote {remote.name!r} ({path}) is a repository with a working tree; "
            f"sync through a bare repository instead (`git init --bare -b main {path}.git`)"
        )
    if not (path / "objects").is_dir() or not (path / "HEAD").exists():
        raise UnreachableError(
            f"cannot use remote {remote.name!r}: {path} is not a git repository "
            f"(create one with `git init --bare -b main {path}`). Your local memory is intact."
        )


def _remote_lock(remote: Remote) -> AbstractContextManager[object]:
    """Pushes into a repository on this machine take turns on a lock in it, with an owner
    record. Why: a push killed midway left `refs/heads/main.lock` (and a temporary pack) in
    the remote, and every later sync failed on it; the next push after a dead one removes
    what it left (see `store.litter`). A remote reached over the network has its own."""
    path = remote.local_path
    if path is None:
        return nullcontext()

    return WriterLock(path / "wiki-memory-push.lock", recover=lambda since: clean_after_dead_owner(path, None, since))


def _reason(exc: BaseException) -> str:
    lines = getattr(exc, "stderr_lines", None)
    if lines:
        text = [ln.decode("utf-8", "replace") if isinstance(ln, bytes) else str(ln) for ln in lines]
        text = [t.strip() for t in text if t.strip()]
        if text:
            return text[-1]
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    message = str(exc).strip()
    return message.splitlines()[-1] if message else type(exc).__name__


def _network_errors() -> tuple[type[BaseException], ...]:
    from dulwich.client import HTTPProxyUnauthorized, HTTPUnauthorized  # deferred: as get_transport_and_path

    errors: list[type[BaseException]] = [
        OSError,
        GitProtocolError,
        NotGitRepository,
        HTTPUnauthorized,
        HTTPProxyUnauthorized,
    ]
    try:
        from urllib3.exceptions import HTTPError  # deferred: urllib3 only when a sync talks to a remote

        errors.append(HTTPError)
    except ImportError:  # pragma: no cover - urllib3 comes with dulwich's HTTP client
        pass
    return tuple(errors)


def unreachable(remote: Remote, exc: BaseException, verb: str = "reach") -> UnreachableError:
    return UnreachableError(
        f"cannot {verb} remote {remote.name!r} ({remote.shown}): {_reason(exc)}. "
        "Your local memory is intact; run `wiki-memory sync` again when it is reachable."
    )


def fetch(store: Store, remote: Remote) -> bytes | None:
    """Fetch the remote's `main` into the wiki's object store; its commit id, or None
    when the remote has no `main` yet (a new, empty repository)."""
    client, path = _client(store, remote, "pull")
    wanted: dict[str, bytes | None] = {}

    def determine_wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
        sha = refs.get(MAIN)
        wanted["main"] = sha
        if sha is None or ObjectID(sha) in store.repo.object_store:
            return []
        return [sha]

    try:
        result = client.fetch(path, store.repo, determine_wants=determine_wants)
    except _network_errors() as e:
        raise unreachable(remote, e) from None
    sha = wanted.get("main", (result.refs or {}).get(MAIN))
    if sha is not None:
        store.repo.refs[Ref(tracking_ref(remote))] = ObjectID(sha)
    return sha


def fetch_heads(store: Store, remote: Remote, prefixes: tuple[bytes, ...] = (MAIN,)) -> dict[bytes, bytes]:
    """Fetch the remote's branches whose ref starts with one of `prefixes` (`refs/heads/main`,
    `refs/heads/share/`) into the wiki's object store, and record `main` as the remote's
    tracking ref (as `fetch` does); {ref: commit id} of those the remote has."""
    client, path = _client(store, remote, "pull")
    found: dict[bytes, bytes] = {}

    def determine_wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
        found.update({bytes(r): bytes(s) for r, s in refs.items() if s and bytes(r).startswith(prefixes)})
        return sorted({s for s in found.values() if ObjectID(s) not in store.repo.object_store})

    try:
        client.fetch(path, store.repo, determine_wants=determine_wants)
    except _network_errors() as e:
        raise unreachable(remote, e) from None
    if MAIN in found:
        store.repo.refs[Ref(tracking_ref(remote))] = ObjectID(found[MAIN])
    return found


def peek(store: Store, remote: Remote) -> bytes | None:
    """The commit the remote's `main` names (None: it has none), fetching nothing."""
    client, path = _client(store, remote, "pull")
    try:
        result = client.get_refs(path.encode() if isinstance(path, str) else path)
    except _network_errors() as e:
        raise unreachable(remote, e) from None
    refs = getattr(result, "refs", result)
    sha = refs.get(MAIN)
    return bytes(sha) if sha else None


def push(
    store: Store, remote: Remote, new: bytes, expected: bytes | None, *, replacing: bool = False, ref: bytes = MAIN
) -> None:
    """Move the remote's `main` (or another branch, `ref`) from `expected` to `new`, sending
    what it lacks. Raises RemoteMoved if the branch is no longer `expected` (someone pushed meanwhile);
    the server checks the same compare-and-swap, so a push never overwrites theirs.

    `replacing`: `new` does not descend from `expected` (a rewritten history, replacing
    the remote's): `expected` is the lease, and a server that refuses to move a branch
    off its history (branch protection) is a SyncError saying so."""
    client, path = _client(store, remote, "push")

    def update_refs(refs: dict[bytes, bytes]) -> dict[bytes, bytes]:
        if refs.get(ref) != expected:
            raise RemoteMoved()
        return {ref: new}

    def generate_pack_data(have: Any, want: Any, *, ofs_delta: bool = False, progress: Any = None) -> Any:
        return store.repo.generate_pack_data(set(have), set(want), progress=progress, ofs_delta=ofs_delta)

    try:
        with _remote_lock(remote):
            result = client.send_pack(
                path.encode() if isinstance(path, str) else path, update_refs, generate_pack_data=generate_pack_data
            )
    except RemoteMoved:
        raise
    except SendPackError as e:
        raise SyncError(
            f"remote {remote.name!r} refused the push: {_reason(e)}. Your local memory is intact."
        ) from None
    except _network_errors() as e:
        raise unreachable(remote, e, "push to") from None
    for name, error in (result.ref_status or {}).items():
        if error is None:
            continue
        lowered = error.lower()
        if replacing and any(w in lowered for w in ("non-fast-forward", "protected", "denied", "declined")):
            raise SyncError(
                f"remote {remote.name!r} refused to replace its history ({error}): allow force-pushes to main "
                "there (branch protection, or `git config receive.denyNonFastForwards false`). Nothing was changed."
            )
        if any(w in lowered for w in ("fetch first", "non-fast-forward", "unable to set", "stale", "lock")):
            raise RemoteMoved()
        raise SyncError(
            f"remote {remote.name!r} refused {name.decode('utf-8', 'replace')}: {error}. Your local memory is intact."
        )
    if ref == MAIN:
        store.repo.refs[Ref(tracking_ref(remote))] = ObjectID(new)
