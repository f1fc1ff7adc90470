"""Slugs: readable, lowercase file names from titles, in any script."""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_SLUG = 80
_HYPHENS = re.compile(r"-{2,}")


def _is_word_char(ch: str) -> bool:
    # Marks (Mn, Mc) belong to their letter: the vowel signs of Devanagari, Thai, ...
    return ch.isalnum() or unicodedata.category(ch) in ("Mn", "Mc")


def _strip_latin_accents(text: str) -> str:
    # Trigger: "Café" should become "cafe", but a Devanagari vowel sign is part of its word.
    # Why: drop a combining mark only where it sits on an ASCII letter.
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def slugify(title: str, max_length: int = MAX_SLUG) -> str:
    """`JWT refresh must happen before the retry` -> `jwt-refresh-must-happen-before-the-retry`.

    Letters of any script are kept (`Überblick über Köln` -> `uberblick-uber-koln`,
    `数据库迁移` stays as it is); everything else becomes single hyphens. A title with no
    letters or digits at all gets a short hash so that it still has a stable name.
    """
    text = _strip_latin_accents(title).lower().replace("'", "").replace("\u2019", "")
    slug = "".join(ch if _is_word_char(ch) else "-" for ch in text)
    slug = _HYPHENS.sub("-", slug).strip("-")
    if len(slug) > max_length:
        cut = slug[:max_length]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[max_length // 2 :] else cut
        slug = slug.strip("-")
    if not slug:
        slug = "page-" + hashlib.sha256(title.encode("utf-8")).hexdigest()[:8]
    return slug
