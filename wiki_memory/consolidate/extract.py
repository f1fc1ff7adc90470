"""Extractive consolidation: what a session did, failed at and left open, from evidence alone.

No LLM: every line of the summary points at something the session recorded (a prompt, a
command and its exit, an edit, a plan item, the final message). Standard library only, so
SessionStart can summarise a session that ended but was not consolidated yet.

How the verdicts are reached:

- a command that failed and later ran again (the same command, or a broader run of the
  same tool such as `pytest` after `pytest tests/test_x.py`) and passed was *fixed*: it
  goes under Done, with what changed in between;
- a command whose last run failed is *Failed*, and, being the state the session left,
  an *Open item* too; so is an edit that failed and was never redone;
- a command that only looks around (`ls`, `cat`, `grep`, `git status`) failing is noise;
- a call the user refused, and edits undone (`git checkout -- f`, an edit reversing an
  earlier one) are abandoned approaches;
- plan items not completed, questions and next steps in the last message, a request
  never answered, and a session that stopped in the middle of a tool call are open.

`summarize` takes these in turn, each step adding its lines (`findings`); the verdicts on
command runs are in `run_verdicts`, the shell-command analysis in `commands`, `command_runs`
and `state_changes`, the reading of the final message in `final_message`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from wiki_memory.capture.observation import PlanItem
from wiki_memory.consolidate.agent_reports import agent_reports
from wiki_memory.consolidate.command_runs import CommandRun, judge_runs
from wiki_memory.consolidate.commands import is_probe, shown
from wiki_memory.consolidate.final_message import HANDED_LABEL, named_not_run, offers_choices, split_final
from wiki_memory.consolidate.findings import Findings
from wiki_memory.consolidate.goal import goal_and_requests
from wiki_memory.consolidate.oneline import clean, error_line, relative
from wiki_memory.consolidate.run_verdicts import fixed_failures, last_runs, refusal, reverts
from wiki_memory.consolidate.session import Answer, Prompt, Session, Step, Turn, step_ref
from wiki_memory.consolidate.state_changes import change_stage, changes_files
from wiki_memory.consolidate.uncommitted import uncommitted_item

__all__ = ["CommandRun", "Summary", "clean", "error_line", "plan_lines", "relative", "summarize"]

# An edit tool's answer that the file already said what the edit would make it say (Gemini
# CLI's "no changes were necessary", "No changes to apply"): nothing failed, nothing changed.
_NOTHING_TO_CHANGE = re.compile(
    r"\bno changes?\s+(?:were\s+|was\s+|are\s+|is\s+)?(?:necessary|needed|required|to apply)\b", re.I
)
# Errors about the agent's own mechanics (a tool not offered, a file not read first), not the work.
_TOOL_UNAVAILABLE = re.compile(
    r"No such tool available|is not enabled|unsupported call|Unknown tool|"
    r"File has not been read yet|has been modified since (it was )?read",
    re.IGNORECASE,
)

_PAGE_PATH = re.compile(
    r"\b((?:decisions|gotchas|procedures|facts|preferences|notes)/[\w.\-/]+?\.md|"
    r"(?:sessions|handoffs)/\d{4}/\d{2}/[\w.\-]+?\.md)\b"
)


@dataclass(frozen=True)
class Summary:
    """What the session pages and the handoff say, each line backed by evidence."""

    session: Session
    goal: str  # the first request: the user's own words, else the command run ("" when none)
    requests: tuple[str, ...]
    done: tuple[str, ...]
    failed: tuple[str, ...]
    open: tuple[str, ...]
    files: tuple[str, ...]  # files edited, relative to the working directory
    edits: dict[str, int] = field(default_factory=dict)
    reads: tuple[str, ...] = ()
    commands: tuple[CommandRun, ...] = ()
    stories: tuple[str, ...] = ()  # each failure and what followed it
    final: str = ""
    memory: tuple[str, ...] = ()  # memory pages the session wrote or read
    mid_task: bool = False
    invoked: tuple[str, ...] = ()  # slash commands, custom prompts, persona prompts the session ran
    # The recorded events each line came from: a line of done/failed/open -> its references
    # (journal lines, transcript records, call ids); also "goal" and "file:<path>".
    evidence: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def substantive(self) -> bool:
        """Worth a handoff: someone asked for something, or the session changed or ran things."""
        return bool(self.goal) or bool(self.invoked) or any(s.kind in ("edit", "command") for s in self.session.steps)


def summarize(session: Session) -> Summary:
    """The extractive summary of a session."""
    cwd, steps = session.cwd, session.steps
    goal, requests, invoked, goal_refs = goal_and_requests(session)
    runs = judge_runs(steps)
    found = Findings()
    _plan_items(session.plan, steps, found)
    reported_fixed = fixed_failures(runs, steps, cwd, found)
    last_runs(runs, reported_fixed, found, steps)
    edits = _edits(steps, cwd, found)
    reverts(runs, found)
    _other_calls(steps, found)
    agent_reports(steps, runs, found, cwd)
    _failed_commands(session, found)
    _failed_replies(session, found)
    _turn_reports(session, found)
    final = _final_message(session, found)
    # What it was on: the last request in the user's words (a command run with no words, set
    # aside or not, names no work), else the goal.
    worded = [r for r in requests if not r.startswith("Ran /")]
    mid_task = _loose_ends(session, found, worded[-1] if worded else goal)
    memory = _memory_pages(steps)
    if memory["written"]:
        writes = [
            s
            for s in steps
            if s.kind in ("memory", "command") and any(p in s.input + s.output for p in memory["written"])
        ]
        found.add("done", "Recorded in memory: " + ", ".join(memory["written"][:6]), *writes[:6])
    for path in session.repo_changed or ():
        # The repository's state says so, whichever tool changed it (a formatter, a script).
        name = relative(path, cwd)
        if name not in edits:
            edits[name] = edits.get(name, 0)
            found.refs.setdefault(f"file:{name}", []).append("repository state at start and at the end")
    # A folder made for files the session then wrote (`mkdir -p d` and `d/x.py`) is those files.
    files = tuple(n for n in edits if not any(other.startswith(n.rstrip("/") + "/") for other in edits))
    if files and not any(line.startswith("`") and "passed" in line for line in found.done):
        found.add(
            "done",
            f"Changed {len(files)} file{'s' if len(files) != 1 else ''} ({', '.join(files[:6])}"
            f"{', …' if len(files) > 6 else ''}).",
            *[s for s in steps if changes_files(s)][:8],
        )
    item = uncommitted_item(session, runs, files)
    if item:
        found.add("open", item[0], *item[1])
    evidence = {line: tuple(refs) for line, refs in found.refs.items()}
    if goal_refs:
        evidence["goal"] = goal_refs
    changed_by: dict[str, list[str]] = {}
    for s in steps:
        if changes_files(s):
            for f in s.files:
                refs = changed_by.setdefault(relative(f, cwd), [])
                if len(refs) < 6:
                    refs.append(step_ref(s))
    for name in files:
        evidence[f"file:{name}"] = tuple(changed_by.get(name, ())) + tuple(found.refs.get(f"file:{name}", ()))
    return Summary(
        session=session,
        goal=goal,
        evidence=evidence,
        requests=requests,
        invoked=invoked,
        done=_dedupe(found.done),
        failed=_dedupe(found.failed),
        open=_dedupe(found.open),
        files=files,
        edits=edits,
        reads=_reads(steps, cwd),
        commands=tuple(runs),
        stories=_dedupe(found.stories),
        final=final,
        memory=_dedupe(memory["written"] + memory["read"]),
        mid_task=mid_task,
    )


def _failed_commands(session: Session, found: Findings) -> None:
    """Slash commands that printed an error and were not run again with success."""
    turns = session.turns
    for n, turn in enumerate(turns):
        if turn.kind != "command" or not turn.failed:
            continue
        if any(t.kind == "command" and t.command == turn.command and not t.failed for t in turns[n + 1 :]):
            continue
        output = turns[n + 1].prompt if n + 1 < len(turns) else turn.prompt
        found.add(
            "failed",
            f"{turn.command} failed: {clean(error_line(turn.failed) or turn.failed, 200)}",
            turn.prompt,
            output,
        )


def _failed_replies(session: Session, found: Findings) -> None:
    """Turns the agent ended in an error of its own (the model's request timed out, a quota
    ran out) and no answer came after: failed, as often as the same error was said."""
    last_answer = max((a.seq for a in session.answers), default=-1)
    unanswered = [r for r in session.failed_replies if r.seq > last_answer]
    # One the user got past by sending the same request again (with another model, say), and
    # it was answered: resolved, and what stopped it may stop the next session too.
    for reply in session.failed_replies:
        asked = next((p.text for p in reversed(session.prompts) if p.seq < reply.seq), None)
        again = next((p for p in session.prompts if p.seq > reply.seq and p.text == asked), None)
        answer = next((a for a in session.answers if again and a.seq > again.seq), None)
        if again is not None and answer is not None:
            said = clean(reply.text, 200)
            found.add(
                "done", f"The agent's reply failed ({said}); the same request sent again was answered.", reply, answer
            )
    by_error: dict[str, list[Answer]] = {}
    for reply in unanswered:
        by_error.setdefault(clean(reply.text, 200), []).append(reply)
    for error, replies in by_error.items():
        times = f" ({len(replies)} times)" if len(replies) > 1 else ""
        found.add("failed", f"The agent's reply failed{times}: {error}", *replies[-3:])


def _plan_items(plan: list[PlanItem], steps: list[Step], found: Findings) -> None:
    """Plan items: completed ones are done, the others open; the items of one status make one
    line (`[pending] A; B; C`): a plan of ten steps is one thing left, not ten."""
    groups: dict[str, tuple[list[str], list[Step]]] = {}
    for item in plan:
        # The plan calls that named the item (by id or text): where its status came from.
        named = [
            s
            for s in steps
            if s.kind == "plan" and any((item.id and p.id == item.id) or p.text == item.text for p in s.plan)
        ][-2:]
        if item.status == "completed":
            label = "completed"
        elif item.status in ("pending", "in_progress", ""):
            label = "in progress" if item.status == "in_progress" else "pending"
        else:
            continue
        texts, evidence = groups.setdefault(label, ([], []))
        texts.append(clean(item.text, 200))
        evidence.extend(s for s in named if s not in evidence)
    for label, (texts, evidence) in groups.items():
        section = "done" if label == "completed" else "open"
        found.add(section, f"[{label}] {clean('; '.join(texts), 600)}", *evidence[-3:])


def _edits(steps: list[Step], cwd: str | None, found: Findings) -> dict[str, int]:
    """Edits per file; edits declined, failed and never redone, or made and then undone."""
    edits: dict[str, int] = {}
    edit_log: list[tuple[Step, str, str, str]] = []  # (step, file, old digest, new digest)
    for s in steps:
        if s.kind == "command" and changes_files(s):
            # A shell command that wrote files (`sed -i`, `> f`, a heredoc, `mv`): an edit too.
            for f in s.files:
                name = relative(f, cwd)
                edits[name] = edits.get(name, 0) + 1
            continue
        if s.kind != "edit":
            continue
        if s.error:
            if s.rejected:
                who = refusal(s) if s.not_permitted else "the user declined it."
                found.add("failed", f"The edit of {_edit_label(s, cwd)} was not made: {who}", s)
                continue
            if _TOOL_UNAVAILABLE.search(s.output) or _NOTHING_TO_CHANGE.search(s.output[:600]):
                continue
            redone = any(t.kind == "edit" and not t.error and set(t.files) & set(s.files) for t in steps[s.index + 1 :])
            # Or done another way: a later command that ran fine and works on the file (a
            # shell edit the edit tool refused: `sed -i`, PowerShell's `Set-Content`).
            redone = redone or any(
                t.kind == "command" and not t.error and not is_probe(t.input) and _names_file(t.input, s.files, cwd)
                for t in steps[s.index + 1 :]
            )
            if not redone:
                found.add("failed", f"Editing {_edit_label(s, cwd)} failed: {error_line(s.output) or 'no detail'}", s)
            continue
        for f in s.files:
            name = relative(f, cwd)
            edits[name] = edits.get(name, 0) + 1
            digests = s.meta.get("edit")
            if isinstance(digests, list) and len(digests) == 2:
                edit_log.append((s, name, str(digests[0]), str(digests[1])))
    for n, (step, name, old, new) in enumerate(edit_log):
        for later, later_name, later_old, later_new in edit_log[n + 1 :]:
            if later_name == name and later_old == new and later_new == old:
                found.add("failed", f"An edit to {name} was made and then undone.", step, later)
                break
    return _one_name_a_file(edits)


def _one_name_a_file(edits: dict[str, int]) -> dict[str, int]:
    """The edits with each file under one name: a tool that gave an absolute path
    (`/home/a/site/index.html`) and one that gave it relative (`site/index.html`) changed
    one file, which keeps the shorter name (the working directory is not always known)."""
    relatives = [n for n in edits if not n.startswith(("/", "~"))]
    merged: dict[str, int] = {}
    for name, count in edits.items():
        same = next((r for r in relatives if r != name and name.endswith("/" + r)), None)
        key = same if name.startswith(("/", "~")) and same else name
        merged[key] = merged.get(key, 0) + count
    return merged


def _names_file(command: str, files: tuple[str, ...], cwd: str | None) -> bool:
    """Does the command line name one of the files (as given, or relative to the project)?"""
    return any(f in command or relative(f, cwd) in command.split() for f in files)


def _other_calls(steps: list[Step], found: Findings) -> None:
    """Other calls: refused by the user, or failing and never followed by success."""
    for s in steps:
        if s.kind in ("command", "edit", "read") or not s.error:
            continue
        if s.rejected:
            if s.tool.lower() == "exitplanmode":
                found.add("failed", f"The user rejected the proposed plan: {clean(s.input, 200)}", s)
            else:
                found.add("failed", f"The user declined {s.tool}: {clean(s.input, 160)}", s)
            continue
        if _TOOL_UNAVAILABLE.search(s.output) or s.kind == "plan":
            continue
        if not any(t.tool == s.tool and not t.error for t in steps[s.index + 1 :]):
            found.add("failed", f"{s.tool} failed ({clean(s.input, 100)}): {error_line(s.output) or 'no detail'}", s)


def _last_request(session: Session) -> Prompt | None:
    """The last turn that holds the user's own words (not plumbing, not an expansion), a bare
    lowercase word (`clear`, `exit`) after it being a command typed into the wrong window."""
    own = [t.prompt for t in session.turns if t.words]
    return next((p for p in reversed(own) if not _bare_word(p.text)), own[-1] if own else None)


def _bare_word(text: str) -> bool:
    return re.fullmatch(r"[a-z][\w-]*", text.strip()) is not None


def _changed_something(step: Step) -> bool:
    """Did the call change the system: an edit made, a command that wrote files or changed
    state by its tool's own verb (`pacman -S`, `git commit`)?"""
    if step.error or step.rejected:
        return False
    if step.kind == "edit":
        return True
    return step.kind == "command" and (changes_files(step) or bool(change_stage(step.input)))


def _turn_reports(session: Session, found: Findings) -> None:
    """What the agent reported at the end of each earlier request that changed something
    (the last one's report is the final report): done, in its words, one line a request.
    A request that only asked or looked has no report here: nothing was done."""
    last = _last_request(session)
    if last is None:
        return
    starts = [t.prompt.seq for t in session.turns if t.words and t.prompt.seq < last.seq] + [last.seq]
    changed = [s.seq for s in session.steps if starts[0] < s.seq < last.seq and _changed_something(s)]
    for start, end in pairwise(starts):
        if not any(start < seq < end for seq in changed):
            continue
        answer = next((a for a in reversed(session.answers) if start < a.seq < end), None)
        if answer is None or offers_choices(answer.text):
            continue  # no answer, or one that put options to the user: a question, answered next
        statements, _questions, _steps = split_final(answer.text)
        report = clean(" ".join(statements), 300)
        if report:
            found.add("done", f"Reported: {report}", answer)


# The harness's own commands: typed to manage the session, they answer nothing the agent asked.
_SESSION_COMMANDS = {"/exit", "/quit", "/clear", "/compact", "/cost", "/model", "/status", "/resume", "/help"}


def _answers_back(turn: Turn) -> bool:
    """Is the turn the user's move after an answer (their words, or a command of their
    project's), not a bare word or a command that only manages the session?"""
    if turn.kind == "command":
        return turn.command.split()[0] not in _SESSION_COMMANDS if turn.command else False
    return turn.kind in ("user", "expansion") and bool(turn.words) and not _bare_word(turn.words)


def _final_message(session: Session, found: Findings) -> str:
    """The last answer, if it answers the last request (not an earlier turn's greeting):
    what it reports is done, its questions and next steps open. Returns it ("" if none)."""
    final = session.final_answer or ""
    last = _last_request(session)
    if final and last is not None and session.answers[-1].seq < last.seq:
        final = ""
    if final:
        statements, questions, next_steps = split_final(final)
        report = clean(" ".join(statements), 400)
        answer = session.answers[-1]
        if report:
            found.add("done", f"Final report: {report}", answer)
        if any(t.prompt.seq > answer.seq and _answers_back(t) for t in session.turns):
            # The user spoke after it (a slash command, "go on"): its questions and the steps it
            # offered got their answer then, and are not left open.
            return final
        for q in questions[:4]:
            found.add("open", f"Question left for the user: {q}", answer)
        handed = [line.removeprefix(HANDED_LABEL) for line in next_steps if line.startswith(HANDED_LABEL)]
        if handed:
            # What the user is handed is one thing left to them, however many sentences say it.
            found.add("open", clean(HANDED_LABEL + " ".join(handed), 600), answer)
        for step_line in [line for line in next_steps if not line.startswith(HANDED_LABEL)][:6]:
            found.add("open", step_line, answer)
        # Of what it reports (not a rule, a case that may not come, a step already told).
        ran = [s.input for s in session.steps if s.kind == "command"]
        named = named_not_run("\n".join(statements), ran)
        if named:
            found.add(
                "open", "Named at the end, not run in the session: " + ", ".join(f"`{c}`" for c in named[:4]), answer
            )
    return final


def _loose_ends(session: Session, found: Findings, working_on: str = "") -> bool:
    """A request nobody answered (no answer and no tool call after it), and a session that
    stopped in the middle of a call (then True: it ended mid-task), with the request it was
    working on (`working_on`, the last one in the user's words): that is what is unfinished."""
    last = _last_request(session)
    if last is not None:
        answered = any(a.seq > last.seq for a in session.answers)
        worked_on = any(s.seq > last.seq for s in session.steps)
        # The requests since the last answer, named by the first that says what to do in a
        # sentence: "try again" or "..." only repeats the request before it. Else the last one,
        # unless it is a bare lowercase word (`clear`, `exit`, `ls`): a command typed into the
        # wrong window, not a request.
        last_answer = max((a.seq for a in session.answers), default=-1)
        waiting = [t.prompt for t in session.turns if t.words and t.prompt.seq > last_answer] or [last]
        named = next((p for p in waiting if len(re.findall(r"\w+", p.text)) > 2), None)
        if named is None and not _bare_word(last.text):
            named = last
        if not answered and not worked_on and named is not None:
            found.add("open", f"The last request got no answer: {clean(named.text, 200)}", *waiting[-3:])
    mid_task = session.last_kind == "tool"
    if mid_task:
        last_step = session.steps[-1]
        on = f" on “{clean(working_on, 160)}”" if working_on else ""
        # Calls made and never answered were running when it stopped; else the last that was.
        running = [s for s in session.steps if s.no_result]
        if running:
            names = ", ".join(f"`{_call_label(s)}`" for s in running[:2])
            more = f" and {len(running) - 2} more" if len(running) > 2 else ""
            where = f"while {names}{more} {'were' if len(running) > 1 else 'was'} running"
        else:
            where = f"after `{_call_label(last_step)}`"
        found.add(
            "open",
            f"The session stopped mid-task{on}, {where}, before giving a final answer.",
            *running[:2] or [last_step],
        )
    return mid_task


def _call_label(step: Step) -> str:
    """A call as the mid-task line names it: the tool and its input (a command cut short)."""
    shown_input = shown(step.input, 120) if step.kind == "command" else clean(step.input, 120)
    return f"{step.tool} {shown_input}".strip()


def _reads(steps: list[Step], cwd: str | None) -> tuple[str, ...]:
    """The files the session read, in order, each once."""
    reads: list[str] = []
    for s in steps:
        if s.kind == "read" and s.tool.lower() in ("read", "read_file", "notebookread") and s.input:
            name = relative(s.input, cwd)
            if name not in reads:
                reads.append(name)
    return tuple(reads)


def _edit_label(step: Step, cwd: str | None) -> str:
    return ", ".join(relative(f, cwd) for f in step.files) or step.input


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def _memory_pages(steps: list[Step]) -> dict[str, list[str]]:
    """Memory pages the session wrote (MCP write tools, `wiki-memory write`) or read."""
    written: list[str] = []
    read: list[str] = []
    for s in steps:
        command_write = s.kind == "command" and re.search(r"\bwiki-memory\s+(write|handoff\s+write|edit|mv)\b", s.input)
        if s.kind != "memory" and not command_write:
            continue
        paths = _PAGE_PATH.findall(f"{s.input}\n{s.output}")
        writes = bool(command_write) or bool(
            re.search(r"(write|edit|remember|handoff_write|create|update|append)", s.tool, re.IGNORECASE)
        )
        for path in paths:
            target = written if writes and not s.error else read
            if path not in written and path not in target:
                target.append(path)
    return {"written": written, "read": [p for p in read if p not in written]}


def plan_lines(plan: list[PlanItem]) -> list[str]:
    labels = {"completed": "completed", "in_progress": "in progress", "pending": "pending"}
    return [f"[{labels.get(item.status, item.status or 'pending')}] {clean(item.text, 300)}" for item in plan]
