"""Optional LLM consolidation: the same two pages, better worded, and proposed durable pages.

`[consolidate]` in `config.toml` names the provider:

```toml
[consolidate]
provider = "openai"          # or "openai-compatible": chat completions of OpenAI, Ollama, LM Studio, vLLM
model = "qwen2.5-coder:7b"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "OPENAI_API_KEY"  # the environment variable holding the key (optional for local servers)
timeout = 60
```

or `provider = "anthropic"` (Messages API; `base_url` defaults to https://api.anthropic.com,
`api_key_env` to ANTHROPIC_API_KEY). The model sees a redacted digest of the session (the
extractive summary and a timeline), never the raw transcript; any failure (no answer in
time, a refusal, output that is not the JSON asked for) is an `LLMError`, and the caller
falls back to the extractive pages.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wiki_memory.capture.redact import redact_with_config as redact
from wiki_memory.config import Settings, template
from wiki_memory.consolidate.extract import Summary, clean, error_line
from wiki_memory.consolidate.render import HandoffContent, when
from wiki_memory.errors import WikiMemoryError

PROVIDERS = ("openai", "anthropic")
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
PROPOSAL_TYPES = ("decision", "gotcha", "procedure")


class LLMError(Exception):
    """The LLM could not consolidate this session (the caller falls back)."""


@dataclass(frozen=True)
class LLMConfig:
    provider: str
    model: str
    base_url: str
    api_key_env: str | None
    timeout: float = 60.0
    max_input_chars: int = 24000
    max_tokens: int = 2000
    json_mode: bool = True

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


def llm_config(settings: Settings) -> LLMConfig | None:
    """The configured provider, None when there is none; a clear error when it is misconfigured."""
    section = settings.consolidate
    provider = section.provider.strip().lower()
    # The name `[index] provider` uses for the same API (any OpenAI-compatible base URL).
    provider = "openai" if provider == "openai-compatible" else provider
    if not provider or provider in ("none", "off", "extractive") or not section.enabled:
        return None
    if provider not in PROVIDERS:
        raise WikiMemoryError(f"[consolidate] provider = {provider!r}: use one of {', '.join(PROVIDERS)}, or none")
    model = section.model.strip()
    if not model:
        raise WikiMemoryError(f'[consolidate] provider = {provider!r} needs a model (model = "...")')
    settings.check("consolidate", ("timeout", "max_input_chars", "max_tokens", "base_url", "api_key_env"))
    key_env = DEFAULT_KEYS[provider] if section.api_key_env is None else section.api_key_env
    return LLMConfig(
        provider,
        model,
        (section.base_url or DEFAULT_URLS[provider]).rstrip("/"),
        key_env or None,
        section.timeout,
        section.max_input_chars,
        section.max_tokens,
        section.json_mode,
    )


@dataclass(frozen=True)
class Proposal:
    type: str
    title: str
    body: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class LLMResult:
    content: HandoffContent
    title: str
    summary: str
    proposals: tuple[Proposal, ...] = field(default_factory=tuple)


# The digest the model reads ------------------------------------------------------------------------


def digest(summary: Summary, limit: int = 24000) -> str:
    """The session in a few thousand characters: facts first, then a timeline, all redacted."""
    s = summary.session
    head = [
        f"Session: {s.agent} {s.short_id}"
        + (f", model {s.model}" if s.model else "")
        + (f", branch {s.branch}" if s.branch else ""),
        f"Time: {when(s.start)} to {when(s.end)}" + ("" if s.ended else " (no session end recorded)"),
        f"Directory: {s.cwd or 'unknown'}",
        "",
        "First request (the goal):",
        clean(summary.goal, 3000) or "(none)",
    ]
    if summary.requests:
        head += ["", "Later requests:"] + [f"- {clean(r, 600)}" for r in summary.requests]
    if s.plan:
        head += ["", "Plan at the end:"] + [f"- [{i.status}] {clean(i.text, 200)}" for i in s.plan]
    facts = ["", "Extracted facts (from the record; keep them true):"]
    for label, items in (
        ("Done", summary.done),
        ("Failed or abandoned", summary.failed),
        ("Open", summary.open),
        ("Files touched", summary.files),
        ("Memory pages", summary.memory),
    ):
        if items:
            facts.append(f"{label}:")
            facts += [f"- {item}" for item in items]
    timeline = ["", "Timeline (oldest first):"]
    events: list[tuple[str, str]] = [(p.time, f"user: {clean(p.text, 500)}") for p in s.real_prompts]
    for step in s.steps:
        outcome = "ok"
        if step.rejected:
            outcome = "declined by the user"
        elif step.no_result:
            outcome = "no result"
        elif step.error:
            code = f" (exit {step.exit_code})" if step.exit_code is not None else ""
            outcome = f"failed{code}: {error_line(step.output)}"
        files = f" [{', '.join(step.files)}]" if step.files else ""
        events.append((step.time, f"{step.tool} {clean(step.input, 300)}{files} -> {outcome}"))
    events += [(a.time, f"assistant: {clean(a.text, 1200)}") for a in s.answers]
    events.sort(key=lambda e: e[0])
    timeline += [f"[{t[11:19] if len(t) >= 19 else t}] {text}" for t, text in events]
    text = "\n".join(head + facts)
    budget = max(2000, limit - len(text) - 200)
    body = "\n".join(timeline)
    if len(body) > budget:
        keep = budget // 2
        body = (
            body[:keep] + f"\n[... {len(body) - 2 * keep:,} characters of the timeline left out ...]\n" + body[-keep:]
        )
    return redact(text + "\n" + body)


# Talking to the providers -------------------------------------------------------------------------


def _post(url: str, payload: Mapping[str, Any], headers: Mapping[str, str], timeout: float) -> Any:
    data = json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"content-type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as e:
        detail = e.read()[:300].decode("utf-8", "replace") if e.fp else ""
        raise LLMError(f"HTTP {e.code} from {url}: {' '.join(detail.split())}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
        reason = getattr(e, "reason", e)
        if isinstance(reason, (socket.timeout, TimeoutError)) or "timed out" in str(reason):
            raise LLMError(f"no answer from {url} within {timeout:g} s") from None
        raise LLMError(f"cannot reach {url}: {reason}") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise LLMError(f"{url} answered with something that is not JSON") from None


def complete(config: LLMConfig, system: str, user: str) -> str:
    """The model's text answer to one request."""
    return complete_counted(config, system, user)[0]


def _tokens(usage: Any, *keys: str) -> int:
    if not isinstance(usage, dict):
        return 0
    return sum(int(usage.get(k) or 0) for k in keys if isinstance(usage.get(k), int))


def complete_counted(config: LLMConfig, system: str, user: str) -> tuple[str, int]:
    """The model's text answer to one request, and the tokens it cost (0 when not said)."""
    key = os.environ.get(config.api_key_env or "") if config.api_key_env else None
    if config.provider == "anthropic":
        if not key:
            raise LLMError(f"the environment variable {config.api_key_env} (the API key) is not set")
        data = _post(
            f"{config.base_url}/v1/messages",
            {
                "model": config.model,
                "max_tokens": config.max_tokens,
                "system": system,
                "messages": [{"role": "user", "content": user}],
                "temperature": 0.2,
            },
            {"x-api-key": key, "anthropic-version": "2023-06-01"},
            config.timeout,
        )
        if not isinstance(data, dict):
            raise LLMError("the Messages API answer is not an object")
        if data.get("type") == "error":
            raise LLMError(f"the model returned an error: {data.get('error')}")
        if data.get("stop_reason") == "refusal":
            raise LLMError("the model refused")
        texts = [
            b.get("text", "") for b in data.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"
        ]
        if not texts:
            raise LLMError("the model's answer has no text")
        return "".join(texts), _tokens(data.get("usage"), "input_tokens", "output_tokens")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    payload: dict[str, Any] = {
        "model": config.model,
        "temperature": 0.2,
        "max_tokens": config.max_tokens,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if config.json_mode:
        payload["response_format"] = {"type": "json_object"}
    data = _post(f"{config.base_url}/chat/completions", payload, headers, config.timeout)
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("the chat completion has no choices[0].message") from None
    if message.get("refusal") or choice.get("finish_reason") == "content_filter":
        raise LLMError(f"the model refused: {message.get('refusal') or 'content filter'}")
    content = message.get("content")
    if isinstance(content, list):  # some servers answer in content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        raise LLMError("the model's answer is empty")
    return content, _tokens(data.get("usage"), "total_tokens")


# The answer ------------------------------------------------------------------------------------------


def _json_object(text: str) -> dict[str, Any]:
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise LLMError("the model's answer holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except ValueError as e:
        raise LLMError(f"the model's JSON does not parse: {e}") from None
    if not isinstance(data, dict):
        raise LLMError("the model's JSON is not an object")
    return data


def _strings(data: Mapping[str, Any], key: str, limit: int = 15, width: int = 600) -> tuple[str, ...]:
    value = data.get(key, [])
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LLMError(f"{key!r} must be a list of strings")
    return tuple(clean(v, width) for v in value if v.strip())[:limit]


def parse_answer(text: str, summary: Summary) -> LLMResult:
    """The model's JSON as a result, or LLMError when it is not what was asked for."""
    data = _json_object(text)
    goal = data.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise LLMError("'goal' is missing or not a string")
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    brief = data.get("summary") if isinstance(data.get("summary"), str) else ""
    proposals: list[Proposal] = []
    raw_pages = data.get("pages") or []
    if not isinstance(raw_pages, list):
        raise LLMError("'pages' must be a list")
    for raw in raw_pages[:5]:
        if not isinstance(raw, dict):
            raise LLMError("each of 'pages' must be an object")
        kind, page_title, body = raw.get("type"), raw.get("title"), raw.get("body")
        if (
            kind not in PROPOSAL_TYPES
            or not isinstance(page_title, str)
            or not page_title.strip()
            or not isinstance(body, str)
            or not body.strip()
        ):
            continue  # one unusable proposal does not spoil the handoff
        tags = tuple(str(t) for t in raw.get("tags") or () if isinstance(t, (str, int)))[:6]
        proposals.append(Proposal(kind, clean(page_title, 120), redact(body.strip()[:6000]), tags))
    content = HandoffContent(
        goal=redact(clean(goal, 1000)),
        done=tuple(map(redact, _strings(data, "done"))),
        failed=tuple(map(redact, _strings(data, "failed"))),
        open=tuple(map(redact, _strings(data, "open"))),
        files=summary.files,
        requests=(),
        related=summary.memory,
    )
    return LLMResult(content, clean(str(title or ""), 100), redact(clean(str(brief or ""), 2000)), tuple(proposals))


def consolidate(config: LLMConfig, summary: Summary) -> LLMResult:
    """Ask the model for the handoff and proposals of one session."""
    system = template("consolidate-system.md")
    user = template("consolidate-user.md").replace("{{digest}}", digest(summary, config.max_input_chars))
    return parse_answer(complete(config, system, user), summary)
