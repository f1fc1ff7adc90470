"""What a user turn is: the user's own words, a slash command (and the long prompt it expands
into), a persona or role prompt addressed to the agent, or the agent's own plumbing.

Only the user's own words may become a goal, a preference or a decision; a slash command is
named as such ("ran /tasks") and its expansion, like a persona prompt, is boilerplate someone
wrote once for many sessions. Recognised by shape, not by a list of known prompts:

- plumbing: what an agent injects as a user turn (command caveats, environment context);
- a slash command: `/name args` typed at the prompt, or Claude Code's `<command-name>` record;
  the turn that follows such a record at once (or is a long instruction document) is its
  expansion;
- a persona: a long text that tells the agent who it is and how it must behave, in the second
  person, as rules (headings, bullets, capitalised NEVER/ALWAYS), not a task to do.

Standard library only (the hook path and the transcript readers use it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: The kinds of user turn.
USER, COMMAND, EXPANSION, PERSONA, META = "user", "command", "expansion", "persona", "meta"

_META_PROMPT = re.compile(
    r"^\s*(<command-(name|message|args)>|<local-command-std(out|err)>|Caveat: The messages below were generated"
    r"|<environment_context>|<user_instructions>|<user_shell_command>|# AGENTS\.md instructions"
    r"|<system-reminder>|\[Request interrupted by user|<turn_aborted>|<subagent_notification>)",
    re.IGNORECASE,
)
_SLASH_COMMAND = re.compile(r"^\s*(/[a-z][\w:.-]*)(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)
_COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>", re.IGNORECASE)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.IGNORECASE | re.DOTALL)
# A path typed at the prompt (`/home/me/x.py fails`) is not a command: a command has no second slash.
_PATH_LIKE = re.compile(r"^\s*/[\w.-]+/")

# The shape of a persona or instruction document.
_HEADING = re.compile(r"^\s*(#{1,6}\s+\S|<[a-z_][\w-]*>\s*$|\*\*[^*]{2,40}\*\*:?\s*$|[A-Z][A-Za-z ]{2,30}:\s*$)")
_BULLET = re.compile(r"^\s*([-*•]|\d+[.)])\s+\S")
# Modal words written in capitals to lay down a rule (an acronym such as API or CSV is not one).
_SHOUTED = re.compile(
    r"\b(NEVER|ALWAYS|MUST|NOT|DON'?T|ONLY|IMPORTANT|CRITICAL|MANDATORY|REQUIRED|SHALL|STAY|STRICTLY|"
    r"JAMAIS|TOUJOURS|DOIS|NIEMALS|IMMER|MUSST|NUNCA|SIEMPRE|DEBES)\b"
)
_SECOND_PERSON = re.compile(
    r"\b(you|your|yours|yourself|tu|toi|vous|votre|vos|dich|dein|deine|usted|tú|eres|tienes|debes)\b|"
    r"あなた|君|お前|你|您",
    re.IGNORECASE,
)
# Who the agent is, as a persona opens: "You are ...", "Act as ...", "Your role is ...", in a
# few languages (the only list here: how each language says "you are").
_IDENTITY = re.compile(
    r"^\s*(?:[#>*\s]*)(you are|you're|act as|acting as|your (role|job|name|persona|task) is|"
    r"tu es|vous êtes|tu seras|vous serez|agis comme|du bist|sie sind|eres|usted es|actúa como|sei|"
    r"あなたは|君は|你是|您是|你现在是)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PromptKind:
    """What one user turn is.

    `kind`: user | command | expansion | persona | meta. `command`: the slash command's name
    (`/tasks`) for a command or its expansion, when known. `words`: what the user wrote
    themselves (the whole text of a user turn, a command's arguments, the input a template
    was filled with), "" when none."""

    kind: str
    command: str = ""
    words: str = ""

    @property
    def is_users_words(self) -> bool:
        """Words the user wrote (a plain turn, or a command's arguments)."""
        return bool(self.words.strip())


# A record the harness writes as a user turn: it opens with a machine's tag, a name joined by
# `-` or `_` (`<task-notification>`, `<ide_opened_file>`, `<bash-stdout>`), or is one XML-like
# element whole. A person types prose, not that.
_RECORD = re.compile(r"^\s*<([a-z]+[-_][\w-]*)>|^\s*<([a-z][\w-]*)>.*</\2>\s*$", re.DOTALL)


def is_meta_prompt(text: str) -> bool:
    """True for text an agent injects as a user turn (command caveats, environment context,
    a notification record)."""
    if _META_PROMPT.match(text) or _RECORD.match(text):
        return True
    found = _SLASH_COMMAND.match(text)
    return bool(found and not _PATH_LIKE.match(text) and len(text.split()) <= 3)


def slash_command(text: str) -> tuple[str, str] | None:
    """(`/name`, its arguments) when the turn invokes a slash command, typed or recorded."""
    recorded = _COMMAND_NAME.search(text or "")
    if recorded:
        name = recorded.group(1)
        args = _COMMAND_ARGS.search(text)
        return ("/" + name.lstrip("/"), (args.group(1).strip() if args else ""))
    typed = _SLASH_COMMAND.match(text or "")
    if typed and not _PATH_LIKE.match(text) and "\n" not in typed.group(1):
        return typed.group(1), (typed.group(2) or "").strip()
    return None


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _laid_out(text: str) -> bool:
    """Headings or a list, at some length: a document, not a line typed at the prompt."""
    lines = _lines(text)
    headings = sum(1 for line in lines if _HEADING.match(line))
    bullets = sum(1 for line in lines if _BULLET.match(line))
    return len(text) >= 200 and (headings >= 2 or bullets >= 3)


def is_instructions(text: str) -> bool:
    """A document of rules for the agent: long, laid out (headings, bullets), in the second
    person and the imperative. A persona prompt, a custom command's prompt, an AGENTS file."""
    lines = _lines(text)
    if len(text) < 600 or len(lines) < 6:
        return False
    headings = sum(1 for line in lines if _HEADING.match(line))
    bullets = sum(1 for line in lines if _BULLET.match(line))
    words = re.findall(r"\w+", text)
    second = len(_SECOND_PERSON.findall(text))
    # Words in capitals that are not acronyms of the text's own subject: count only those in
    # lines that are otherwise lowercase prose (rules shouted at a reader).
    shouted = sum(1 for line in lines if _SHOUTED.search(line) and sum(c.islower() for c in line) > 10)
    laid_out = headings >= 2 or bullets >= 5
    addressed = second >= max(3, len(words) // 120) or bool(_IDENTITY.match(text))
    ruled = shouted >= 2 or bullets >= 5
    return laid_out and addressed and ruled


def is_persona(text: str) -> bool:
    """A prompt that tells the agent who it is and how it must behave (a role-play or persona
    prompt): it opens by naming the agent's identity and lays down rules, or it is a long
    instruction document whose rules address the agent's conduct."""
    text = text or ""
    lines = _lines(text)
    if not lines:
        return False
    body = "\n".join(line for line in lines if not _HEADING.match(line)) or text
    shouted = sum(1 for line in lines if _SHOUTED.search(line) and sum(c.islower() for c in line) > 10)
    bullets = sum(1 for line in lines if _BULLET.match(line))
    opens = _IDENTITY.match(body) or any(_IDENTITY.match(line) for line in lines[:3])
    if opens and (len(text) >= 300 or shouted >= 1 or bullets >= 3):
        return True
    # Rules first, then more rules: a text whose opening lines are shouted rules.
    opening = lines[:3]
    if len(text) >= 400 and sum(1 for line in opening if _SHOUTED.search(line)) >= 2 and shouted >= 3:
        return True
    # A long document of rules for the agent is a persona when, somewhere near its top, it
    # tells the agent who it is; rules alone may be the user's own long request.
    return is_instructions(text) and any(_IDENTITY.match(line) for line in lines[:40])


_FENCE = re.compile(r"^\s*(```|~~~)")


def template_input(text: str) -> str | None:
    """The user's words in a prompt template the agent expanded before recording it (a Codex
    or Gemini custom prompt): a long document of rules that opens with a heading and, right
    under it, a fenced block holding what the user typed. None when the text is not that."""
    lines = text.splitlines()
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(text) < 600 or not filled or not _HEADING.match(lines[filled[0]]):
        return None
    opening = [i for i in filled[1:4] if _FENCE.match(lines[i])]
    if not opening:
        return None
    start = opening[0]
    end = next((i for i in range(start + 1, len(lines)) if _FENCE.match(lines[i])), None)
    if end is None:
        return None
    rest = lines[end + 1 :]
    headings = sum(1 for line in lines if _HEADING.match(line))
    bullets = sum(1 for line in rest if _BULLET.match(line))
    shouted = sum(1 for line in rest if _SHOUTED.search(line) and sum(c.islower() for c in line) > 10)
    if headings < 2 or not (bullets >= 5 or shouted >= 2):
        return None
    words = "\n".join(lines[start + 1 : end]).strip()
    return words if len(words) <= 1500 else None


def classify(text: str) -> PromptKind:
    """What a single user turn is, on its own (see `classify_turns` for a whole session)."""
    text = text or ""
    command = slash_command(text)
    if command and _COMMAND_NAME.search(text):
        return PromptKind(COMMAND, command[0], command[1])
    if _META_PROMPT.match(text) or _RECORD.match(text):
        return PromptKind(META)
    if command:
        return PromptKind(COMMAND, command[0], command[1])
    if is_persona(text):
        return PromptKind(PERSONA)
    typed = template_input(text)
    if typed is not None:
        return PromptKind(EXPANSION, words=typed)
    return PromptKind(USER, words=text.strip())


def classify_turns(
    texts: Sequence[str], times: Sequence[float] | None = None, after_work: Sequence[bool] | None = None
) -> list[PromptKind]:
    """What each user turn of a session is, in order. The turn right after a slash command's
    record is its expansion when it came at once (within `EXPANSION_SECONDS`, when `times` are
    given) or reads as an instruction document, and never when the agent had made a call or
    answered in between (`after_work`, when given): the user's reply to what the command did."""
    out: list[PromptKind] = []
    pending = ""  # the command whose expansion may come next
    for i, text in enumerate(texts):
        kind = classify(text)
        if after_work is not None and i < len(after_work) and after_work[i]:
            pending = ""
        if pending and kind.kind in (USER, PERSONA):
            at_once = times is not None and i > 0 and 0 <= times[i] - times[i - 1] <= EXPANSION_SECONDS
            if at_once or kind.kind == PERSONA or is_instructions(text) or _laid_out(text):
                kind = PromptKind(EXPANSION, pending)
        pending = kind.command if kind.kind == COMMAND and _COMMAND_NAME.search(text) else ""
        out.append(kind)
    return out


#: How soon after a command's record its expansion is written (the same instant, in practice).
EXPANSION_SECONDS = 3.0


def users_words(texts: Sequence[str], times: Sequence[float] | None = None) -> list[str]:
    """The user's own words of each turn ("" for a persona, an expansion, plumbing)."""
    return [k.words for k in classify_turns(texts, times)]


# Pasted material ------------------------------------------------------------------------------
#
# A user turn may carry text the user pasted rather than wrote: a terminal screen (an agent's
# own screen, with its banner, boxes and turn markers), or a long document (an earlier
# session's summary, a log). Recognised by shape: glyphs a person does not type at the start of
# a line, box and block characters, Markdown layout far longer than a typed request.

# A line drawn by a terminal program: it opens with a symbol glyph (`●`, `⎿`, `✦`, U+276F,
# U+203A, `│`), from the technical, box-drawing, block, geometric, dingbat blocks (not arrows or maths,
# which people type as bullets).
_GLYPH_LINE = re.compile(r"^\s*[\u2300-\u23ff\u2500-\u27bf\u203a\u2022](?:\s|$)")
_BOX_CHARS = re.compile(r"[\u2500-\u259f]")
# A prompt line of a pasted transcript: the words someone typed at an agent's or a shell's prompt.
_PROMPT_LINE = re.compile(r"^\s*(?:>|\u276f|\u203a|\$)\s+(\S.*)$")
_CUT_MARK = re.compile(r"^\[\.\.\. [\d,]+ more characters cut \.\.\.\]$")
#: A turn this long, laid out as a document, is more than a typed request.
PASTED_DOCUMENT_CHARS = 1500
PASTED_DOCUMENT_LINES = 20


@dataclass(frozen=True)
class Pasted:
    """A user turn split into what the user wrote and what they pasted. `own`: the user's
    words around the paste ("" when none); `what`: the pasted material named in a few words,
    without an article ("terminal screen", "document of 40 lines headed “Summary”"; "" when
    nothing was pasted)."""

    own: str
    what: str = ""


def _terminal_line(line: str) -> bool:
    return bool(_GLYPH_LINE.match(line)) or len(_BOX_CHARS.findall(line)) >= 3


def _terminal_span(lines: list[str]) -> tuple[int, int] | None:
    """The first and last line of a pasted terminal screen, when the lines hold one: at least
    three lines drawn by a terminal program, or one drawn with box or block characters (a
    banner, a box) and another."""
    drawn = [i for i, line in enumerate(lines) if _terminal_line(line)]
    boxed = sum(1 for i in drawn if len(_BOX_CHARS.findall(lines[i])) >= 3)
    if len(drawn) < 3 and not (boxed and len(drawn) >= 2):
        return None
    if all(lines[i].lstrip().startswith("\u2022") for i in drawn):
        return None  # a list a person wrote with bullets
    start, end = drawn[0], drawn[-1]
    # The prompt typed in the pasted screen comes just before its first drawn line.
    while True:
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        if prev < 0 or not _PROMPT_LINE.match(lines[prev]):
            break
        start = prev
    # What the last drawn line prints goes on indented below it; the clipping mark ends the paste.
    while end + 1 < len(lines) and (
        not lines[end + 1].strip() or lines[end + 1][:1].isspace() or _CUT_MARK.match(lines[end + 1].strip())
    ):
        end += 1
    return start, end


def _document_span(lines: list[str], text: str) -> tuple[int, int] | None:
    """The first and last line of a long laid-out document (headings, lists, code) in the
    turn, when it is far longer than a typed request."""
    filled = [line for line in lines if line.strip()]
    if len(text) < PASTED_DOCUMENT_CHARS or len(filled) < PASTED_DOCUMENT_LINES:
        return None
    structured = [
        i for i, line in enumerate(lines) if _HEADING.match(line) or _BULLET.match(line) or _FENCE.match(line)
    ]
    headings = sum(1 for i in structured if _HEADING.match(lines[i]))
    bullets = sum(1 for i in structured if _BULLET.match(lines[i]))
    if headings < 2 and bullets < 5:
        return None
    start, end = structured[0], structured[-1]
    # The last item's paragraph runs on; the prose before the first and after it is the user's.
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return start, end


def _paragraph(lines: list[str]) -> str:
    return "\n".join(lines).strip()


def pasted(text: str) -> Pasted:
    """The user's own words of a turn and what it pasted (see `Pasted`): the text before and
    after a pasted terminal screen or long document is the user's; the paste is named, by the
    prompt typed in a pasted screen or the first heading of a pasted document."""
    text = text or ""
    lines = text.splitlines()
    span = _terminal_span(lines)
    if span is not None:
        start, end = span
        typed = next((m.group(1) for m in map(_PROMPT_LINE.match, lines[start : end + 1]) if m), "")
        what = "terminal screen" + (f" (its prompt: “{' '.join(typed.split())[:200]}”)" if typed else "")
    else:
        span = _document_span(lines, text)
        if span is None:
            return Pasted(text.strip())
        start, end = span
        body = [line for line in lines[start : end + 1] if line.strip()]
        heading = next((line for line in body if _HEADING.match(line) and not _FENCE.match(line)), "")
        title = re.sub(r"^\s*#+\s*|[*:]+\s*$|^\s*\*+", "", heading).strip()[:80]
        what = f"document of {len(body)} lines" + (f" headed “{title}”" if title else "")
    own = "\n\n".join(p for p in (_paragraph(lines[:start]), _paragraph(lines[end + 1 :])) if p)
    return Pasted(own, what)


# A word of prose: letters only (an apostrophe inside, punctuation after), not a number, a flag,
# an issue reference, a path or an identifier joined by `-`, `_`, `.` or `/`.
_PLAIN_WORD = re.compile(r"[(\"'“]?[^\W\d_]+(?:['\u2019][^\W\d_]+)?[.,;:!?)\"'”]*")


def in_words(text: str) -> bool:
    """Is a slash command's argument a request in words (`Build a template for ...`), not
    only identifiers, numbers and flags (`8371`, `--pr 8160`, `#12`, `src/app.py`)?"""
    plain = [t for t in (text or "").split() if _PLAIN_WORD.fullmatch(t)]
    # Languages written without spaces (Japanese, Chinese) put a request in one "word".
    return len(plain) >= 2 or any(len(t) >= 2 and not t.isascii() for t in plain)
