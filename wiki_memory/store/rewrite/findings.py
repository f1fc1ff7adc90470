"""Finding secrets in a wiki's history: each commit's message and each file version once,
with the rules the caller gives (the redaction rules: `wiki_memory.capture.redact.find`;
the store does not import capture)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dulwich.objects import ObjectID

from wiki_memory.store.records import TREE_MODE
from wiki_memory.store.rewrite.walk import GITLINK_MODE, commits_parents_first, ref_targets

if TYPE_CHECKING:
    from wiki_memory.store.store import Store

#: The rules `scan` applies: text -> (start, end, family) of each secret in it.
Rules = Callable[[str], Iterable[tuple[int, int, str]]]


@dataclass(frozen=True)
class Finding:
    """A secret in a wiki's history. `path` None: in the commit's message; `commit` None:
    in a file not committed yet (a hand edit). `preview` is the line it is on with every
    secret on it redacted: the report never holds one."""

    commit: str | None
    path: str | None
    family: str
    line: int
    preview: str

    def as_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "path": self.path,
            "family": self.family,
            "line": self.line,
            "preview": self.preview,
        }


def scan(
    store: Store, rules: Rules, *, include: Iterable[bytes] | None = None, exclude: Iterable[bytes] = ()
) -> list[Finding]:
    """Every secret `rules` finds in the history: each commit's message, and each file
    version once, at the commit that introduced it (oldest first). With `include` or
    `exclude`, only the commits `include` (default: every ref) reaches and `exclude` does
    not: what a sync brought in."""
    repo = store.repo
    seen: set[bytes] = set()
    findings: list[Finding] = []
    tips = [ObjectID(t) for t in include] if include is not None else list(ref_targets(repo).values())
    stop = [ObjectID(t) for t in exclude]
    if include is None and not stop:
        commits = commits_parents_first(repo, tips)
    else:
        commits = [entry.commit for entry in repo.get_walker(include=tips, exclude=stop)][::-1]
    for commit in commits:
        cid = commit.id.decode()
        findings += findings_in(rules, commit.message.decode("utf-8", "replace"), cid, None)
        parent_tree = repo[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        for (_, path), (_, mode), (_, sha) in repo.object_store.tree_changes(parent_tree, commit.tree):
            if sha is None or path is None or sha in seen or mode in (TREE_MODE, GITLINK_MODE):
                continue
            seen.add(sha)
            data = repo[sha].as_raw_string()
            if b"\0" in data[:8000]:
                continue  # binary
            findings += findings_in(rules, data.decode("utf-8", "replace"), cid, path.decode("utf-8", "replace"))
    return findings


def findings_in(rules: Rules, text: str, commit: str | None, path: str | None) -> list[Finding]:
    """The secrets `rules` finds in one text (a file version or a commit message)."""
    hits = sorted(rules(text))
    out = []
    for start, end, family in hits:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        pieces, last = [], line_start
        for s, e, f in hits:  # every secret on the line goes, not only this one
            if e > line_start and s < line_end and s >= last:
                pieces += [text[last:s], f"[REDACTED:{f}]"]
                last = min(e, line_end)
        preview = ("".join(pieces) + text[last:line_end]).strip()
        out.append(Finding(commit, path, family, text.count("\n", 0, start) + 1, preview[:200]))
    return out
