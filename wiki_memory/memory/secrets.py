"""Secrets already in memory: finding them in the whole history (`scan`), and forgetting a
string or a page for good (`forget`), with everything derived from the history brought
along: the search index rebuilt from scratch, the journals, logs and SessionStart context
scrubbed, the remote's replacement prepared for `sync`.

**What `--string S` matches.** S itself, byte for byte, wherever it is: in any file, file
name or commit message of any commit, whatever text around it was redacted. And S *as
redaction left it*: where S holds a secret the redaction rules find (a password in a
connection URL, a token after `export X=`), the wiki and the journals may hold S with
that part already replaced by `[REDACTED:...]` (at capture, or on write) and the rest of
S, a host name or a user name, still there. That form is matched too, with a mark of any
family where S's secret was: `postgres://admin:hunter2@db.internal/prod` also forgets
`postgres://admin:[REDACTED:url-password]@db.internal/prod`. Redaction leaves no way to
tell which secret a mark stood for, so the text of S around the mark must be there
exactly, and at least `MIN_AROUND` characters of it, else every redacted token of that
family would match. S given as redaction shows it (with its marks) matches the same way.
`--dry-run` shows what a string reaches.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wiki_memory.config import home
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.indexing import IndexUpkeep
from wiki_memory.memory.reading import Reading
from wiki_memory.memory.rules import InputError, utf8
from wiki_memory.memory.team import Teams
from wiki_memory.store.durable import crash_point
from wiki_memory.store.rewrite import clear_journal, findings_in, forget, interrupted, recover, scan
from wiki_memory.sync.rewritten import remember

if TYPE_CHECKING:
    from wiki_memory.config import Project
    from wiki_memory.index import SyncStats
    from wiki_memory.store.rewrite import Finding, ForgetReport

Progress = Callable[[str, int, int], None]

MIN_STRING = 3  # shorter strings would rewrite nearly every page
MIN_AROUND = 8  # characters of S's own text around its redacted parts for the redacted form to count
FORGOTTEN = "[forgotten]"  # what forgotten text becomes (as `store.rewrite` writes it)
_MARK = r"\[REDACTED:[^\]\s]{1,60}\]"


@dataclass(frozen=True)
class ScanReport:
    """Secrets in the wiki's history and in files not committed yet (`Finding.commit` None)."""

    findings: list[Finding]

    @property
    def commits(self) -> list[str]:
        return sorted({f.commit for f in self.findings if f.commit})

    @property
    def paths(self) -> list[str]:
        return sorted({f.path for f in self.findings if f.path})

    def as_dict(self) -> dict[str, object]:
        return {
            "found": len(self.findings),
            "commits": self.commits,
            "paths": self.paths,
            "findings": [f.as_dict() for f in self.findings],
        }


@dataclass(frozen=True)
class Forgotten:
    """What `forget` did (or, with `dry_run`, would do), and what is left to do by hand.
    It never holds a forgotten string, only how many there were."""

    rewrite: ForgetReport
    strings: int  # strings given
    redacted_forms: int  # redacted forms of them found and forgotten too
    pages: tuple[str, ...]  # pages purged, as given (their renames are in rewrite.files)
    local_files: tuple[str, ...]  # journals, logs and context files scrubbed (or that would be)
    index: SyncStats | None  # the search index, rebuilt from scratch
    remotes: tuple[str, ...]  # remotes that still have the old history
    todo: tuple[str, ...]

    @property
    def dry_run(self) -> bool:
        return self.rewrite.dry_run

    def as_dict(self) -> dict[str, object]:
        return {
            **self.rewrite.as_dict(),
            "strings": self.strings,
            "redacted_forms": self.redacted_forms,
            "pages": list(self.pages),
            "local_files": list(self.local_files),
            "index": self.index.as_dict() if self.index is not None else None,
            "remotes": list(self.remotes),
            "todo": list(self.todo),
        }


def check_forget_string(value: str) -> str:
    """A string to forget, refused when it would rewrite nearly everything."""
    utf8("string", value)
    if len(value.strip()) < MIN_STRING:
        raise InputError(
            f"a string to forget needs at least {MIN_STRING} characters: a shorter one is in nearly every page "
            "and would rewrite them all"
        )
    if not any(ch.isalnum() for ch in value):
        raise InputError("a string of spaces and punctuation only would break the pages' front matter; give the text")
    return value


def redacted_form(value: str) -> re.Pattern[str] | None:
    """The pattern of `value` as redaction leaves it (its secrets as marks of any family),
    when redaction changes it and enough of its own text stays around the marks."""
    from wiki_memory.capture.redact import (
        redact_with_config,  # deferred: the redaction rules compile their patterns on import
    )

    pieces = re.split(_MARK, redact_with_config(value))
    if len(pieces) < 2 or sum(len(p.strip()) for p in pieces) < MIN_AROUND:
        return None
    return re.compile(_MARK.join(re.escape(p) for p in pieces))


def _forms(text: str) -> list[bytes]:
    """`text` as bytes, and as it reads inside a JSON string (journals, context files)."""
    forms = [text.encode("utf-8", "surrogateescape")]
    try:
        forms += [json.dumps(text)[1:-1].encode(), json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")]
    except UnicodeEncodeError:
        pass
    return list(dict.fromkeys(forms))


def local_files(project: Project) -> list[Path]:
    """The files beside the wiki that may hold what a page or an observation held: the
    journals, consolidation's state, the SessionStart context and its cache, the logs,
    and git's own notes in the wiki (the last commit message typed, wiki-memory's state)."""
    places = (
        (project.journal_dir, "*.jsonl"),
        (project.home / "consolidate", "*.json"),
        (project.home, "handoff-context*.json"),
        (home() / "logs", "*.log*"),
        (project.wiki / ".git", "COMMIT_EDITMSG"),
        (project.wiki / ".git" / "wiki-memory", "*.json"),
    )
    found: list[Path] = []
    for folder, pattern in places:
        found += sorted(p for p in folder.glob(pattern) if p.is_file())
    return found


def scrub_file(
    path: Path, texts: Sequence[str], patterns: Sequence[re.Pattern[str]] = (), *, dry_run: bool = False
) -> bool:
    """Replace `texts` (and what `patterns` match) by `[forgotten]` in the file; True if it
    held any. Its times are kept (consolidation reads a journal newer than its state as
    not consolidated yet). A file appended to meanwhile (a hook writing a journal) is read
    again."""
    for _attempt in range(5):
        try:
            before = path.stat()
            data = path.read_bytes()
        except OSError:
            return False
        found = set(texts)
        if patterns:
            text = data.decode("utf-8", "replace")
            found |= {m.group() for pattern in patterns for m in pattern.finditer(text)}
        new = data
        for form in sorted({f for t in found for f in _forms(t)}, key=len, reverse=True):
            new = new.replace(form, FORGOTTEN.encode())
        if new == data or dry_run:
            return new != data
        tmp = path.with_name(f".{path.name}.forget-{os.getpid()}")
        tmp.write_bytes(new)
        os.chmod(tmp, before.st_mode & 0o7777)
        now = path.stat()
        if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            tmp.unlink()
            continue
        os.replace(tmp, path)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        return True
    return False


def _named_safely(report: ForgetReport, needles: Sequence[str]) -> ForgetReport:
    """The report with the forgotten strings out of the file names it lists: a secret
    typed into a title became a file name, and the report is printed."""

    def safe(path: str) -> str:
        for needle in needles:
            path = path.replace(needle, "forgotten")
        return path

    return replace(
        report,
        files=tuple(safe(p) for p in report.files),
        pending_edits=tuple(safe(p) for p in report.pending_edits),
        commits=tuple(replace(c, paths=tuple(safe(p) for p in c.paths)) for c in report.commits),
    )


class Secrets:
    """Scanning the history for secrets, and forgetting them."""

    def __init__(self, context: MemoryContext, reading: Reading, teams: Teams, indexing: IndexUpkeep) -> None:
        self.context = context
        self.project = context.project
        self.reading = reading
        self.teams = teams
        self.indexing = indexing

    def scan(self) -> ScanReport:
        """Every secret the redaction rules find in the wiki's whole history (each file
        version once, at the commit that brought it; commit messages too) and in files
        edited by hand and not committed yet."""
        from wiki_memory.capture.redact import (  # deferred: the redaction rules compile their patterns on import
            find,
            reload_user_patterns,
        )

        if not self.context.exists:
            return ScanReport([])
        reload_user_patterns()
        store = self.context.store()
        findings = scan(store, find)
        for path, data in sorted(store.pending().items()):
            if data is not None and b"\0" not in data[:8000]:
                findings += findings_in(find, data.decode("utf-8", "replace"), None, path)
        return ScanReport(findings)

    def forget(
        self,
        strings: Iterable[str] = (),
        pages: Iterable[str] = (),
        *,
        dry_run: bool = False,
        embed: bool = True,
        progress: Progress | None = None,
    ) -> Forgotten:
        """Remove every occurrence of `strings` (see the module docstring for what matches)
        and every version of `pages` (a path, title or id; a deleted page by its path)
        from the wiki's whole history, then rebuild the search index from scratch, scrub
        the journals, logs and context files, and prepare `sync` to replace the remote's
        history. `dry_run`: report what would change, change nothing."""
        strings = [check_forget_string(s) for s in strings]
        self.finish_interrupted_forget()
        store = self.context.store()
        paths = [self.reading.find_in_history(ref) for ref in pages]
        if not strings and not paths:
            raise InputError("nothing to forget: give a string (--string) or a page to purge")
        patterns = [p for p in (redacted_form(s) for s in strings) if p is not None]
        variants = self._redacted_forms(patterns) - set(strings) if patterns else set()
        needles = sorted({*strings, *variants}, key=len, reverse=True)  # a longer one before any inside it
        report = _named_safely(forget(store, strings=needles, paths=paths, dry_run=dry_run, keep_journal=True), needles)
        remotes: list[str] = []
        stats = None
        if dry_run:
            files = [p for p in local_files(self.project) if scrub_file(p, needles, patterns, dry_run=True)]
        else:
            # Each step below is redone by `finish_interrupted_forget` if this process dies.
            if report.changed:
                remotes = remember(store, report.refs)
                crash_point("forget:remembered")
                stats = self.indexing.rebuild(embed=embed, progress=progress)
                crash_point("forget:indexed")
            files = self.after_rewrite(needles, patterns, rewritten=report.changed)
            crash_point("forget:scrubbed")
            clear_journal(store)
        return Forgotten(
            rewrite=report,
            strings=len(strings),
            redacted_forms=len(variants),
            pages=tuple(paths),
            local_files=tuple(str(f) for f in files),
            index=stats,
            remotes=tuple(remotes),
            todo=tuple(self._todo(report, remotes, bool(strings))),
        )

    def finish_interrupted_forget(self) -> str | None:
        """A `forget` killed midway is undone (no ref had moved yet) or finished (the refs
        and objects, the remotes' leases, the index, the journals and logs): before the next
        forget or sync, which would otherwise bring the old history back and push it. What
        was done, or None when nothing was interrupted."""
        if not self.context.exists or not interrupted(store := self.context.store()):
            return None
        found = recover(store)
        if found is None:
            return None
        if found.finished:
            self.context.close()  # the old packs are gone: reopen the repository and the index
            store = self.context.store()
            remember(store, found.refs)
            self.indexing.rebuild(embed=False)
            self.after_rewrite([n.decode("utf-8", "surrogateescape") for n in found.needles])
        clear_journal(store)
        if found.finished:
            return "an interrupted `forget` was finished (its history rewrite had begun)"
        return "an interrupted `forget` was undone (it had changed nothing yet): run it again"

    def _redacted_forms(self, patterns: Sequence[re.Pattern[str]]) -> set[str]:
        """What the patterns match anywhere in the history and in uncommitted files."""
        found: set[str] = set()

        def rules(text: str) -> list[tuple[int, int, str]]:
            found.update(m.group() for pattern in patterns for m in pattern.finditer(text))
            return []

        store = self.context.store()
        scan(store, rules)
        for data in store.pending().values():
            if data is not None:
                rules(data.decode("utf-8", "replace"))
        return found

    def forget_on(self, strings: Any, pages: Any, *, team: bool = False, **options: Any) -> Any:
        """`forget` on this wiki, or with `team` on the team tier (its remote's history is
        then replaced by `sync --team --replace-remote-history`, and every member's next
        sync adopts it, as for a personal wiki's remote)."""
        target: Any = self.teams.team() if team else self
        try:
            return target.forget(strings, pages, **options)
        finally:
            if team:
                self.teams.refresh_team()

    def after_rewrite(
        self, texts: Sequence[str], patterns: Sequence[re.Pattern[str]] = (), *, rewritten: bool = True
    ) -> list[Path]:
        """After the history was rewritten (here or elsewhere): the local files scrubbed of
        `texts`, the SessionStart context rebuilt, and other processes told (a long-running
        MCP server reopens the wiki and the index on its next call). Returns the files
        scrubbed."""
        from wiki_memory.consolidate import (  # deferred: the consolidator, not loaded with Memory
            context,
            context_build,
        )

        files = [p for p in local_files(self.project) if scrub_file(p, texts, patterns)]
        if rewritten:
            if context.context_path(self.project).exists():
                context_build.refresh(self.project, self.context.store(), self.context.index)
            self.context.mark_rewritten()
        return files

    def _todo(self, report: ForgetReport, remotes: Sequence[str], strings: bool) -> list[str]:
        if report.dry_run or not report.changed:
            return []
        todo = []
        for name in remotes:
            todo.append(
                f"remote {name!r} still has the old history: `wiki-memory sync --replace-remote-history "
                f"{name}` replaces it (a force-push that checks nobody pushed meanwhile). The remote keeps the old "
                "objects until it is garbage-collected: `git gc --prune=now` in a bare repository you host; a "
                "hosting service keeps old commits reachable by id until its support purges them"
            )
        if remotes:
            todo.append(
                "every other machine that syncs this memory: `wiki-memory sync` there, once the remote is "
                "replaced, adopts the new history, keeps its own new commits and drops the old objects"
            )
        todo.append("copies made outside wiki-memory (git clones, forks, backups) still hold the old history")
        if strings:
            todo.append("if it is a credential, revoke or rotate it: forgetting it does not undo its having been seen")
        return todo
