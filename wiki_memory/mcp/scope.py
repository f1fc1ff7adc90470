"""Which project a call reaches, and who is calling, without hidden state.

A call's project comes from, in order:

1. the tool's explicit `project` argument: a directory (absolute path) or the id or name of
   an existing project;
2. the server's own project: `wiki-memory --project DIR serve` (or `WIKI_MEMORY_PROJECT`),
   `WIKI_MEMORY_STORE`, `CLAUDE_PROJECT_DIR`, else the directory the server was started in,
   unless that is the home directory or `/` (where Claude Desktop and other apps start
   their servers: that is no project);
3. the client's MCP roots (the first `file://` root that is a directory; not over HTTP).

The `project` argument reaches only what the server may reach (`memory.reach.Reach`):
its own project, its client's roots (over stdio), and the projects it was started for.

Nothing a call does changes what another call resolves to: there is no "current project"
to switch, only these inputs, read afresh for each call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from wiki_memory.config import Project, resolve_project
from wiki_memory.pages import slugify

NO_PROJECT = (
    "no project for this call: pass `project` (the project's directory, an absolute path), "
    "or start the server in the project's directory (or with `wiki-memory --project DIR serve`)"
)


def server_project_dir(
    explicit: str | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The directory whose project the server serves by default, or None."""
    env = os.environ if env is None else env
    if explicit:
        return Path(explicit).expanduser().absolute()
    if env.get("WIKI_MEMORY_PROJECT"):
        return Path(env["WIKI_MEMORY_PROJECT"]).expanduser().absolute()
    if env.get("CLAUDE_PROJECT_DIR") and Path(env["CLAUDE_PROJECT_DIR"]).is_dir():
        return Path(env["CLAUDE_PROJECT_DIR"]).absolute()
    here = (cwd or Path.cwd()).absolute()
    if env.get("WIKI_MEMORY_STORE"):
        return here  # the store wins whatever the directory; resolve_project knows
    # Trigger: desktop apps (Claude Desktop, VS Code's server host) spawn servers in / or ~.
    # Why: a memory for the whole home directory is never what the person meant.
    if here.resolve() in (Path.home().resolve(), Path(here.anchor)):
        return None
    return here


def projects_from_roots(uris: Iterable[str], env: Mapping[str, str] | None = None) -> list[Project]:
    """The projects of the client's `file://` roots that are directories, in order."""
    found: list[Project] = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme != "file":
            continue
        path = Path(unquote(parsed.path))
        if path.is_dir():
            found.append(resolve_project(path, env))
    return found


# Who is calling ------------------------------------------------------------------------

# MCP client names (initialize's clientInfo.name) of the agents wiki-memory knows.
_CLIENT_AGENTS = (
    ("claude-code", "claude-code"),
    ("claude code", "claude-code"),
    ("codex", "codex"),
    ("gemini", "gemini"),
    ("cursor", "cursor"),
)


def agent_from_client(name: str | None) -> str | None:
    """`claude-code`, `codex`, `gemini` or `cursor` for their MCP clients, else a slug of the
    client's own name (`Visual Studio Code` -> `visual-studio-code`), or None."""
    if not name or not name.strip():
        return None
    lowered = name.strip().lower()
    for needle, agent in _CLIENT_AGENTS:
        if needle in lowered:
            return agent

    return slugify(lowered, max_length=40)


# Environment variables an agent may set for the servers it spawns, naming its session.
SESSION_ENV = (
    "WIKI_MEMORY_SESSION_ID",
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_SESSION_ID",
    "GEMINI_SESSION_ID",
    "CURSOR_CONVERSATION_ID",
)
