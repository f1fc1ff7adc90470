"""Patterns compiled on first use and kept for the life of the process.

A hook process pays for every pattern it compiles, so a rule's patterns are compiled only
the first time a text holds one of its hints (`Family.applies`); most texts compile nothing.
"""

from __future__ import annotations

import re

_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def _regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern, compiled on first use and kept for the life of the process."""
    key = (source, flags)
    pattern = _compiled.get(key)
    if pattern is None:
        pattern = _compiled[key] = re.compile(source, flags)
    return pattern
