"""Resolving `[[...]]` links to page paths, as Obsidian does.

A target resolves, in order, to: the page at that path (with or without `.md`); the page
whose title it is (case-insensitive); the page whose file name (slug) it matches. When
several pages fit, the shortest path wins (Obsidian's "closest" rule has no folder context
here). A target that fits no page resolves to None: a link to a page not written yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wiki_memory.pages import slugify


@dataclass(frozen=True)
class Link:
    """An outgoing link of a page: the target as written and the page it resolves to."""

    target: str
    path: str | None  # the resolved page path, None when no page fits
    heading: str | None = None
    alias: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"target": self.target, "path": self.path, "heading": self.heading, "alias": self.alias}


def target_keys(target: str) -> tuple[str, str, str]:
    """(whole target, last segment, slug of the last segment), casefolded and without `.md`:
    what `Resolver.resolve` compares with paths, titles and file names."""

    target = target.strip().lstrip("/").removesuffix(".md")
    tail = target.rsplit("/", 1)[-1]
    return target.casefold(), tail.casefold(), slugify(tail).casefold() if tail else ""


def page_keys(path: str, title: str) -> tuple[set[str], set[str]]:
    """The names a page answers to: (whole-target names: its path and title; file-name
    names: its stem), casefolded, for finding the links that may point at it."""
    return {path.removesuffix(".md").casefold(), title.casefold()}, {_stem(path)}


class Resolver:
    """Every page's names (path, title, file name), for resolving link targets; kept up to
    date page by page with `add` and `remove`."""

    def __init__(self, pages: Iterable[tuple[str, str]]):

        self._slugify = slugify
        self.title_of: dict[str, str] = {}  # every page: path -> title
        self.by_title: dict[str, list[str]] = {}
        self.by_stem: dict[str, list[str]] = {}
        for path, title in pages:
            self.add(path, title)

    def add(self, path: str, title: str) -> None:
        self.title_of[path] = title
        self.by_title.setdefault(title.casefold(), []).append(path)
        self.by_stem.setdefault(_stem(path), []).append(path)

    def remove(self, path: str) -> None:
        title = self.title_of.pop(path, None)
        if title is None:
            return
        for table, key in ((self.by_title, title.casefold()), (self.by_stem, _stem(path))):
            found = table.get(key, [])
            if path in found:
                found.remove(path)
                if not found:
                    del table[key]

    def resolve(self, target: str) -> str | None:
        target = target.strip().lstrip("/")
        if not target:
            return None
        for candidate in (target, target + ".md"):
            if candidate in self.title_of:
                return candidate
        for table, key in (
            (self.by_title, target.casefold()),
            (self.by_stem, _stem(target)),
            (self.by_stem, self._slugify(target.rsplit("/", 1)[-1]).casefold()),
        ):
            found = table.get(key)
            if found:
                return min(found, key=lambda p: (len(p), p))
        return None


def _stem(path: str) -> str:
    """A path's (or a target's) file name without `.md`, casefolded."""
    return path.rsplit("/", 1)[-1].removesuffix(".md").casefold()
