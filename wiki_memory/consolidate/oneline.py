"""Recorded text made into lines of a summary: one clean line, the telling line of a
failure's output, a path as the session's reader knows it. Standard library only."""

from __future__ import annotations

import os
import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\[[0-9;]{1,8}m")
_ERROR_WORDS = re.compile(
    r"error|fail|exception|traceback|fatal|denied|not found|no such|cannot|can't|unable|refused|timed? ?out|"
    r"assert|panic|segmentation|undefined|invalid|exit code|exited with|✗|✘",
    re.IGNORECASE,
)
_STRONG_ERROR = re.compile(
    r"^(E\s{2,}|\w*(Error|Exception)\b:?|error(\[\w+\])?:|FAIL(ED)?\b|fatal:|npm ERR!|"
    r"panic:|Traceback|AssertionError)",
    re.IGNORECASE,
)


def clean(text: str, limit: int = 300) -> str:
    """One line: ANSI colours and Markdown emphasis gone, whitespace collapsed, cut at a word."""
    text = _ANSI.sub("", text or "")
    text = re.sub(r"[*_]{2}([^*_]+)[*_]{2}", r"\1", text)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[limit // 2 : limit] else text[:limit]
    return cut.rstrip(",;:") + " …"


def error_line(output: str) -> str:
    """The most telling line of a failure's output (the assertion, the error), else its last line."""
    lines = [line.strip() for line in _ANSI.sub("", output or "").splitlines() if line.strip()]
    lines = [line for line in lines if not re.match(r"^[\[\]\.…─━⎯\-=_ ]+$", line) and not line.startswith("[... ")]
    lines = [re.sub(r"</?tool_use_error>", "", line).strip() for line in lines]
    lines = [line for line in lines if line and not re.match(r"^(Error: )?Exit code -?\d+$", line)]
    if not lines:
        return ""
    strong = [line for line in lines if _STRONG_ERROR.match(line)]
    if strong:
        # The first assertion or error names the cause; what follows is usually the cascade.
        return clean(strong[0], 200)
    weak = [line for line in lines if _ERROR_WORDS.search(line)]
    return clean((weak or lines)[-1], 200)


def relative(path: str, cwd: str | None) -> str:
    """`path` relative to the working directory, else to the home (`~/...`), else as it is."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home + "/"):
        return "~/" + path[len(home) + 1 :]
    return path
