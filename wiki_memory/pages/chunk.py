"""Splitting a page into search-sized pieces at its headings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wiki_memory.pages.markdown import headings

MAX_WORDS = 200  # the embedding model truncates at 256 word pieces


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    heading: str  # the nearest heading above the text ("" before any heading)
    text: str


def _split_words(text: str, max_words: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]


def _pack(blocks: list[str], max_words: int) -> list[str]:
    """Greedy packing of blocks (paragraphs, then lines) into pieces of at most max_words."""
    pieces: list[str] = []
    current: list[str] = []
    count = 0
    for block in blocks:
        n = len(block.split())
        if n > max_words:
            if current:
                pieces.append("\n\n".join(current))
                current, count = [], 0
            lines = block.splitlines()
            if len(lines) > 1:
                pieces.extend(_pack(lines, max_words))
            else:
                pieces.extend(_split_words(block, max_words))
            continue
        if current and count + n > max_words:
            pieces.append("\n\n".join(current))
            current, count = [], 0
        current.append(block)
        count += n
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def chunk_text(body: str, title: str = "", max_words: int = MAX_WORDS) -> list[Chunk]:
    """Sections at every heading, each cut into pieces of at most `max_words` words."""
    lines = body.splitlines()
    marks = headings(body)
    sections: list[tuple[str, list[str]]] = []
    start, heading = 0, ""
    for h in marks:
        sections.append((heading, lines[start : h.line]))
        heading, start = h.text, h.line + 1
        # Setext headings span two lines; skip the underline.
        if (
            start < len(lines)
            and re.fullmatch(r"\s*(=+|-+)\s*", lines[start] or "x")
            and not lines[h.line].lstrip().startswith("#")
        ):
            start += 1
    sections.append((heading, lines[start:]))

    chunks: list[Chunk] = []
    for heading, section in sections:
        text = "\n".join(section).strip()
        if not text:
            continue
        blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
        for piece in _pack(blocks, max_words):
            chunks.append(Chunk(len(chunks), heading, piece))
    if not chunks:
        chunks.append(Chunk(0, title, ""))
    return chunks
