"""The `[recall]` section of `config.toml`, and `WIKI_MEMORY_RECALL=off` for one session.

    [recall]
    enabled = true        # false: no recall at all
    prompts = true        # per-prompt recall (UserPromptSubmit, BeforeAgent)
    files = true          # per-file recall (PreToolUse on Read/Edit/Write, AfterTool)
    commands = true       # before a shell command that failed here before (PreToolUse on Bash)
    errors = true         # when an error a gotcha is about comes back (PostToolUseFailure, AfterTool)
    max_pages = 3
    max_chars = 1500
    meaning = true        # ask the warm helper how close the prompt's meaning is
    floor = 0.4           # the share of the prompt's words a page must hold ...
    meaning_floor = 0.35  # ... and how close in meaning it must be
    meaning_alone = 0.5   # this close in meaning, a page needs none of the words (1.01: never)
    words_floor = 0.6     # the share it must hold when meaning is not at hand
    question_floor = 0.65 # how close a general question must be ("X vs Y?", "what is a ...")
    relative = 0.85       # a page's evidence against the best page's
    helper_idle = 600     # seconds the helper stays up without a request

`WIKI_MEMORY_RECALL=off` turns recall off for the process (one session's hooks);
`WIKI_MEMORY_RECALL=words` keeps it on without the helper.

A value of the wrong type or out of range is replaced by its default (the hook must never
fail over a typo); `wiki-memory doctor`-style checks can read `problems`.
"""

from __future__ import annotations

import os
from collections import namedtuple

from wiki_memory import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

ENV = "WIKI_MEMORY_RECALL"
_OFF = frozenset({"0", "off", "false", "no", "none", "disabled"})

#: name -> (default, lowest, highest); bools have no range.
FIELDS: dict[str, tuple[Any, Any, Any]] = {
    "enabled": (True, None, None),
    "prompts": (True, None, None),
    "files": (True, None, None),
    "commands": (True, None, None),
    "errors": (True, None, None),
    "max_pages": (3, 1, 10),
    "max_chars": (1500, 200, 8000),
    "meaning": (True, None, None),
    "floor": (0.4, 0.0, 1.0),
    "meaning_floor": (0.35, -1.0, 1.0),
    "meaning_alone": (0.5, -1.0, 1.01),
    "words_floor": (0.6, 0.0, 1.0),
    "question_floor": (0.65, -1.0, 1.01),
    "relative": (0.85, 0.0, 1.0),
    "helper_idle": (600, 5, 86400),
}


# Why two spellings: the hook path does not import `typing` (see capture.observation); mypy
# reads the `typing.NamedTuple`, field for field the same as FIELDS.
if TYPE_CHECKING:
    from typing import NamedTuple

    class _Settings(NamedTuple):
        enabled: bool = True
        prompts: bool = True
        files: bool = True
        commands: bool = True
        errors: bool = True
        max_pages: int = 3
        max_chars: int = 1500
        meaning: bool = True
        floor: float = 0.4
        meaning_floor: float = 0.35
        meaning_alone: float = 0.5
        words_floor: float = 0.6
        question_floor: float = 0.65
        relative: float = 0.85
        helper_idle: int = 600

else:
    _Settings = namedtuple("RecallSettings", list(FIELDS), defaults=[v[0] for v in FIELDS.values()])


class RecallSettings(_Settings):
    """What recall may do, read once per hook call."""

    __slots__ = ()


def from_section(section: Mapping[str, Any], env: Mapping[str, str] | None = None) -> tuple[RecallSettings, list[str]]:
    """Settings from a `[recall]` table (and the environment), with a line per value replaced."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, (default, low, high) in FIELDS.items():
        if name not in section:
            continue
        value = section[name]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
        if ok:
            values[name] = float(value) if isinstance(default, float) else value
        else:
            problems.append(f"[recall] {name} = {value!r} is not valid; using {default!r}")
    for name in section:
        if name not in FIELDS:
            problems.append(f"[recall] has no setting {name!r} (known: {', '.join(FIELDS)})")
    switch = str(env.get(ENV, "")).strip().lower()
    if switch in _OFF:
        values["enabled"] = False
    elif switch == "words":
        values["meaning"] = False
    return RecallSettings(**values), problems


def load(env: Mapping[str, str] | None = None) -> RecallSettings:
    """The settings in force for this process (config.toml's `[recall]` and the environment)."""

    return from_section(config.load_settings(env).section("recall"), env)[0]
