"""The extractive summary's lines as its steps find them (done, failed, open, stories), each
with the recorded events it came from. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wiki_memory.consolidate.session import Answer, Prompt, Step, step_ref


@dataclass
class Findings:
    """The summary's lines, in the order the steps of `summarize` find them."""

    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)
    stories: list[str] = field(default_factory=list)
    refs: dict[str, list[str]] = field(default_factory=dict)  # line -> the events it came from

    def add(self, section: str, line: str, *evidence: Step | Prompt | Answer | str) -> None:
        """Add `line` to `section` (done, failed, open, stories), with the events it came from."""
        getattr(self, section).append(line)
        refs = self.refs.setdefault(line, [])
        for item in evidence:
            ref = item if isinstance(item, str) else step_ref(item) if isinstance(item, Step) else item.ref
            if ref and ref not in refs:
                refs.append(ref)
