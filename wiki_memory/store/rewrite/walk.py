"""The history a rewrite goes over: every ref's commit, and every commit they reach,
parents first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dulwich.objects import Commit, ObjectID, Tag
from dulwich.repo import Repo

if TYPE_CHECKING:
    from dulwich.refs import Ref

GITLINK_MODE = 0o160000  # a submodule's commit in a tree: not an object of this repository


def ref_targets(repo: Repo) -> dict[Ref, ObjectID]:
    """Every ref (HEAD's symbolic link left out) -> the commit it names, tags peeled."""
    targets: dict[Ref, ObjectID] = {}
    for ref, sha in repo.refs.as_dict().items():
        if ref == b"HEAD":
            continue
        obj = repo[sha]
        while isinstance(obj, Tag):
            obj = repo[obj.object[1]]
        if isinstance(obj, Commit):
            targets[ref] = obj.id
    return targets


def commits_parents_first(repo: Repo, tips: Iterable[ObjectID]) -> list[Commit]:
    """Every commit the tips reach, each after all its parents."""
    order: list[Commit] = []
    seen: set[ObjectID] = set()
    stack: list[tuple[ObjectID, bool]] = [(sha, False) for sha in tips]
    while stack:
        sha, done = stack.pop()
        if done:
            order.append(repo[sha])  # type: ignore[arg-type]
            continue
        if sha in seen:
            continue
        seen.add(sha)
        stack.append((sha, True))
        stack.extend((p, False) for p in repo[sha].parents if p not in seen)  # type: ignore[attr-defined]
    return order
