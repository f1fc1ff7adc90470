"""JSON with comments (OpenCode's `opencode.json[c]`, Gemini CLI's `settings.json`), edited
as text.

A member of an object, or an item of an array, is added or removed by changing only its own
span of the text: comments, key order, indentation and the file's last newline stay as they
were, and removing what was added gives back the very same bytes. The scanner knows JSONC
(`//` and `/* */` comments, trailing commas); the data is read with the comments and
trailing commas taken out. A path names a value from the top: member names, and item
indexes in arrays.

    text = add_member(text, ["mcp"], "wiki-memory", {"type": "local", ...})
    text = add_item(text, ["hooks", "AfterTool"], {"hooks": [...]})
    text = remove(text, ["mcp", "wiki-memory"])
    text = remove(text, ["hooks", "AfterTool", 1])
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wiki_memory.errors import WikiMemoryError
from wiki_memory.install.base import Change
from wiki_memory.install.configfile import backup, write_atomic


class JsoncError(ValueError):
    """The text is not JSON with comments; the message says where."""


@dataclass
class Node:
    """A value's span in the text; an object's members or an array's items, in order."""

    kind: str  # object | array | scalar
    start: int
    end: int  # one past the last character
    entries: list[Entry] = field(default_factory=list)


@dataclass
class Entry:
    """A member (`key` its name) or an item (`key` its index) of a container."""

    key: str | int
    start: int  # where the member's name, or the item, begins
    value: Node


_LITERAL = re.compile(r"-?[0-9][0-9eE.+-]*|true|false|null")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text

    def fail(self, at: int, what: str) -> JsoncError:
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsoncError(f"{what} at line {line}, column {column}")

    def skip(self, i: int) -> int:
        """Past whitespace and comments."""
        text = self.text
        while i < len(text):
            if text[i] in " \t\r\n\ufeff":
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end + 1
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise self.fail(i, "unclosed comment")
                i = end + 2
            else:
                break
        return i

    def string(self, i: int) -> int:
        """The end of the string starting at `i`."""
        text, j = self.text, i + 1
        while j < len(text):
            if text[j] == "\\":
                j += 2
            elif text[j] == '"':
                return j + 1
            elif text[j] == "\n":
                break
            else:
                j += 1
        raise self.fail(i, "unterminated string")

    def value(self, i: int) -> Node:
        i = self.skip(i)
        if i >= len(self.text):
            raise self.fail(i, "a value was expected")
        c = self.text[i]
        if c == "{":
            return self.object(i)
        if c == "[":
            return self.array(i)
        if c == '"':
            return Node("scalar", i, self.string(i))
        m = _LITERAL.match(self.text, i)
        if not m:
            raise self.fail(i, f"unexpected {c!r}")
        return Node("scalar", i, m.end())

    def object(self, start: int) -> Node:
        node = Node("object", start, start)
        i = self.skip(start + 1)
        while True:
            if i < len(self.text) and self.text[i] == "}":
                node.end = i + 1
                return node
            if i >= len(self.text) or self.text[i] != '"':
                raise self.fail(i, "a member name in quotes was expected")
            key_end = self.string(i)
            key = json.loads(self.text[i:key_end])
            j = self.skip(key_end)
            if j >= len(self.text) or self.text[j] != ":":
                raise self.fail(j, "':' was expected")
            value = self.value(j + 1)
            node.entries.append(Entry(key, i, value))
            i = self.skip(value.end)
            if i < len(self.text) and self.text[i] == ",":
                i = self.skip(i + 1)
            elif i >= len(self.text) or self.text[i] != "}":
                raise self.fail(i, "',' or '}' was expected")

    def array(self, start: int) -> Node:
        node = Node("array", start, start)
        i = self.skip(start + 1)
        while True:
            if i < len(self.text) and self.text[i] == "]":
                node.end = i + 1
                return node
            item = self.value(i)
            node.entries.append(Entry(len(node.entries), item.start, item))
            i = self.skip(item.end)
            if i < len(self.text) and self.text[i] == ",":
                i = self.skip(i + 1)
            elif i >= len(self.text) or self.text[i] != "]":
                raise self.fail(i, "',' or ']' was expected")


def scan(text: str) -> Node:
    """The top-level value's tree of spans; JsoncError when the text is not JSONC."""
    scanner = _Scanner(text)
    root = scanner.value(0)
    rest = scanner.skip(root.end)
    if rest < len(text):
        raise scanner.fail(rest, "unexpected text after the value")
    return root


def _plain(text: str, node: Node) -> str:
    """The text of `node` as JSON: comments and trailing commas out, strings kept."""
    scanner = _Scanner(text)
    out, i = [], node.start
    while i < node.end:
        j = scanner.skip(i)
        if j > i:
            out.append(" ")
            i = j
            continue
        c = text[i]
        if c == '"':
            end = scanner.string(i)
            out.append(text[i:end])
            i = end
        elif c == ",":
            after = scanner.skip(i + 1)
            if after < node.end and text[after] not in "}]":
                out.append(",")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def loads(text: str) -> Any:
    """The data of a JSONC text."""
    root = scan(text)
    return json.loads(_plain(text, root))


def find(root: Node, path: Sequence[str | int]) -> Node | None:
    """The value at `path`, or None."""
    node: Node | None = root
    for key in path:
        if node is None or node.kind not in ("object", "array"):
            return None
        entry = _entry(node, key)
        node = entry.value if entry is not None else None
    return node


def _entry(node: Node, key: str | int) -> Entry | None:
    if node.kind == "array":
        return node.entries[key] if isinstance(key, int) and 0 <= key < len(node.entries) else None
    # A repeated name: the last one is what a reader sees.
    return next((e for e in reversed(node.entries) if e.key == key), None)


def _line_indent(text: str, at: int) -> str | None:
    """The indentation of the line `at` is on, if only whitespace comes before it."""
    start = text.rfind("\n", 0, at) + 1
    head = text[start:at]
    return head if not head.strip() else None


def _dumps(value: Any, indent: str, step: str) -> str:
    if not step:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=step, ensure_ascii=False).replace("\n", "\n" + indent)


def _step(text: str, node: Node, indent: str) -> str:
    """One level of the file's indentation: the entries' indent less the container's own."""
    outer = _line_indent(text, node.start)
    if outer is None:
        line = text[text.rfind("\n", 0, node.start) + 1 : node.start]
        outer = line[: len(line) - len(line.lstrip())]
    return indent[len(outer) :] if indent.startswith(outer) and len(indent) > len(outer) else "  "


def _insert(text: str, node: Node, render: Callable[[str, str], str]) -> str:
    """`text` with an entry, rendered by `render(indent, step)`, after the container's last."""
    multiline = "\n" in text[node.start : node.end]
    if node.entries:
        last = node.entries[-1]
        indent = _line_indent(text, last.start) if multiline else None
        if indent is None:
            return text[: last.value.end] + ", " + render("", "") + text[last.value.end :]
        return (
            text[: last.value.end] + ",\n" + indent + render(indent, _step(text, node, indent)) + text[last.value.end :]
        )
    if not multiline:
        return text[: node.start + 1] + render("", "") + text[node.start + 1 :]
    indent = (_line_indent(text, node.end - 1) or "") + "  "
    return text[: node.start + 1] + "\n" + indent + render(indent, "  ") + text[node.start + 1 :]


def _container(text: str, path: Sequence[str | int], kind: str) -> Node:
    node = find(scan(text), path)
    if node is None or node.kind != kind:
        raise JsoncError(f"no {kind} at {'.'.join(map(str, path)) or 'the top'}")
    return node


def add_member(text: str, path: Sequence[str | int], key: str, value: Any) -> str:
    """`text` with member `key: value` added to the object at `path` (after its last member;
    the object must exist and hold no `key`)."""
    node = _container(text, path, "object")
    if any(e.key == key for e in node.entries):
        raise JsoncError(f"{'.'.join(map(str, [*path, key]))} is already there")
    return _insert(text, node, lambda indent, step: f"{json.dumps(key)}: {_dumps(value, indent, step)}")


def add_item(text: str, path: Sequence[str | int], value: Any) -> str:
    """`text` with `value` appended to the array at `path`."""
    return _insert(text, _container(text, path, "array"), lambda indent, step: _dumps(value, indent, step))


def remove(text: str, path: Sequence[str | int]) -> str:
    """`text` without the member or item at `path`; as it was when there is none. Removing
    an entry `add_member` or `add_item` added gives back the text it was given."""
    if not path:
        raise JsoncError("nothing named to remove")
    node = find(scan(text), path[:-1])
    entry = _entry(node, path[-1]) if node is not None and node.kind in ("object", "array") else None
    if node is None or entry is None:
        return text
    index = node.entries.index(entry)
    if index > 0:
        # From the end of the entry before it: its comma and whitespace go with it.
        return text[: node.entries[index - 1].value.end] + text[entry.value.end :]
    if len(node.entries) > 1:
        return text[: entry.start] + text[node.entries[1].start :]
    end = entry.value.end
    after = _Scanner(text).skip(end)
    if after < len(text) and text[after] == ",":  # a trailing comma of the user's own
        end = after + 1
    return text[: node.start + 1] + text[end:]


def check(text: str, where: str) -> Any:
    """The data of a configuration file's text, or one clear error naming the file."""
    try:
        data = loads(text) if text.strip() else {}
    except JsoncError as e:
        raise WikiMemoryError(
            f"{where} is not valid JSON ({e}); fix it, then run this again (nothing was changed)"
        ) from None
    if not isinstance(data, dict):
        raise WikiMemoryError(f"{where} holds a JSON {type(data).__name__}, not an object; nothing was changed")
    return data


class JsoncFile:
    """A JSONC configuration file edited as text: `text` changes through `add_member`,
    `add_item` and `remove`; `save` writes it back if it changed (after a backup), and
    deletes a file that holds nothing any more but the `{}` a new one was made with."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.original: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.original = None
        except (OSError, UnicodeDecodeError) as e:
            raise WikiMemoryError(f"{path} cannot be read: {e}") from None
        self.text = self.original if self.original is not None and self.original.strip() else "{\n}\n"
        check(self.text, str(path))

    @property
    def data(self) -> dict[str, Any]:
        return check(self.text, str(self.path))

    def save(self, lines: list[str], dry_run: bool) -> Change:
        if self.text == (self.original if self.original is not None else "{\n}\n"):
            return Change(self.path, "unchanged", lines)
        emptied = self.text.strip() in ("{\n}", "{}") and not loads(self.text)
        if emptied and self.original is None:
            return Change(self.path, "unchanged", lines)
        action = "delete" if emptied else "update" if self.original is not None else "create"
        saved = None
        if not dry_run:
            if self.original is not None:
                saved = backup(self.path)
            if emptied:
                self.path.unlink()
            else:
                write_atomic(self.path, self.text)
        return Change(self.path, action, lines, saved)
