"""Shell command lines read as evidence: which program a command line runs, whether two runs
are "the same command" (or one covers the other), which commands only look around and which
verify the work. The fate of each run is in `command_runs`, what a command changes in
`state_changes`. Standard library only.
"""

from __future__ import annotations

import os
import re
import shlex
from functools import lru_cache

from wiki_memory.capture.shell import segments, split_heredocs
from wiki_memory.consolidate.oneline import clean

_PROBES = {
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "rg",
    "ag",
    "find",
    "fd",
    "which",
    "type",
    "echo",
    "printf",
    "pwd",
    "wc",
    "file",
    "stat",
    "tree",
    "du",
    "df",
    "ps",
    "env",
    "printenv",
    "date",
    "whoami",
    "id",
    "uname",
    "sed",
    "awk",
    "jq",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "test",
    "[",
    "true",
    "false",
    "sleep",
    "command",
    "hostname",
}
_GIT_PROBES = {
    "status",
    "log",
    "diff",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "blame",
    "remote",
    "describe",
    "config",
    "grep",
    "shortlog",
    "reflog",
    "fetch",
}
_VERIFY = re.compile(
    r"\b(pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|karma|playwright|cypress|rspec|minitest|phpunit|"
    r"go (test|build|vet)|cargo (test|build|check|clippy|nextest)|(npm|pnpm|yarn|bun)( run)? (test|build|lint|"
    r"check|typecheck|type-check|e2e)|bun test|make\b|cmake --build|ninja|gradle|gradlew|mvn|tsc|mypy|pyright|"
    r"ruff|eslint|flake8|pylint|black --check|prettier --check|dotnet (test|build)|ctest|bazel (test|build)|"
    r"swift (test|build)|mix test|elixir|deno test|zig build|just)\b"
)
_WRAPPERS = {
    "sudo",
    "time",
    "nice",
    "env",
    "npx",
    "bunx",
    "uv",
    "poetry",
    "pipenv",
    "hatch",
    "pdm",
    "rye",
    "timeout",
    "xvfb-run",
}


@lru_cache(maxsize=4096)
def _command_words(command: str) -> tuple[str, ...]:
    return tuple(_split_command(command))


def command_words(command: str) -> list[str]:
    """The words of the command that does the work: `cd x && FOO=1 uv run pytest -q` -> pytest -q."""
    return list(_command_words(command))


def _split_command(command: str) -> list[str]:
    # The last command of the line that does the work (not `cd`, `export`), and of a
    # pipeline its first stage (`pytest | tee log` is pytest).
    pieces = segments(split_heredocs(command.strip())[0])
    stages: list[str] = []
    for piece in pieces:
        after_pipe, text = piece[0] == "|", piece[1:]
        if not text or re.match(r"^(cd|export|source|\.|set|pushd|popd|true|false|:|exit)(\s|$)", text):
            continue
        if not after_pipe:
            stages.append(text)
    return _stage_words(stages[-1] if stages else command.strip())


@lru_cache(maxsize=4096)
def stage_commands(command: str) -> tuple[tuple[str, ...], ...]:
    """The words of every command the line runs (not the stages a pipe feeds):
    `sudo -u me pactl info && pactl list` -> (pactl info), (pactl list)."""
    pieces = segments(split_heredocs(command.strip())[0])
    return tuple(
        words
        for piece in pieces
        if piece[0] != "|" and piece[1:]
        for words in [tuple(_stage_words(piece[1:]))]
        if words and words[0] not in ("cd", "export", "source", ".", "set", "true", "false", ":", "exit", "echo")
    )


def _stage_words(segment: str) -> list[str]:
    """One command's words without its environment settings and wrappers (`sudo -u me`)."""
    if not any(c in segment for c in "'\"\\"):
        words = segment.split()  # nothing quoted: no need for shlex (slow on long sessions)
    else:
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
    words = _without_redirections(words)
    wrapped = False
    while words and (
        re.match(r"^\w+=", words[0]) or words[0] in _WRAPPERS or words[0] == "run" or words[0].startswith("-")
    ):
        if wrapped and words[0] in ("-u", "-g") and len(words) > 1:
            words = words[1:]  # `sudo -u user`: the user is the option's value, not the program
        wrapped = wrapped or words[0] in _WRAPPERS
        words = words[1:]
    if len(words) >= 3 and re.match(r"^python[\d.]*$", words[0]) and words[1] == "-m":
        words = words[2:]
    if words and _POWERSHELL.fullmatch(os.path.basename(words[0])):
        # `powershell.exe -NoProfile -Command (Get-Content x).Length`: the command is the script.
        script = next((n for n, w in enumerate(words) if w.lower() in ("-command", "-c")), None)
        if script is not None and script + 1 < len(words):
            inner = " ".join(words[script + 1 :]).strip()
            return _stage_words(re.sub(r"^\((.*)\)(\.\w+)?$", r"\1", inner))
    return words


_POWERSHELL = re.compile(r"(powershell|pwsh)(\.exe)?", re.IGNORECASE)


def _without_redirections(words: list[str]) -> list[str]:
    """The words without `2>&1`, `> log`, `<in`: where output goes is not what runs."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*(>>?|<|&>>?|>\|)", word):
            skip = True  # the target is the next word
        elif not re.match(r"^\d*(>>?|<|&>)", word):
            out.append(word)
    return out


def shown(command: str, limit: int = 160) -> str:
    """A command as one short line for a summary: heredoc bodies left out (`<<'EOF' …`)."""
    text, bodies = split_heredocs(command)
    if bodies:
        text = re.sub(r"(<<-?\s*(['\"]?)[A-Za-z_][\w.-]*\2)", r"\1 …", text, count=1)
    return clean(text, limit)


def command_key(command: str) -> tuple[str, ...]:
    """What makes two runs "the same command": the program and its first two arguments."""
    words = command_words(command)
    return tuple(w for w in words if not w.startswith("-"))[:3]


def is_probe(command: str) -> bool:
    """Does the command only look around (`ls`, `cat`, `grep`, `git status`)? Its failure is noise."""
    words = command_words(command)
    if not words:
        return True
    program = os.path.basename(words[0])
    if program == "git":
        return len(words) < 2 or words[1] in _GIT_PROBES
    return program in _PROBES


# PowerShell names a cmdlet by its verb, and these verbs only read (its approved verbs: Get,
# Test, Select, Measure, Find, Resolve, Show, Read, Compare, Format, Where, Sort).
_PS_LOOKS = re.compile(r"(get|test|select|measure|find|resolve|show|read|compare|format|where|sort)-[a-z]+", re.I)

# Programs whose exit status 1 is an answer, "no" (no line matched, no such process, the files
# differ, the test is false, no such program), where a failure is 2 or more.
_EXIT_ONE_IS_NO = {
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "pgrep",
    "pidof",
    "which",
    "diff",
    "cmp",
    "test",
    "[",
    "findstr",
}


def exit_one_means_no(command: str) -> bool:
    """Does the line end in a command whose exit status 1 means "no" (`ls d | grep x`,
    `pgrep -f app`, `git diff --quiet`)? The line's status is its last command's."""
    pieces = segments(split_heredocs(command.strip())[0])
    words = _stage_words(pieces[-1][1:]) if pieces and pieces[-1][1:] else []
    if not words:
        return False
    program = os.path.basename(words[0])
    if program == "git":
        return len(words) > 1 and (
            words[1] == "grep" or (words[1] == "diff" and ("--quiet" in words or "--exit-code" in words))
        )
    if program == "command":
        return "-v" in words[1:2]
    return program in _EXIT_ONE_IS_NO


def is_verification(command: str) -> bool:
    """Does the command check the work (a test run, a build, a type checker, a linter)? A
    look that names a checker (`cat pytest.ini`, `which pytest`) or code run inline
    (`python3 -c "import pytest"`) is not one."""
    words = command_words(command)
    if not words or is_probe(command) or only_looks(command):
        return False  # `pytest --version` looks at the checker; it checks nothing
    if program_family(words[0]) in _INTERPRETERS and len(words) > 1 and words[1] in ("-c", "-e"):
        return False
    return bool(_VERIFY.search(" ".join(words)))


# A subcommand that only reads (`brew info`, `npm view`, `gh issue list`, `kubectl get`).
_READ_ONLY = re.compile(
    r"^(--?(version|help|v|h|V)|info|show|view|list|ls|search|status|outdated|doctor|whoami|version|help|get|"
    r"describe|inspect|cat|log|logs|ps|top|audit|why|explain|query|read|config|env|which|where|print)$"
)
_WEB_READERS = {
    "curl",
    "wget",
    "http",
    "https",
    "xh",
    "ping",
    "dig",
    "nslookup",
    "host",
    "whois",
    "traceroute",
    "invoke-webrequest",
    "invoke-restmethod",
    "iwr",
    "irm",
}
_WRITES_OUT = re.compile(
    r"\s(-o|-O|--output|-X\s*(POST|PUT|PATCH|DELETE)|-d|--data\S*|-F|-T|-OutFile|-Method\s+(Post|Put|Patch|Delete))\b",
    re.IGNORECASE,
)


def only_looks(command: str) -> bool:
    """Does the command only look or fetch (a probe, `brew info`, `pactl info`, `curl URL`),
    changing nothing? Checks (tests, builds) are not looks: see `is_verification`."""
    if is_probe(command):
        return True
    words = purpose_words(command)
    if not words:
        return True
    if _PS_LOOKS.fullmatch(words[0]):
        return True  # a cmdlet whose verb only reads; its failures are not noise (a timeout)
    if words[0].lower() in _WEB_READERS:
        return not _WRITES_OUT.search(" " + command)
    operands = [w for w in words[1:] if not w.startswith("-")]
    flags = [w for w in words[1:] if w.startswith("-")]
    if not operands:
        return bool(flags) and all(_READ_ONLY.match(f) for f in flags)
    if _READ_ONLY.match(operands[0]):
        return True
    # A subcommand group, then its verb (`gh repo view`, `docker image ls`); not a change verb
    # then its operand (`apt install info` installs a package named info).
    return (
        len(operands) > 1
        and re.fullmatch(r"[a-z][a-z-]*", operands[0]) is not None
        and operands[0] not in CHANGE_VERBS
        and bool(_READ_ONLY.match(operands[1]))
    )


_TEST_RUNNERS = {"pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox", "ava", "karma"}


def covers(later: tuple[str, ...], earlier: tuple[str, ...]) -> bool:
    """A later run covers an earlier one: the same command, or a broader run of the same
    test runner (`pytest` after `pytest tests/x.py`; not `make` after `make lint`)."""
    if not later or not earlier or later[0] != earlier[0]:
        return False
    if later == earlier:
        return True
    return earlier[: len(later)] == later and (len(later) >= 2 or os.path.basename(later[0]) in _TEST_RUNNERS)


# The interpreters that run a script named as their first operand (`python x.py` is `x.py`).
_INTERPRETERS = {"python", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node"}


def program_family(program: str) -> str:
    """A program by its family: `/usr/bin/python3.11` and `python` are `python`, `pip3` is `pip`."""
    name = os.path.basename(program)
    if name.startswith("./"):
        name = name[2:]
    family = re.sub(r"(?<=[a-z])[\d.]+$", "", name)
    return family or name


@lru_cache(maxsize=4096)
def purpose_words(command: str) -> tuple[str, ...]:
    """The words of a command with its program named by family and a script run through an
    interpreter named by the script: `python3 ./x.py --v` -> (x.py, --v); `./x.sh` -> (x.sh)."""
    words = list(_command_words(command))
    if not words:
        return ()
    head = program_family(words[0])
    if head in _INTERPRETERS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest and ("." in rest[0] or "/" in rest[0]):
            script = rest[0][2:] if rest[0].startswith("./") else rest[0]
            return (script, *words[words.index(rest[0]) + 1 :])
    if words[0].startswith("./"):
        return (words[0][2:], *words[1:])
    return (head, *words[1:])


# The verbs by which command-line tools change the state of a system when they succeed: a
# package installed or removed, a commit or a push, a branch made, a service started, a
# setting set. Verbs of the tools' own grammar (`npm install x`, `flatpak uninstall x`,
# `git push`, `systemctl restart x`, `pactl set-card-profile`), not names of programs.
CHANGE_VERBS = {
    "install",
    "uninstall",
    "reinstall",
    "remove",
    "purge",
    "erase",
    "upgrade",
    "add",
    "delete",
    "create",
    "deploy",
    "publish",
    "enable",
    "disable",
    "start",
    "stop",
    "restart",
    "reload",
    "login",
    "logout",
    "apply",
    "commit",
    "push",
    "merge",
    "pull",
    "clone",
    "tag",
    "rebase",
    "cherry-pick",
    "mount",
    "umount",
}


# A command that prints one file whole or from its start.
_PRINTS_FILE = {"cat", "bat", "batcat", "head", "nl", "more", "less", "type", "get-content", "gc"}


def printed_file(command: str) -> str | None:
    """The one file a command prints from its start (`cat package.json`, `sed -n '1,200p' go.mod`,
    `cat .git/hooks/pre-commit 2>/dev/null | head -50 || echo "none"`)."""
    command = re.sub(r"\s*\|\|\s*(?:echo|true|:|printf)\b.*$", "", command.strip(), flags=re.S)
    command = re.sub(r"\s*\|\s*head(?:\s+-n?\s*\d+|\s+-\d+)?\s*$", "", command)
    command = re.sub(r"\s+2>\s*/dev/null\b", "", command)
    words = command_words(command)
    if not words:
        return None
    program = os.path.basename(words[0]).lower()
    args = [w for w in words[1:] if not w.startswith("-") and not re.fullmatch(r"\d+", w)]
    if program == "sed" and len(args) == 2 and re.fullmatch(r"1,\d+p", args[0].strip("'\"")):
        return args[1]
    return args[0] if program in _PRINTS_FILE and len(args) == 1 else None


_JOIN = re.compile(r"^(&&|\|\||;|\||&)$")


def joined_otherwise(failed: str, worked: str) -> bool:
    """Do the two lines run the same commands, joined differently (`a && b`, `a; b`)? A shell
    that refused one (Windows PowerShell 5 has no `&&`) then took the other. (A line fixed in its
    words, an unbalanced quote, is the agent's slip, not a trait of the shell.)"""

    def words(line: str) -> list[str]:
        return [w.rstrip(";") for w in line.split() if not _JOIN.match(w)]

    return bool(failed and worked) and failed != worked and words(failed) == words(worked)
