"""Benchmark: forget a string from a wiki of 1,000 pages and 2,000 commits, on the machine
that forgot and on another one that syncs afterwards.

The wiki is built as an aged one is: 1,000 pages in five folders, added one commit each,
then 1,000 commits that each edit one page, all packed. A fake token is pasted into
20 commits (some pages keep it to HEAD, some later edits drop it again). Machine A holds
it with its search index (words) and a journal that captured the token; it syncs through
a bare remote to machine B, which then writes a page of its own.

Timed, through the memory layer every front end calls:

- `scan`: the redaction rules over the whole history (`Memory.scan`);
- `forget --dry-run` and `forget` (`Memory.forget`: the history rewritten and repacked, the
  branch moved with the working tree and index, the search index rebuilt from scratch,
  the journals and logs scrubbed), the index rebuild also on its own;
- `sync --replace-remote-history` on A, the force-push;
- the adoption on B (`Memory.sync`: the rewrite detected, the forgotten text learned, its own
  commit replayed, the old objects dropped, the index rebuilt, the journal scrubbed), and a
  fresh machine's first sync.

Then checked with git: no object of A, B or the fresh machine holds the token, `git fsck
--full --strict` is clean, and neither index file nor journal holds it. Words only (no
embedding model is loaded): the vectors' cost is the embedding rate times the chunks that
changed (unchanged chunks keep their vectors).

    python scripts/bench_forget.py
    python scripts/bench_forget.py --pages 1000 --commits 2000 --json bench-results/forget.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dulwich.objects import Blob, Commit, Tree

from wiki_memory.config import project_for_store
from wiki_memory.memory import Memory
from wiki_memory.store import Store
from wiki_memory.store.records import FILE_MODE, TREE_MODE

T = TypeVar("T")

TOKEN = "ghp_" + "Bq7Xm2Lz9Vk4Rt8Wn3Pc6Hj1Df5Gs0Ay2Ue7"  # fake, of the real shape
FOLDERS = ("decisions", "gotchas", "procedures", "facts", "notes")
WORDS = "retry token cache index queue worker deploy rollback schema migration latency budget".split()


def body(rng: random.Random, n: int, secret: bool) -> bytes:
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(n)]
    if secret:
        lines.insert(rng.randrange(len(lines)), f"export GITHUB_TOKEN={TOKEN}")
    return "\n".join(lines).encode() + b"\n"


def build(root: Path, pages: int, commits: int, holding: int, seed: int = 7) -> None:
    """A wiki with `commits` commits after its first, `holding` of which paste the token."""
    rng = random.Random(seed)
    store = Store.create(root)
    repo = store.repo
    head = store.head()
    assert head is not None
    parent: Commit = repo[head]  # type: ignore[assignment]
    files: dict[str, dict[bytes, bytes]] = {folder: {} for folder in FOLDERS}
    folder_trees: dict[str, bytes] = {}
    base_tree: Tree = repo[parent.tree]  # type: ignore[assignment]
    secret_at = set(rng.sample(range(commits), holding))
    objects = []
    now = parent.commit_time
    for i in range(commits):
        n = i if i < pages else rng.randrange(pages)
        folder = FOLDERS[n % len(FOLDERS)]
        name = f"page-{n:04d}.md".encode()
        front = f"---\nid: 01BENCH{n:06d}\ntitle: Page {n}\ntype: note\n---\n# Page {n}\n\n".encode()
        blob = Blob.from_string(front + body(rng, 20, i in secret_at))
        files[folder][name] = blob.id
        sub = Tree()
        for entry_name, sha in files[folder].items():
            sub.add(entry_name, FILE_MODE, sha)
        root_tree = Tree.from_raw_string(Tree.type_num, base_tree.as_raw_string())
        for other in FOLDERS:
            if files[other] and other != folder:
                root_tree.add(other.encode(), TREE_MODE, folder_trees[other])
        root_tree.add(folder.encode(), TREE_MODE, sub.id)
        folder_trees[folder] = sub.id
        commit = Commit()
        commit.tree = root_tree.id
        commit.parents = [parent.id]
        commit.author = commit.committer = f"agent-{i % 3} <agent-{i % 3}@wiki-memory>".encode()
        now += 60
        commit.author_time = commit.commit_time = now
        commit.author_timezone = commit.commit_timezone = 0
        verb = "remember" if i < pages else "update"
        commit.message = f"{verb}: {folder}/page-{n:04d}\n\nSession-Id: bench-{i // 50}\nAgent: bench\n".encode()
        objects += [(blob, None), (sub, None), (root_tree, None), (commit, None)]
        parent = commit
    repo.object_store.add_objects(objects)
    repo.refs[b"refs/heads/main"] = parent.id
    store.close()
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=root, check=True)


def count(pattern: bytes, root: Path) -> int:
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True).stdout
    return out.count(pattern)


def fsck_clean(root: Path) -> bool:
    return subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True).returncode == 0


def holds(pattern: bytes, *files: Path) -> bool:
    return any(f.exists() and pattern in f.read_bytes() for f in files)


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def machine(work: Path, name: str) -> Memory:
    memory = Memory(project_for_store(work / name / "wiki"))
    memory.store(create=True).host = name
    return memory


def run(work: Path, args: argparse.Namespace) -> dict[str, object]:
    a_project = project_for_store(work / "a" / "wiki")
    _, built = timed(lambda: build(a_project.wiki, args.pages, args.commits, args.holding))
    commits = int(git(a_project.wiki, "rev-list", "--count", "HEAD"))
    before = count(TOKEN.encode(), a_project.wiki)
    remote = work / "remote.git"
    git(work, "init", "-q", "--bare", "-b", "main", str(remote))

    a = machine(work, "a")
    a.reindex(embed=False)
    journal = a.project.journal_dir / "s-1.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(json.dumps({"kind": "prompt", "text": f"export GITHUB_TOKEN={TOKEN}"}) + "\n")
    a.add_remote("origin", str(remote))
    _, first_push = timed(a.sync)
    b = machine(work, "b")
    b.add_remote("origin", str(remote))
    b_first, b_first_s = timed(b.sync)
    b.write("Deploy on Fridays", "Never deploy on Fridays.", "preference")

    scanned, scan_s = timed(a.scan)
    dry, dry_s = timed(lambda: a.forget([TOKEN], dry_run=True))
    forgotten, forget_s = timed(lambda: a.forget([TOKEN], embed=False))
    index_s = forgotten.index.seconds if forgotten.index is not None else 0.0
    _, rebuild_s = timed(lambda: a.reindex(full=True, embed=False))  # the rebuild on its own, again
    _, replace_s = timed(lambda: a.sync(replace_remote_history=True))
    adopted, adopt_s = timed(b.sync)
    c = machine(work, "c")
    c.add_remote("origin", str(remote))
    _, fresh_s = timed(c.sync)

    roots = {"a": a.wiki, "b": b.wiki, "c": c.wiki}
    index_files = [Path(f"{m.project.index_path}{s}") for m in (a, b, c) for s in ("", "-wal")]
    report = forgotten.rewrite
    figures: dict[str, object] = {
        "pages": args.pages,
        "commits": commits,
        "commits_holding_the_string": len(report.commits),
        "commits_carried": report.carried,
        "files_scrubbed": len(report.files),
        "objects_holding_it_before": before,
        "objects_holding_it_after": {name: count(TOKEN.encode(), root) for name, root in roots.items()},
        "fsck_clean": {name: fsck_clean(root) for name, root in roots.items()},
        "index_or_journal_holds_it": holds(TOKEN.encode(), journal, *index_files),
        "b_replayed_its_commit": bool(adopted.adopted and adopted.adopted.replayed and adopted.adopted.replayed[0].new),
        "build_s": round(built, 2),
        "first_push_s": round(first_push, 2),
        "first_sync_s": round(b_first_s, 2),
        "first_sync_secrets_found": len(b_first.secrets),
        "scan_s": round(scan_s, 2),
        "scan_findings": len(scanned.findings),
        "dry_run_s": round(dry_s, 2),
        "dry_run_agrees": len(dry.rewrite.commits) == len(report.commits),
        "forget_s": round(forget_s, 2),
        "forget_index_s": round(index_s, 2),
        "reindex_full_s": round(rebuild_s, 2),
        "replace_remote_s": round(replace_s, 2),
        "adopt_s": round(adopt_s, 2),
        "adopt_index_s": round(adopted.index.seconds, 2) if adopted.index is not None else None,
        "adopt_objects_removed": adopted.adopted.objects_removed if adopted.adopted else None,
        "fresh_machine_sync_s": round(fresh_s, 2),
    }
    for memory in (a, b, c):
        memory.close()
    return figures


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--holding", type=int, default=20, help="commits that paste the token")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-forget-"))
    os.environ["WIKI_MEMORY_HOME"] = str(work / "home")
    # Words only: no embedding model is loaded (the index's vectors are not what is measured).
    os.environ.pop("WIKI_MEMORY_EMBED_MODEL_PATH", None)
    os.environ["FASTEMBED_CACHE_PATH"] = str(work / "no-model")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"wiki: {args.pages:,} pages, {f['commits']:,} commits (built in {f['build_s']} s)")
    print(
        f"the token was in {f['objects_holding_it_before']} objects; {f['commits_holding_the_string']} commits held "
        f"it, {f['commits_carried']:,} carried along"
    )
    print(f"first sync of a second machine: {f['first_sync_s']} s ({f['first_sync_secrets_found']} secrets reported)")
    print(f"scan (redaction rules, whole history): {f['scan_s']} s, {f['scan_findings']} findings")
    print(f"forget --dry-run: {f['dry_run_s']} s")
    print(f"forget: {f['forget_s']} s, of which the index rebuilt from scratch {f['forget_index_s']} s")
    print(f"reindex --full (words) on its own: {f['reindex_full_s']} s")
    print(f"sync --replace-remote-history: {f['replace_remote_s']} s")
    print(
        f"adoption on the second machine (sync): {f['adopt_s']} s, of which the index {f['adopt_index_s']} s; "
        f"its own commit replayed: {f['b_replayed_its_commit']}"
    )
    print(f"a fresh machine's first sync: {f['fresh_machine_sync_s']} s")
    print(f"objects holding it afterwards: {f['objects_holding_it_after']}")
    print(f"index files or journal holding it: {f['index_or_journal_holds_it']}")
    print(f"git fsck --full --strict clean: {f['fsck_clean']}")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(f, indent=2) + "\n")


if __name__ == "__main__":
    main()
