"""The agent's final message, read line by line: what it reports as done, the questions it
leaves for the user, and the next steps it states or the work it reports unfinished.
Standard library only."""

from __future__ import annotations

import re

from wiki_memory.consolidate.oneline import clean

# A statement that something is not finished: "Quoted fields are not handled yet", "the test still fails".
_UNFINISHED = re.compile(
    r"\b(not|n't|never)\b(\s+\w+){0,3}\s+yet\b|\bstill\s+(fail|fails|failing|broken|missing|"
    r"needs?|to be|has to|have to|pending|open|red)\b|\b(remains|remain) to be\b|\bleft to do\b|"
    r"\bTODO\b|\bunfinished\b|\bincomplete\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(perfect|great|done|excellent|sure|okay|ok|alright|all set|got it|awesome|nice)\b[!.]*$", re.IGNORECASE
)
_NEXT = re.compile(
    r"^(next( steps?)?\b|to ?do\b|remaining\b|still (need|to)\b|not (yet|done)\b|left to do|"
    r"follow[- ]?ups?\b|you (may|might|could|should|can|will need to) |consider\b|i would\b|"
    r"i'd (suggest|recommend)|(we|you) (still )?need to|pending\b|open (questions?|issues?)\b|"
    r"todo:)",
    re.IGNORECASE,
)


def split_final(text: str) -> tuple[list[str], list[str], list[str]]:
    """The final message as (statements, questions, open lines), one line each; an open line
    is labelled a stated next step or something reported as unfinished."""
    statements: list[str] = []
    questions: list[str] = []
    steps: list[str] = []
    in_next = False
    after_blank = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("```"):
            after_blank = after_blank or not line
            continue
        heading = re.match(r"^#+\s*(.+)$", line)
        if heading:
            in_next = bool(
                _NEXT.match(heading.group(1))
                or re.search(r"next|remaining|todo|follow", heading.group(1), re.IGNORECASE)
            )
            after_blank = False
            continue
        is_item = bool(re.match(r"^([-*•]|\d+[.)])\s+", line))
        if in_next and after_blank and not is_item:
            in_next = False  # a new paragraph after the list of next steps
        after_blank = False
        body = re.sub(r"^([-*•]|\d+[.)])\s+", "", line)
        body = clean(body, 300)
        if not body:
            continue
        bold = re.match(r"^(next steps?|remaining|to ?do|follow[- ]?ups?)\s*:?\s*$", body, re.IGNORECASE)
        if bold:
            in_next = True
            continue
        sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z`\"'(])", body)
        for sentence in sentences:
            sentence = sentence.strip()
            if not sentence or _FILLER.match(sentence):
                continue
            if sentence.endswith(":") and re.match(
                r"^(let me|here'?s|here is|i'll|i will|now)\b", sentence, re.IGNORECASE
            ):
                continue  # an introduction to what follows
            if sentence.endswith("?"):
                questions.append(sentence)
            elif in_next or _NEXT.match(sentence) or re.match(r"^next\b", sentence, re.IGNORECASE):
                steps.append(f"Stated next step: {sentence}")
            elif _UNFINISHED.search(sentence):
                steps.append(f"Reported as unfinished: {sentence}")
            else:
                statements.append(sentence)
    return statements, questions, steps
