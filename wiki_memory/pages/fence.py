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

Standard library only: the hook path (SessionStart, recall) uses it.
"""

# ruff: noqa: RUF001 - the look-alike characters below are the point

from __future__ import annotations

import re

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
_LESS_THAN = frozenset({"<", "＜", "﹤", *(ch for ch, to in _CONFUSABLE.items() if to == "<")})
# Patterns, compiled by `re` on first use: most text has no "<" and never needs them.
_TAG = r"<\s*/?\s*wiki[\s_.\-]*memory"
_ASCII_TAG = r"(?i)<\s*/?\s*w[i1|]k[i1|][\s_.\-]*m[e3]m[o0]ry"
# C0 and C1 controls and DEL, except tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _skeleton_of(ch: str) -> str:
    """What `ch` reads as, for matching: "" for what is invisible, else its lowercase
    base letters with look-alikes mapped."""
    if ch.isascii():
        return _CONFUSABLE.get(ch, ch.lower()) if ch.isalnum() or ch in "|<" else ch
    import unicodedata  # here: only text that is not ASCII needs it, and the hook path reads this

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


def fence_safe(text: str) -> str:
    """`text` with every possible opening or closing of our fence defused (see the module
    docstring) and control characters other than newline and tab dropped."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n"))
    if text.isascii():
        if "<" not in text:
            return text
        return re.sub(_ASCII_TAG, lambda m: "&lt;" + m.group(0)[1:], text)
    if not any(ch in _LESS_THAN or (not ch.isascii() and _skeleton_of(ch) == "<") for ch in text):
        return text
    skeleton: list[str] = []
    owner: list[int] = []  # the index in `text` of each character of the skeleton
    for i, ch in enumerate(text):
        for piece in _skeleton_of(ch):
            skeleton.append(piece)
            owner.append(i)
    brackets = {owner[m.start()] for m in re.finditer(_TAG, "".join(skeleton))}
    if not brackets:
        return text
    return "".join("&lt;" if i in brackets else ch for i, ch in enumerate(text))
