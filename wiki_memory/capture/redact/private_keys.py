"""Private key blocks: PEM, OpenSSH and PGP blocks, and PuTTY's private lines."""

from __future__ import annotations

from wiki_memory.capture.redact.vocabulary import _regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


def _pem_spans(text: str) -> Iterator[Span]:
    """Private key blocks, to their END line or, cut short, to the end of the text; an END
    line whose BEGIN was cut off takes the base64 lines above it."""
    covered = 0
    begin = _regex(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    end = _regex(r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    for m in begin.finditer(text):
        if m.start() < covered:
            continue
        close = end.search(text, m.end())
        covered = close.end() if close else len(text)
        yield m.start(), covered, "private-key"
    covered = 0
    for m in end.finditer(text):
        if m.start() < covered:
            continue
        window = text[max(0, m.start() - 16384) : m.start()]
        run = _regex(r"[A-Za-z0-9+/=\s\\]*").match(window[::-1])
        start = m.start() - (run.end() if run else 0)
        if begin.search(text, max(0, start - 80), m.start()) is None:
            yield start, m.end(), "private-key"
        covered = m.end()
    covered = 0
    if "Private-Lines:" in text:  # PuTTY: the private lines and their MAC
        for m in _regex(r"Private-Lines: *\d{1,4}").finditer(text):
            if m.start() < covered:
                continue
            mac = text.find("Private-MAC:", m.end())
            newline = text.find("\n", mac) if mac >= 0 else -1
            covered = len(text) if mac < 0 else (newline if newline >= 0 else len(text))
            yield m.end(), covered, "private-key"
