"""Which sessions did work, what each finished, and which items of an earlier handoff a later
session closed.

A session that only asked a question or said thanks did no work: its handoff must not push
the last working session's open items out of what the next session is handed. And an open
item (a pending plan item, a command still failing, a stated next step) that a later session
finished is no longer open: it is dropped from the earlier handoff as it is handed.

What a session finished is kept in its handoff page's front matter (`finished`), as keys:
`file:<path>` (changed, and a test or build passed after the last change), `cmd:<words>`
(the command's last run passed), `plan:<text>` (a plan item completed), `git:commit` (a
commit made). An item closes when one of its own keys (see `item_keys`) is among a later
session's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from wiki_memory.consolidate.command_runs import RUNNING
from wiki_memory.consolidate.commands import command_key, is_probe, is_verification, only_looks
from wiki_memory.consolidate.extract import Summary
from wiki_memory.consolidate.oneline import relative
from wiki_memory.consolidate.uncommitted import LABEL as UNCOMMITTED
from wiki_memory.consolidate.uncommitted import committed


def changes_nothing(command: str) -> bool:
    """Does the command only look, check or fetch (a probe, a test run, `brew info`, `curl URL`)?"""
    return only_looks(command) or is_verification(command)


def did_work(summary: Summary) -> bool:
    """Did the session change anything: files (by any tool), a command that is more than a
    look or a check, memory written, or a plan laid out?"""
    if summary.files or summary.session.plan:
        return True
    if any(s.kind == "memory" and not s.error and re.search(r"write|edit|create|append", s.tool, re.I)
           for s in summary.session.steps):  # fmt: skip
        return True
    session = summary.session
    last = max([s.seq for s in session.steps if not s.no_result] + [a.seq for a in session.answers], default=0)
    # A run declined, or whose result never came because the session stopped, is not known
    # to have done anything; one the session went on past (a background run) is. But a
    # session whose calls the user refused was stopped on its way to work (its request is
    # still open, and what the user would not let run is worth knowing): it counts.
    if any(run.step.rejected and not run.step.not_permitted for run in summary.commands):
        return True
    return any(
        not run.step.rejected and not (run.step.no_result and run.step.seq >= last) and not changes_nothing(run.command)
        for run in summary.commands
    )


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w/.-]+", " ", text.casefold()).split())[:200]


def _cmd(command: str) -> str:
    return "cmd:" + " ".join(command_key(command))


def finished(summary: Summary) -> list[str]:
    """What the session finished, as keys (see the module docstring)."""
    keys: dict[str, None] = {}
    session = summary.session
    for item in session.plan:
        if item.status == "completed":
            keys["plan:" + _norm(item.text)] = None
    last_by_key: dict[str, bool] = {}
    for run in summary.commands:
        if not is_probe(run.command) and not run.step.rejected:
            # One still running when last seen is not known to have passed.
            passed = run.ok and not RUNNING.search(run.step.output)
            last_by_key[_cmd(run.command)] = passed or run.fixed_by is not None
    keys.update((k, None) for k, ok in last_by_key.items() if ok)
    if any(committed(run) for run in summary.commands):
        keys[COMMITTED] = None
    # A file is finished when a check passed after its last change and no check failed since.
    checks = [r for r in summary.commands if is_verification(r.command)]
    last_change: dict[str, int] = {}
    for step in session.steps:
        for f in step.files:
            last_change[relative(f, session.cwd)] = step.index
    for name in summary.files:
        after = [r for r in checks if r.step.index > last_change.get(name, -1)]
        if after and all(r.ok or r.fixed_by is not None for r in after):
            keys["file:" + name] = None
    return list(keys)


MAX_FINISHED = 200  # keys kept in a handoff page's front matter
COMMITTED = "git:commit"  # the session made a commit

_PLAN_ITEM = re.compile(r"^\[(pending|in progress)\]\s+(.*)$")
_BACKTICKED = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z][\w]{0,6})(?![\w/])")


def item_keys(item: str) -> set[str]:
    """The keys that would close a handoff item: its plan text, the commands it names in
    backticks, and (for a plan item or a stated next step) the files it names."""
    keys: set[str] = set()
    if item.startswith(UNCOMMITTED):
        return {COMMITTED}  # a later session's commit closes it (not a `git status` it names)
    plan = _PLAN_ITEM.match(item)
    if plan:
        keys.add("plan:" + _norm(plan.group(2)))
    for command in _BACKTICKED.findall(item):
        if " " in command.strip() or not _PATH.fullmatch(command.strip()):
            keys.add(_cmd(command))
    if plan or item.startswith(("Stated next step", "Reported as unfinished")):
        keys.update("file:" + p for p in _PATH.findall(_BACKTICKED.sub(" ", item)) if "/" in p or "." in p)
    keys.discard("cmd:")
    return keys


def closed(items: Iterable[str], later: Iterable[str]) -> list[str]:
    """The items a later session's finished keys close."""
    done = set(later)
    # An item may name a file by its name alone (`admin_client.py`).
    done.update("file:" + k.rsplit("/", 1)[-1] for k in list(done) if k.startswith("file:"))
    return [item for item in items if item_keys(item) & done]


_CLOSABLE = re.compile(r"^##\s+(open|next|todo|remaining|fail|abandon)", re.IGNORECASE)


def closable_items(body: str) -> list[str]:
    """The bullet items of a handoff page's open and failed sections, as written."""
    items: list[str] = []
    inside = False
    for line in body.splitlines():
        if line.startswith("## "):
            inside = bool(_CLOSABLE.match(line))
            continue
        m = re.match(r"^[-*]\s+(.*)$", line.strip())
        if inside and m:
            items.append(m.group(1).strip())
    return items


def without_items(body: str, items: Sequence[str]) -> str:
    """The handoff page body with those bullet items taken out of its open and failed sections."""
    drop = set(items)
    out: list[str] = []
    inside = False
    for line in body.splitlines():
        if line.startswith("## "):
            inside = bool(_CLOSABLE.match(line))
        m = re.match(r"^[-*]\s+(.*)$", line.strip())
        if inside and m and m.group(1).strip() in drop:
            continue
        out.append(line)
    return "\n".join(out)


def close_earlier(handoffs: Sequence[dict[str, object]]) -> None:
    """For handoff entries newest first (each with `body`, `finished`), record in each the
    items later sessions closed (`closed`) and its body without them (`open_body`)."""
    later: set[str] = set()
    for entry in handoffs:
        body = str(entry.get("body") or "")
        gone = closed(closable_items(body), later) if later else []
        entry["closed"] = gone
        if gone:
            entry["open_body"] = without_items(body, gone)
        fin = entry.get("finished")
        if isinstance(fin, list):
            later.update(str(k) for k in fin)


def closing_meta(summary: Summary) -> Mapping[str, object]:
    """The handoff page's front matter that says whether the session did work and what it finished."""
    meta: dict[str, object] = {}
    if not did_work(summary):
        meta["work"] = False
    fin = finished(summary)
    if fin:
        meta["finished"] = fin[:MAX_FINISHED]
    return meta
