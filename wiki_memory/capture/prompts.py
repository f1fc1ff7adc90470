"""Prompts an agent writes as a user turn that are its own plumbing, not the user's words.

The transcript readers skip them and consolidation does not take them for a goal.
"""

from __future__ import annotations

import re

_META_PROMPT = re.compile(
    r"^\s*(<command-(name|message|args)>|<local-command-std(out|err)>|Caveat: The messages below were generated"
    r"|<environment_context>|<user_instructions>|<user_shell_command>|# AGENTS\.md instructions"
    r"|<system-reminder>|\[Request interrupted by user|<turn_aborted>|<subagent_notification>)",
    re.IGNORECASE,
)
_SLASH_COMMAND = re.compile(r"^\s*/[a-z][\w:-]*(\s|$)", re.IGNORECASE)


def is_meta_prompt(text: str) -> bool:
    """True for text an agent injects as a user turn (command caveats, environment context)."""
    return bool(_META_PROMPT.match(text)) or bool(_SLASH_COMMAND.match(text) and len(text.split()) <= 3)
