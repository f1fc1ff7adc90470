"""Where the hook process meets recall: on a prompt, or a file tool call, the pages to hand
the agent; every hand-over recorded in the session's journal and its record of what it was
handed; SessionStart's handed pages recorded too, and the warm helper started ahead of the
first prompt.

Acknowledgements are turned away before anything is imported or opened: they cost what a
hook costs without recall. Nothing here raises: a failure is logged and the prompt goes
through unchanged.
"""

from __future__ import annotations

from wiki_memory import logs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence
    from typing import Any

    from wiki_memory.capture.adapter import Adapter
    from wiki_memory.capture.observation import Observation
    from wiki_memory.config import Project
    from wiki_memory.recall.settings import RecallSettings

MAX_FILES = 4  # files of one tool call looked up (a patch may touch many)
EXCERPT = 200  # characters of the prompt kept in the journal's record of a recall


def answer(
    adapter: Adapter, event: str, payload: Mapping[str, Any], project: Project, session_id: str, env: Mapping[str, str]
) -> str | None:
    """The recalled pages for this hook call as the text to hand over, or None."""
    prompt = adapter.recall_prompt(event, payload)
    files = [] if prompt is not None else adapter.recall_files(event, payload)
    if prompt is None and not files:
        return None
    if prompt is not None:
        from wiki_memory.recall import chatter

        if chatter.is_chatter(prompt):
            return None
    try:
        from wiki_memory.recall import seen, settings

        chosen = settings.load(env)
        if not chosen.enabled or not (chosen.prompts if prompt is not None else chosen.files):
            return None
        cwd = adapter.cwd(payload)
        exclude = seen.read(project, session_id)
        results = None
        if chosen.meaning:
            from wiki_memory import config
            from wiki_memory.recall import meaning

            home = str(config.home(env))
            results = meaning.recall(
                home, project, chosen, prompt=prompt, files=files[:MAX_FILES], cwd=cwd, exclude=exclude
            )
            if results is None:  # no helper, or too slow: words alone now, the helper for next time
                meaning.ensure_started(home, str(project.index_path), idle=float(chosen.helper_idle))
        if results is None:
            results = by_words(project, chosen._replace(meaning=False), prompt, files[:MAX_FILES], cwd, exclude)
        texts = [r["text"] for r in results if r.get("text")]
        record(adapter, event, project, session_id, cwd, results, env)
        return "\n".join(texts) or None
    except Exception as e:  # noqa: BLE001 - the prompt goes through unchanged; the reason is logged
        logs.write("hooks", f"recall {adapter.name} {event} {session_id}: {type(e).__name__}: {e}", env)
        return None


def by_words(
    project: Project,
    settings: RecallSettings,
    prompt: str | None,
    files: list[str],
    cwd: str | None,
    exclude: set[str],
) -> list[dict[str, Any]]:
    """The recall done in this process, by words alone (the helper is not there)."""
    from wiki_memory.recall import run

    if prompt is not None:
        asked = prompt
        found = [
            run.both_tiers(
                project, lambda p, ex: run.for_prompt(p, asked, settings=settings, exclude=ex), exclude, settings
            )
        ]
    else:
        found = []
        for file in files:

            def on_file(tier: Project, ex: Collection[str], file: str = file) -> Any:
                return run.for_file(tier, file, cwd=cwd, settings=settings, exclude=ex)

            found.append(run.both_tiers(project, on_file, exclude, settings))
            exclude = exclude | set(found[-1].pages)
    return [{"trigger": r.trigger, "subject": r.subject, "text": r.text, "pages": list(r.pages)} for r in found]


def record(
    adapter: Adapter,
    event: str,
    project: Project,
    session_id: str,
    cwd: str | None,
    results: list[dict[str, Any]],
    env: Mapping[str, str],
) -> None:
    """What was handed over: in the session's record (never twice) and its journal."""
    from wiki_memory.recall import seen

    handed = [p for r in results for p in r["pages"]]
    looked = [f"file:{r['subject']}" for r in results if r["trigger"] == "file"]
    seen.add(project, session_id, [*handed, *looked])
    if not handed:
        return
    from wiki_memory.hook.main import journal_redacted
    from wiki_memory.hook.moment import handed as observation

    observations = [
        observation(
            adapter,
            event,
            session_id,
            cwd,
            r["trigger"],
            r["pages"],
            len(r["text"]),
            text=r["subject"][:EXCERPT] if r["trigger"] == "prompt" else None,
            files=(r["subject"],) if r["trigger"] == "file" else (),
        )
        for r in results
        if r["pages"]
    ]
    journal_redacted(project, observations, env)


def record_start(
    adapter: Adapter, event: str, project: Project, session_id: str, cwd: str | None, text: str, env: Mapping[str, str]
) -> None:
    """What SessionStart handed, in the journal as a hand-over too (`wiki-memory stats`
    counts every character injected)."""
    try:
        from wiki_memory.hook.moment import record_handed
        from wiki_memory.recall import seen

        pages = seen.pages_named(text)
        record_handed(adapter, event, project, session_id, cwd, "session-start", "", pages, text, env)
    except Exception as e:  # noqa: BLE001 - the session starts anyway
        logs.write("hooks", f"recording the session start of {session_id}: {type(e).__name__}: {e}", env)


def after_session_start(project: Project, session_id: str, text: str | None, env: Mapping[str, str]) -> None:
    """SessionStart handed `text`: its pages are not recalled again in this session, and the
    warm helper is started so that the first prompt finds it ready."""
    try:
        from wiki_memory.recall import seen, settings

        if text:
            seen.add(project, session_id, seen.pages_named(text))
        chosen = settings.load(env)
        if chosen.enabled and chosen.prompts and chosen.meaning and project.index_path.is_file():
            from wiki_memory import config
            from wiki_memory.recall import meaning

            meaning.ensure_started(str(config.home(env)), str(project.index_path), idle=float(chosen.helper_idle))
    except Exception as e:  # noqa: BLE001 - the session starts anyway
        logs.write("hooks", f"recall at session start {session_id}: {type(e).__name__}: {e}", env)


def note_own_writes(project: Project, session_id: str, observations: Sequence[Observation]) -> None:
    """Pages the session wrote itself (the MCP server's write tools, `wiki-memory write` in a
    shell) are never recalled to it: they go in its record of what it was handed."""
    try:
        import re

        from wiki_memory.recall import seen

        # `mcp__wiki-memory__write`: `_` is a word character, so no \b before the verb.
        writes = re.compile(r"(?<![a-z])(?:write|edit|mv|handoff_write|handoff write)(?![a-z])", re.IGNORECASE)
        written: list[str] = []
        for o in observations:
            said = f"{o.tool} {o.input}"
            if (
                o.kind == "tool"
                and not o.error
                and re.search(r"wiki[-_ ]memory", said, re.IGNORECASE)
                and writes.search(said)
            ):
                written += seen.pages_named(f"{o.input or ''}\n{o.output or ''}")
        seen.add(project, session_id, written)
    except Exception as e:  # noqa: BLE001 - the agent goes on; the reason is logged
        logs.write("hooks", f"recall, own writes of {session_id}: {type(e).__name__}: {e}")
