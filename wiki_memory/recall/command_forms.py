"""A shell command in the form pages and the moments table compare: split into the commands a
line runs (`&&`, `|`, `;`), each as its program (past `sudo`, `env`, `uv run`, ...), its
subcommand, its long flags and its paths relative to the repository; and whether a command
that was run matches one a page knows. Standard library only (the hook path).
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


MAX_COMMAND = 4000  # characters of a command read
#: Programs that run another command: the command they run is the one that matters.
_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "nice", "timeout", "xargs", "npx", "bunx", "pnpx"}
#: `X run CMD` / `X exec CMD`: a tool running a command in its environment.
_RUNNERS = {"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle", "pixi"}
_ENV_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9:_-]*$")
PROGRAM_WORD = re.compile(r"^(\./|\.\./|/)?[A-Za-z0-9_.+/-]*[A-Za-z][A-Za-z0-9_.+-]*$")
_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&"}


def _split(command: str) -> list[str]:
    import shlex  # deferred: hook path: shlex only when the table has a command to compare

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:  # an unbalanced quote: the words as written
        return command.split()


def _rel_path(token: str, cwd: str, root: str | None) -> str:
    """A path argument relative to the repository's root (as pages write them)."""
    if "::" in token:  # a test id: the file is what a page names
        token = token.split("::", 1)[0]
    if not root:
        return token[2:] if token.startswith("./") else token
    absolute = token if os.path.isabs(token) else os.path.normpath(os.path.join(cwd or root, token))
    rel = os.path.relpath(absolute, root)
    return token if rel == ".." or rel.startswith("../") else rel


def _is_path(token: str) -> bool:
    return "/" in token or "::" in token or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", token))


def segments(command: str, cwd: str | None = None, root: str | None = None) -> list[list[Any]]:
    """The commands a shell line runs, each as [program, subcommand, long flags, arguments,
    environment names], paths made relative to `root`; `cd` moves the directory the later
    paths are relative to and is not itself a command."""
    command = command[:MAX_COMMAND]  # a heredoc or a pasted script: its head says what runs
    here = cwd or root or ""
    out: list[list[Any]] = []
    words: list[str] = []
    for token in [*_split(command), ";"]:
        if token not in _SEPARATORS:
            words.append(token)
            continue
        if words:
            if words[0] == "cd" and len(words) > 1:
                target = words[1]
                here = target if os.path.isabs(target) else os.path.normpath(os.path.join(here or ".", target))
            else:
                segment = _segment(words, here, root)
                if segment:
                    out.append(segment)
        words = []
    return out


def _segment(words: Sequence[str], cwd: str, root: str | None) -> list[Any] | None:
    env: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        assign = _ENV_ASSIGN.match(word)
        if assign:
            env.append(assign.group(1))
        elif os.path.basename(word) in _WRAPPERS:
            pass
        elif word.startswith("-") and i > 0 and os.path.basename(words[i - 1]) in _WRAPPERS:
            pass  # a wrapper's own option (`timeout -s KILL`, `env -i`)
        elif os.path.basename(word) in _RUNNERS and i + 1 < len(words) and words[i + 1] in ("run", "exec"):
            i += 1
        else:
            break
        i += 1
    if i >= len(words) or not PROGRAM_WORD.match(words[i]):
        return None
    program = os.path.basename(words[i])
    rest = list(words[i + 1 :])
    if re.fullmatch(r"python[0-9.]*", program):
        program = "python"
        if len(rest) >= 2 and rest[0] == "-m":
            program, rest = f"python -m {rest[1]}", rest[2:]
    elif program in ("pip3", "pip"):
        program = "pip"
    sub = ""
    if rest and _SUBCOMMAND.match(rest[0]) and not _is_path(rest[0]):
        sub, rest = rest[0], rest[1:]
    flags: list[str] = []
    args: list[str] = []
    takes_value = False
    for word in rest:
        if word.startswith("--") and len(word) > 2:
            flags.append(word.split("=", 1)[0])
            takes_value = "=" not in word
        elif word.startswith("-"):
            # Short switches (-q, -x, -v): how it runs, rarely what it runs. A bare one letter
            # (`-m`), or a word (`-run`, `-timeout`: Go's, Java's long flags), may take a value.
            takes_value = (len(word) == 2 and word != "--") or bool(re.fullmatch(r"-[a-z][a-z-]{2,}", word))
        elif _is_path(word):
            args.append(_rel_path(word, cwd, root))
            takes_value = False
        elif takes_value:
            takes_value = False  # a flag's value (`-m "add orders"`, `--port 8001`): this run's detail
        else:
            args.append(word)
    return [program, sub, sorted(set(flags)), args, sorted(set(env))]


def matches(known: Sequence[Any], run: Sequence[Any]) -> bool:
    """Does the command being run (`run`) do what the page's failing command (`known`) did?
    The same program and subcommand; every long flag it had; every argument it had, or none
    at all where the page's were paths (a whole suite runs each of its parts)."""
    if known[0] != run[0] or known[1] != run[1]:
        return False
    if not set(known[2]) <= set(run[2]):
        return False
    if set(known[3]) <= set(run[3]):
        return True
    return not run[3] and all(_is_path(a) for a in known[3])
