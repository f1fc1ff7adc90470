"""Recorded text made into lines of a summary: one clean line, the telling line of a
failure's output, a path as the session's reader knows it. Standard library only."""

from __future__ import annotations

import os
import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\[[0-9;]{1,8}m")
ERROR_WORDS = re.compile(
    r"error|fail|exception|traceback|fatal|denied|not found|no such|cannot|can't|unable|refused|timed? ?out|"
    r"assert|panic|segmentation|undefined|invalid|exit code|exited with|✗|✘",
    re.IGNORECASE,
)
# The shapes of an error line, strongest first. Each names the error itself in its
# ecosystem's own form, so no list of known errors is needed:
# 1. a crash: Go's `panic:`, Rust's `thread 'main' panicked at`, a fatal signal;
# 2. an exception: a name ending in Error/Exception (dotted or not) and a colon, as Python,
#    Node, Java/Kotlin, C#, Ruby print them, with Java's `Exception in thread "main"` and
#    `Caused by:` lead-ins, pytest's `E   ` and Node's `Uncaught`;
# 3. a line that says it is an error: `error:`, `error[E0433]:`, `fatal:`, `ERROR`,
#    `npm ERR!`/`npm error`, `FAILED`, `--- FAIL:`, a compiler's `file:line:col: error ...`;
# 4. a program speaking of itself (`bash: tree: command not found`, `cat: x: No such file
#    or directory`, `go: cannot find main module`): `prog: [detail: ]message` where the
#    message says something could not be done; PowerShell puts a space before the colon
#    (`tail : The term 'tail' is not recognized as the name of a cmdlet ...`).
_CRASH = re.compile(r"^(panic: |thread '[^']*' panicked at|fatal error: |Segmentation fault|Killed$)")
_EXCEPTION = re.compile(
    r"^(E\s+|Exception in thread \"[^\"]*\"\s+|Caused by:\s+|Uncaught\s+|Unhandled\w*\s+|\(\w+\)\s+)?"
    r"([A-Za-z_$][\w$]*[.:]{1,2})*[A-Za-z_$][\w$]*(Error|Exception|Exit|Interrupt|Failure|Fault)(\s*\[\w+\])?(: |:$|$)"
)
_SAYS_ERROR = re.compile(
    r"^(E\s{2,}\S|(\S+:\d+(:\d+)?:\s*)?(fatal )?error(\[\w+\])?( TS\d+)?:|fatal:|ERROR\b|npm ERR!|npm error\b|"
    r"(\[ERROR\]|ERR!|FAIL(ED)?\b|--- FAIL:)|AssertionError|Traceback)",
    re.IGNORECASE,
)
_PROGRAM = re.compile(r"^(?:[\w.~/-]*/)?(?:[a-z][\w.+-]*|[A-Za-z][\w.+-]* ):(?: line \d+:| \d+:)? (?P<message>.+)$")
_CANNOT = re.compile(
    r"not found|no such file|permission denied|cannot|can't|could not|couldn't|unable to|invalid|unknown|"
    r"unrecognized|illegal|missing|already exists|does not exist|doesn't exist|not a (git repository|directory)|"
    r"is a directory|not permitted|denied|refused|failed|is not a \w+ command|no module named|not installed|"
    r"not recognized",
    re.IGNORECASE,
)
# POSIX shells exit 127 when the command was not found, 126 when it could not be executed.
_EXIT_MEANING = {"127": "command not found", "126": "permission denied or not executable"}
_PLACEHOLDER = re.compile(r"^[A-Z][\w ]{0,30}:\s*\([a-z ]+\)$")
_EXIT_LINE = re.compile(r"^(?:Error: )?(?:Exit code|exit status|exited with code):? (-?\d+)$", re.IGNORECASE)


def error_rank(line: str) -> int:
    """How surely a line names the error by its shape (0: the surest; 9: it does not)."""
    if _CRASH.match(line):
        return 0
    if _EXCEPTION.match(line):
        return 1
    if _SAYS_ERROR.match(line):
        # `Traceback (most recent call last):` only announces the exception below it.
        return 4 if line.startswith("Traceback") else 2
    program = _PROGRAM.match(line)
    if program and _CANNOT.search(program.group("message")):
        return 3
    return 9


# Markdown emphasis: `**x**` anywhere a word may start, `__x y__` only around words with a space
# between. Why: `__init__.py`, `src/__main__.py` and `__dunder__` are names, not emphasis;
# stripping them made `src/erk/__init__.py` read as `src/erk/init.py` in handoffs.
_EMPHASIS = re.compile(
    r"(?<![\w/.])(\*\*)([^*\n]+?)\*\*(?!\w)|(?<![\w/.])(__)(?=[^_\s])([^_\n]*\s[^_\n]*?)(?<=[^_\s])__(?![\w.])"
)


def clean(text: str, limit: int = 300) -> str:
    """One line: ANSI colours and Markdown emphasis gone, whitespace collapsed, cut at a word."""
    text = _ANSI.sub("", text or "")
    text = _EMPHASIS.sub(lambda m: m.group(2) or m.group(4), text)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[limit // 2 : limit] else text[:limit]
    return cut.rstrip(",;:") + " …"


def cut_at_word(text: str, limit: int) -> str:
    """`text` whole when it fits in `limit` characters, else its words that fit and " …"."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def error_line(output: str) -> str:
    """The most telling line of a failure's output (the crash, the exception, the error, a
    program's complaint; see `error_rank`), else its last line that speaks of failing, else its
    last line. Of lines of the same strength the first wins: what follows is the cascade."""
    lines = [line.strip() for line in _ANSI.sub("", output or "").splitlines() if line.strip()]
    lines = [line for line in lines if not re.match(r"^[\[\]\.…─━⎯\-=_ ]+$", line) and not line.startswith("[... ")]
    lines = [re.sub(r"</?tool_use_error>", "", line).strip() for line in lines]
    # A report field holding a placeholder (`Error: (none)`, `Output: (empty)`) says nothing.
    lines = [line for line in lines if not _PLACEHOLDER.match(line)]
    exits = [m.group(1) for m in (_EXIT_LINE.match(line) for line in lines) if m]
    lines = [line for line in lines if line and not _EXIT_LINE.match(line)]
    said, lines = powershell_errors(lines)
    if not lines:
        meaning = _EXIT_MEANING.get(exits[-1]) if exits else None
        return f"exit code {exits[-1]}: {meaning}" if meaning else ""
    ranked = sorted(range(len(lines)), key=lambda i: (error_rank(lines[i]), i))
    best = ranked[0]
    if said and error_rank(lines[best]) > 1:
        return clean(said[0], 200)  # (a crash or an exception above it still says more)
    if error_rank(lines[best]) < 9:
        if error_rank(lines[best]) != 1:
            best = _root_cause(lines, best)
        return clean(lines[best], 200)
    weak = [line for line in lines if ERROR_WORDS.search(line)]
    if not weak and exits and exits[-1] in _EXIT_MEANING:
        return f"exit code {exits[-1]}: {_EXIT_MEANING[exits[-1]]}"
    return clean((weak or lines)[-1], 200)


# PowerShell's error record: the message, then where it happened (`At line:2 char:1`, `At
# C:\x\run.ps1:3 char:5`, sometimes glued to the message's end), the command under `+ ` and
# `~~~` marks, then `+ CategoryInfo : ...` and `+ FullyQualifiedErrorId : ...`. Only the message
# says what went wrong; its last lines (`NativeCommandFailed`) name a category.
_PS_AT = re.compile(r"At (?:line|\S.*?):\d+ char:\d+$")
_PS_MARK = re.compile(r"^\+ ")


def powershell_errors(lines: list[str]) -> tuple[list[str], list[str]]:
    """(the messages of the PowerShell error records among `lines`, the lines without the
    records' position and `+` lines). A runtime error's message comes before its `At line:`
    (wrapped by the console over a few lines); a parse error's after the `+ ~~` marks."""
    if not any(_PS_AT.search(line) for line in lines):
        return [], lines
    said: list[str] = []
    kept: list[str] = []
    for i, line in enumerate(lines):
        if _PS_MARK.match(line):
            continue
        at = _PS_AT.search(line)
        if at is None:
            kept.append(line)
            continue
        message = line[: at.start()].strip()
        if message:
            kept.append(message)
        before = i > 0 and (message or not (_PS_MARK.match(lines[i - 1]) or _PS_AT.search(lines[i - 1])))
        if before and kept:
            start = len(kept) - 1
            # The console wraps a long message: it starts at the line that names an error, at
            # most two lines up (`bash : The term 'bash' is not recognized ... Check` / `the ...`).
            for j in range(len(kept) - 1, max(len(kept) - 4, -1), -1):
                if error_rank(kept[j]) < 9:
                    start = j
                    break
            said.append(" ".join(kept[start:]))
        else:
            after = next((x for x in lines[i + 1 :] if not _PS_MARK.match(x) and not _PS_AT.search(x)), "")
            if after:
                said.append(after)
    return said, kept


def _root_cause(lines: list[str], best: int) -> int:
    """A traceback's exception line rather than the header that announces it; a Rust
    panic's message with its `panicked at` line."""
    if lines[best].startswith("thread '") and lines[best].endswith(":") and best + 1 < len(lines):
        lines[best] = f"{lines[best]} {lines[best + 1]}"
        return best
    if lines[best].startswith("Traceback"):
        for i in range(best + 1, len(lines)):
            if _EXCEPTION.match(lines[i]) or re.match(r"^[A-Za-z_][\w.]*: \S", lines[i]):
                return i
    return best


def relative(path: str, cwd: str | None) -> str:
    """`path` relative to the working directory, else to the home (`~/...`), else as it is."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home + "/"):
        return "~/" + path[len(home) + 1 :]
    return path
