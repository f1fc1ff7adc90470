"""Text from memory made safe to put inside the fence that marks it as reference data.

Every context built from memory (the SessionStart handoff, recall, the MCP `handoff` tool and
`resume` prompt) wraps pages' text in `<wiki-memory ...>` ... `</wiki-memory ...>`, worded as
facts, not instructions. Text that closes the fence early would make whatever follows it read
as instructions, so `fence_safe` defuses anything a model could take for our tag: not only
`</wiki-memory`, but every casing (`</WIKI-MEMORY HANDOFF>`), look-alike letters (a Cyrillic
e, a Greek o, fullwidth forms, digits for letters), other dashes or spaces or none between
the words, invisible characters (zero-width spaces, joiners, soft hyphens) anywhere in it, and
look-alikes of the bracket. The bracket of a match becomes `&lt;`. Control characters other
than newline and tab are dropped (a NUL made git show the page as binary).

The same goes for the markup of the agents we serve, which a model reads as a turn of the
conversation or as its host's own words rather than as memory: tags whose name holds a role
word (`</system-reminder>`, `<system>`, `<user_instructions>`, `<command-name>`,
`<start_of_turn>`, namespaced tags such as `<ns:invoke>`), special tokens (`<|im_start|>`,
`<|im_end|>`) and turn markers at the start of a line (`Human:`, `Assistant:`, `System:`,
which become `[quoted] Human:`). Other tags (`<b>`, `<div>`, `List<String>`) are left alone.

`inline` is what every renderer calls for a value it places on a line of an injected block
(a title, type, status, path, note, author, date, excerpt): the value made one line, cut to
a length and defused.

Standard library only: the hook path (SessionStart, recall) uses it.
"""

# ruff: noqa: RUF001 - the look-alike characters below are the point

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Characters a model may read as "<", "/", "-" or as a letter of "wiki memory", beyond what
# NFKD and case folding already map (fullwidth and small forms, accented letters).
_CONFUSABLE = {
    **dict.fromkeys("‹〈⟨〈˂ᐸ❮⧼≺⋖", "<"),
    **dict.fromkeys("∕⁄⧸╱⟋", "/"),
    **dict.fromkeys("‐‑‒–—―−⁃˗➖﹘", "-"),
    **dict.fromkeys("ԝѡᴡω", "w"),
    **dict.fromkeys("іıɩιӏ1ǀ|", "i"),
    **dict.fromkeys("кκᴋĸ", "k"),
    **dict.fromkeys("мᴍϻ", "m"),
    **dict.fromkeys("еҽ℮ɛε3", "e"),
    **dict.fromkeys("оοσᴏ0߀০", "o"),
    **dict.fromkeys("гᴦʀ", "r"),
    **dict.fromkeys("уүγʏ", "y"),
}
_ASCII_LOOKALIKES = str.maketrans({ch: to for ch, to in _CONFUSABLE.items() if ch.isascii()})
_LESS_THAN = frozenset({"<", "＜", "﹤", *(ch for ch, to in _CONFUSABLE.items() if to == "<")})
# Patterns, compiled by `re` on first use: most text has no "<" and never needs them.
_TAG = r"<\s*/?\s*wiki[\s_.\-]*memory"
# A tag (opening or closing) and its name; the name is judged by its words (`_ROLE_WORDS`).
_ANY_TAG = r"<\s*(?:/\s*)?!?([a-z][a-z0-9_.:\-]*)"
# Words that make a tag the markup of an agent or of a chat format, not of a document.
_ROLE_WORDS = frozenset(
    """system sys user assistant human model developer instruction instructions reminder command
    tool tools function functions turn im inst prompt invoke parameter antml message messages
    environment stdout stderr result results thinking""".split()
)
# A chat format's special token: `<|im_start|>`, `<|endoftext|>` (and fullwidth forms).
_SPECIAL = re.compile(r"[<\uff1c\ufe64\u2039\u3008\u27e8]\s*[|\uff5c]")
# A turn marker at the start of a line (after any indentation or quoting).
_TURN = re.compile(r"(?im)^([ \t>*\-]*)(human|assistant|system)(\s*[:\uff1a])")
# C0 and C1 controls and DEL, except tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _skeleton_of(ch: str) -> str:
    """What `ch` reads as, for matching: "" for what is invisible, else its lowercase
    base letters with look-alikes mapped."""
    if ch.isascii():
        return _CONFUSABLE.get(ch, ch.lower()) if ch.isalnum() or ch in "|<" else ch
    import unicodedata  # deferred: hook path: unicodedata only for text that is not ASCII

    category = unicodedata.category(ch)
    if category in ("Cf", "Mn", "Me") or ch == "\u00ad":
        return ""  # zero-width spaces and joiners, soft hyphens, combining marks, variation selectors
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    out = []
    for part in unicodedata.normalize("NFKD", ch):
        if unicodedata.combining(part):
            continue
        part = part.casefold()
        out.append(_CONFUSABLE.get(part, part))
    return "".join(out)


def inline(value: object, limit: int = 200) -> str:
    """`value` (any front-matter value: a string, a date, a list) as one line of at most
    `limit` characters, defused like `fence_safe`: what every renderer places on a line of
    a block handed to an agent."""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    text = " ".join(_CONTROL.sub(" ", "" if value is None else str(value)).split())
    if len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return fence_safe(text)


def fence_safe(text: str) -> str:
    """`text` with every possible opening or closing of our fence, and the markup of the
    agents we serve, defused (see the module docstring), and control characters other than
    newline and tab dropped."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n"))
    if ":" in text or "\uff1a" in text:
        text = _TURN.sub(r"\1[quoted] \2\3", text)
    if text.isascii():
        if "<" not in text:
            return text
        brackets = _brackets(text.lower().translate(_ASCII_LOOKALIKES), range(len(text)))
        brackets |= {m.start() for m in _SPECIAL.finditer(text)}
        return "".join("&lt;" if i in brackets else ch for i, ch in enumerate(text)) if brackets else text
    if not any(ch in _LESS_THAN or (not ch.isascii() and _skeleton_of(ch) == "<") for ch in text):
        return text
    skeleton: list[str] = []
    owner: list[int] = []  # the index in `text` of each character of the skeleton
    for i, ch in enumerate(text):
        for piece in _skeleton_of(ch):
            skeleton.append(piece)
            owner.append(i)
    brackets = _brackets("".join(skeleton), owner)
    brackets |= {m.start() for m in _SPECIAL.finditer(text)}
    if not brackets:
        return text
    return "".join("&lt;" if i in brackets else ch for i, ch in enumerate(text))


def _brackets(skeleton: str, owner: Sequence[int]) -> set[int]:
    """The indexes (in the text, through `owner`) of the brackets that open our fence's
    tag, an agent's markup or a special token, in the lowercase `skeleton` of a text."""
    found = {owner[m.start()] for m in re.finditer(_TAG, skeleton)}
    for m in re.finditer(_ANY_TAG, skeleton):
        name = m.group(1)
        if ":" in name.strip(":") or not _ROLE_WORDS.isdisjoint(re.split(r"[_.:\-]+", name)):
            found.add(owner[m.start()])
    return found
