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
        session_id = self.full_session_id(session_id) if session_id else session_id
        chosen = settings or recall_settings.load(env)
        if file is not None:
            utf8("file", file)
            return run.for_file(self.project, file, session_id=session_id, settings=chosen)
        assert prompt is not None
        utf8("prompt", prompt)
        return run.for_prompt(self.project, prompt, session_id=session_id, settings=chosen)

    def full_session_id(self, given: str) -> str:
        """The session a short id names (the first characters, as `log` and handoffs print
        them): the one session of this project whose id starts so; `given` itself when it
        names a session whole or none. Two sessions starting so is an InputError."""
        import glob
        import json

        from wiki_memory.capture import journal

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
        from wiki_memory.capture import journal

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
