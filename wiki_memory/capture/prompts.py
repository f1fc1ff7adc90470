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


def classify_turns(texts: Sequence[str], times: Sequence[float] | None = None) -> list[PromptKind]:
    """What each user turn of a session is, in order. The turn right after a slash command's
    record is its expansion when it came at once (within `EXPANSION_SECONDS`, when `times` are
    given) or reads as an instruction document."""
    out: list[PromptKind] = []
    pending = ""  # the command whose expansion may come next
    for i, text in enumerate(texts):
        kind = classify(text)
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
