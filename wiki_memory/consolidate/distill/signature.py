"""An error's signature: its telling line with what changes from run to run taken out
(paths, line numbers, addresses, durations, test ids), so that the same failure on another
day, machine or checkout reads the same; and what kind of error it is.

    signature("E   KeyError: 'SHOP_DB_URL'")                              -> "KeyError: 'SHOP_DB_URL'"
    signature("FAILED tests/test_api.py::test_list - KeyError: 'X'")     -> "KeyError: 'X'"
    signature('File "/home/a/app/db.py", line 12, in connect')           -> 'File "db.py", in connect'
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.oneline import error_rank

_PREFIXES = re.compile(
    r"^(E\s+|FAILED\s+\S+\s+-\s+|ERROR\s+\S+\s+-\s+|\[stderr\]\s*|stderr:\s*|Error: Exit code \d+\s*|"
    r"Exception in thread \"[^\"]*\"\s+|Caused by:\s+|Uncaught\s+)",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~@+-]*/)+([\w.@+-]+)")
_LINE_NO = re.compile(r"(\.[A-Za-z]\w{0,4})(:\d+){1,2}\b|(\.[A-Za-z]\w{0,4})\(\d+,\d+\)|,\s*line \d+")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_LONG_HEX = re.compile(r"\b[0-9a-f]{12,}\b")
_DURATION = re.compile(r"\b(in |after )?\d+(\.\d+)?\s?(ms|s|sec|secs|seconds|minutes?)\b")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?\b")
_BIG_NUMBER = re.compile(r"\b\d{6,}\b")

#: A line that names the error outright (an exception, `error:`, a missing command or file).
_EXCEPTION = re.compile(r"\b[A-Za-z_.]*(Error|Exception|Exit|Interrupt|Failure)\b")
_TELLING = re.compile(
    r"\berror(\[\w+\])?:|command not found|No such file or directory|"
    r"Cannot find module|Module not found|ECONNREFUSED|EADDRINUSE|ENOENT|EACCES|Permission denied|panic:|fatal:|"
    r"npm ERR!|\bnot found\b|\bunknown (option|command|flag)\b|\brefused\b|\btimed? ?out\b|"
    # Windows and PowerShell say it in sentences ("The parameter is incorrect.", "Access is denied.").
    r"\bis (not valid|invalid|incorrect)\b|\bdenied\b|\bnot permitted\b|\bcannot find the (path|file)\b|"
    r"\bnot recognized as\b|"
    # A shell that could not parse the line (bash's, PowerShell's words).
    r"\bis not a valid\b|\bsyntax error\b|\bunexpected (token|EOF|end of file)\b",
    re.IGNORECASE,
)
#: The shell refused the line before running anything in it: its syntax, not the program.
SHELL_SYNTAX = re.compile(
    r"\bsyntax error\b|\bunexpected (token|EOF|end of file)\b|is not a valid statement separator|"
    r"\bParserError\b|Missing closing",
    re.IGNORECASE,
)
#: Test assertions: about the logic under test, not a trap of the project.
_ASSERTION = re.compile(
    r"AssertionError|\bassert\b|\bexpected\b.*\b(got|received|but was|to (be|equal))\b|\bto(Be|Equal)\b|"
    r"\b\d+ failed\b|\bassert_eq|left == right|Expected:|Received:",
    re.IGNORECASE,
)
#: Findings of linters, type checkers and compilers: code being written, not a trap.
_STATIC = re.compile(
    r"SyntaxError|IndentationError|TabError|\berror\[E\d+\]|\berror TS\d+|\bTS\d{4}\b|\b[A-Z]{1,3}\d{3,4}\b [A-Za-z']|"
    r"\berror: .*\s\[[a-z]+(-[a-z]+)*\]$|\bIncompatible\b|has no attribute .* \[|"
    r"mismatched types|cannot find (value|type|function)|undeclared|unused (import|variable)|"
    r"would reformat|would be reformatted|Found \d+ errors? in \d+ files?|error: Unsupported",
)


def signature(error: str, limit: int = 160) -> str:
    """The error line as it would read on any run (see the module docstring); "" for none."""
    text = " ".join((error or "").split())
    previous = None
    while previous != text:
        previous = text
        text = _PREFIXES.sub("", text).strip()
    text = _TIMESTAMP.sub("", text)
    text = _UUID.sub("…", text)
    text = _HEX.sub("0x…", text)
    text = _LONG_HEX.sub("…", text)
    text = _LINE_NO.sub(lambda m: m.group(1) or m.group(3) or "", text)
    text = _PATH.sub(r"\1", text)
    text = _DURATION.sub("", text)
    text = _BIG_NUMBER.sub("…", text)
    text = " ".join(text.split()).strip(" .,;:-")
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return text


#: A build tool's own line about a step that failed: the cause is on another line.
_WRAPPER = re.compile(r"^(make(\[\d+\])?: \*\*\*|ELIFECYCLE|error: Recipe `)")
_ONLY_FAILED = re.compile(r"^(FAIL(ED)?|--- FAIL:|ERROR|Traceback)\b(?!.*(Error|Exception)\b)", re.IGNORECASE)
#: `package.module.SomethingWrong: message`, an exception named by its dotted path.
_DOTTED_EXCEPTION = re.compile(r"\b[a-z_][\w]*(\.[a-z_][\w]*)+\.[A-Z]\w+: \S")


def is_telling(error: str) -> bool:
    """Does the line name an error (not just a last line of output, or a build tool's line
    that a step failed)?"""
    text = error or ""
    if _WRAPPER.match(text):
        return False
    # An error line by its shape (see `oneline.error_rank`); a bare FAIL says only that it failed.
    if error_rank(text) < 9 and not _ONLY_FAILED.match(text):
        return True
    return bool(_EXCEPTION.search(text) or _DOTTED_EXCEPTION.search(text) or _TELLING.search(text))


def is_assertion(error: str) -> bool:
    return bool(_ASSERTION.search(error or ""))


def is_static_finding(error: str) -> bool:
    return bool(_STATIC.search(error or ""))


def words_of(sig: str) -> set[str]:
    """The identifiers of a signature (for an explanation that names them)."""
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_.]{2,}", sig or "")}


# The name the shell says it could not find or start, in its own words: bash's and zsh's
# `command not found`, dash's `sh: 1: rg: not found`, PowerShell's `The term 'bash' is not
# recognized` and `Program 'rg.exe' failed to run`, cmd's `'rg' is not recognized as an internal`.
_NAMED = (
    re.compile(r"(?:^|: )(?:line \d+: )?(?P<name>[^\s:]+): command not found"),
    re.compile(r"command not found: (?P<name>\S+)$"),
    re.compile(r"^\S+: (?:\d+: )?(?P<name>[^\s:]+): not found$"),
    re.compile(r"The term '(?P<name>[^']+)' is not recognized"),
    re.compile(r"^'(?P<name>[^']+)' is not recognized as an internal"),
    re.compile(r"^Program '(?P<name>[^']+)' failed to run"),
)


def missing_name(error: str) -> str:
    """The program an error line says could not be found or started, by its file name without
    `.exe` (`rg` for `Program 'rg.exe' failed to run`); "" when it names none."""
    for shape in _NAMED:
        m = shape.search(error or "")
        if m:
            return re.sub(r"\.exe$", "", os.path.basename(m.group("name")), flags=re.I)
    return ""
