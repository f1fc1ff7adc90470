"""What we read out of a page's Markdown with markdown-it-py: headings and wiki links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

# [[Target]], [[Target|alias]], [[Target#Heading]], ![[embedded]]
WIKI_LINK = re.compile(r"!?\[\[([^\[\]\n|#]*)(?:#([^\[\]\n|]*))?(?:\|([^\[\]\n]*))?\]\]")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # 0-based line of the heading in the body


@dataclass(frozen=True)
class WikiLink:
    target: str  # a title or a page path, as written
    heading: str | None = None
    alias: str | None = None


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("commonmark")


def headings(body: str) -> list[Heading]:
    """ATX and setext headings, outside code blocks, with their line numbers."""
    tokens = _md().parse(body)
    found: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map:
            inline = tokens[i + 1]
            found.append(Heading(int(token.tag[1:]), inline.content.strip(), token.map[0]))
    return found


def first_heading(body: str) -> str | None:
    # Fast path: most pages start with "# Title"; only parse when they do not.
    for line in body.splitlines():
        if line.strip():
            if line.startswith("# "):
                return line[2:].strip().rstrip("#").strip() or None
            break
    found = headings(body)
    return found[0].text if found else None


def wiki_links(body: str) -> list[WikiLink]:
    """Every `[[...]]` link in prose (code spans and code blocks are not links), in order."""
    tokens = _md().parse(body)
    links: list[WikiLink] = []
    for token in tokens:
        if token.type != "inline" or "[[" not in token.content:
            continue
        parts: list[str] = []
        for child in token.children or []:
            if child.type == "text":
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append("\n")
            elif child.type == "code_inline":
                parts.append(" ")  # `[[x]]` in a code span is not a link
        text = "".join(parts)
        for m in WIKI_LINK.finditer(text):
            target = m.group(1).strip()
            if target:
                links.append(WikiLink(target, (m.group(2) or "").strip() or None, (m.group(3) or "").strip() or None))
    return links
