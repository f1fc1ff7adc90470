"""Recall: the memory pages a prompt, or a file the agent reads or edits, would be handed now,
exactly as the hook hands them (the index as it is, the session's record of what it was
handed, the warm helper when it is there), and what was handed to a session."""

from __future__ import annotations

import glob
import json
from typing import TYPE_CHECKING, Any

from wiki_memory.capture import journal
from wiki_memory.config import load_settings
from wiki_memory.errors import WikiMemoryError
from wiki_memory.memory.context import MemoryContext
from wiki_memory.memory.rules import InputError, utf8
from wiki_memory.pages import usage
from wiki_memory.recall import moment_table, moments, run, seen
from wiki_memory.recall import settings as recall_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from wiki_memory.capture.observation import Observation
    from wiki_memory.recall.run import Recall
    from wiki_memory.recall.settings import RecallSettings


class Recalling:
    """Recall as the hook does it, asked on purpose (see the module docstring)."""

    def __init__(self, context: MemoryContext) -> None:
        self.context = context
        self.project = context.project

    def recall(
        self,
        prompt: str | None = None,
        *,
        file: str | None = None,
        session_id: str | None = None,
        settings: RecallSettings | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Recall:
        """What the hook would hand the agent for `prompt` (or, with `file`, for a read or
        edit of that file) now; with `session_id`, minus what that session was handed
        already. Nothing is recorded: asking is not handing over."""
        if (prompt is None) == (file is None):
            raise InputError("give a prompt or a file, not both")
        session_id = self.full_session_id(session_id) if session_id else session_id
        chosen = settings or recall_settings.load(env)
        exclude = seen.read(self.project, session_id) if session_id else set()
        if file is not None:
            utf8("file", file)
            on_file = file
            return run.both_tiers(
                self.project, lambda p, ex: run.for_file(p, on_file, settings=chosen, exclude=ex), exclude, chosen
            )
        assert prompt is not None
        utf8("prompt", prompt)
        asked, rerank = prompt, self._reranker()
        return run.both_tiers(
            self.project,
            lambda p, ex: run.for_prompt(p, asked, settings=chosen, exclude=ex, rerank=rerank),
            exclude,
            chosen,
        )

    def _reranker(self) -> Callable[[str, Sequence[str]], list[float] | None] | None:
        """The reranker's scores, when `[search]` configures one for recall too
        (`rerank_recall`): here, not in a hook, a recall may wait on it."""
        from wiki_memory.index.rerank import Reranker  # deferred: the index, opened on first use

        try:
            reranker = Reranker(load_settings())
        except WikiMemoryError:  # a broken config.toml: recall goes on without
            return None
        return reranker.scores if reranker.enabled and reranker.for_recall else None

    def full_session_id(self, given: str) -> str:
        """The session a short id names (the first characters, as `log` and handoffs print
        them): the one session of this project whose id starts so; `given` itself when it
        names a session whole or none. Two sessions starting so is an InputError."""
        given = given.strip()
        utf8("session", given)
        folder = self.project.journal_dir
        if not given or journal.journal_file(folder, given).is_file():
            return given
        found = sorted(folder.glob(glob.escape(journal.journal_file(folder, given).stem) + "*.jsonl"))
        ids = []
        for path in found:
            try:
                with open(path, encoding="utf-8") as f:
                    first = json.loads(f.readline() or "{}")
            except (OSError, ValueError):
                first = {}
            full = first.get("session_id") if isinstance(first, dict) else None
            ids.append(full if isinstance(full, str) and full.startswith(given) else path.stem)
        ids = list(dict.fromkeys(ids))
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            raise InputError(f"session {given!r} is ambiguous: {len(ids)} sessions start so ({shown}); give more of it")
        return ids[0] if ids else given

    def recalled(self, session_id: str) -> list[dict[str, Any]]:
        """Every recall handed to a session, from its journal: when, on which trigger
        (prompt or file), for what, and which pages."""
        path = journal.journal_file(self.project.journal_dir, self.full_session_id(session_id))
        if not path.is_file():
            return []
        return [
            {
                "time": o.time,
                "trigger": o.meta.get("trigger"),
                "subject": o.text or (o.files[0] if o.files else ""),
                "pages": list(o.meta.get("pages") or []),
            }
            for o in journal.read(path)
            if o.kind == "recall"
        ]

    def recall_moment(
        self,
        *,
        command: str | None = None,
        error: str | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """What the hook would hand before the shell `command` runs (from `cwd`, the code
        repository's root by default), or after a failed call whose output is `error`: the
        block, its pages, and every page looked at with why it does or does not apply
        (`candidates`). With `session_id`, minus what that session was handed already on a
        command or for that error. Nothing is recorded."""
        if (command is None) == (error is None):
            raise InputError("give a command or an error, not both")
        chosen = recall_settings.load(env)
        table = moment_table.table(self.project)
        handed = seen.read(self.project, session_id) if session_id else set()
        root = str(self.project.root) if self.project.root else None
        candidates: list[dict[str, Any]] = []
        if command is not None:
            utf8("command", command)
            for entry, why in moments.judge_command(table, command, cwd or root, root):
                if why is None and f"cmd:{entry['path']}" in handed:
                    why = "handed to that session on a command already"
                candidates.append({**_public(entry), "kept": why is None, "reason": why or "the command that failed"})
        else:
            assert error is not None
            utf8("error", error)
            lines: list[tuple[str, str]] = []
            matched = moments.for_error(table, error, lines)
            for sig, entry in matched:
                why = "handed to that session for this error already" if f"sig:{sig}" in handed else None
                candidates.append({**_public(entry), "kept": why is None, "reason": why or f"signature {sig!r}"})
            known = {sig for sig, _ in matched}
            for line, sig in lines:
                if sig not in known:
                    candidates.append({"line": line, "signature": sig, "kept": False, "reason": "no page has it"})
        kept = [c for c in candidates if c["kept"] and "path" in c][: chosen.max_pages]
        entries = [e for c in kept for e in [_entry_of(c)]]
        text, placed = moments.render(entries, command=command, max_chars=chosen.max_chars)
        return {"text": text, "pages": placed, "candidates": candidates}

    def stats(self, session_id: str | None = None) -> dict[str, Any]:
        """What memory cost and gave, from the sessions' journals: per session (or for the one
        named) the hand-overs by trigger, the pages handed, the characters and estimated
        tokens injected, the handed pages read afterwards (a later tool call naming the
        page), and of the pages handed, those marked helpful and those now marked wrong;
        with the project's totals."""
        if session_id is not None:
            paths = [journal.journal_file(self.project.journal_dir, session_id)]
            if not paths[0].is_file():
                raise InputError(f"no journal for session {session_id!r} in this project")
        else:
            paths = sorted(self.project.journal_dir.glob("*.jsonl"))
        counts = usage.counts(self.project)
        sessions = [s for s in (_session_stats(journal.read(p), counts) for p in paths) if s]
        statuses = self._statuses(p for s in sessions for p in s["pages"])
        for s in sessions:
            s["wrong"] = sum(1 for p in s["pages"] if statuses.get(p) == "wrong")
        sessions.sort(key=lambda s: s["started"] or "")
        total: dict[str, Any] = {"sessions": len(sessions)}
        for key in ("injections", "pages_handed", "chars", "tokens", "read_after", "helpful", "wrong"):
            total[key] = sum(s[key] for s in sessions)
        by_trigger: dict[str, int] = {}
        for s in sessions:
            for trigger, n in s["by_trigger"].items():
                by_trigger[trigger] = by_trigger.get(trigger, 0) + n
        total["by_trigger"] = by_trigger
        return {"project": self.project.name, "total": total, "sessions": sessions}

    def _statuses(self, paths: Iterable[str]) -> dict[str, str]:
        """The status of each of `paths` that is a page, from the index (empty without one)."""
        index = self.context.index
        return {p: m.status for p, m in index.page_meta(sorted(set(paths))).items()} if index is not None else {}


def _public(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A table entry as the recall command shows it."""
    shown = {
        k: entry[k] for k in ("path", "title", "type", "status", "on", "failed", "sig", "passage", "said") if k in entry
    }
    if "cmd" in entry:
        shown["command"] = " ".join([*entry["cmd"][:2], *entry["cmd"][2], *entry["cmd"][3]]).strip()
    return shown


def _entry_of(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """A shown candidate back as the entry the block renders."""
    return {k: v for k, v in candidate.items() if k not in ("kept", "reason", "command")}


TOKEN_CHARS = 4  # characters per token, the usual estimate for English text and code


def _session_stats(
    observations: Iterable[Observation], counts: Mapping[str, Mapping[str, int]]
) -> dict[str, Any] | None:
    """One session's figures from its journal (None for an empty journal)."""
    session: dict[str, Any] = {"session_id": None, "agent": None, "started": None}
    by_trigger: dict[str, int] = {}
    handed: dict[str, int] = {}  # page -> the observation number it was first handed at
    chars = 0
    read: set[str] = set()
    n = -1
    for n, o in enumerate(observations):
        if session["session_id"] is None:
            session.update(session_id=o.session_id, agent=o.agent, started=o.time)
        if o.kind == "recall":
            trigger = str(o.meta.get("trigger") or "prompt")
            by_trigger[trigger] = by_trigger.get(trigger, 0) + 1
            chars += int(o.meta.get("chars") or 0)
            for page in o.meta.get("pages") or ():
                handed.setdefault(str(page), n)
        elif o.kind == "tool" and handed:
            said = f"{o.input or ''}"
            read |= {p for p, at in handed.items() if at < n and p in said}
    if n < 0:
        return None
    pages = list(handed)
    return {
        **session,
        "injections": sum(by_trigger.values()),
        "by_trigger": by_trigger,
        "pages_handed": len(pages),
        "chars": chars,
        "tokens": (chars + TOKEN_CHARS - 1) // TOKEN_CHARS,
        "read_after": len(read),
        "helpful": sum(1 for p in pages if counts.get(p, {}).get("helpful")),
        "wrong": 0,  # from the index, by the caller
        "pages": pages,
    }
