"""The agent's final message, read line by line: what it reports as done, the questions it
leaves for the user, and the next steps it states or the work it reports unfinished.
Standard library only."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from itertools import pairwise

from wiki_memory.consolidate.commands import command_words
from wiki_memory.consolidate.oneline import clean

# A statement that something is not finished: "Quoted fields are not handled yet", "the test still fails".
_UNFINISHED = re.compile(
    r"\b(not|n't|never)\b(\s+\w+){0,3}\s+yet\b|\bstill\s+(fail|fails|failing|broken|missing|"
    r"needs?|to be|has to|have to|pending|open|red)\b|\b(remains|remain) to be\b|\bleft to do\b|"
    r"(?<!\bno )(?<!\bwithout )\bTODO\b|\bunfinished\b|\bincomplete\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(perfect|great|done|excellent|sure|okay|ok|alright|all set|got it|awesome|nice)\b[!.]*$", re.IGNORECASE
)
# A sentence that states a next step: "Next: run the migration", "You still need to ...",
# "Remaining: ...", "TODO: ...", "I'd suggest ...". Not "Next.js 15.5.2", not "You can see ...".
_NEXT = re.compile(
    r"^(next(\s+steps?)?\s*[:\-\u2013]|next,?\s+(i|we|you)\b|the next step\b|to ?do\s*:|remaining\s*:|"
    r"still (need|to)\b|not (yet|done)\b|left to do|follow[- ]?ups?\s*:|you (should|will need to|'ll need to|"
    r"need to|must)\b|(we|you) (still )?need to\b|i'd (suggest|recommend)|i would (suggest|recommend)|"
    r"consider\b|pending\s*:|open (questions?|issues?)\s*:)",
    re.IGNORECASE,
)
# A heading (or a bold line) that opens a list of next steps.
_NEXT_HEADING = re.compile(
    r"^(next(?!\.\w)(\s+steps?)?|what'?s next|remaining(\s+(work|tasks|steps|items))?|to ?dos?|"
    r"follow[- ]?ups?|open (items|questions|issues)|pending( work| items)?|left to do|still to do|"
    r"suggested next steps?|recommended next steps?)\b[^.]*$",
    re.IGNORECASE,
)


# A sentence that hands something to the user: commands for them to run ("you can finish it
# with:", "To get started, sign in:" before a code block or a list), or more work offered on
# their word ("if you want X, let me know"). The agent did not do it: it is left open, not
# reported as done. Not "You can see the app at ...": a statement, with nothing handed.
_OFFER = re.compile(r"\blet me know\b|^if you(?:'d| would)? (?:like|want|need|prefer)\b", re.IGNORECASE)
_HANDS_OVER = re.compile(r"(\byou\b|^to \w+\b).*:$", re.IGNORECASE)


# A sentence about the handed commands just listed ("That'll send the branch up to the repo"):
# what running them would do, part of what is handed, not a report of something done.
_REFERS_BACK = re.compile(
    r"^(that|this|these|those|they|it)(['\u2019](ll|d)\b|\s+(will|would|should|can)\b)", re.IGNORECASE
)
# The agent narrating its own process ("Now I have a full view of the repo.", "Let me compile
# the analysis."): what it was about to do or had read, not what it reports.
_NARRATION = re.compile(
    r"^(now,?\s+)?(let me (?!know\b)|i['\u2019]ll\b|i will\b|i['\u2019]m going to\b|i am going to\b)|"
    r"^now,?\s+i\s+(have|understand|see|know)\b",
    re.IGNORECASE,
)
_RULE = re.compile(r"^([-*_=]\s*){3,}$")  # a Markdown horizontal rule
# A line drawn, not written: a table's separator row (`|---|:--:|`), a banner of box-drawing
# characters (`★ Insight ─────`).
_DRAWN = re.compile(r"^\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$|[\u2500-\u257f]{3,}")
# A Markdown link to a local file (`[docfx.json](/Users/a/p/docfx.json)`): its text says it.
_PATH_LINK = re.compile(r"\[([^\]]+)\]\((?:file://)?[/~][^)\s]*\)")


def _table_header(lines: list[str], n: int) -> bool:
    """Is line `n` a table's header row (the row above its separator)?"""
    return lines[n].strip().startswith("|") and n + 1 < len(lines) and bool(_DRAWN.match(lines[n + 1].strip()))


def _handed(sentence: str) -> bool:
    return bool(_OFFER.search(sentence) or _HANDS_OVER.search(sentence))


def _actionable(sentence: str) -> bool:
    """Reads as something to do, not a fact: some words, one of them a lowercase word (a
    verb, most often), and not a name with a version (`Next.js 15.5.2`) or a label and value."""
    words = sentence.split()
    if len(words) < 3 or sentence.endswith(":"):
        return False
    if not any(re.fullmatch(r"[a-z]{3,}", w.strip(".,;:()`'\"")) for w in words):
        return False
    return not re.fullmatch(r"[\w .@/+-]{1,40}:?\s*v?\d+(\.\d+)+\S*", sentence)


HANDED_LABEL = "Left to the user: "

# A closing formula asking for the user's next request ("What else would you like me to do?"):
# it leaves nothing open.
_ASKS_FOR_MORE = re.compile(
    r"^(is there )?(anything|something) else\b|^what else\b|^what(['\u2019]s| is) next\?$|"
    r"^what would you like (me )?to do( next)?\?$|^how (else )?can i help\b",
    re.IGNORECASE,
)
# A lead-in that makes what follows hold only in a case ("If push is rejected:", "When CI fails:").
_CONDITION = re.compile(r"^(if|when|whenever|in case|should|unless|otherwise)\b", re.IGNORECASE)
# A step hedged to a case that may not come: "Request re-review if needed".
_IF_NEEDED = re.compile(r"\b(if|when|as) (needed|necessary|required|applicable|desired|wanted)$", re.IGNORECASE)
# A rule, not a step: "Do NOT use `git pull --rebase`", "Never force-push".
_RULE_NOT_STEP = re.compile(r"^(do not|don['\u2019]t|never|avoid)\b", re.IGNORECASE)


# An option offered to choose from: `| A | Free text |`, `A) Free text`, `- **B**: A closed list`.
_OPTION = re.compile(r"^\s*(?:[-*]\s+)?(?:\|\s*)?(?:\*\*)?\(?([A-F])\)?(?:\*\*)?\s*(?:[|).:]|\s[-\u2013\u2014])\s*\S")


def offers_choices(text: str) -> bool:
    """Does the message put options to the user (A, B, C ... one a line), asking them to choose?
    Then it is a question, whether or not a sentence ends in a question mark."""
    letters = [m.group(1) for m in map(_OPTION.match, text.splitlines()) if m]
    return any(a == "A" and b == "B" for a, b in pairwise(letters))


def _is_data(line: str) -> bool:
    """Is the line a JSON object or array (a tool call written out as text), not words?"""
    if not (line.startswith("{") and line.endswith("}")) and not (line.startswith("[") and line.endswith("]")):
        return False
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def split_final(text: str) -> tuple[list[str], list[str], list[str]]:
    """The final message as (statements, questions, open lines), one line each; an open line
    is labelled a stated next step or something reported as unfinished."""
    statements: list[str] = []
    questions: list[str] = []
    steps: list[str] = []
    in_next = False
    after_blank = False
    in_fence = False
    handing = False  # the lines after "you can finish it with:" are what the user is handed
    raw_lines = text.splitlines()
    for n, raw in enumerate(raw_lines):
        line = _PATH_LINK.sub(r"\1", raw.strip())
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            # A code block's lines are code: part of the report, never a question or a next
            # step (`.DS_Store?` in a .gitignore is a pattern, not a question).
            if line and handing:
                steps[-1] += " " + clean(line, 300)
            elif line:
                statements.append(clean(line, 300))
            continue
        if not line or _RULE.match(line):
            after_blank = True
            continue
        if _DRAWN.search(line) or _table_header(raw_lines, n) or _is_data(line):
            continue
        if line.startswith("|") and line.endswith("|"):
            line = " | ".join(c.strip() for c in line.strip("|").split("|") if c.strip()) + "."
        if handing and after_blank and not re.match(r"^([-*•]|\d+[.)])\s+", line):
            handing = False
            if _REFERS_BACK.match(line):
                steps[-1] += " " + clean(line, 300)
                continue
        if handing and re.match(r"^([-*•]|\d+[.)])\s+", line):
            steps[-1] += " " + clean(re.sub(r"^([-*•]|\d+[.)])\s+", "", line), 300)
            after_blank = False
            continue
        heading = re.match(r"^#+\s*(.+)$", line)
        if heading:
            in_next = bool(_NEXT_HEADING.match(clean(heading.group(1), 200)))
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
        bold = body.rstrip(":").strip() if body.endswith(":") or line.startswith(("**", "__")) else ""
        if bold and _NEXT_HEADING.match(bold) and len(bold) < 60:
            in_next = True
            continue
        handing = _file_sentences(body, in_next, handing, statements, questions, steps)
    return statements, questions, steps


def _file_sentences(
    body: str, in_next: bool, handing: bool, statements: list[str], questions: list[str], steps: list[str]
) -> bool:
    """Each sentence of one line of the final message into its list; whether the lines after
    it are handed to the user (a handed step ending in a colon)."""
    # Sentences end at `. ` before a capital (or a letter of another script), and after a
    # full-width stop or question mark.
    sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z`\"'(]|[^\x00-\x7f])|(?<=[\u3002\uff01\uff1f])", body)
    contingent = False  # after "If the push is rejected:", what follows holds only in that case
    for sentence in sentences:
        sentence = sentence.strip()
        if not sentence or _FILLER.match(sentence):
            continue
        if _CONDITION.match(sentence) and sentence.endswith(":"):
            contingent = True
            continue
        if contingent or _RULE_NOT_STEP.match(sentence) or _IF_NEEDED.search(sentence.rstrip(".")):
            # Advice for a case that may never come ("Request re-review if needed"), or a rule
            # ("Do NOT use git pull --rebase"): neither a step left to do nor a report.
            continue
        if sentence.endswith(":") and re.match(r"^(let me|here'?s|here is|i'll|i will|now)\b", sentence, re.IGNORECASE):
            continue  # an introduction to what follows
        if _NARRATION.match(sentence) and not sentence.endswith("?"):
            continue  # the agent narrating its process, not reporting
        if sentence.endswith(("?", "\uff1f")):
            if not _ASKS_FOR_MORE.match(sentence):
                questions.append(sentence)
        elif _handed(sentence) and not in_next:
            steps.append(f"{HANDED_LABEL}{sentence}")
            handing = sentence.endswith(":")
        elif (in_next and _actionable(sentence)) or (_NEXT.match(sentence) and _actionable(sentence)):
            steps.append(f"Stated next step: {sentence}")
        elif in_next:
            continue  # a fact listed under the next steps (a version, a label): not a step
        elif _UNFINISHED.search(sentence):
            steps.append(f"Reported as unfinished: {sentence}")
        else:
            statements.append(sentence)
    return handing


# An inline code span (`make apply`) outside code blocks, and one that names a command: a
# namespaced slash command (`/speckit.plan`, `/erk:plan-save`), or two words or more whose
# first is a program's name or a path to a program (`target/debug/app --help`), not a file.
_SPAN = re.compile(r"(?<!`)`([^`\n]{2,160})`(?!`)")
_SLASH_COMMAND = re.compile(r"^/[a-z][\w-]*[.:][\w.-]+$")
_PROGRAM = re.compile(r"^(\.{0,2}/)?([\w-]+/)*[\w-]+(\.sh)?$")
# Words after which the next one still names what runs (`npm run build`, `python -m pytest`).
_RUNNERS = frozenset({"run", "-m", "exec", "x", "dlx", "tool"})


def named_not_run(final: str, commands: Sequence[str]) -> list[str]:
    """The commands the final message names in code (`make apply`) that the session never
    ran: left for the user, or for the next session, whatever language the message is in.
    Only a program the session ran (`make` for `make check`), a path to one, or a slash
    command: a name in code may be anything else (`homebrew.casks`, `Gather Town`)."""
    ran = [command_words(c) for c in commands]
    programs = {os.path.basename(w[0]) for w in ran if w}
    out: list[str] = []
    in_fence = False
    for line in final.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        for match in () if in_fence else _SPAN.finditer(line):
            span = match.group(1).strip()
            if _SLASH_COMMAND.match(span):
                if not any(c.strip().startswith(span) for c in commands):
                    out.append(span)
                continue
            words = command_words(span)
            if len(words) < 2 or not _PROGRAM.match(words[0]):
                continue
            if os.path.basename(words[0]) not in programs and "/" not in words[0]:
                continue
            # The same program doing the same thing (`make check`, `python -m pytest`) ran:
            # the message tells of it, with other options perhaps.
            head = words[: 3 if words[1] in _RUNNERS else 2]
            if not any(w[: len(head)] == head for w in ran):
                out.append(span)
    return list(dict.fromkeys(out))
