"""Where the hook meets memory at the moment of action: before a shell command that failed in
this project before, the gotcha or procedure about it; after a failed call whose error a
gotcha is about, that gotcha again (a recurrence is a new moment of need, even when
SessionStart or a prompt showed the page already: once per signature per session).

A command reads one line of the precomputed table (`recall.moments`) for its program and
nothing else: a command that matches nothing costs what a hook costs. Nothing here raises:
a failure is logged and the command runs unchanged.
"""

from __future__ import annotations

from wiki_memory import logs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from wiki_memory.capture.adapter import Adapter
    from wiki_memory.capture.observation import Observation
    from wiki_memory.config import Project

EXCERPT = 200  # characters of the command or signature kept in the journal's record


def before_command(
    adapter: Adapter, event: str, payload: Mapping[str, Any], project: Project, session_id: str, env: Mapping[str, str]
) -> str | None:
    """The block to hand before the shell command this call runs, or None."""
    command = adapter.recall_command(event, payload)
    if command is None:
        return None
    try:
        from wiki_memory.recall import moment_table, moments, seen, settings

        chosen = settings.load(env)
        if not chosen.enabled or not chosen.commands:
            return None
        table = moment_table.table(project)
        if "\nc " not in table:
            return None
        cwd = adapter.cwd(payload)
        root = str(project.root) if project.root else None
        found = moments.for_command(table, command, cwd, root)
        if not found:
            return None
        handed = seen.read(project, session_id)
        fresh = [e for e in found if f"cmd:{e['path']}" not in handed][: chosen.max_pages]
        text, placed = moments.render(fresh, command=command, max_chars=chosen.max_chars)
        if not placed:
            return None
        seen.add(project, session_id, [*placed, *(f"cmd:{p}" for p in placed)])
        record_handed(adapter, event, project, session_id, cwd, "command", command, placed, text, env)
        return text
    except Exception as e:  # noqa: BLE001 - the command runs unchanged; the reason is logged
        logs.write("hooks", f"recall before a command {adapter.name} {session_id}: {type(e).__name__}: {e}", env)
        return None


def after_error(
    adapter: Adapter,
    event: str,
    observations: Sequence[Observation],
    project: Project,
    session_id: str,
    env: Mapping[str, str],
) -> str | None:
    """The block to hand after a failed call whose error a gotcha is about, or None."""
    failed = [o for o in observations if o.kind == "tool" and o.error and o.output]
    if not failed:
        return None
    try:
        from wiki_memory.recall import moment_table, moments, seen, settings

        chosen = settings.load(env)
        if not chosen.enabled or not chosen.errors:
            return None
        table = moment_table.table(project)
        if "\ns " not in table:
            return None
        handed = seen.read(project, session_id)
        chosen_entries: list[dict[str, Any]] = []
        signatures: list[str] = []
        for o in failed:
            for sig, entry in moments.for_error(table, o.output or ""):
                if f"sig:{sig}" in handed or any(e["path"] == entry["path"] for e in chosen_entries):
                    continue
                chosen_entries.append(entry)
                signatures.append(sig)
        text, placed = moments.render(chosen_entries[: chosen.max_pages], max_chars=chosen.max_chars)
        if not placed:
            return None
        sigs = [s for s, e in zip(signatures, chosen_entries, strict=False) if e["path"] in placed]
        seen.add(project, session_id, [*placed, *(f"sig:{s}" for s in sigs)])
        cwd = failed[0].cwd
        record_handed(adapter, event, project, session_id, cwd, "error", sigs[0], placed, text, env)
        return text
    except Exception as e:  # noqa: BLE001 - the agent goes on; the reason is logged
        logs.write("hooks", f"recall after an error {adapter.name} {session_id}: {type(e).__name__}: {e}", env)
        return None


def record_handed(
    adapter: Adapter,
    event: str,
    project: Project,
    session_id: str,
    cwd: str | None,
    trigger: str,
    subject: str,
    pages: list[str],
    text: str,
    env: Mapping[str, str],
) -> None:
    """The hand-over, in the session's journal (a `recall` observation, as prompts' are)."""
    from wiki_memory.hook.main import journal_redacted

    observation = handed(adapter, event, session_id, cwd, trigger, pages, len(text), text=subject[:EXCERPT])
    journal_redacted(project, [observation], env)


def handed(
    adapter: Adapter,
    event: str,
    session_id: str,
    cwd: str | None,
    trigger: str,
    pages: Sequence[str],
    chars: int,
    *,
    text: str | None = None,
    files: tuple[str, ...] = (),
) -> Observation:
    """A hand-over as the journal records it: what brought it (`trigger`: session-start,
    prompt, file, command, error), the pages and the characters handed."""
    from wiki_memory.capture.observation import Observation, utc_now

    meta = {"trigger": trigger, "pages": list(pages), "chars": chars}
    return Observation(
        "recall", adapter.name, session_id, utc_now(), cwd=cwd, event=event, text=text, files=files, meta=meta
    )
