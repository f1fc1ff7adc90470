"""Creating a wiki: a normal git repository on `main` whose first commit holds a README
for people and a `.gitignore` for editors' litter, made whole or not at all."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
from pathlib import Path

from dulwich.bundle import create_bundle_from_repo, read_bundle, write_bundle
from dulwich.repo import Repo

from wiki_memory.errors import ConflictError, WikiMemoryError
from wiki_memory.store.commits import Committer
from wiki_memory.store.context import Context
from wiki_memory.store.reading import BRANCH, HEAD, Reader
from wiki_memory.store.records import Author
from wiki_memory.store.worktree import WorkTree

WIKI_README = """\
# Project memory (wiki-memory)

This folder is the long-term memory that AI coding agents (Claude Code, Codex, Gemini CLI,
Cursor) share for one project, kept by [wiki-memory](https://pypi.org/project/wiki-memory/).

- Every page is a Markdown file with YAML front matter (`id`, `title`, `type`, `tags`,
  `status`, `created`, `updated`, `sources`). `[[Title]]` links pages, as in Obsidian.
- Every change is a git commit whose author is the agent or person who made it, with
  `Session-Id:` and `Agent:` trailers: `git log`, `git diff`, `git blame` and `git revert`
  work here exactly as in code.
- Edit pages in any editor. `wiki-memory watch` (or the next write by any agent) commits
  your edits under your own git identity.

Folders: `decisions/`, `gotchas/`, `procedures/`, `facts/`, `preferences/`, `notes/`,
`sessions/YYYY/MM/` (what each agent session did) and `handoffs/YYYY/MM/` (what the next
session is told).
"""

WIKI_GITIGNORE = """\
# Editor litter; wiki-memory ignores these too.
*.swp
*.swo
*.swx
*~
.#*
\\#*#
4913
*___jb_tmp___
*___jb_old___
.DS_Store
.obsidian/workspace*
.trash/
*.kate-swp
.goutputstream-*
.~lock.*#
~$*
*.crswap
.syncthing.*
# A writer's temporary file, renamed over the page when complete.
.*.wm-tmp-*
"""


def has_commit(root: Path) -> bool:
    """Does the repository at `root` have a commit on HEAD (is it more than begun)?"""
    try:
        repo = Repo(str(root))
    except Exception:  # noqa: BLE001 - dulwich's NotGitRepository: an empty or half-written `.git`
        return False
    try:
        repo.refs[HEAD]
        return True
    except KeyError:
        return False
    finally:
        repo.close()


def clean_unfinished(root: Path, since: float) -> None:
    """Remove the half-built copies of the wiki at `root` that a process killed while
    creating it left beside it (made at or after `since`, when it began)."""
    try:
        leftovers = list(root.parent.glob(f".{root.name}.creating-*"))
    except OSError:
        return
    for folder in leftovers:
        try:
            if folder.stat().st_mtime >= since - 1.0:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def create_wiki(root: Path, author: Author | None = None) -> None:
    """Make the wiki at `root` unless it is there already.

    Made whole or not at all: the repository and its first commit are built beside the
    wiki, and its `.git` moves in with one rename. Why: a process killed while creating
    it in place (a SessionEnd consolidation, say) left a `.git` with no HEAD and a stale
    `HEAD.lock`, on which every later commit failed. Such an unfinished `.git` (no
    commit yet) is moved aside, beside the wiki, and the wiki made again.
    """
    git_dir = root / ".git"
    if git_dir.is_dir():
        if has_commit(root):
            return
        try:
            git_dir.rename(root.parent / f".{root.name}.unfinished-git-{time.time_ns()}")
        except FileNotFoundError:
            pass  # another process moved it aside first
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{root.name}.creating-", dir=root.parent))
    try:
        repo = Repo.init(str(building))
        repo.refs.set_symbolic_ref(HEAD, BRANCH)
        repo.close()
        context = Context(building)
        reader = Reader(context)
        made = Committer(context, reader, WorkTree(context, reader))
        made.commit(
            {"README.md": WIKI_README.encode(), ".gitignore": WIKI_GITIGNORE.encode()},
            made.message("init: wiki-memory wiki", None, None, "", ()),
            author or Author("wiki-memory", "wiki-memory@wiki-memory"),
        )
        context.close()
        # The files first (renamed: the index's stat data still fits them), then the claim.
        for name in ("README.md", ".gitignore"):
            if not (root / name).exists():
                os.replace(building / name, root / name)
        try:
            os.rename(building / ".git", git_dir)
        except OSError:
            if not git_dir.is_dir():
                raise
            # Another process made the wiki meanwhile: theirs it is.
    finally:
        shutil.rmtree(building, ignore_errors=True)


def history_bundle(root: Path) -> bytes:
    """The wiki's whole history (its `main`) as a git bundle: `git clone wiki.bundle` works."""
    with Repo(str(root)) as repo:
        bundle = create_bundle_from_repo(repo, refs=[BRANCH])
        out = io.BytesIO()
        write_bundle(out, bundle)
    return out.getvalue()


def create_wiki_from_bundle(root: Path, data: bytes) -> str:
    """Make the wiki at `root` from a bundle's `main`, its history whole; the head commit.

    Made whole or not at all, as `create_wiki`: built beside the wiki, moved in with one
    rename. Refused when `root` is a wiki already (its history would be lost)."""
    if (root / ".git").is_dir() and has_commit(root):
        raise ConflictError(f"{root} is a wiki already: its history would be replaced")
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{root.name}.creating-", dir=root.parent))
    try:
        bundle_file = building.parent / f"{building.name}.bundle"
        bundle_file.write_bytes(data)
        try:
            with open(bundle_file, "rb") as f:
                bundle = read_bundle(f)
                head = bundle.references.get(BRANCH)
                if head is None or bundle.prerequisites:
                    raise WikiMemoryError("the export's history has no main branch of its own")
                repo = Repo.init(str(building))
                bundle.store_objects(repo.object_store)
                bundle.close()
        finally:
            bundle_file.unlink(missing_ok=True)
        repo.refs[BRANCH] = head
        repo.refs.set_symbolic_ref(HEAD, BRANCH)
        repo.get_worktree().reset_index()
        repo.close()
        for entry in os.listdir(building):
            if entry != ".git" and not (root / entry).exists():
                os.replace(building / entry, root / entry)
        os.rename(building / ".git", root / ".git")
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return head.decode()
