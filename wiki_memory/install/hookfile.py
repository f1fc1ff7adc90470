"""Our entries in the two shapes of hook configuration the agents use.

- Nested (Claude Code, Codex, Gemini CLI): `hooks: {Event: [{matcher?, hooks: [{type:
  "command", command, timeout, ...}]}]}`.
- Flat (Cursor): `hooks: {event: [{command, ...}]}`.

Adding keeps an entry of ours that is already exactly right where it is (so a second
install changes nothing and no other entry moves), replaces one that differs, and appends
where there was none; removing takes out only our handlers, drops a group or event that is
left empty, and leaves everything else as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import is_our_hook


@dataclass(frozen=True)
class HookSpec:
    """One event we hook: its name, its matcher (None: no matcher key) and the handler's
    other settings (timeout, async, name)."""

    event: str
    matcher: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def _event_list(hooks: dict[str, Any], event: str, where: str) -> list[Any]:
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise WikiMemoryError(f"{where}: hooks.{event} is not a list; nothing was changed")
    return entries


def hooks_table(data: dict[str, Any], where: str) -> dict[str, Any]:
    """`data["hooks"]`, created when absent; an error when it is not an object."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise WikiMemoryError(f"{where}: `hooks` is not an object; nothing was changed")
    return hooks


# -- nested ------------------------------------------------------------------------------------


def nested_group(spec: HookSpec, command: str) -> dict[str, Any]:
    group: dict[str, Any] = {}
    if spec.matcher is not None:
        group["matcher"] = spec.matcher
    group["hooks"] = [{"type": "command", "command": command, **spec.options}]
    return group


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and is_our_hook(handler.get("command"))


def _remove_ours_from_groups(groups: list[Any]) -> bool:
    """Drop our handlers from a list of groups (and groups left empty); True if any went."""
    removed = False
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = [h for h in group["hooks"] if not _is_ours(h)]
        if len(kept) != len(group["hooks"]):
            removed = True
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
    return removed


def add_nested(data: dict[str, Any], specs: list[HookSpec], command_for: Callable[[str], str], where: str) -> list[str]:
    """Put our group for each spec in `data["hooks"]`; returns the lines that changed."""
    hooks = hooks_table(data, where)
    lines = []
    for spec in specs:
        desired = nested_group(spec, command_for(spec.event))
        groups = _event_list(hooks, spec.event, where)
        ours = [g for g in groups if isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks") or [])]
        if ours == [desired]:
            continue
        replaced = _remove_ours_from_groups(groups)
        groups.append(desired)
        lines.append(f"{'~' if replaced else '+'} {spec.event}: {desired['hooks'][0]['command']}")
    return lines


def remove_nested(data: dict[str, Any], where: str) -> list[str]:
    """Take every handler of ours out of `data["hooks"]`; returns the lines removed."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    lines: list[str] = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        commands = [h["command"] for g in groups if isinstance(g, dict) for h in g.get("hooks") or [] if _is_ours(h)]
        if _remove_ours_from_groups(groups):
            lines.extend(f"- {event}: {c}" for c in commands)
        if not groups:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return lines


def find_nested(data: Mapping[str, Any]) -> dict[str, list[str]]:
    """Our hook commands by event."""
    found: dict[str, list[str]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else ():
            for handler in group.get("hooks") or [] if isinstance(group, dict) else ():
                if _is_ours(handler):
                    found.setdefault(event, []).append(handler["command"])
    return found


def nested_keys(data: Mapping[str, Any], prefix: str) -> dict[str, tuple[str, int, int, bool]]:
    """Codex's key for each handler (`<file>:<event_snake>:<group>:<handler>`) ->
    (event, group index, handler index, is ours)."""
    keys: dict[str, tuple[str, int, int, bool]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return keys
    for event, groups in hooks.items():
        for gi, group in enumerate(groups if isinstance(groups, list) else ()):
            for hi, handler in enumerate(group.get("hooks") or [] if isinstance(group, dict) else ()):
                keys[f"{prefix}:{snake(event)}:{gi}:{hi}"] = (event, gi, hi, _is_ours(handler))
    return keys


def snake(event: str) -> str:
    """`PostToolUse` -> `post_tool_use`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


# -- flat (Cursor) -------------------------------------------------------------------------------


def add_flat(data: dict[str, Any], specs: list[HookSpec], command_for: Callable[[str], str], where: str) -> list[str]:
    hooks = hooks_table(data, where)
    lines = []
    for spec in specs:
        desired = {"command": command_for(spec.event), **spec.options}
        entries = _event_list(hooks, spec.event, where)
        ours = [e for e in entries if _is_ours(e)]
        if ours == [desired]:
            continue
        for entry in ours:
            entries.remove(entry)
        entries.append(desired)
        lines.append(f"{'~' if ours else '+'} {spec.event}: {desired['command']}")
    return lines


def remove_flat(data: dict[str, Any], where: str) -> list[str]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    lines = []
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        for entry in [e for e in entries if _is_ours(e)]:
            entries.remove(entry)
            lines.append(f"- {event}: {entry['command']}")
        if not entries:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return lines


def find_flat(data: Mapping[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, entries in hooks.items():
        for entry in entries if isinstance(entries, list) else ():
            if _is_ours(entry):
                found.setdefault(event, []).append(entry["command"])
    return found
