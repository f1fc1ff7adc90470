"""Rewriting a wiki's history: find secrets in every commit, and forget a string or a page for good.

A git-backed memory keeps everything: a secret that reached one commit is in every clone.
`scan(store, rules)` looks for secrets in every commit's changed files and message, with
the rules it is given (the redaction rules: `wiki_memory.capture.redact.find`; the store
does not import capture). `forget(store, strings=..., paths=...)` removes them:

1. under the writer lock, a person's uncommitted edits are committed first (they are
   history too, and may hold the string);
2. every commit reachable from any ref is rewritten in memory, parents first: the string is
   replaced by `[forgotten]` in every file, file name and commit message that holds it; a
   forgotten page is dropped from every commit, under every path its id ever had; authors,
   dates, every other file and every other byte of a message are kept; a commit left with
   no change of its own (it only added the forgotten page) is dropped;
3. one new pack is written with every object the rewritten refs reach;
4. the branch moves with a compare-and-swap (`Store.advance`, so the working tree and the
   git index follow it), tags are rewritten, and remote-tracking refs are deleted: the
   remote still has the old history, and their old ids (in the report) are what a
   force-push with a lease must expect;
5. reflogs are expired and every other pack and loose object is deleted, so that
   `git cat-file --batch-all-objects` holds no trace and `git fsck --full --strict` is clean.

Between 3 and 4, a journal (`.git/wiki-memory/forget-pending`) is written and flushed to
the disk: every ref's old and new value, the remote-tracking refs' old commits (the leases
`sync` needs to replace the remote's history) and what was forgotten. A `forget` killed
after that leaves it; `recover` (run before the next `forget` or `sync`) undoes the
rewrite if no ref had moved yet, and finishes it otherwise. Without it, a forget killed
between moving the refs and recording the leases let the next `sync` fetch the old history
back and push it.

The search index, the journals and the remote are the caller's to bring along.

The parts: `findings` (scanning), `walk` (the history every ref reaches), `rewriter` (the
rewritten objects, built in memory), `packing` (one pack of what the refs reach, the rest
deleted), `journal` (an interrupted forget, recovered) and `forgetting` (the steps in order).
"""

from wiki_memory.store.rewrite.findings import Finding, Rules, findings_in, scan
from wiki_memory.store.rewrite.forgetting import CRASH_POINTS, ForgetReport, RewrittenCommit, forget
from wiki_memory.store.rewrite.journal import Interrupted, clear_journal, interrupted, recover
from wiki_memory.store.rewrite.packing import prune
from wiki_memory.store.rewrite.rewriter import FORGOTTEN

__all__ = [
    "CRASH_POINTS",
    "FORGOTTEN",
    "Finding",
    "ForgetReport",
    "Interrupted",
    "RewrittenCommit",
    "Rules",
    "clear_journal",
    "findings_in",
    "forget",
    "interrupted",
    "prune",
    "recover",
    "scan",
]
