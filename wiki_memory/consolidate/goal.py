"""The goal of a session and its later requests, as the handoff states them.

The goal is the first request of the session in the user's own words: a plain turn, a slash
command's argument when it is words, the input a custom prompt was filled with. A slash
command or persona prompt is named as such and its text is never the goal; a command whose
argument is only identifiers (`8371`, `--pr 8160`) is the goal as what it is, "Ran
/erk:plan-implement 8371", and a later message never stands in for it. What the user pasted
(a terminal screen, a long document) is named, never quoted: the user's sentence around it is
the request (`capture.prompts.pasted`).

A session opened by a command with no words of the user's says what ran, and the title of the
plan file it then read, when it read one before changing anything ("Ran /erk:plan-implement
8491 (the plan it read: “Add a print statement to the first Python file”)"): a plan is what
the user had approved as the task (Claude Code's plan mode, a spec kit's plan.md), in words,
where the command only pointed at it. Not one tool's output (the title of the issue `gh`
fetched) nor the agent's first plan item, a step rather than the purpose: neither is the
user's.

Standard library only, like `extract`.
"""

from __future__ import annotations

import re

from wiki_memory.capture.prompts import in_words, pasted
from wiki_memory.consolidate.commands import is_probe, printed_file
from wiki_memory.consolidate.final_message import split_final
from wiki_memory.consolidate.session import Session, Step, Turn, is_trivial_prompt, step_ref


def goal_and_requests(session: Session) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The first request of the session, the later ones, what the session ran that was not the
    user's words (`/tasks`, "a persona prompt"), named, and where the first request was recorded
    (with the plan file read, when the goal names it).

    A request is the user's own words (a slash command's arguments when they are words; never
    its expansion, a persona prompt or plumbing; never what the user pasted, only the words
    around it, the paste named), or, for a slash command that set the agent to work with no
    words of the user's, the command itself ("Ran /erk:plan-implement 8371")."""
    turns = session.turns
    asks = [(turn, text) for n, turn in enumerate(turns) if (text := _request(session, turns, n))]
    goal, goal_refs = asks[0][1] if asks else "", tuple(a[0].prompt.ref for a in asks[:1])
    if asks and asks[0][0].kind == "command" and not in_words(asks[0][0].words):
        plan = plan_read(session, turns, turns.index(asks[0][0]))
        goal_refs += (step_ref(plan[0]),) if plan else ()
    later = asks[1:]
    if len(asks) > 1 and _asked_back(session, asks[0][0].prompt.seq, asks[1][0].prompt.seq):
        # The agent asked what the first request meant and the user said: the request is
        # both, in the user's words ("please update manually" + "I meant you, Gemini CLI").
        goal, later = f"{asks[0][1]} (then: {asks[1][1]})", asks[2:]
    requests = tuple(dict.fromkeys(text for _turn, text in later if text != goal))
    invoked: list[str] = []
    for n, turn in enumerate(turns):
        name = ""
        if turn.kind == "command":
            if turn.failed or not _housekeeping(turns, n):
                name = turn.command  # a built-in that only printed something is housekeeping
        elif turn.kind == "expansion" and not turn.command:
            name = "a custom command prompt"
        elif turn.kind == "persona":
            name = "a persona prompt"
        if name and name not in invoked:
            invoked.append(name)
    return goal, requests, tuple(invoked), goal_refs


def _housekeeping(turns: list[Turn], n: int) -> bool:
    """Did the command of turn `n` only print something (a built-in such as `/model`)?"""
    after = turns[n + 1].prompt.text.lstrip() if n + 1 < len(turns) else ""
    return after.startswith("<local-command-stdout>")


def _request(session: Session, turns: list[Turn], n: int) -> str:
    """Turn `n` as a request, as the handoff says it ("" when it asks nothing): the user's words
    with what they pasted named, or the slash command that set the agent to work."""
    turn = turns[n]
    if turn.kind == "command":
        if turn.failed or _housekeeping(turns, n):
            return ""
        if in_words(turn.words):
            return _own_words(turn.words)
        # An argument of identifiers (`8371`, `--pr 8160`) belongs to the command, and a
        # command the agent did nothing for was housekeeping (`/clear`).
        upto = _next_request(turns, n)
        seqs = [s.seq for s in session.steps] + [a.seq for a in session.answers]
        worked = any(turn.prompt.seq < seq and (upto is None or seq < upto) for seq in seqs)
        if not worked:
            return ""
        plan = plan_read(session, turns, n)
        title = f" (the plan it read: “{plan[1]}”)" if plan else ""
        return " ".join(["Ran", turn.command, *turn.words.split()]) + title
    if not turn.words or is_trivial_prompt(turn.words):
        return ""
    if turn.kind == "expansion" and not in_words(turn.words):
        # A template filled with identifiers only: the run is the request, as for a command.
        return " ".join(["Ran", f"{turn.command or 'a custom command prompt'}:", *turn.words.split()])
    return _own_words(turn.words)


# A plan file: `plan.md`, `PLAN.md`, `implementation-plan.md`, or any Markdown file in a
# `plans` folder (where Claude Code's plan mode keeps them).
PLAN_FILE = re.compile(r"(^|[\\/])(?:[\w.-]*plan\.md|plans[\\/][^\\/]+\.md)$", re.IGNORECASE)
_TITLE = re.compile(r"\A\s*(?:\s*\d+\s*[→\t|]\s*)?# +(?:Plan: *)?(?P<title>\S.{2,150}?)\s*$", re.MULTILINE)


def _next_request(turns: list[Turn], n: int) -> int | None:
    return next((t.prompt.seq for t in turns[n + 1 :] if t.kind in ("user", "command")), None)


def plan_read(session: Session, turns: list[Turn], n: int) -> tuple[Step, str] | None:
    """(the step, the title) of the plan file the session read after turn `n`, before the next
    request and before its first change of a file: its first heading."""
    start, end = turns[n].prompt.seq, _next_request(turns, n)
    for step in session.steps:
        if step.seq <= start:
            continue
        if (end is not None and step.seq >= end) or step.kind == "edit":
            break
        path = step.input.strip() if step.kind == "read" else printed_file(step.input) or ""
        if step.kind in ("read", "command") and not step.error and PLAN_FILE.search(path):
            m = _TITLE.match(step.output)
            return (step, m.group("title")) if m else None
    return None


def _own_words(words: str) -> str:
    """The user's words without what they pasted, the paste named ("fix this (with a pasted
    terminal screen)"); only the paste, named, when they wrote nothing around it ("Pasted a
    document of 40 lines headed “Summary”")."""
    split = pasted(words)
    if not split.what:
        return words
    own = split.own if split.own and not is_trivial_prompt(split.own) else ""
    return f"{own} (with a pasted {split.what})" if own else f"Pasted a {split.what}"


def _asked_back(session: Session, start: int, end: int) -> bool:
    """Did the agent's answer between two prompts end its turn on a question to the user,
    having only looked around (a request for clarification, not an offer after trying)?"""
    answers = [a for a in session.answers if start < a.seq < end]
    tried = any(
        start < s.seq < end and (s.kind == "edit" or (s.kind == "command" and not is_probe(s.input)))
        for s in session.steps
    )
    if not answers or tried:
        return False
    _statements, questions, _steps = split_final(answers[-1].text)
    return bool(questions)
