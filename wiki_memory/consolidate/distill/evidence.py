"""A session's evidence as the distillers read it: each shell command with where it ran,
what it needed, how it ended and what it was for; the edits, with the files each made new;
the user's prompts and the agent's answers, in order.

Standard library only.
"""

from __future__ import annotations

import ntpath
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from wiki_memory.capture.prompts import classify_turns
from wiki_memory.capture.shell import split_heredocs
from wiki_memory.capture.toolcalls import CUT_MARK
from wiki_memory.consolidate.agent_reports import delegated_checks
from wiki_memory.consolidate.command_runs import CommandRun
from wiki_memory.consolidate.commands import command_words, is_probe
from wiki_memory.consolidate.extract import Summary
from wiki_memory.consolidate.oneline import clean, error_line
from wiki_memory.consolidate.session import Answer, Prompt, Step, iso, time_key

# What a command is for, by the words that do the work (after `cd`, env, wrappers, `python -m`).
_PURPOSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "tests",
            r"^(pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|ava|rspec|phpunit|ctest)( |$)|"
            r"^(npm|pnpm|yarn|bun)( run)? test(:\S+)?( |$)|"
            r"^cargo (test|nextest)( |$)|^go test( |$)|^(make|just) (test|tests|check)( |$)|"
            r"^(mvn|\./mvnw) (test|verify)( |$)|^(gradle|\./gradlew) test( |$)|^dotnet test( |$)|"
            r"^bundle exec (rspec|rake test)( |$)|^mix test( |$)|^deno test( |$)|^swift test( |$)|"
            r"^bazel test( |$)|^(npx )?playwright test( |$)",
        ),
        (
            "typecheck",
            r"^(mypy|pyright|basedpyright)( |$)|^tsc( .*)? --noEmit( |$)|"
            r"^(npm|pnpm|yarn|bun)( run)? (typecheck|type-check|check-types|tsc)( |$)|"
            r"^(make|just) (typecheck|type-check|mypy)( |$)",
        ),
        (
            "lint",
            r"^ruff( check)?( |$)(?!.*\bformat\b)|^(flake8|pylint|eslint|golangci-lint|shellcheck|rubocop)( |$)|"
            r"^(npm|pnpm|yarn|bun)( run)? lint(:\S+)?( |$)|^cargo clippy( |$)|^(make|just) lint( |$)|"
            r"^pre-commit run( |$)",
        ),
        (
            "format",
            r"^ruff format( |$)|^black( |$)|^prettier( |$)|^cargo fmt( |$)|^gofmt( |$)|"
            r"^(npm|pnpm|yarn|bun)( run)? (format|fmt)( |$)|^(make|just) (format|fmt)( |$)",
        ),
        (
            "build",
            r"^(npm|pnpm|yarn|bun)( run)? build(:\S+)?( |$)|^cargo build( |$)|^go build( |$)|"
            r"^make( build| all)?$|^(make|just) build( |$)|^python\d* -m build( |$)|^build( |$)|"
            r"^(mvn|\./mvnw) (package|install)( |$)|^(gradle|\./gradlew) (build|assemble)( |$)|"
            r"^dotnet build( |$)|^tsc( -b| --build| -p \S+)?$|^cmake --build( |$)|^zig build( |$)",
        ),
        (
            "deploy",
            r"^(make|just) deploy( |$)|^(npm|pnpm|yarn|bun)( run)? deploy(:\S+)?( |$)|^fly deploy( |$)|"
            r"^flyctl deploy( |$)|^vercel (deploy|--prod)( |$)",
        ),
        (
            # One of the project's own scripts, by its path inside the project (`python3
            # scripts/sync.py`, `./bin/setup`, `bash tools/release.sh v2`), not /tmp's or ~'s.
            "scripts",
            r"^((python[\d.]*|bash|sh|zsh|node|ruby|perl|php|pwsh|bun|tsx|ts-node|deno run|uv run)( -[\w-]+)* )?"
            r"(\./)?\.?(?![./~$])[\w.-]+(/[\w.-]+)*\.(py|sh|bash|js|mjs|cjs|ts|rb|pl|php|ps1)( |$)|"
            r"^\./(?![./])[\w.-]+(/[\w.-]+)*( |$)",
        ),
    )
)
# A run narrowed to one test or one file says how to run that test, not the suite.
_NARROW = re.compile(
    r"::|(^| )(-k|-t|--testNamePattern|--grep|-run|-m)( |=)|(^| )(--collect-only|--co|--dry-run|"
    r"--list-tests|--listTests|--watch)( |$)|"
    r"(^| )\S+\.(py|ts|tsx|js|jsx|mjs|rs|go|rb|java|kt|php|ex|exs|swift|cs)(:\d+)?( |$)"
)
# Output filters that change nothing of what runs (`2>&1 | tail -30`).
_FILTER_TAIL = re.compile(r"\s*(2>&1\s*)?(\|\s*(tail|head|grep|less|more|cat|tee)\b[^|;&]*)+\s*$")
_SETUP = re.compile(r"^(source|\.)\s+\S*(venv|env)\S*/bin/activate\b|^(nvm|fnm|pyenv|conda) (use|activate|shell)\b")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_PASS_MARKERS = re.compile(
    r"\b\d+ (passed|passing)\b|\b0 (failures?|failed|errors?)\b|\btest result: ok\b|^ok\s+\S+|\bAll checks passed\b|"
    r"\bSuccess: no issues found\b|\bBuild succeeded\b|\bcompiled successfully\b|\bfound no issues\b|"
    r"\bno (issues|problems|offenses) (found|detected)\b",
    re.M | re.IGNORECASE,
)
_FAIL_MARKERS = re.compile(
    r"\b[1-9]\d* (failed|failures?|errors?|failing)\b|\bFAILED\b|\bFAIL\b|\bERROR\b|Traceback", re.M
)
# A package manager's options that pick a package or a folder, not what runs (`pnpm --filter app lint`).
_PM_OPTIONS = re.compile(
    r" (--filter|-F|-C|--dir|--prefix|--workspace|-w|--cwd|workspace)(=\S+| \S+)| (-r|--recursive|--silent|-s)(?= )"
)


# Files a shell line writes: `sed -i`/`perl -pi` on a file, a redirect into a file (`cat > f
# <<EOF`, `echo x >> f`), `tee f`, a patch applied from a heredoc (`apply_patch <<EOF` with its
# `*** Update File:` lines), PowerShell's `Set-Content`/`Out-File`.
_REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\|?\s*(?P<path>[^\s;&|<>()]+)")
_IN_PLACE = re.compile(r"^(sed|gsed|perl|ruby)\b(?=.*\s-(i|pi|p?i\S*)\b)")
_TEE = re.compile(r"\btee\s+(?:-a\s+)?(?P<path>[^\s;&|<>()-][^\s;&|<>()]*)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (?P<path>.+?)\s*$", re.M)
_PS_WRITE = re.compile(
    r"\b(?:Set-Content|Out-File|Add-Content)\b[^;|]*?(?:-(?:Path|FilePath)\s+)?['\"]?(?P<path>[\w./\\:-]+\.\w+)"
)
_WRITES_TEXT = re.compile(r"^(echo|printf|cat)\b")
_NOT_A_FILE = re.compile(r"^(/dev/|&|\$|-)|^\d+$")


def shell_writes(command: str) -> list[str]:
    """The files a shell line changes (see the patterns above), as the line names them."""
    found: list[str] = []
    body = re.sub(r"<<-?\s*['\"]?(\w+)['\"]?\n.*?\n\1\b", "<<HEREDOC", command, flags=re.S)
    found += [m.group("path") for m in _PATCH_FILE.finditer(command)]
    for part in segments(body):
        words = part.split()
        if words and _IN_PLACE.match(part):
            # The last word that is not an option or the expression is the file.
            args = [w.strip("'\"") for w in words[1:] if not w.startswith("-")]
            if len(args) >= 2:
                found.append(args[-1])
        # Text written into a file (`echo`, `printf`, `cat` of a heredoc); another program's
        # output saved to a file (`pytest > log`, `| tee log`) is a record, not an edit.
        if _WRITES_TEXT.match(part) or "<<HEREDOC" in part:
            found += [m.group("path") for m in _REDIRECT.finditer(part)]
            found += [m.group("path") for m in _TEE.finditer(part)]
        found += [m.group("path") for m in _PS_WRITE.finditer(part)]
    out = [f.strip("'\"") for f in found]
    return list(dict.fromkeys(f for f in out if f and not _NOT_A_FILE.match(f)))


def shell_creates(command: str) -> list[str]:
    """Of `shell_writes`, the files the line may have made new (written whole, added by a patch)."""
    body = re.sub(r"<<-?\s*['\"]?(\w+)['\"]?\n.*?\n\1\b", "<<HEREDOC", command, flags=re.S)
    whole = [m.group("path") for m in re.finditer(r"(?<![<>&\d>])>\|?\s*(?P<path>[^\s;&|<>()]+)", body)]
    added = re.findall(r"^\*\*\* Add File: (.+?)\s*$", command, re.M)
    writes = set(shell_writes(command))
    return [f.strip("'\"") for f in whole + added if f.strip("'\"") in writes]


#: How many later commands a failure's resolution may be looked for in.
AHEAD = 6


@dataclass(frozen=True)
class Run:
    """One shell command of the session, as the distillers read it."""

    index: int  # the step's index in the session
    time: str
    command: str  # the part of the shell line that did the work (no `cd x &&`, no `| tail`)
    words: tuple[str, ...]  # the words that do the work
    directory: str  # where it ran, relative to the project's root ("." at the root)
    env: tuple[str, ...]  # what ran before it on the line: exports, an activated virtualenv, ...
    ok: bool
    error: str  # the telling line of its output when it failed
    purpose: str | None  # tests | typecheck | lint | format | build | deploy
    narrow: bool  # one test or one file, not the suite
    outside: bool  # it ran outside the project
    output: str
    fixed_by: int | None  # the step index of the later run that passed
    line: str = ""  # the whole shell line it ended (`sudo -u me X=1 app info && app list`)
    partial: bool = False  # the capture kept only its start: what it ran is not known whole

    @property
    def date(self) -> str:
        return iso(time_key(self.time))[:10] if time_key(self.time) else ""

    @property
    def program(self) -> str:
        """The program it ran, by its file name in lower case (`/usr/bin/Make` -> `make`)."""
        return os.path.basename(self.words[0]).lower() if self.words else ""


@dataclass(frozen=True)
class Edit:
    index: int
    files: tuple[str, ...]  # relative to the project's root
    created: tuple[str, ...]  # of those, files this edit made new


@dataclass(frozen=True)
class Evidence:
    """Everything the distillers look at, for one session."""

    agent: str
    session_id: str
    source: str  # `claude-code:2624e4c8`, the pages' sources entry
    date: str  # the session's day, YYYY-MM-DD
    root: str | None  # the project's root (the code repository), absolute
    runs: tuple[Run, ...]
    edits: tuple[Edit, ...]
    reads: frozenset[str]  # files read before being changed: they existed
    prompts: tuple[Prompt, ...]
    answers: tuple[Answer, ...]
    steps: tuple[Step, ...]
    cwd: str | None = None  # where the session ran

    def edits_between(self, start: int, end: int) -> list[Edit]:
        return [e for e in self.edits if start < e.index < end]

    def new_files_before(self, index: int) -> set[str]:
        """Files the session made new before step `index` (and had not read before)."""
        return {f for e in self.edits if e.index < index for f in e.created if f not in self.reads}


def purpose_of(words: Sequence[str]) -> str | None:
    """tests, typecheck, lint, format, build, deploy or scripts (one of the project's own);
    None for anything else."""
    text = " ".join(words)
    if any(w in ("--help", "-h", "--version", "-V") for w in words):
        return None
    if words and words[0] in ("npm", "pnpm", "yarn", "bun"):
        text = _PM_OPTIONS.sub("", text + " ").strip()
    for name, pattern in _PURPOSES:
        if pattern.search(text):
            return name
    return None


def segments(command: str) -> list[str]:
    """The parts of a shell line (`a && b; c`), each stripped; quotes respected roughly."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif command[i : i + 2] in ("&&", "||") or ch in ";\n":
            parts.append("".join(current).strip())
            current = []
            i += 2 if command[i : i + 2] in ("&&", "||") else 1
            continue
        current.append(ch)
        i += 1
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def _where_and_setup(command: str, cwd: str | None, root: str | None) -> tuple[str, str, tuple[str, ...], bool]:
    """(the command that did the work, its directory relative to the root, what ran before
    it that it may need, ran outside the project?) for a shell line: `cd app && source
    .venv/bin/activate && FOO=1 pytest -q` is `FOO=1 pytest -q` in `app` after `source
    .venv/bin/activate`."""
    here = os.path.normpath(cwd) if cwd else (root or "")
    setup: list[str] = []
    parts = segments(command) or [command]
    unknown = False  # a `cd` to where the record cannot say (`cd $DIR`, `cd -`)
    for part in parts[:-1]:
        if part.startswith("cd "):
            target = part[3:].strip().strip("'\"")
            home = _HOME.match(here)
            if target.startswith("~/") and home:
                target = home.group(1) + target[1:]  # the home the session's directory is under
            if target and not target.startswith(("~", "$", "-")):
                here = os.path.normpath(os.path.join(here, target))
            elif target:
                unknown = True
        elif part.startswith("export "):
            setup.extend(a for a in part[7:].split() if _ASSIGN.match(a))
        elif _SETUP.match(part):
            setup.append(part)  # an activated virtualenv, a chosen Node: what it needs set up
    base = os.path.normpath(root) if root else here
    rel = os.path.relpath(here, base) if here and base else "."
    outside = unknown or rel == ".." or rel.startswith("../") or os.path.isabs(rel)
    return parts[-1], ("." if rel in ("", ".") else rel), tuple(dict.fromkeys(setup)), outside


_HOME = re.compile(r"^(/Users/[^/]+|/home/[^/]+)(?=/|$)")


# Gemini CLI's report of a shell command: its fields (`Command:`, `Directory:`, `Output:`,
# `Error:`, `Exit Code:`, `Signal:`, ...), each starting a line, a field's text running to the
# next field. Its AfterTool hook gets `Output: ...` and `Exit Code: N`; older transcripts keep
# the whole report (and a replayed one may be that report under `Output: `).
_FIELD = re.compile(r"^(Command|Directory|Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ?", re.M)
_EMPTY = ("", "(empty)", "(none)")


def shell_output(output: str) -> str:
    """What a command printed, out of the agent's report of it when it wraps it in fields
    (Gemini CLI's, see `_FIELD`), with a line `Exit code N` when the report says it failed;
    else the output as it is."""
    text = output or ""
    while text.startswith("Output: Command: "):
        text = text[len("Output: ") :]
    starts = list(_FIELD.finditer(text))
    if not starts or starts[0].start() != 0 or starts[0].group(1) not in ("Command", "Output"):
        return output or ""
    fields: dict[str, str] = {}
    for m, after in zip(starts, [*starts[1:], None], strict=True):
        fields.setdefault(m.group(1), text[m.end() : after.start() if after else len(text)].strip())
    printed = [fields.get(name, "") for name in ("Output", "Error")]
    code = fields.get("Exit Code", "")
    lines = [p for p in printed if p not in _EMPTY]
    return "\n".join(lines) + (f"\nExit code {code}" if code not in (*_EMPTY, "0") else "")


def step_cwd(step: Step, cwd: str | None, root: str | None) -> str | None:
    """The directory a step's command ran in: the one its call named (Codex's `workdir`,
    relative to the session's directory or absolute), else the session's."""
    workdir = step.meta.get("workdir")
    if not isinstance(workdir, str) or not workdir.strip():
        return cwd
    if _WINDOWS.match(workdir) or not (cwd or root):
        return workdir
    return os.path.normpath(os.path.join(cwd or root or "", workdir))


def _run(run: CommandRun, cwd: str | None, root: str | None) -> Run:
    # A heredoc's body is the command's input, not more commands (`python - <<'PY' ... PY`).
    text = split_heredocs(run.command.strip())[0]
    line = _FILTER_TAIL.sub("", text)
    cwd = step_cwd(run.step, cwd, root)  # (then a `cd x &&` in the line moves from there)
    command, directory, env, outside = _where_and_setup(line, cwd, root)
    words = tuple(command_words(command))
    raw = run.step.output or ""
    output = shell_output(raw)
    reported = output != raw  # (the error line was read from the report's own fields)
    ok = run.ok and not run.step.rejected and not run.step.interrupted
    if ok and line != run.command.strip():
        # Piped into `tail`: the exit code was the filter's; only the output can vouch. Nothing
        # at all through a filter that passes every line on (not `grep`) is a command that
        # printed nothing, and a failure says what went wrong: no failure.
        quiet = not output.strip() and not re.search(r"\|\s*grep\b", text[len(line) :])
        ok = quiet or (bool(_PASS_MARKERS.search(output)) and not _FAIL_MARKERS.search(output))
    # (A script named by its absolute path inside the project is one of the project's.)
    inside = [_relative(w, cwd, root) if os.path.isabs(w) and root else w for w in words]
    purpose = None if is_probe(command) else purpose_of(inside)
    # (A script's path is the command itself, not one file of a runner's.)
    narrow = bool(_NARROW.search(" ".join(words[1:]))) if words and purpose != "scripts" else False
    return Run(
        index=run.step.index,
        time=run.step.time,
        command=command,
        words=words,
        directory=directory,
        env=env,
        ok=ok,
        error="" if ok else ((error_line(output) if reported else "") or run.error or error_line(output)),
        purpose=purpose,
        narrow=narrow,
        outside=outside,
        output=output,
        fixed_by=run.fixed_by,
        line=line,
    )


def _relative(path: str, cwd: str | None, root: str | None) -> str:
    full = path if os.path.isabs(path) else os.path.join(cwd or root or "", path)
    base = root or cwd
    if not base:
        return path
    rel = os.path.relpath(os.path.normpath(full), os.path.normpath(base))
    return path if rel.startswith("..") else rel


_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")


def _windows_relative(path: str, base: str) -> str | None:
    """`path` relative to `base` when the session ran on Windows (`C:\\Users\\me\\app`), with
    forward slashes; None outside `base`."""

    full = path if _WINDOWS.match(path) else ntpath.join(base, path)
    try:
        rel = ntpath.relpath(ntpath.normpath(full), ntpath.normpath(base))
    except ValueError:  # another drive
        return None
    return None if rel.startswith("..") else rel.replace("\\", "/")


def relative_to_root(path: str, evidence: Evidence) -> str | None:
    """A path the session named, relative to the project's root; None outside the project."""
    steps_cwd = evidence.cwd or evidence.root or ""
    if _WINDOWS.match(path) or _WINDOWS.match(evidence.root or steps_cwd):
        return _windows_relative(path, evidence.root or steps_cwd)
    full = path if os.path.isabs(path) else os.path.join(steps_cwd, path)
    base = evidence.root or steps_cwd
    if not base:
        return None if os.path.isabs(path) or path.startswith("..") else os.path.normpath(path)
    rel = os.path.relpath(os.path.normpath(full), os.path.normpath(base))
    return None if rel.startswith("..") else rel


def _known_part(run: CommandRun, cwd: str | None, root: str | None) -> Run:
    """`run` as a distiller reads it; one the capture cut, by its first line and `…`, marked
    partial."""
    cut = CUT_MARK.search(run.command)
    if cut is None:
        return _run(run, cwd, root)
    head = run.command[: cut.start()].split("\n", 1)[0]
    return replace(_run(replace(run, command=head.rstrip() + " …"), cwd, root), partial=True)


def gather(summary: Summary, root: str | None = None) -> Evidence:
    """The evidence of a summarised session; `root` is the project's code repository (the
    session's working directory when not given)."""
    s = summary.session
    cwd = os.path.normpath(s.cwd) if s.cwd else None
    if root is None or (cwd and os.path.relpath(cwd, os.path.normpath(root)).startswith("..")):
        # No root, or a session recorded elsewhere (an imported transcript of another
        # machine): paths are read against the session's own directory.
        root = cwd
    else:
        root = os.path.normpath(root)
    # The checks sub-agents ran for the session count as its runs (their reports said passed).
    delegated = delegated_checks(s.steps)
    commands = sorted([*summary.commands, *delegated], key=lambda r: r.step.index)
    # A command the capture kept only in part (a patch passed to the shell) is not known: no
    # distiller may offer it as a way to do anything. Its failure still says what failed
    # (`python: command not found` under a long heredoc), so a failed one is kept, cut short.
    runs = tuple(_known_part(r, s.cwd, root) for r in commands if not r.ok or not CUT_MARK.search(r.command))
    edits: list[Edit] = []
    reads: set[str] = set()
    for step in s.steps:
        if step.kind == "read" and step.input and not step.error:
            reads.add(_relative(step.input, s.cwd, root))
        if step.kind == "command" and not step.error:
            # An edit made through the shell is an edit. Only text written into a file counts
            # here, not output saved to one (`pytest | tee log`, which the capture's files name):
            # a log written between a failure and its rerun is no fix.
            written = shell_writes(step.input)
            if written:
                here = step_cwd(step, s.cwd, root)
                files = tuple(dict.fromkeys(_relative(f, here, root) for f in written))
                made = tuple(_relative(f, here, root) for f in shell_creates(step.input))
                edits.append(Edit(step.index, files, made))
            continue
        if step.kind != "edit" or step.error:
            continue
        files = tuple(_relative(f, s.cwd, root) for f in step.files)
        # Claude Code's Write says "create" for a file it made; Codex's patch says "Add File".
        created = files if step.output.strip() == "create" or "Add File" in step.output else ()
        edits.append(Edit(step.index, files, created))
    return Evidence(
        agent=s.agent,
        session_id=s.session_id,
        source=f"{s.agent}:{s.short_id}",
        date=s.date,
        root=root,
        runs=runs,
        edits=tuple(edits),
        reads=frozenset(reads),
        prompts=users_words(s.prompts),
        answers=tuple(s.answers),
        steps=tuple(s.steps),
        cwd=cwd,
    )


def users_words(prompts: Sequence[Prompt]) -> tuple[Prompt, ...]:
    """The user's own words of each turn: no persona prompt, no slash command's expansion, no
    plumbing; of a slash command, its arguments."""
    kinds = classify_turns([p.text for p in prompts], [time_key(p.time) for p in prompts])
    return tuple(Prompt(p.time, k.words) for p, k in zip(prompts, kinds, strict=True) if k.words.strip())


def answer_between(evidence: Evidence, start: int, end: int | None) -> list[Answer]:
    """The agent's answers given between two steps (by time), and the first after `end`."""
    steps = evidence.steps
    t0 = time_key(steps[start].time) if start < len(steps) else 0.0
    t1 = time_key(steps[end].time) if end is not None and end < len(steps) else float("inf")
    inside = [a for a in evidence.answers if t0 <= time_key(a.time) <= t1]
    after = [a for a in evidence.answers if time_key(a.time) > t1][:1]
    return inside + after


def one_line(text: str, limit: int = 300) -> str:
    return clean(text, limit)
