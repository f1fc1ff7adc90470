"""Distillation with an LLM, opt-in: the model reads the session's digest, what the evidence
already found and the closest existing pages, and proposes new pages and additions to
existing ones. It never deletes, and it flags a contradiction instead of resolving it.

```toml
[distill]
llm = "claude"      # or "codex", "gemini" (the agent CLI you are signed in to), or "api"
                    # (the provider of [consolidate]); none by default
budget = 6000       # tokens per session, prompt and answer together
timeout = 120       # seconds; a slower answer is given up
model = ""          # optional, passed to the CLI
program = ""        # optional: the CLI's path, when it is not on PATH as its name
```

Whatever goes wrong (no answer in time, a refusal, an answer that is not the JSON asked for,
the budget spent) the evidence's pages are written as they are, and the log says why. The
tokens spent are logged and kept per session, so consolidating a session again never spends
more than its budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from wiki_memory.config import Project, Settings, load_settings, template
from wiki_memory.config.settings import DistillSettings
from wiki_memory.consolidate.distill import agent_cli
from wiki_memory.consolidate.distill.candidate import Candidate
from wiki_memory.consolidate.extract import Summary, clean
from wiki_memory.consolidate.llm import LLMError, _json_object, complete_counted, digest, llm_config
from wiki_memory.consolidate.state import log, state_dir
from wiki_memory.errors import WikiMemoryError

PROPOSED_TYPES = ("decision", "gotcha", "procedure", "preference", "fact")
DEFAULT_BUDGET = DistillSettings.budget
MIN_CALL = 1000  # tokens: less than this left of a session's budget, and no call is made
CHARS_PER_TOKEN = 3.5


@dataclass(frozen=True)
class DistillLLM:
    backend: str  # claude | codex | gemini | api
    budget: int = DEFAULT_BUDGET
    timeout: float = 120.0
    model: str | None = None
    program: str | None = None

    @property
    def label(self) -> str:
        return self.backend + (f":{self.model}" if self.model else "")


@dataclass(frozen=True)
class LLMOutcome:
    candidates: list[Candidate]
    mode: str
    tokens: int = 0
    flags: list[tuple[tuple[str, ...], str]] = field(default_factory=list)


def distill_config(settings: Settings) -> DistillLLM | None:
    """`[distill] llm`, or None when no LLM is configured; a clear error when misconfigured."""
    section = settings.distill
    backend = section.llm.strip().lower()
    if not backend or backend in ("none", "off", "false"):
        return None
    if backend not in ("claude", "codex", "gemini", "api"):
        raise WikiMemoryError(f"[distill] llm = {backend!r}: use claude, codex, gemini, api or none")
    settings.check("distill", ("budget", "timeout", "model", "program"))
    model = section.model.strip() or None
    program = section.program.strip() or None
    return DistillLLM(backend, max(0, section.budget), section.timeout, model, program)


def _spent_path(project: Project, session_id: str) -> Any:

    return state_dir(project) / f"{session_id}.distill.json"


def spent(project: Project, session_id: str) -> int:
    try:
        data = json.loads(_spent_path(project, session_id).read_text(encoding="utf-8"))
        return int(data.get("tokens") or 0)
    except (OSError, ValueError, AttributeError, TypeError):
        return 0


def _add_spent(project: Project, session_id: str, tokens: int) -> None:
    path = _spent_path(project, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"tokens": spent(project, session_id) + tokens}), encoding="utf-8")


def prompt_for(
    summary: Summary, candidates: Sequence[Candidate], nearest: Sequence[tuple[str, str]], chars: int
) -> str:

    found = "\n".join(f"- [{c.type}] {c.title}" for c in candidates) or "(none)"
    pages = "\n".join(f"- {path}: {clean(text, 300)}" for path, text in nearest) or "(none)"
    head = template("distill-user.md").replace("{{found}}", found).replace("{{pages}}", pages)
    room = max(1000, chars - len(head))
    return head.replace("{{digest}}", digest(summary, room))


def parse_answer(text: str, summary: Summary, nearest_paths: Sequence[str]) -> tuple[list[Candidate], list[Any]]:
    """(proposed candidates, flagged contradictions) from the model's JSON, or LLMError."""
    from wiki_memory.capture.redact import redact_with_config as redact  # deferred: patterns compile on import

    data = _json_object(text)
    pages, flags = data.get("pages", []), data.get("contradictions", [])
    if not isinstance(pages, list) or not isinstance(flags, list):
        raise LLMError("'pages' and 'contradictions' must be lists")
    s = summary.session
    source = f"{s.agent}:{s.short_id}"
    out: list[Candidate] = []
    for raw in pages[:5]:
        if not isinstance(raw, dict):
            raise LLMError("each of 'pages' must be an object")
        kind, title, body = raw.get("type"), raw.get("title"), raw.get("body")
        update = raw.get("update")
        if update is not None and update not in nearest_paths:
            continue  # only the pages it was shown may be updated
        if kind not in PROPOSED_TYPES or not isinstance(title, str) or not isinstance(body, str) or not body.strip():
            continue
        title = clean(title, 120)
        out.append(
            Candidate(
                kind="proposal",
                type=str(kind),
                title=title,
                key=title.lower(),
                source=source,
                date=s.date,
                facts={"body": redact(body.strip()[:4000]), "update": update},
                reason="proposed by the model" + (f" as an addition to {update}" if update else ""),
                tags=("distilled", "llm-proposed"),
            )
        )
    found_flags = []
    for raw in flags[:5]:
        if isinstance(raw, dict) and isinstance(raw.get("pages"), list):
            paths = tuple(p for p in raw["pages"] if isinstance(p, str) and p in nearest_paths)
            if len(paths) >= 2:
                found_flags.append((paths, clean(str(raw.get("why") or ""), 300)))
    return out, found_flags


def _complete(config: DistillLLM, system: str, prompt: str, max_tokens: int) -> tuple[str, int]:
    if config.backend == "api":
        api = llm_config(load_settings())
        if api is None:
            raise LLMError("[distill] llm = api needs [consolidate] provider and model")
        api = replace(api, max_tokens=max_tokens, timeout=min(api.timeout, config.timeout))
        return complete_counted(api, system, prompt)

    return agent_cli.run(
        config.backend, f"{system}\n\n{prompt}", program=config.program, model=config.model, timeout=config.timeout
    )


def distill_with_llm(
    project: Project,
    summary: Summary,
    candidates: list[Candidate],
    nearest: Sequence[tuple[str, str]],
    *,
    llm: bool | None = None,
) -> LLMOutcome | None:
    """The evidence's candidates with the model's proposals added; None when no LLM is
    configured (or `llm` is False). Never raises for the model's failures."""

    if llm is False:
        return None
    try:
        config = distill_config(load_settings())
    except WikiMemoryError as e:
        log(f"[distill] is misconfigured ({e}); distilling from the evidence only")
        return LLMOutcome(candidates, "evidence (llm misconfigured)")
    if config is None:
        return None
    session_id = summary.session.session_id
    left = config.budget - spent(project, session_id)
    answer_tokens = min(1500, max(200, left // 3))
    if left < MIN_CALL:
        return LLMOutcome(candidates, f"evidence (llm budget of {config.budget} tokens spent)")
    prompt = prompt_for(summary, candidates, nearest, int((left - answer_tokens) * CHARS_PER_TOKEN))
    tokens = 0
    try:
        text, tokens = _complete(config, template("distill-system.md"), prompt, answer_tokens)
        tokens = tokens or int((len(prompt) + len(text)) / CHARS_PER_TOKEN)
        proposals, flags = parse_answer(text, summary, [p for p, _ in nearest])
    except (LLMError, WikiMemoryError) as e:
        _add_spent(project, session_id, tokens)
        reason = re.sub(r"\s+", " ", str(e))[:200]
        log(f"session {session_id}: LLM distillation with {config.label} failed ({reason}); evidence only")
        return LLMOutcome(candidates, "evidence (llm failed)", tokens)
    _add_spent(project, session_id, tokens)
    log(f"session {session_id}: LLM distillation with {config.label}: {tokens} tokens, {len(proposals)} proposals")
    return LLMOutcome(candidates + proposals, f"llm:{config.label}", tokens, flags)
