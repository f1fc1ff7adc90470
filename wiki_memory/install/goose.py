"""Goose: MCP only, as an extension in `~/.config/goose/config.yaml` (`extensions:`, each
entry flat: `type: stdio`, `cmd`, `args`, `enabled`, `envs`, `name`, `timeout`, as Goose
writes them). Goose reads the project's `AGENTS.md` (and `.goosehints`).

The YAML is edited as text, our entry's lines only, so comments and layout stay and
uninstall gives back the very bytes there were; the result is parsed before it is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import MCP_NAME, Change, Context, is_our_server, server_entry
from wiki_memory.install.configfile import backup, write_atomic
from wiki_memory.install.mcp_client import McpClient

DESCRIPTION = "The project's long-term memory (wiki-memory)"
_TOP = re.compile(r"^extensions:[ \t]*(?:#.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _load(text: str, where: Path) -> dict[str, Any]:
    import yaml  # deferred: PyYAML loads only for goose's config

    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as e:
        raise WikiMemoryError(f"{where} is not valid YAML ({e}); nothing was changed") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WikiMemoryError(f"{where} holds a YAML {type(data).__name__}, not a mapping; nothing was changed")
    return data


def _block(entry: dict[str, Any], indent: int) -> list[str]:
    pad, inner = " " * indent, " " * (indent + 2)
    lines = [f"{pad}{MCP_NAME}:", f"{inner}args:"]
    lines += [f"{inner}- {json.dumps(a)}" for a in entry["args"]]
    lines += [
        f"{inner}cmd: {json.dumps(entry['command'])}",
        f"{inner}description: {json.dumps(DESCRIPTION)}",
        f"{inner}enabled: true",
        f"{inner}envs: {{}}",
        f"{inner}name: {MCP_NAME}",
        f"{inner}timeout: 300",
        f"{inner}type: stdio",
    ]
    return lines


def _ours(data: dict[str, Any]) -> dict[str, Any] | None:
    extensions = data.get("extensions")
    entry = extensions.get(MCP_NAME) if isinstance(extensions, dict) else None
    if not isinstance(entry, dict):
        return None
    plain = {"command": entry.get("cmd"), "args": entry.get("args") or []}
    return plain if is_our_server(plain) else None


def without_entry(text: str) -> str:
    """`text` without our extension's lines (and without `extensions:` once it is empty)."""
    lines = text.splitlines(keepends=True)
    top = next((i for i, line in enumerate(lines) if _TOP.match(line.rstrip("\r\n"))), None)
    if top is None:
        return text
    start = next(
        (i for i in range(top + 1, len(lines)) if lines[i].strip() == f"{MCP_NAME}:" and _indent(lines[i]) > 0), None
    )
    if start is None:
        return text
    own = _indent(lines[start])
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > own):
        end += 1
    del lines[start:end]
    rest = [line for line in lines[top + 1 :] if line.strip()]
    if not rest or _indent(rest[0]) == 0:
        del lines[top]  # `extensions:` holds nothing else: it was ours
    return "".join(lines)


def with_entry(text: str, entry: dict[str, Any]) -> str:
    """`text` with our extension (replacing an older one of ours)."""
    text = without_entry(text)
    lines = text.splitlines(keepends=True)
    top = next((i for i, line in enumerate(lines) if _TOP.match(line.rstrip("\r\n"))), None)
    if top is None:
        tail = "" if not text or text.endswith("\n") else "\n"
        return text + tail + "extensions:\n" + "".join(f"{line}\n" for line in _block(entry, 2))
    nxt = next((line for line in lines[top + 1 :] if line.strip()), "")
    indent = _indent(nxt) if nxt and _indent(nxt) > 0 else 2
    block = "".join(f"{line}\n" for line in _block(entry, indent))
    return "".join(lines[: top + 1]) + block + "".join(lines[top + 1 :])


class GooseInstaller(McpClient):
    agent = "goose"
    binaries = ("goose",)
    instructions = "agents-md"

    def user_path(self, ctx: Context) -> Path:
        base = Path(ctx.env.get("XDG_CONFIG_HOME") or ctx.home / ".config")
        return base / "goose" / "config.yaml"

    def _read(self, path: Path) -> str | None:
        try:
            return path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            raise WikiMemoryError(f"{path} cannot be read: {e}") from None

    def _save(self, path: Path, old: str | None, new: str, lines: list[str], dry_run: bool) -> Change:
        if new == (old or ""):
            return Change(path, "unchanged", lines)
        if old is not None:
            _load(new, path)  # what we write must still be YAML Goose can read
        action = "delete" if old is not None and not new.strip() else "update" if old is not None else "create"
        saved = None
        if not dry_run:
            if old is not None:
                saved = backup(path)
            if action == "delete":
                path.unlink()
            else:
                write_atomic(path, new)
        return Change(path, action, lines, saved)

    def install(self, ctx: Context) -> list[Change]:
        if not ctx.mcp:
            return [Change(None, "note", ["goose has no hooks: with --no-mcp there is nothing to install"])]
        path = self.mcp_path(ctx)
        old = self._read(path)
        _load(old or "", path)
        entry = server_entry(ctx.command)
        if _ours(_load(old or "", path)) == entry:
            return [Change(path, "unchanged", [])]
        current = _ours(_load(old or "", path))
        new = with_entry(old or "", entry)
        if _ours(_load(new, path)) != entry:
            raise WikiMemoryError(f"{path}: could not place our extension in it; nothing was changed")
        line = f"{'~' if current else '+'} extensions.{MCP_NAME}: {entry['command']} {' '.join(entry['args'])}"
        return [self._save(path, old, new, [line], ctx.dry_run)]

    def uninstall(self, ctx: Context) -> list[Change]:
        path = self.mcp_path(ctx)
        old = self._read(path)
        if old is None or _ours(_load(old, path)) is None:
            return [Change(path, "unchanged", [])]
        return [self._save(path, old, without_entry(old), [f"- extensions.{MCP_NAME}"], ctx.dry_run)]

    def mcp_entry(self, ctx: Context) -> dict[str, Any] | None:
        path = self.mcp_path(ctx)
        old = self._read(path)
        return _ours(_load(old, path)) if old is not None else None


INSTALLER = GooseInstaller()
