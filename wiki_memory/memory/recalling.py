"""Recall: the memory pages a prompt, or a file the agent reads or edits, would be handed now,
exactly as the hook hands them (the index as it is, the session's record of what it was
handed, the warm helper when it is there), and what was handed to a session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wiki_memory.memory.base import MemoryBase
from wiki_memory.memory.rules import InputError, utf8

if TYPE_CHECKING:
    from collections.abc import Mapping

    from wiki_memory.recall.run import Recall
    from wiki_memory.recall.settings import RecallSettings


class Recalling(MemoryBase):
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
        from wiki_memory.recall import run
        from wiki_memory.recall import settings as recall_settings

        if (prompt is None) == (file is None):
            raise InputError("give a prompt or a file, not both")
        chosen = settings or recall_settings.load(env)
        if file is not None:
            utf8("file", file)
            return run.for_file(self.project, file, session_id=session_id, settings=chosen)
        assert prompt is not None
        utf8("prompt", prompt)
        return run.for_prompt(self.project, prompt, session_id=session_id, settings=chosen)

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
        from wiki_memory.recall import moments, seen
        from wiki_memory.recall import settings as recall_settings

        if (command is None) == (error is None):
            raise InputError("give a command or an error, not both")
        chosen = recall_settings.load(env)
        table = moments.table(self.project)
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

    def recalled(self, session_id: str) -> list[dict[str, Any]]:
        """Every recall handed to a session, from its journal: when, on which trigger
        (prompt or file), for what, and which pages."""
        from wiki_memory.capture import journal

        path = journal.journal_file(self.project.journal_dir, session_id)
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
