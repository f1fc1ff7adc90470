"""Distillation: the durable knowledge in a finished session, found from its evidence alone
(no LLM, no tokens), as candidate pages.

- `evidence`: the session's commands (where they ran, what they needed, how they ended, what
  they were for), edits, prompts and answers.
- `procedures`: commands that test, type-check, lint, format, build or deploy, or run one of
  the project's own scripts, and worked.
- `gotchas`: a failure resolved in the session (edits, through a tool or the shell, then the
  same command passing; another command line doing the job; a command run first), and
  errors that recur (`signature`: the error as it reads on any run).
- `missing_programs`: a program the machine does not have or will not start, unresolved (a
  trait of the environment, a page at first sight).
- `statements`: preferences and decisions in the user's own words, in the user's language.
- `manifests`: what the project's manifests and configs the session read say (stack and
  versions, scripts and make targets, ports, CI workflows, git hooks, licence), one `fact`
  page per file.
- `versions`: what a program said of its own version (`op --version`), and the command that
  installed it, on one `fact` page.
- `tool_notes`: the Markdown the session read or wrote in the project's hidden folders (a spec
  kit's constitution, an agent's prompts and rules), on one `fact` page.
- `candidate`: what they propose; `pages`: a candidate rendered or merged into its page;
  `dedup`: which existing page a candidate duplicates, and contradictions.
- `llm`: the optional LLM pass (an API, or the agent CLI the user is signed in to).

Precision beats recall throughout: each distiller refuses what it cannot stand behind, and
says why (`Distilled.refused`). The memory layer (`Memory.distill`) writes the pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.distill.evidence import Evidence, gather
from wiki_memory.consolidate.distill.gotchas import gotchas
from wiki_memory.consolidate.distill.manifests import manifests
from wiki_memory.consolidate.distill.missing_programs import missing_programs
from wiki_memory.consolidate.distill.procedures import procedures
from wiki_memory.consolidate.distill.statements import statements
from wiki_memory.consolidate.distill.tool_notes import tool_notes
from wiki_memory.consolidate.distill.versions import versions
from wiki_memory.consolidate.extract import Summary


@dataclass(frozen=True)
class Distilled:
    """What a session yields: candidates, and what was refused with why."""

    evidence: Evidence
    candidates: tuple[Candidate, ...]
    refused: tuple[str, ...] = field(default_factory=tuple)


def distill(summary: Summary, root: str | None = None) -> Distilled:
    """The candidate pages of a summarised session (`root`: the project's code repository)."""

    evidence = gather(summary, root)
    found_gotchas, refused_gotchas = gotchas(evidence)
    missing = missing_programs(evidence)
    # Its failure has a page of its own now: no recurring-error page of the same line beside it.
    said = {c.facts["signature"] for c in missing}
    found_gotchas = [c for c in found_gotchas if c.facts.get("signature") not in said] + missing
    found_statements, refused_statements = statements(evidence)
    candidates = [*procedures(evidence), *found_gotchas, *found_statements, *manifests(evidence)]
    candidates += versions(evidence) + tool_notes(evidence)
    return Distilled(evidence, tuple(candidates), tuple(refused_gotchas + refused_statements))


__all__ = ["Candidate", "Distilled", "Evidence", "distill", "gather"]
