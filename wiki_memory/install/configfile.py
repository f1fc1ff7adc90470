"""Safe editing of the agents' JSON and TOML configuration files, and of the MCP server
table inside them.

A file is backed up beside itself (`NAME.wiki-memory-YYYYmmddTHHMMSSZ.bak`) before it is
changed, written atomically (temporary file, then rename, keeping its mode), and not
touched at all when nothing changes (so installing twice changes nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, MutableMapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import MCP_NAME, Change, is_our_server


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def backup(path: Path) -> Path:
    """Copy `path` beside itself before it changes; returns the copy."""
    target = path.with_name(f"{path.name}.wiki-memory-{_stamp()}.bak")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.wiki-memory-{_stamp()}-{n}.bak")
    shutil.copy2(path, target)
    return target


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, keeping the old file's mode. A symbolic
    link is written through: the file it points at changes, the link stays (a dotfiles
    repository's `~/.claude/settings.json` was replaced by a regular file)."""
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class ConfigFile:
    """A configuration file loaded for editing; `save` writes it back if it changed.

    Subclasses parse and render one format. `empty_is_absent`: a file that we created and
    that holds nothing once our entries are removed is deleted rather than left empty.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.existed = path.exists()
        try:
            self.original_text = path.read_text(encoding="utf-8") if self.existed else ""
        except (OSError, UnicodeDecodeError) as e:
            what = "is a directory, not a settings file" if path.is_dir() else f"cannot be read ({e})"
            raise WikiMemoryError(f"{path} {what}; move it aside, then run this again (nothing was changed)") from None
        self.data = self.parse(self.original_text) if self.original_text.strip() else self.empty()
        self.original = self.snapshot()

    # -- format ---------------------------------------------------------------------------
    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def render(self) -> str:
        raise NotImplementedError

    def empty(self) -> Any:
        return {}

    def snapshot(self) -> Any:
        return json.loads(json.dumps(self.data, default=str))

    def is_empty(self) -> bool:
        return not self.data

    # -- saving -----------------------------------------------------------------------------
    @property
    def changed(self) -> bool:
        return self.snapshot() != self.original

    def save(self, lines: list[str], dry_run: bool) -> Change:
        """Write the file if it changed (after a backup); report what changed."""
        if not self.changed:
            return Change(self.path, "unchanged", lines)
        if self.is_empty():
            # Trigger: nothing but our entries was in the file. Why: uninstall leaves the
            # machine as it was, and before install there was no file.
            if not self.existed:
                return Change(self.path, "unchanged", lines)
            action = "delete"
        else:
            action = "update" if self.existed else "create"
        saved = None
        if not dry_run:
            if self.existed:
                saved = backup(self.path)
            if action == "delete" and not self.path.is_symlink():
                self.path.unlink()
            else:  # (a link's file is emptied, not deleted: the link is someone's)
                write_atomic(self.path, self.render())
        return Change(self.path, action, lines, saved)


class JsonFile(ConfigFile):
    """A JSON configuration file (Claude Code, Codex hooks, Gemini, Cursor)."""

    def parse(self, text: str) -> Any:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise WikiMemoryError(
                f"{self.path} is not valid JSON ({e}); fix it or move it aside, "
                f"then run this again (nothing was changed)"
            ) from None
        if not isinstance(data, dict):
            raise WikiMemoryError(f"{self.path} holds a JSON {type(data).__name__}, not an object; nothing was changed")
        return data

    def render(self) -> str:
        return json.dumps(self.data, indent=2, ensure_ascii=False) + "\n"


class TomlFile(ConfigFile):
    """A TOML configuration file (Codex's config.toml), edited with its comments and layout kept."""

    def parse(self, text: str) -> Any:
        import tomlkit  # deferred: tomlkit loads only when a TOML config is written
        from tomlkit.exceptions import ParseError  # deferred: tomlkit loads only when a TOML config is written

        try:
            return tomlkit.parse(text)
        except ParseError as e:
            raise WikiMemoryError(f"{self.path} is not valid TOML ({e}); nothing was changed") from None

    def empty(self) -> Any:
        import tomlkit  # deferred: tomlkit loads only when a TOML config is written

        return tomlkit.document()

    def snapshot(self) -> Any:
        return json.loads(json.dumps(self.data.unwrap() if hasattr(self.data, "unwrap") else self.data, default=str))

    def is_empty(self) -> bool:
        return not self.snapshot()

    def render(self) -> str:
        import tomlkit  # deferred: tomlkit loads only when a TOML config is written

        text = tomlkit.dumps(self.data)
        # Removing a table leaves the blank line that separated it: end as the file did.
        return text.rstrip("\n") + "\n" if text.strip() else ""


def prune_empty(container: dict[str, Any], *keys: str) -> None:
    """Remove `container[key]` for each key whose value became an empty dict or list."""
    for key in keys:
        if key in container and container[key] in ({}, []):
            del container[key]


# The MCP server table: a name -> entry table inside a JSON or TOML document.


def set_server(
    data: Any, table: str, entry: dict[str, Any], where: str, new_table: Callable[[], Any] = dict
) -> list[str]:
    """Put our server entry in `data[table][MCP_NAME]`; returns the lines that changed."""
    servers = data.get(table)
    if servers is None:
        servers = data[table] = new_table()
    if not isinstance(servers, MutableMapping):
        raise WikiMemoryError(f"{where}: `{table}` is not a table of servers; nothing was changed")
    current = servers.get(MCP_NAME)
    plain = json.loads(json.dumps(current, default=str)) if current is not None else None
    if plain == entry:
        return []
    servers[MCP_NAME] = entry
    words = " ".join([entry["command"], *entry.get("args", [])])
    return [f"{'~' if current is not None else '+'} {table}.{MCP_NAME}: {words}"]


def remove_server(data: Any, table: str) -> list[str]:
    """Take our server entry out of `data[table]` (only if it runs our `serve`)."""
    servers = data.get(table)
    if not isinstance(servers, MutableMapping) or not is_our_server(servers.get(MCP_NAME)):
        return []
    del servers[MCP_NAME]
    if not servers:
        del data[table]
    return [f"- {table}.{MCP_NAME}"]


def get_server(data: Any, table: str) -> dict[str, Any] | None:
    """Our server entry in `data[table]` as plain data, or None."""
    servers = data.get(table)
    entry = servers.get(MCP_NAME) if isinstance(servers, Mapping) else None
    return json.loads(json.dumps(entry, default=str)) if isinstance(entry, Mapping) else None
