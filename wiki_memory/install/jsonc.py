"""JSON with comments (OpenCode's `opencode.json` / `opencode.jsonc`), edited as text.

A member is added or removed by changing only its own span of the text: comments, key order,
indentation and the file's last newline stay as they were, and removing what was added gives
back the very same bytes. The scanner knows JSONC (`//` and `/* */` comments, trailing
commas); the data is read with the comments and trailing commas taken out.

    text = add_member(text, ["mcp"], "wiki-memory", {"type": "local", ...})
    text = remove_member(text, ["mcp", "wiki-memory"])
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from wiki_memory.errors import WikiMemoryError


class JsoncError(ValueError):
    """The text is not JSON with comments; the message says where."""


@dataclass
class Node:
    """A value's span in the text; an object's members in order."""

    kind: str  # object | array | scalar
    start: int
    end: int  # one past the last character
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    key: str
    start: int  # where its key's opening quote is
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
            node.members.append(Member(key, i, value))
            i = self.skip(value.end)
            if i < len(self.text) and self.text[i] == ",":
                i = self.skip(i + 1)
            elif i >= len(self.text) or self.text[i] != "}":
                raise self.fail(i, "',' or '}' was expected")

    def array(self, start: int) -> Node:
        i = self.skip(start + 1)
        while True:
            if i < len(self.text) and self.text[i] == "]":
                return Node("array", start, i + 1)
            item = self.value(i)
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


def find(root: Node, path: list[str]) -> Node | None:
    """The value at `path` (member names from the top), or None."""
    node: Node | None = root
    for key in path:
        if node is None or node.kind != "object":
            return None
        node = next((m.value for m in reversed(node.members) if m.key == key), None)
    return node


def _line_indent(text: str, at: int) -> str | None:
    """The indentation of the line `at` is on, if only whitespace comes before it."""
    start = text.rfind("\n", 0, at) + 1
    head = text[start:at]
    return head if not head.strip() else None


def _render(key: str, value: Any, indent: str, step: str) -> str:
    if not step:
        return f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
    body = json.dumps(value, indent=step, ensure_ascii=False).replace("\n", "\n" + indent)
    return f"{json.dumps(key)}: {body}"


def add_member(text: str, path: list[str], key: str, value: Any) -> str:
    """`text` with member `key: value` added to the object at `path` (after its last member;
    the object must exist and hold no `key`)."""
    root = scan(text)
    obj = find(root, path)
    if obj is None or obj.kind != "object":
        raise JsoncError(f"no object at {'.'.join(path) or 'the top'}")
    if any(m.key == key for m in obj.members):
        raise JsoncError(f"{'.'.join([*path, key])} is already there")
    multiline = "\n" in text[obj.start : obj.end]
    if obj.members:
        last = obj.members[-1]
        indent = _line_indent(text, last.start) if multiline else None
        if indent is None:
            return text[: last.value.end] + ", " + _render(key, value, "", "") + text[last.value.end :]
        step = _step(text, obj, indent)
        return text[: last.value.end] + ",\n" + indent + _render(key, value, indent, step) + text[last.value.end :]
    if not multiline:
        return text[: obj.start + 1] + _render(key, value, "", "") + text[obj.start + 1 :]
    closing = _line_indent(text, obj.end - 1) or ""
    indent = closing + "  "
    return text[: obj.start + 1] + "\n" + indent + _render(key, value, indent, "  ") + text[obj.start + 1 :]


def _step(text: str, obj: Node, indent: str) -> str:
    """One level of the file's indentation: the members' indent less the object's own."""
    outer = _line_indent(text, obj.start)
    if outer is None:
        outer = text[text.rfind("\n", 0, obj.start) + 1 : obj.start]
        outer = outer[: len(outer) - len(outer.lstrip())]
    return indent[len(outer) :] if indent.startswith(outer) and len(indent) > len(outer) else "  "


def remove_member(text: str, path: list[str]) -> str:
    """`text` without the member at `path` (the last name is the member's); the text as it
    was when there is none. Removing a member `add_member` added gives the text it was given."""
    if not path:
        raise JsoncError("no member named")
    root = scan(text)
    obj = find(root, path[:-1])
    if obj is None or obj.kind != "object":
        return text
    index = next((n for n in range(len(obj.members) - 1, -1, -1) if obj.members[n].key == path[-1]), None)
    if index is None:
        return text
    member = obj.members[index]
    if index > 0:
        # From the end of the member before it: its comma and whitespace go with it.
        return text[: obj.members[index - 1].value.end] + text[member.value.end :]
    if len(obj.members) > 1:
        return text[: member.start] + text[obj.members[1].start :]
    end = member.value.end
    after = _Scanner(text).skip(end)
    if after < len(text) and text[after] == ",":  # a trailing comma of the user's own
        end = after + 1
    return text[: obj.start + 1] + text[end:]


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
