"""Prompts that get nothing, whatever the memory holds (acknowledgements and steering), and
general questions, which need more than a shared word to be about this project.

"ok", "continue", "yes do it", "thanks, that worked", "lgtm, merge it": the agent is mid-task
and the user only lets it go on; a page handed now would be noise. The test is on the
words, not the length: "fix it" is steering, "fix the flaky login test" is a task.
"""

from __future__ import annotations

import re

# Words that, alone or together, only steer or acknowledge.
CHATTER = frozenset(
    """
    hi hey hello morning ok okay k kk okey oki yes yep yeah yup ya sure fine right alright good great nice cool perfect
    excellent awesome amazing sweet lovely thanks thank thx ty cheers done got it that this works
    worked working go ahead on continue keep going carry proceed do please pls plz just now next then
    and also again more same way lgtm ship merge looks look sounds seems like no nope nah stop wait
    hold hmm hm ah oh wow well so sorry my bad agreed agree correct exactly indeed absolutely
    definitely totally yes! y n retry try run it's its is was all a the to with for me you that's
    makes sense understood fair enough let's lets cool good job well done thank you very much
    much lot alot again go for it please do that those them both one other first second last
    fix commit push resume
    """.split()
)

_WORD = re.compile(r"[^\W_]+|[!?]")


def is_chatter(prompt: str) -> bool:
    """True when the prompt only acknowledges or steers (see the module docstring)."""
    words = [w for w in _WORD.findall(prompt.lower()) if w not in "!?"]
    if not words:
        return True
    if len(words) > 8:
        return False
    return all(w in CHATTER for w in words)


# A question about programming in general: "X vs Y?", "what's the difference between ...",
# "what is a CRDT", "what does X do / mean / stand for", "how does X work", "explain ...".
_GENERAL = (
    r"\b(?:vs\.?|versus)\s|\bdifference(?:s)? between\b|^\s*(?:what|how)\s+(?:is|are|does|do)\s+(?:a|an)\s"
    r"|^\s*what(?:'s|\s+is|\s+are|\s+does|\s+do)\b.*\b(?:mean|do|stand for)\s*\??\s*$"
    r"|^\s*how\s+(?:does|do)\s+.+\s+work\b|^\s*(?:can you\s+|please\s+)?explain\b|\bin (?:general|simple terms)\b"
    r"|^\s*what(?:'s|\s+is)\s+(?:a|an|the)\s+(?:good|best)\b|\bbest (?:way|practices?)\b"
)
# ... unless it speaks of this project: "we", "our", "here", "this repo".
_OURS = r"\b(?:we|we'?re|we'?ve|our|ours|us|here|this (?:repo|project|codebase|service|app))\b"


def is_general_question(prompt: str) -> bool:
    """True for a question about programming in general rather than this project (see above)."""
    head = prompt.strip()[:300]
    # Patterns, not compiled at import: `re` compiles them on first use, so a hook that
    # never asks (an acknowledgement, the helper's answer) does not pay for them.
    return bool(re.search(_GENERAL, head, re.IGNORECASE)) and not re.search(_OURS, head, re.IGNORECASE)
