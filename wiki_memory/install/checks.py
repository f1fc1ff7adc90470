"""`wiki-memory doctor`: the checks of wiki-memory's own parts (the home and store are
writable, the embedding model is found, hooks have not been failing), beside each agent's
checks (`Installer.doctor`) and the ones registered with `register_check`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from wiki_memory import config, logs
from wiki_memory.config import load_settings, model_cache_dir
from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import EXTRA_CHECKS, Check, Context

MODEL_NAME = "all-MiniLM-L6-v2"


def own_checks(ctx: Context) -> list[Check]:
    checks = [check_store(ctx), check_model(ctx), check_hook_log(ctx), check_settings(ctx)]
    for extra in EXTRA_CHECKS.get(None, []):
        checks.extend(extra(ctx, None))
    return checks


def check_store(ctx: Context) -> Check:
    """Can we write the home (journals, logs) and this project's wiki?"""
    home = config.home(ctx.env)
    try:
        project = config.resolve_project(ctx.root, ctx.env)
        for directory in (home / "logs", project.journal_dir):
            directory.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
                pass
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return Check("wiki-memory", "store writable", "fail", f"{home}: {e}")
    wiki = project.wiki
    if (wiki / ".git").is_dir() and not os.access(wiki / ".git", os.W_OK):
        return Check("wiki-memory", "store writable", "fail", f"{wiki} is not writable")
    state = "exists" if (wiki / ".git").is_dir() else "not created yet (`wiki-memory init`)"
    if project.warning:
        return Check("wiki-memory", "store writable", "warn", f"wiki {wiki} {state}; {project.warning}")
    return Check("wiki-memory", "store writable", "ok", f"home {home}; wiki {wiki} {state}")


def check_model(ctx: Context) -> Check:
    """Is the embedding model on disk (search falls back to words alone without it)?"""
    configured = ctx.env.get("WIKI_MEMORY_EMBED_MODEL_PATH")
    if configured:
        path = Path(configured).expanduser()
        if path.is_dir() and any(path.rglob("*.onnx")):
            return Check("wiki-memory", "embedding model", "ok", str(path))
        return Check(
            "wiki-memory", "embedding model", "fail", f"WIKI_MEMORY_EMBED_MODEL_PATH={configured} has no .onnx model"
        )
    caches = [
        model_cache_dir(ctx.env),
        str(Path(tempfile.gettempdir()) / "fastembed_cache"),
        str(ctx.home / ".cache" / "fastembed"),
    ]
    for cache in filter(None, caches):
        for candidate in Path(cache).glob(f"*{MODEL_NAME}*") if Path(cache).is_dir() else ():
            if any(candidate.rglob("*.onnx")):
                return Check("wiki-memory", "embedding model", "ok", str(candidate))
    return Check(
        "wiki-memory",
        "embedding model",
        "warn",
        f"{MODEL_NAME} not found locally: fastembed downloads it on first use (set "
        "WIKI_MEMORY_EMBED_MODEL_PATH on machines without network); until then search uses words only",
    )


def check_hook_log(ctx: Context) -> Check:
    """Have hooks been failing? (They never show it to the agent; the log does.)"""
    path = logs.path("hooks", ctx.env)
    if not path.exists():
        return Check("wiki-memory", "hook log", "ok", "no hook problems logged")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines:
        return Check("wiki-memory", "hook log", "ok", "no hook problems logged")
    return Check("wiki-memory", "hook log", "warn", f"{len(lines)} lines in {path}; last: {lines[-1][:300]}")


def check_settings(ctx: Context) -> Check:
    """Does `config.toml` say what it means (every value of the type its key takes)?"""
    try:
        settings = load_settings(ctx.env)
    except WikiMemoryError as e:
        return Check("wiki-memory", "config.toml", "fail", str(e))
    if not settings.problems:
        return Check("wiki-memory", "config.toml", "ok", "every setting is valid")
    more = f" (and {len(settings.problems) - 1} more)" if len(settings.problems) > 1 else ""
    return Check("wiki-memory", "config.toml", "warn", settings.problems[0] + more)


def no_agent_connected(ctx: Context, elsewhere: Sequence[str] = ()) -> Check:
    """The one line doctor says when no agent has our hooks or MCP entry (in this scope;
    `elsewhere` names the agents connected in the other one)."""
    scope = " --scope project" if ctx.scope == "project" else ""
    detail = (
        f"no agent is connected to wiki-memory yet; run `wiki-memory install AGENT{scope}` "
        f"(claude-code, codex, gemini, cursor, opencode) or `wiki-memory install all{scope}`"
    )
    if elsewhere:
        other = "user" if ctx.scope == "project" else "project"
        detail += f" ({', '.join(elsewhere)} connected in {other} scope: `wiki-memory doctor --scope {other}`)"
    return Check("wiki-memory", "agents", "warn", detail)
