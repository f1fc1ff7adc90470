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
