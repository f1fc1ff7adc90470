"""Shell command lines read as evidence: the line cut into its commands, heredoc bodies set
apart, and the files a line changes (`sed -i`, `perl -pi`, `> f`, `tee f`, `cat > f <<EOF`,
`apply_patch` inside `bash -lc`, `mv`/`cp`/`rm`/`touch`/`mkdir`, `git apply`, `patch`).

Agents edit files through the shell as often as through their edit tools; an account of a
session that only counts the edit tools misses those changes. Standard library only: this is
the hook path (`shlex` is imported when a line looks like it may write a file).
"""

from __future__ import annotations

import os
import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# A cheap first look: a line with none of these writes no file (most commands).
_MAY_WRITE = re.compile(
    r">|\b(tee|sed|perl|mv|cp|rm|rmdir|touch|mkdir|apply|patch|apply_patch|applypatch|bash|sh|zsh)\b"
)
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_DIFF_FILE = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", re.M)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
_WRAPPERS = {"sudo", "time", "nice", "nohup", "env", "command", "builtin", "exec"}
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# Paths that are never a project's files.
_NOT_PROJECT = ("/dev/", "/tmp/", "/proc/", "/sys/", "/var/tmp/", "/private/tmp/")


def segments(command: str) -> list[str]:
    """A shell line cut at `&&`, `||`, `;`, `|` and newlines outside quotes; each part starts
    with the separator before it (`|` after a pipe, else `;`)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    sep = ";"
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i : i + 2])
                i += 2
                continue
            if ch == quote:
                quote = ""
            current.append(ch)
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == "\\" and i + 1 < len(command):
            current.append(command[i : i + 2])
            i += 2
            continue
        elif ch in ";\n&|" and not (ch in "&|" and current and current[-1].endswith((">", "<"))):
            # `2>&1`, `&>`, `>|` are redirections, not separators.
            if ch == "&" and command[i : i + 2] == "&>":
                current.append(ch)
                i += 1
                continue
            double = command[i : i + 2] in ("&&", "||")
            parts.append(sep + "".join(current).strip())
            sep = "|" if ch == "|" and not double else ";"
            current = []
            i += 2 if double else 1
            continue
        else:
            current.append(ch)
        i += 1
    parts.append(sep + "".join(current).strip())
    # The shell's own words around commands (`if [ -d d ]; then git rm -r d; fi`): the command
    # is what follows `then`, `do`, `else`; `fi`, `done` close the block and run nothing.
    out = []
    for part in parts:
        text = _KEYWORDS.sub("", part[1:])
        if text not in _CLOSERS:
            out.append(part[0] + text)
    return out


_KEYWORDS = re.compile(r"^(?:(?:then|else|do|if|elif|while|until|!|\{)\s+)+")
_CLOSERS = {"fi", "done", "esac", "}"}


def split_heredocs(command: str) -> tuple[str, list[str]]:
    """The line without its heredoc bodies (each `<<EOF` keeps its marker), and the bodies."""
    if "<<" not in command:
        return command, []
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            if line[max(0, m.start() - 1) : m.start()] == "<":
                continue  # `<<<` is a here-string, on one line
            strip_tabs, delimiter = m.group(1) == "-", m.group(3)
            body: list[str] = []
            while i < len(lines):
                text = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                # The closing word may carry the quote that closes a `bash -lc "..."` around it.
                if text.strip() == delimiter or re.fullmatch(rf"\s*{re.escape(delimiter)}\s*['\"]\)?;?\s*", text):
                    if text.strip() != delimiter:
                        kept.append(text.strip()[len(delimiter) :])
                    break
                body.append(lines[i - 1])
            bodies.append("\n".join(body))
    return "\n".join(kept), bodies


def _words(segment: str) -> list[str]:
    lexer = shlex.shlex(segment, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: read it word by word
        return segment.split()


def _is_path(word: str) -> bool:
    return bool(word) and not any(c in word for c in "$`*?[]{}()<>|&;=") and not word.startswith(("-", "~"))


class _Line:
    """What one shell line changes, gathered segment by segment."""

    def __init__(self, cwd: str | None, bodies: list[str], read: Callable[[str], str] | None) -> None:
        self.cwd = cwd
        self.bodies = bodies
        self.read = read
        self.here = ""  # the directory a `cd` moved to, relative to the working directory
        self.files: dict[str, None] = {}

    def add(self, word: str) -> None:
        if not _is_path(word):
            return
        path = word if os.path.isabs(word) else os.path.normpath(os.path.join(self.here, word))
        if path in (".", "..") or path.startswith("../"):
            return
        if os.path.isabs(path):
            # Inside the working directory it is the project's, wherever the project lives (a
            # checkout under /tmp too); elsewhere a temporary file or outside the project.
            base = self.cwd.rstrip("/") + "/" if self.cwd else ""
            if base and path.startswith(base):
                path = path[len(base) :]
            elif base or path.startswith(_NOT_PROJECT) or path in ("/dev/null", "/tmp"):
                return
        self.files[path] = None

    def diff_files(self, text: str) -> None:
        for m in _DIFF_FILE.finditer(text):
            if m.group(1) != "/dev/null":
                self.add(m.group(1))

    def segment(self, text: str) -> None:
        words = _words(text)
        argv: list[str] = []
        stdin_file = ""
        heredoc = False
        n = 0
        while n < len(words):
            word = words[n]
            nxt = words[n + 1] if n + 1 < len(words) else ""
            if word in _REDIRECTS:
                if nxt:
                    self.add(nxt)
                n += 2
                continue
            if word in (">&", "<&", "<>"):
                n += 2
                continue
            if word in ("<<", "<<-"):
                heredoc = True
                n += 2
                continue
            if word == "<<<":
                n += 2
                continue
            if word == "<":
                stdin_file = nxt
                n += 2
                continue
            if word.isdigit() and nxt in _REDIRECTS | {">&"}:
                n += 1  # the file descriptor of `2> f`
                continue
            argv.append(word)
            n += 1
        while argv and (re.match(r"^\w+=", argv[0]) or argv[0] in _WRAPPERS):
            argv = argv[1:]
        if not argv:
            return
        program = os.path.basename(argv[0])
        args = argv[1:]
        if program == "cd":
            target = args[0] if args else ""
            base = (self.cwd or "").rstrip("/")
            if base and os.path.isabs(target) and (target + "/").startswith(base + "/"):
                target = os.path.relpath(target, base)
            if _is_path(target) and not os.path.isabs(target):
                self.here = os.path.normpath(os.path.join(self.here, target))
            elif target:
                self.here = "\0"  # somewhere we cannot follow: paths after it are not ours
            return
        if self.here == "\0":
            return
        if program in _SHELLS:
            for i, arg in enumerate(args[:-1]):
                if re.fullmatch(r"-\w*c", arg):
                    inner = _Line(self.cwd, self.bodies, self.read)
                    inner.here = self.here
                    inner.line(args[i + 1])
                    self.files.update(inner.files)
                    return
            return
        handler = _PROGRAMS.get(program)
        if handler is not None:
            handler(self, args, stdin_file, heredoc)

    def line(self, command: str) -> None:
        if "*** Begin Patch" in command or "*** Update File:" in command or "*** Add File:" in command:
            for m in _PATCH_FILE.finditer(command):
                self.add((m.group(1) or m.group(2)).strip())
        text, bodies = split_heredocs(command)
        self.bodies = self.bodies + bodies
        for part in segments(text):
            if part[1:] and (_MAY_WRITE.search(part[1:]) or part[1:].startswith("cd ")):
                self.segment(part[1:])


def _operands(args: list[str], takes_value: str = "") -> list[str]:
    """The non-option words of a command's arguments; options named in `takes_value`
    (single letters) consume the word after them."""
    out: list[str] = []
    skip = False
    only_operands = False
    for arg in args:
        if skip:
            skip = False
            continue
        if only_operands or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            only_operands = True
        elif len(arg) == 2 and arg[1] in takes_value:
            skip = True
    return out


def _sed(line: _Line, args: list[str], _stdin: str, _heredoc: bool) -> None:
    if not any(a == "-i" or a.startswith(("-i", "--in-place")) or re.fullmatch(r"-[a-zA-Z]*i", a) for a in args):
        return
    scripts = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "-e")) for a in args)
    rest: list[str] = []
    skip = False
    for n, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("-e", "-f", "--expression", "--file"):
            skip = True
        elif arg == "-i" and n + 1 < len(args) and args[n + 1] == "":
            skip = True  # BSD sed: `-i ''`, an empty backup suffix
        elif not arg.startswith("-"):
            rest.append(arg)
    for path in rest if scripts else rest[1:]:
        line.add(path)


def _perl(line: _Line, args: list[str], _stdin: str, _heredoc: bool) -> None:
    if not any(re.fullmatch(r"-[a-zA-Z0-9]*i\S*", a) for a in args):
        return
    rest: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if re.fullmatch(r"-[a-zA-Z0-9]*[eE]", arg):
            skip = True  # the code follows
        elif not arg.startswith("-"):
            rest.append(arg)
    for path in rest:
        line.add(path)


def _each(line: _Line, args: list[str], _stdin: str, _heredoc: bool) -> None:
    for path in _operands(args, "m"):
        line.add(path)


def _mv(line: _Line, args: list[str], _stdin: str, _heredoc: bool) -> None:
    for path in _operands(args, "tS"):
        line.add(path)


def _cp(line: _Line, args: list[str], _stdin: str, _heredoc: bool) -> None:
    operands = _operands(args, "tS")
    target = next((args[n + 1] for n, a in enumerate(args[:-1]) if a == "-t"), None)
    if target is None and len(operands) >= 2:
        target = operands[-1]
        if len(operands) > 2 or target.endswith("/"):
            # Into a folder: the copies are the folder's entries.
            for source in operands[:-1]:
                line.add(os.path.join(target, os.path.basename(source.rstrip("/"))))
            return
    if target:
        line.add(target)


def _patch(line: _Line, args: list[str], stdin: str, heredoc: bool) -> None:
    before = len(line.files)
    if heredoc:
        for body in line.bodies:
            line.diff_files(body)
    diff_file = stdin or next((args[n + 1] for n, a in enumerate(args[:-1]) if a in ("-i", "--input")), "")
    if diff_file and line.read is not None:
        line.diff_files(line.read(os.path.join(line.here, diff_file)))
    if len(line.files) == before and not heredoc and not stdin:
        for path in _operands(args, "pdiDBoFrVzY")[:1]:
            line.add(path)  # `patch FILE < diff` names the file it patches


def _git(line: _Line, args: list[str], stdin: str, heredoc: bool) -> None:
    sub = _operands(args, "Cc")
    if not sub:
        return
    if sub[0] in ("mv", "rm"):
        for path in sub[1:]:
            line.add(path)
    elif sub[0] == "apply":
        if heredoc or stdin:
            _patch(line, [], stdin, heredoc)
        for diff_file in sub[1:]:
            if line.read is not None:
                line.diff_files(line.read(os.path.join(line.here, diff_file)))


def _apply_patch(line: _Line, args: list[str], _stdin: str, heredoc: bool) -> None:
    texts = list(args) + (line.bodies if heredoc else [])
    for text in texts:
        for m in _PATCH_FILE.finditer(text):
            line.add((m.group(1) or m.group(2)).strip())


_PROGRAMS: dict[str, Callable[[_Line, list[str], str, bool], None]] = {
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "tee": _each,
    "rm": _each,
    "rmdir": _each,
    "touch": _each,
    "mkdir": _each,
    "mv": _mv,
    "cp": _cp,
    "patch": _patch,
    "git": _git,
    "apply_patch": _apply_patch,
    "applypatch": _apply_patch,
}


def _read_small(cwd: str | None) -> Callable[[str], str]:
    def read(path: str) -> str:
        full = path if os.path.isabs(path) else os.path.join(cwd or ".", path)
        try:
            if os.path.getsize(full) > 1_000_000:
                return ""
            with open(full, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    return read


def edited_files(command: str, cwd: str | None = None, *, read_patches: bool = True) -> tuple[str, ...]:
    """The project files a shell line writes, moves, creates or deletes, relative to `cwd`
    (paths outside it, temporary files and `/dev/null` are left out). Reads, `git checkout`
    and the like change nothing here. `read_patches` lets `git apply x.diff` read the diff
    to name its files."""
    if not command or not _MAY_WRITE.search(command):
        return ()
    line = _Line(cwd, [], _read_small(cwd) if read_patches else None)
    try:
        line.line(command)
    except (ValueError, RecursionError):
        return tuple(line.files)
    return tuple(line.files)
