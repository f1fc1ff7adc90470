"""What every agent's installer shares: the context it runs in, what our entries look like
and how to recognise them, the changes it reports, and the doctor's checks. Editing the
configuration files is in `configfile`.

The rules every installer keeps:

- Our entries are recognised by their command (`<this wiki-memory> hook AGENT EVENT`, or
  any `wiki-memory ... hook ...` from an earlier installation), so re-installing replaces
  them in place and uninstalling removes exactly them; every other entry is left alone.
- A file is backed up beside itself (`NAME.wiki-memory-YYYYmmddTHHMMSSZ.bak`) before it
  is changed, written atomically (temporary file, then rename, keeping its mode), and not
  touched at all when nothing changes (so installing twice changes nothing).
- `dry_run` computes and reports the same changes and writes nothing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiki_memory.config import find_code_root
from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.mcp_probe import probe as probe_mcp_server

SCOPES = ("user", "project")
MCP_NAME = "wiki-memory"  # the MCP server's name in every agent's configuration


@dataclass(frozen=True)
class Context:
    """Where and how to install.

    `command` is the absolute path of this installation's `wiki-memory` (what the hook and
    MCP entries run); `home` the user's home; `project_root` the repository for the
    project scope; `codex` the Codex executable used to trust hooks (None: look on PATH).
    """

    scope: str = "user"
    home: Path = field(default_factory=Path.home)
    project_root: Path | None = None
    command: str = ""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    codex: str | None = None
    mcp: bool = True
    dry_run: bool = False

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise WikiMemoryError(f"unknown scope {self.scope!r} (use user or project)")

    @property
    def root(self) -> Path:
        """The directory project-scope files go under."""
        if self.project_root is not None:
            return self.project_root
        cwd = Path.cwd()
        return find_code_root(cwd) or cwd

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH"))


def this_executable() -> str:
    """The absolute path of this installation's `wiki-memory` executable.

    Hooks run with the agent's PATH, which may not have ours on it: the entry names the
    file itself. Falls back to `python -m wiki_memory` when no script is installed.
    """
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "wiki-memory" and argv0.exists():
        return str(argv0.absolute())
    beside = Path(sys.executable).parent / "wiki-memory"
    if beside.exists():
        return str(beside)
    found = shutil.which("wiki-memory")
    if found:
        return str(Path(found).absolute())
    return f"{shlex.quote(sys.executable)} -m wiki_memory"


def quote_command(command: str) -> str:
    """`command` ready to be a shell word list: a bare path is quoted, a `python -m` line kept."""
    return command if " -m wiki_memory" in command else shlex.quote(command)


def hook_command(command: str, agent: str, event: str) -> str:
    """The hook entry's command line."""
    return f"{quote_command(command)} hook {agent} {event}"


def is_our_hook(command: Any) -> bool:
    """Whether a hook command is one of ours (this or an earlier installation)."""
    if not isinstance(command, str) or "hook" not in command:
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if "hook" not in words:
        return False
    before = words[: words.index("hook")]
    if not before:
        return False
    if Path(before[-1]).name in ("wiki-memory", "wiki-memory.exe"):
        return True
    return before[-2:] == ["-m", "wiki_memory"]


def is_our_server(entry: Any) -> bool:
    """Whether an MCP server entry runs our `serve`."""
    if not isinstance(entry, Mapping):
        return False
    command, args = entry.get("command"), entry.get("args") or []
    words = ([command] if isinstance(command, str) else []) + [a for a in args if isinstance(a, str)]
    return "serve" in words and any(Path(w).name == "wiki-memory" or w == "wiki_memory" for w in words)


def server_entry(command: str) -> dict[str, Any]:
    """The MCP server entry (command and arguments) for this installation."""
    if " -m wiki_memory" in command:
        python = shlex.split(command)[0]
        return {"command": python, "args": ["-m", "wiki_memory", "serve"]}
    return {"command": command, "args": ["serve"]}


# ---------------------------------------------------------------------------------------
# What an installer reports
# ---------------------------------------------------------------------------------------


@dataclass
class Change:
    """What happened (or, in a dry run, would happen) to one file or setting."""

    path: Path | None
    action: str  # create | update | delete | unchanged | trust | note
    lines: list[str] = field(default_factory=list)  # "+ PostToolUse: ..." / "- ..." / prose
    backup: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "action": self.action,
            "lines": self.lines,
            "backup": str(self.backup) if self.backup else None,
        }


@dataclass(frozen=True)
class Check:
    """One finding of `wiki-memory doctor`."""

    agent: str  # an agent name, or "wiki-memory" for the checks of our own parts
    name: str
    status: str  # ok | warn | fail | skip
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"agent": self.agent, "name": self.name, "status": self.status, "detail": self.detail}


# ---------------------------------------------------------------------------------------
# The installer interface
# ---------------------------------------------------------------------------------------

#: Extra doctor checks, by agent (None: checks of wiki-memory itself). Registered with
#: `register_check`; each is called with the Context and the agent's Installer.
EXTRA_CHECKS: dict[str | None, list[Callable[..., Iterable[Check]]]] = {}


def register_check(*agents: str | None) -> Callable[[Callable[..., Iterable[Check]]], Callable[..., Iterable[Check]]]:
    """Add a doctor check for these agents (none given: once, for wiki-memory itself).

    The check is called as `check(ctx, installer)` (`installer` is None for wiki-memory's
    own checks) and returns Checks::

        @register_check("claude-code", "codex", "gemini", "cursor")
        def mcp_server_starts(ctx, installer):
            entry = installer.mcp_entry(ctx)
            ...
            yield Check(installer.agent, "mcp server", "ok", "lists 6 tools")
    """

    def decorate(fn: Callable[..., Iterable[Check]]) -> Callable[..., Iterable[Check]]:
        for agent in agents or (None,):
            EXTRA_CHECKS.setdefault(agent, []).append(fn)
        return fn

    return decorate


class Installer:
    """One agent's installer. Subclasses define where its files are and what goes in them."""

    agent: str = ""
    binaries: tuple[str, ...] = ()  # executables that show the agent is installed
    config_dirs: tuple[str, ...] = ()  # directories under the home that show it was used

    # -- discovery ----------------------------------------------------------------------------
    def binary(self, ctx: Context) -> str | None:
        for name in self.binaries:
            found = ctx.which(name)
            if found:
                return found
        return None

    def detect(self, ctx: Context) -> bool:
        """Whether the agent is on this machine (its executable, or its user directory)."""
        return self.binary(ctx) is not None or any((ctx.home / d).is_dir() for d in self.config_dirs)

    def is_connected(self, ctx: Context) -> bool:
        """Are our hooks or our MCP entry in the agent's files? A file that cannot be read
        counts as connected: we cannot rule it out, and its checks say what is wrong."""
        try:
            return bool(self.installed_hooks(ctx)) or self.mcp_entry(ctx) is not None
        except WikiMemoryError:
            return True

    def version(self, ctx: Context) -> str | None:
        binary = self.binary(ctx)
        if not binary:
            return None
        try:
            result = subprocess.run(
                [binary, "--version"],
                capture_output=True,
                text=True,
                timeout=20,
                env=dict(ctx.env),
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else None

    # -- what subclasses define -----------------------------------------------------------------
    def hooks_path(self, ctx: Context) -> Path:
        raise NotImplementedError

    def mcp_path(self, ctx: Context) -> Path:
        raise NotImplementedError

    def install(self, ctx: Context) -> list[Change]:
        raise NotImplementedError

    def uninstall(self, ctx: Context) -> list[Change]:
        raise NotImplementedError

    def installed_hooks(self, ctx: Context) -> dict[str, list[str]]:
        """Our hook commands found in the hooks file, by event."""
        raise NotImplementedError

    def expected_events(self) -> list[str]:
        raise NotImplementedError

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        """Our MCP server entry as configured (command, args), or None."""
        raise NotImplementedError

    # -- doctor -----------------------------------------------------------------------------------
    def doctor(self, ctx: Context) -> list[Check]:
        """Is the agent installed; are our hooks in place and pointing at a working
        executable; is our MCP server configured, and does it start; plus registered
        extra checks."""
        checks = []
        binary = self.binary(ctx)
        if binary:
            version = self.version(ctx)
            checks.append(Check(self.agent, "installed", "ok", f"{binary}" + (f" ({version})" if version else "")))
        elif self.detect(ctx):
            checks.append(
                Check(
                    self.agent,
                    "installed",
                    "warn",
                    f"{' or '.join(self.binaries)} is not on PATH (its settings directory exists)",
                )
            )
        else:
            checks.append(Check(self.agent, "installed", "skip", f"{' or '.join(self.binaries)} not found"))
        checks.extend(self.check_hooks(ctx))
        checks.extend(self.check_mcp(ctx))
        checks.extend(self.check_mcp_server(ctx))
        for extra in EXTRA_CHECKS.get(self.agent, []):
            checks.extend(extra(ctx, self))
        return checks

    def check_hooks(self, ctx: Context) -> list[Check]:
        try:
            found = self.installed_hooks(ctx)
        except WikiMemoryError as e:
            return [Check(self.agent, "hooks", "fail", str(e))]
        path = self.hooks_path(ctx)
        missing = [e for e in self.expected_events() if e not in found]
        if not found:
            return [
                Check(
                    self.agent,
                    "hooks",
                    "warn" if self.detect(ctx) else "skip",
                    f"none in {path}; run `wiki-memory install {self.agent}"
                    + (" --scope project" if ctx.scope == "project" else "")
                    + "`",
                )
            ]
        checks = [
            Check(
                self.agent,
                "hooks",
                "warn" if missing else "ok",
                f"{path}: " + (f"missing {', '.join(missing)}" if missing else f"{len(found)} events"),
            )
        ]
        commands = {c for cs in found.values() for c in cs}
        checks.append(check_hook_executable(self.agent, commands, ctx))
        return checks

    def check_mcp(self, ctx: Context) -> list[Check]:
        try:
            entry = self.mcp_entry(ctx)
        except WikiMemoryError as e:
            return [Check(self.agent, "mcp entry", "fail", str(e))]
        if entry is None:
            return [
                Check(
                    self.agent,
                    "mcp entry",
                    "warn",
                    f"no {MCP_NAME} server in {self.mcp_path(ctx)} (installed with --no-mcp?)",
                )
            ]
        command = entry.get("command")
        if isinstance(command, str) and os.path.isabs(command) and not os.access(command, os.X_OK):
            return [Check(self.agent, "mcp entry", "fail", f"{command} is not an executable file")]
        return [
            Check(self.agent, "mcp entry", "ok", f"{self.mcp_path(ctx)}: {command} {' '.join(entry.get('args') or [])}")
        ]

    def check_mcp_server(self, ctx: Context) -> list[Check]:
        """Does our MCP entry start a server that lists our tools? (No check without a
        usable entry: `check_mcp` reports that.)"""
        try:
            entry = self.mcp_entry(ctx)
        except Exception:  # noqa: BLE001 - the "mcp entry" check reports it
            return []
        if not entry or not isinstance(entry.get("command"), str):
            return []
        command = entry["command"]
        if os.path.isabs(command) and not os.access(command, os.X_OK):
            return [Check(self.agent, "mcp server", "skip", f"{command} is missing (see mcp entry)")]
        args = [str(a) for a in entry.get("args") or []]
        env = {**ctx.env, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}
        status, detail = probe_mcp_server(command, args, str(ctx.root), env)
        return [Check(self.agent, "mcp server", status, detail)]


def check_hook_executable(agent: str, commands: Iterable[str], ctx: Context) -> Check:
    """Do our hook commands name an executable that runs?"""
    executables = set()
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            return Check(agent, "hook executable", "fail", f"cannot parse {command!r}")
        before = words[: words.index("hook")]
        executables.add(tuple(before[1:] if before[:1] == ["exec"] else before))  # Gemini's `exec ...`
    problems = []
    for exe in sorted(executables):
        if os.path.isabs(exe[0]) and not os.access(exe[0], os.X_OK):
            problems.append(f"{exe[0]} is missing or not executable")
            continue
        try:
            result = subprocess.run(
                [*exe, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            problems.append(f"{' '.join(exe)}: {e}")
            continue
        if result.returncode != 0:
            problems.append(f"{' '.join(exe)} --version exited {result.returncode}")
    if problems:
        return Check(agent, "hook executable", "fail", "; ".join(problems) + "; run the install again")
    return Check(agent, "hook executable", "ok", ", ".join(" ".join(e) for e in sorted(executables)))
