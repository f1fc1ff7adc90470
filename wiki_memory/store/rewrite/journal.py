"""An interrupted forget: its journal (`.git/wiki-memory/forget-pending`), written and
flushed to the disk before any ref moves, and `recover`, which undoes the rewrite if no
ref had moved yet and finishes it otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.objects import ObjectID
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError
from wiki_memory.store.durable import remove_durably, write_durably
from wiki_memory.store.reading import BRANCH
from wiki_memory.store.rewrite.packing import prune

if TYPE_CHECKING:
    from dulwich.refs import Ref

    from wiki_memory.store.store import Store

JOURNAL = "forget-pending"  # in .git/wiki-memory; not *.json, which `forget` scrubs as a local file


@dataclass(frozen=True)
class Interrupted:
    """A forget that was killed, as `recover` left it: `finished` (its rewrite had become
    visible, and the refs and objects were brought to its end) or undone (no ref had moved:
    the wiki is as it was). `refs` as `ForgetReport.refs`; `needles` what was forgotten, for
    the caller's own steps (the index, the local files)."""

    finished: bool
    refs: dict[str, tuple[str, str | None]]
    needles: tuple[bytes, ...]


def journal_path(store: Store) -> Path:
    return store.git_dir / "wiki-memory" / JOURNAL


def interrupted(store: Store) -> bool:
    """A forget was killed and its journal stands (a stat)."""
    return journal_path(store).exists()


def clear_journal(store: Store) -> None:
    remove_durably(journal_path(store))


def write_journal(
    store: Store,
    tips: Mapping[Ref, ObjectID],
    refs: Iterable[Ref],
    leases: Mapping[str, tuple[str, str | None]],
    needles: Sequence[bytes],
) -> None:
    """What `recover` needs, on the disk before any ref moves: each of `refs` that the
    rewrite moves (to its new tip in `tips`, or deleted), the leases (`ForgetReport.refs`)
    and what is forgotten (the local files are scrubbed from it); it goes once the forget
    is done."""
    repo = store.repo
    moves = {}
    for ref in refs:
        old = repo.refs[ref]
        new = tips.get(ref)
        if new != old:
            moves[ref.decode()] = [old.decode(), new.decode() if new is not None else None]
    record = {"version": 1, "moves": moves, "refs": leases, "needles": [n.hex() for n in needles]}
    write_durably(journal_path(store), json.dumps(record).encode())


def _descends(repo: Repo, start: bytes | None, new: bytes, old: bytes) -> bool:
    """Whether the branch at `start` is on the rewritten history (reaches `new`) rather
    than the old one (reaches `old`): a writer may have committed on either since."""
    seen: set[bytes] = set()
    stack = [start] if start is not None else []
    while stack:
        sha = stack.pop()
        if sha == new:
            return True
        if sha == old or sha in seen:
            continue
        seen.add(sha)
        try:
            stack.extend(repo[ObjectID(sha)].parents)  # type: ignore[attr-defined]
        except KeyError:
            continue
    return False


def recover(store: Store) -> Interrupted | None:
    """Bring an interrupted forget to an end, under the writer lock: undone if no ref had
    moved (the journal says which would), else finished: the other refs moved, the old
    history's objects deleted. None when no forget was interrupted. The caller finishes its
    own steps, then `clear_journal`."""
    path = journal_path(store)
    with store.lock:
        try:
            record = json.loads(path.read_bytes())
            moves = {
                ref.encode(): (old.encode(), new.encode() if new is not None else None)
                for ref, (old, new) in record["moves"].items()
            }
            refs = {ref: (old, new) for ref, (old, new) in record["refs"].items()}
            needles = tuple(bytes.fromhex(n) for n in record["needles"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ConflictError(
                f"{path} (the journal of an interrupted `forget`) is damaged ({e}); delete it and run the forget again"
            ) from None
        repo = store.repo
        current = repo.refs.as_dict()
        branch = moves.get(BRANCH)
        if branch is not None and branch[1] is not None:
            visible = _descends(repo, current.get(BRANCH), branch[1], branch[0])
        else:
            visible = any(current.get(ref) != old for ref, (old, _new) in moves.items())
        if visible:
            for ref, (old, new) in moves.items():
                if current.get(ref) != old:
                    continue  # moved already (or since, by someone else: theirs stands)
                if ref == BRANCH and new is not None:
                    store.advance(new, reflog="forget: history rewritten (finished after an interruption)")
                elif new is None:
                    repo.refs.remove_if_equals(ref, old)
                else:
                    repo.refs.set_if_equals(ref, old, new)
            prune(store)
        return Interrupted(visible, refs, needles)
