"""Which paths are pages, which files are an editor's litter, and which paths are refused."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from wiki_memory.errors import PathError

# Files editors and tools leave beside the ones a person edits; never committed or watched.
TEMP_PATTERNS: tuple[str, ...] = (
    "*.swp",
    "*.swo",
    "*.swx",
    ".*.swp",
    "*~",
    ".#*",
    "#*#",
    "4913",
    "*___jb_tmp___",
    "*___jb_old___",
    "*.tmp",
    ".DS_Store",
    "Thumbs.db",
    ".*.wm-tmp-*",
    "*.orig",
    # Kate's swap file, GNOME's atomic-save temp, LibreOffice and MS Office locks, Chrome's
    # File System Access swap, Syncthing's temp files.
    "*.kate-swp",
    ".goutputstream-*",
    ".~lock.*#",
    "~$*",
    "*.crswap",
    ".syncthing.*",
)
IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash", ".vscode", ".idea"})
NOT_PAGES = frozenset({"README.md", ".gitignore"})

_BAD_CHARS = re.compile(r"[\x00-\x1f\\]")


_TEMP_NAME = re.compile("|".join(fnmatch.translate(p) for p in TEMP_PATTERNS))


def is_ignored_name(name: str) -> bool:
    """True for a file or folder name that is never memory (`.git`, `x.md~`, `.x.md.swp`)."""
    if name.endswith(".md") and name[0] not in ".#~":
        return False  # the common case, decided without the pattern
    return name in IGNORED_DIRS or _TEMP_NAME.match(name) is not None


def is_ignored(rel: str) -> bool:
    """True for editor temp files and folders that are not memory (`.git`, `.obsidian`)."""
    parts = rel.split("/")
    return any(part in IGNORED_DIRS for part in parts[:-1]) or is_ignored_name(parts[-1])


def is_page_path(rel: str) -> bool:
    return rel.endswith(".md") and rel not in NOT_PAGES and not is_ignored(rel)


MAX_NAME_BYTES = 255  # of one file or folder name: what file systems hold (longer: ENAMETOOLONG)


def normalize_path(path: str, *, page: bool = True) -> str:
    """A clean relative POSIX path inside the wiki, or PathError.

    Refused: absolute paths, `..`, `.git`, backslashes and control characters; with
    `page`, anything that is not a `.md` file.
    """
    original = path
    path = path.strip()
    if not path:
        raise PathError("empty page path")
    if _BAD_CHARS.search(path):
        raise PathError(f"{original!r}: page paths may not contain backslashes or control characters")
    if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", path):
        raise PathError(f"{original!r}: page paths are relative to the wiki, not absolute")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise PathError(f"{original!r}: not a page path")
    if ".." in parts:
        raise PathError(f"{original!r}: page paths may not leave the wiki ('..')")
    if any(p.lower() == ".git" for p in parts):
        raise PathError(f"{original!r}: the .git folder is not part of the wiki")
    if any(len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for p in parts):
        raise PathError(f"{original[:60]!r}...: a file name in the wiki is at most {MAX_NAME_BYTES} bytes")
    clean = "/".join(parts)
    if page and not clean.endswith(".md"):
        raise PathError(f"{original!r}: page paths end in .md")
    if page and (clean in NOT_PAGES or is_ignored(clean)):
        raise PathError(f"{original!r}: not a page path")
    return clean


def check_inside(root: Path, rel: str) -> Path:
    """The file for `rel` under `root`, refusing any symlink on the way (inside or out).

    Why refuse even inside links: writing through one would change a second page behind
    the person's back, and replacing it would silently turn their link into a file.
    """
    target = root / rel
    current = root
    for part in rel.split("/"):
        current = current / part
        if current.is_symlink():
            raise PathError(
                f"{rel!r}: {current.relative_to(root)} is a symbolic link; wiki-memory does not write through links"
            )
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(target)]) != real_root:
        raise PathError(f"{rel!r} resolves outside the wiki")
    return target
