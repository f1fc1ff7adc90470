"""Benchmark: forget a string from a wiki of 1,000 pages and 2,000 commits.

The wiki is built as an aged one is: 1,000 pages in five folders, added one commit each,
then 1,000 commits that each edit one page, all packed. A fake token is pasted into
20 commits (some pages keep it to HEAD, some later edits drop it again). The benchmark
times `rewrite.forget(store, strings=[token])` (the rewrite, the new pack, the branch
move with the working tree and index, the repack), then checks the result with git:
no object holds the token and `git fsck --full --strict` is clean. It also times
`rewrite.scan` over the same history with the redaction rules.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dulwich.objects import Blob, Commit, Tree

from wiki_memory.capture.redact import find
from wiki_memory.store import Store
from wiki_memory.store.records import FILE_MODE, TREE_MODE
from wiki_memory.store.rewrite import forget, scan

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--holding", type=int, default=20, help="commits that paste the token")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-forget-"))
    os.environ["WIKI_MEMORY_HOME"] = str(work / "home")
    try:
        root = work / "wiki"
        started = time.perf_counter()
        build(root, args.pages, args.commits, args.holding)
        built = time.perf_counter() - started
        commits = int(
            subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, text=True).stdout
        )
        before = count(TOKEN.encode(), root)

        store = Store(root)
        started = time.perf_counter()
        findings = scan(store, find)
        scanned = time.perf_counter() - started
        started = time.perf_counter()
        dry = forget(store, strings=[TOKEN], dry_run=True)
        dry_s = time.perf_counter() - started
        started = time.perf_counter()
        report = forget(store, strings=[TOKEN])
        elapsed = time.perf_counter() - started

        after = count(TOKEN.encode(), root)
        fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True, text=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)

    figures = {
        "pages": args.pages,
        "commits": commits,
        "commits_holding_the_string": len(report.commits),
        "commits_carried": report.carried,
        "files_scrubbed": len(report.files),
        "objects_holding_it_before": before,
        "objects_holding_it_after": after,
        "fsck_clean": fsck.returncode == 0,
        "working_tree_clean": status == "",
        "build_s": round(built, 2),
        "scan_s": round(scanned, 2),
        "scan_findings": len(findings),
        "dry_run_s": round(dry_s, 2),
        "forget_s": round(elapsed, 2),
        "dry_run_agrees": len(dry.commits) == len(report.commits),
    }
    print(f"wiki: {args.pages:,} pages, {commits:,} commits (built in {built:.1f} s)")
    print(f"the token was in {before} objects; {len(report.commits)} commits held it, {report.carried:,} carried along")
    print(f"scan (redaction rules, whole history): {scanned:.2f} s, {len(findings)} findings")
    print(f"forget --dry-run: {dry_s:.2f} s")
    print(f"forget: {elapsed:.2f} s; objects holding it afterwards: {after}")
    print(f"git fsck --full --strict: {'clean' if fsck.returncode == 0 else fsck.stderr[-500:]}")
    print(f"working tree and index match HEAD: {status == ''}")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
