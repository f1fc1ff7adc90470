"""Distilled pages: a candidate rendered as a new page, or merged into the page it duplicates.

A distilled page keeps its facts in front matter (`commands`, `failures`, `occurrences`,
`statement`, ...) and its body is rendered from them, so a later session merges facts, not
prose. A body a person has edited (it no longer reads as rendered) is never rewritten: the
new evidence is appended as a line. A page that was not distilled (a person's, an agent's)
gets its sources and evidence count updated and, for a new fact, one appended line.

Every distilled page has `distilled` (which distiller), `evidence` (how many sessions or
occurrences back it) and `sources` (agent:session) in its front matter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.manifests import TOPICS
from wiki_memory.pages import Page
from wiki_memory.pages.anchors import Anchor

FOOTER = "_Distilled by wiki-memory from the sessions' evidence (see `sources`); edit freely._"
MAX_FAILURES = 5
MAX_PARTS = 3  # runs of one test or one file kept as examples
MAX_OCCURRENCES = 12
#: What a gotcha's `fix` holds: the command that failed, and how it was fixed.
FIX_KEYS = (
    "command", "dir", "files", "instead", "instead_dir", "differs", "first", "sandbox", "explanation", "verified",
    "error", "commands",
)  # fmt: skip


def _plain(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy with no shared lists: YAML would write a list used twice as `&id001`."""
    copied: dict[str, Any] = json.loads(json.dumps(dict(meta), default=str))
    return copied


def _sources(*groups: Sequence[str]) -> list[str]:
    out: list[str] = []
    for group in groups:
        for s in group:
            if s and s not in out:
                out.append(s)
    return out


# Procedures --------------------------------------------------------------------------------


def _merge_commands(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The commands that worked, the most recent first; on the same day, this session's first."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    fresh: set[tuple[str, str]] = set()
    for entries, is_new in ((old, False), (new, True)):
        for entry in entries:
            if not isinstance(entry, Mapping) or not entry.get("command"):
                continue
            key = (str(entry["command"]), str(entry.get("dir") or "."))
            known = by_key.get(key)
            if known is None or str(entry.get("last_worked") or "") >= str(known.get("last_worked") or ""):
                by_key[key] = dict(entry)
                if is_new:
                    fresh.add(key)
    ordered = sorted(by_key, key=lambda k: k not in fresh)
    ordered.sort(key=lambda k: str(by_key[k].get("last_worked") or ""), reverse=True)
    whole = [by_key[k] for k in ordered if not by_key[k].get("part")]
    parts = [by_key[k] for k in ordered if by_key[k].get("part")][:MAX_PARTS]
    return whole + parts


def _merge_failures(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]], commands: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Failures of commands the page holds; the same failure again counts once more."""
    known = {(str(c["command"]), str(c.get("dir") or ".")) for c in commands}
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry in old:
        if isinstance(entry, Mapping) and entry.get("command"):
            merged[(str(entry["command"]), str(entry.get("dir") or "."), str(entry.get("error") or ""))] = dict(entry)
    for entry in new:
        key = (str(entry["command"]), str(entry.get("dir") or "."), str(entry.get("error") or ""))
        if key[:2] not in known:
            continue  # a failure alone never adds a command to the page
        was = merged.get(key)
        if was is None:
            merged[key] = {**entry, "times": 1}
        elif str(entry.get("session")) not in str(was.get("sessions", was.get("session", ""))):
            sessions = _sources(str(was.get("sessions", was.get("session", ""))).split(), [str(entry.get("session"))])
            merged[key] = {**was, "date": entry.get("date"), "times": int(was.get("times") or 1) + 1,
                           "sessions": " ".join(sessions)}  # fmt: skip
    return sorted(merged.values(), key=lambda e: str(e.get("date") or ""), reverse=True)[:MAX_FAILURES]


def _command_line(entry: Mapping[str, Any], *, marked: bool = True) -> str:
    where = f" in `{entry.get('dir') or '.'}`"
    env = entry.get("env") or []
    needs = f", after `{'`, `'.join(env)}`" if env else ""
    part = " (one part of it)" if entry.get("part") and marked else ""
    return f"`{entry['command']}`{where}{needs}{part}"


def procedure_body(title: str, meta: Mapping[str, Any]) -> str:
    commands = [c for c in meta.get("commands") or [] if isinstance(c, Mapping) and c.get("command")]
    failures = [f for f in meta.get("failures") or [] if isinstance(f, Mapping) and f.get("command")]
    lines = [f"# {title}", ""]
    if commands:
        current = commands[0]
        lines += [
            f"Run one part of it: {_command_line(current, marked=False)}."
            if current.get("part")
            else f"Run {_command_line(current)}.",
            f"It last worked on {current.get('last_worked')} ({current.get('by')}, {current.get('session')}).",
        ]
        if len(commands) > 1:
            lines += ["", "## Other commands that worked", ""]
            lines += [f"- {_command_line(c)}: last worked {c.get('last_worked')} ({c.get('by')})" for c in commands[1:]]
    if failures:
        lines += ["", "## Recent failures", ""]
        for f in failures:
            times = f" ({f['times']} times)" if int(f.get("times") or 1) > 1 else ""
            worked = next((c for c in commands if c["command"] == f["command"]), None)
            since = (
                f"; it worked again on {worked['last_worked']}"
                if worked and str(worked.get("last_worked")) > str(f.get("date"))
                else ""
            )
            lines.append(f"- {f.get('date')} `{f['command']}` failed{times}: {f.get('error')}{since}")
    lines += ["", FOOTER]
    return "\n".join(lines) + "\n"


# Gotchas -----------------------------------------------------------------------------------


def gotcha_body(title: str, meta: Mapping[str, Any]) -> str:
    fix = meta.get("fix")
    facts: Mapping[str, Any] = fix if isinstance(fix, Mapping) else {}
    lines = [f"# {title}", ""]
    lines.append(
        f"**Error**: `{meta.get('signature')}`" + (f" from `{facts.get('command')}`" if facts.get("command") else "")
    )
    if facts.get("dir") and facts.get("dir") != ".":
        lines[-1] += f" (in `{facts['dir']}`)"
    if facts.get("commands"):
        lines += [
            "",
            "**Every command failed alike** (the cause is where they ran, not any one of them): "
            + ", ".join(f"`{c}`" for c in facts["commands"])
            + ".",
        ]
    if facts.get("explanation"):
        lines += ["", f"**Cause, as the agent explained it**: {facts['explanation']}"]
    if facts.get("files"):
        lines += ["", "**Fix**: changed " + ", ".join(f"`{f}`" for f in facts["files"]) + "."]
    elif facts.get("instead"):
        where = f" in `{facts['instead_dir']}`" if facts.get("instead_dir") else ""
        lines += ["", f"**Fix**: run `{facts['instead']}`{where} instead."]
        if facts.get("differs"):
            lines[-1] += f" What differs: {facts['differs']}."
    elif facts.get("first"):
        lines += ["", "**Fix**: run " + ", then ".join(f"`{c}`" for c in facts["first"]) + " first."]
    elif facts.get("sandbox"):
        lines += [
            "",
            f"**Fix**: the agent's sandbox ({facts['sandbox']}) stopped it: run it with escalated permissions, "
            "outside the sandbox (it passed so).",
        ]
    if facts.get("verified") and facts.get("verified") != facts.get("instead"):
        lines += ["", f"**Verified**: `{facts['verified']}` passed afterwards."]
    occurrences = [o for o in meta.get("occurrences") or [] if isinstance(o, Mapping)]
    if occurrences:
        lines += ["", "## Occurrences", ""]
        for o in occurrences:
            if o.get("fixed") and o.get("files"):
                how = "fixed by changing " + ", ".join(str(f) for f in o["files"])
            elif o.get("fixed"):
                how = "hit again, and passed later in the session"
            else:
                how = "hit again"
            lines.append(f"- {o.get('date')} {o.get('by')} ({o.get('session')}): {how}")
    lines += ["", FOOTER]
    return "\n".join(lines) + "\n"


def _merge_occurrences(old: Sequence[Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = [dict(o) for o in old if isinstance(o, Mapping)]
    if not any(o.get("session") == new.get("session") for o in out):
        out.append(dict(new))
    return sorted(out, key=lambda o: str(o.get("date") or ""))[-MAX_OCCURRENCES:]


# Statements --------------------------------------------------------------------------------


def statement_body(title: str, meta: Mapping[str, Any]) -> str:
    said = [s for s in meta.get("sources") or [] if isinstance(s, str)]
    kind = "preference" if meta.get("type") == "preference" else "decision"
    lines = [f"# {title}", "", f"> {meta.get('statement')}", ""]
    if meta.get("context"):
        lines += [f"Said right after: \u201c{meta['context']}\u201d", ""]
    lines.append(f"The user stated this {kind} in " + ", ".join(said or ["a session"]) + ".")
    lines += ["", FOOTER]
    return "\n".join(lines) + "\n"


# Facts read from a manifest -------------------------------------------------------------


def tools_body(title: str, meta: Mapping[str, Any]) -> str:
    """The page of tool versions (`versions`): each program, its version, how it was asked."""
    found = meta.get("tools")
    tools: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    lines = [f"# {title}", "", "What each program said of its own version when a session asked it.", ""]
    for program, seen in sorted(tools.items()):
        if isinstance(seen, Mapping):
            lines.append(f"- `{program}` {seen.get('version')} (`{seen.get('command')}`, {seen.get('date')})")
            if seen.get("installed"):
                lines[-1] += f"; installed or upgraded with `{seen['installed']}`"
    lines += ["", FOOTER]
    return "\n".join(lines) + "\n"


def notes_body(title: str, meta: Mapping[str, Any]) -> str:
    """The page: the files by folder, each with its title and when a session last saw it."""
    found = meta.get("tools")
    files: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    lines = [
        f"# {title}",
        "",
        "Markdown the sessions read or wrote in the project's hidden folders: what steers the tools and agents "
        "that work here (instructions, prompts, specs, skills). A plain listing does not show these folders.",
    ]
    folders: dict[str, list[str]] = {}
    for path, seen in sorted(files.items()):
        if not isinstance(seen, Mapping):
            continue
        parts = path.split("/")
        folder = "/".join(parts[:2]) + "/" if len(parts) > 2 else parts[0] + "/"
        named = f": “{seen['title']}”" if seen.get("title") else ""
        folders.setdefault(folder, []).append(f"- `{path}`{named} ({seen.get('how')} {seen.get('date')})")
    for folder, items in folders.items():
        lines += ["", f"## `{folder}`", "", *items]
    lines += ["", "A change to one of these files marks this page as possibly stale.", "", FOOTER]
    return "\n".join(lines) + "\n"


def fact_body(title: str, meta: Mapping[str, Any]) -> str:

    if meta.get("environment") == "tools":
        return tools_body(title, meta)
    if meta.get("environment") == "notes":
        return notes_body(title, meta)
    path = meta.get("manifest")
    found = meta.get("topics")
    topics: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    said = [s for s in meta.get("sources") or [] if isinstance(s, str)]
    lines = [
        f"# {title}",
        "",
        f"What `{path}` said when it was last read ({meta.get('read')}, {said[-1] if said else 'a session'}).",
    ]
    for key, heading in TOPICS.items():
        items = [str(i) for i in topics.get(key) or []]
        if items:
            lines += ["", f"## {heading}", "", *(f"- {i}" for i in items)]
    lines += ["", f"A change to `{path}` marks this page as possibly stale.", "", FOOTER]
    return "\n".join(lines) + "\n"


def _merge_topics(old: Any, new: Mapping[str, Any], whole: bool = True) -> dict[str, list[str]]:
    """The newest reading: all of it when the file was read whole; else each topic it
    reached, the others (past the cut) as they were."""
    merged = {str(k): list(v) for k, v in old.items()} if isinstance(old, Mapping) and not whole else {}
    merged.update({str(k): list(v) for k, v in new.items() if v})
    return merged


_BODIES = {
    "fact": fact_body,
    "procedure": procedure_body,
    "gotcha": gotcha_body,
    "preference": statement_body,
    "decision": statement_body,
}


def render(page: Page) -> str:
    """The body a distilled page would have, from its front matter."""
    kind = str(page.meta.get("distilled") or "")
    body = _BODIES.get(kind)
    return body(page.title, page.meta) if body else page.body


def _new_meta(candidate: Candidate, anchors: Sequence[Anchor]) -> dict[str, Any]:
    f = candidate.facts
    meta: dict[str, Any] = {"distilled": candidate.kind if candidate.kind != "gotcha-hit" else "gotcha"}
    if candidate.type == "procedure":
        meta |= {"purpose": f["purpose"], "commands": _merge_commands([], f["commands"]), "failures": []}
        meta["failures"] = _merge_failures([], f.get("failures") or [], meta["commands"])
        meta["evidence"] = 1
    elif candidate.type == "gotcha":
        meta |= {"signature": f["signature"], "evidence": 1}
        meta["fix"] = {k: f[k] for k in FIX_KEYS if f.get(k)}
        meta["occurrences"] = [dict(o) for o in f.get("occurrences") or [f["occurrence"]]]
        meta["evidence"] = len(meta["occurrences"])
    elif candidate.type == "fact" and f.get("environment"):
        meta |= {"environment": f["environment"], "tools": _plain(dict(f["tools"])), "evidence": 1}
    elif candidate.type == "fact":
        meta |= {"manifest": f["manifest"], "topics": _merge_topics({}, f["topics"]), "read": f["read"], "evidence": 1}
    else:
        meta |= {"statement": f["statement"], "names": list(f.get("names") or []),
                 "negated": list(f.get("negated") or []), "evidence": 1}  # fmt: skip
        if f.get("context"):
            meta["context"] = f["context"]
    if anchors:
        meta["anchors"] = [a.as_meta() for a in anchors]
    return meta


def _imported(candidate: Candidate) -> dict[str, str]:
    """Which file and section a page came from, as `import instructions` records it."""
    f = candidate.facts
    return {"from": str(f["from"]), "section": str(f["section"]), "sha": str(f["sha"])}


def _proposal_text(candidate: Candidate) -> str:
    return f"{candidate.facts['body']}\n\n_Proposed by a model from {candidate.source} on {candidate.date}._"


def new_page(candidate: Candidate, anchors: Sequence[Anchor] = ()) -> Page:
    """The page a candidate makes when nothing duplicates it."""
    if candidate.kind == "instructions":
        return Page.new(
            candidate.title,
            candidate.type,
            f"# {candidate.title}\n\n{str(candidate.facts['body']).strip(chr(10))}\n",
            tags=list(candidate.tags),
            sources=[f"file:{candidate.facts['from']}", candidate.source],
            extra=_plain(
                {"distilled": "instructions", "imported": [_imported(candidate)], "evidence": 1}
                | ({"anchors": [a.as_meta() for a in anchors]} if anchors else {})
            ),
        )
    if candidate.kind == "proposal":
        return Page.new(
            candidate.title,
            candidate.type,
            _proposal_text(candidate),
            tags=list(candidate.tags),
            sources=[candidate.source],
            extra={"distilled": "llm", "evidence": 1},
        )
    extra = _plain(_new_meta(candidate, anchors))
    page = Page.new(
        candidate.title, candidate.type, "", tags=list(candidate.tags), sources=[candidate.source], extra=extra
    )
    return page.with_body(render(page))


def merged(existing: Page, candidate: Candidate, anchors: Sequence[Anchor] = ()) -> Page:
    """`existing` with the candidate's evidence merged in (the same page when nothing is new)."""
    meta = dict(existing.meta)
    sources = _sources(existing.sources, [candidate.source])
    distilled = bool(meta.get("distilled"))
    hand_edited = distilled and render(existing).strip() != existing.body.strip()
    f = candidate.facts
    line = ""
    if candidate.kind == "instructions":
        # The section as the file says it now; the page a person edited keeps their words.
        meta["sources"] = _sources(existing.sources, [f"file:{f['from']}"], [candidate.source])
        meta["imported"] = [e for e in meta.get("imported") or [] if isinstance(e, dict)]
        meta["imported"] = [e for e in meta["imported"] if e.get("from") != f["from"]] + [_imported(candidate)]
        if anchors:  # the file as it is now: the page was just read from it
            fresh = {a.path for a in anchors}
            kept = [a for a in meta.get("anchors") or [] if isinstance(a, Mapping) and a.get("path") not in fresh]
            meta["anchors"] = kept + [a.as_meta() for a in anchors]
        page = Page(existing.path, _plain(meta), existing.body, existing.has_front_matter)
        now = f"# {existing.title}\n\n{str(f['body']).strip(chr(10))}\n"
        same = " ".join(str(f["body"]).split()) in " ".join(existing.body.split())
        return page if same or meta.get("distilled") != "instructions" else page.with_body(now)
    if candidate.kind == "proposal":
        meta["sources"] = sources
        addition = f"## Added from {candidate.source} ({candidate.date})\n\n{_proposal_text(candidate)}"
        if str(f["body"]).strip() in existing.body:
            return Page(existing.path, meta, existing.body, existing.has_front_matter)
        return Page(existing.path, meta, existing.body, existing.has_front_matter).with_body(
            existing.body.rstrip("\n") + "\n\n" + addition
        )
    if candidate.type == "procedure" and (distilled or meta.get("commands")):
        commands = _merge_commands(meta.get("commands") or [], f.get("commands") or [])
        meta["commands"] = commands
        meta["failures"] = _merge_failures(meta.get("failures") or [], f.get("failures") or [], commands)
        new_cmds = [c for c in f.get("commands") or [] if f"`{c['command']}`" not in existing.body]
        line = f"- {candidate.date}: {_command_line(new_cmds[0])} worked ({candidate.agent})" if new_cmds else ""
    elif candidate.type == "procedure":
        new_cmds = [c for c in f.get("commands") or [] if str(c["command"]) not in existing.body]
        line = f"- {candidate.date}: {_command_line(new_cmds[0])} worked ({candidate.agent})" if new_cmds else ""
    elif candidate.type == "gotcha":
        occurrences = _merge_occurrences(meta.get("occurrences") or [], f["occurrence"])
        if len(occurrences) != len(meta.get("occurrences") or []):
            line = f"- {candidate.date}: `{f['signature']}` again ({candidate.source})"
        meta["occurrences"] = occurrences
        fix = meta.get("fix")
        old_fix: Mapping[str, Any] = fix if isinstance(fix, Mapping) else {}
        # A fix that changed files beats one that ran another command, which beats none.
        if (f.get("files") and not old_fix.get("files")) or (
            (f.get("instead") or f.get("first")) and not any(old_fix.get(k) for k in ("files", "instead", "first"))
        ):
            meta["fix"] = {k: f[k] for k in FIX_KEYS if f.get(k)}
        meta.setdefault("signature", f["signature"])
    elif candidate.type == "fact" and f.get("environment"):
        old_tools = meta.get("tools")
        meta["tools"] = {**(dict(old_tools) if isinstance(old_tools, Mapping) else {}), **dict(f["tools"])}
        meta.setdefault("environment", f["environment"])
    elif candidate.type == "fact" and f.get("manifest"):
        meta["topics"] = _merge_topics(meta.get("topics"), f["topics"], bool(f.get("whole", True)))
        meta["read"] = max(str(meta.get("read") or ""), str(f["read"]))
        meta.setdefault("manifest", f["manifest"])
    if candidate.type == "gotcha":
        meta["evidence"] = max(len(meta.get("occurrences") or []), int(meta.get("evidence") or 0))
    else:
        meta["evidence"] = max(len([s for s in sources if ":" in s]), int(meta.get("evidence") or 1))
    meta["sources"] = sources
    if anchors:
        # The files this session's evidence is about are anchored as they are now (the page
        # was just confirmed against them); the other anchors stay as they were.
        fresh = {a.path for a in anchors}
        kept = [a for a in meta.get("anchors") or [] if (a.get("path") if isinstance(a, Mapping) else a) not in fresh]
        meta["anchors"] = kept + [a.as_meta() for a in anchors]
    touched = ("commands", "failures", "occurrences", "fix", "anchors", "sources", "topics", "tools")
    meta.update(_plain({k: meta[k] for k in touched if k in meta}))
    page = Page(existing.path, meta, existing.body, existing.has_front_matter)
    if distilled and not hand_edited:
        return page.with_body(render(page))
    if line and line not in existing.body:
        return page.with_body(
            existing.body.rstrip("\n") + ("\n\n" if "\n- " not in existing.body[-200:] else "\n") + line
        )
    return page
