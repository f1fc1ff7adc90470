"""Gotchas: a command that failed with a telling error and was then resolved in the same
session, in one of the ways real agents resolve things:

- edits (through an edit tool or the shell: `sed -i`, a heredoc, `apply_patch`), then the
  same command passing;
- another command line for the same purpose passing: another program (`python3` when
  `python` is missing, `bash run.sh` when the script is not executable), other options or
  settings (`npm install --legacy-peer-deps`, `PYTHONPATH=src pytest`, `sudo -u me X=1 cmd` as
  one part of a longer line), another directory;
- a command run first that changes the state it needed (`chmod +x run.sh`, an install),
  then the same command passing;
- the same line passing again once run outside the agent's sandbox (Codex's "failed in
  sandbox ... Denied"), or in the right directory after its `cd` failed.

Traps of the environment, not of one command, make pages too (in `environment_gotchas`): a
file tool that takes only one spelling of a path (`C:\\x` not `/c/x`), an edit tool refused over
where the file is and the file then written from the shell, one error on commands of different
programs that never pass afterwards (a permission mode denying the shell).

The page holds the error's signature, the command, the fix (the files changed, anchored; or
the command that worked instead, or the one run first), the agent's own explanation when its
answer gives one, and the run that verified it.

Precision first, so these are refused:
- a failure with no telling error line (only "exit 1");
- a test assertion (the logic under test, not a trap of the project);
- findings of linters, type checkers and compilers (code being written);
- a fix that changed only files the session itself had just made, or a failure whose output
  points into such a file (the session's own new code failing);
- a failure that passed again, word for word the same command, with nothing done in between
  (flaky), unless the agent's sandbox had stopped it;
- another command line that does not run the failed program (`nl -ba docfx.json` after
  `docfx docfx.json` timed out only reads the file);
- a failure of a command that looks around or asks git (unless the program itself was
  missing: `tree: command not found`), or that ran outside the project.

A failure that makes no page may still be a known gotcha hit again: it goes out as a
`gotcha-hit`, which only ever updates the page of the same signature.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from wiki_memory.consolidate.command_runs import operands
from wiki_memory.consolidate.commands import command_key, command_words, is_probe, joined_otherwise, only_looks
from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.environment_gotchas import (
    SANDBOXED,
    environment_gotchas,
    file_tool_gotchas,
    passed_outside,
    sandbox_of,
)
from wiki_memory.consolidate.distill.evidence import (
    AHEAD,
    Evidence,
    Run,
    answer_between,
    one_line,
    segments,
)
from wiki_memory.consolidate.distill.signature import (
    SHELL_SYNTAX,
    is_assertion,
    is_static_finding,
    is_telling,
    missing_name,
    signature,
    words_of,
)
from wiki_memory.consolidate.oneline import cut_at_word

_CAUSAL = re.compile(
    r"\b(because|caused by|the cause|root cause|was missing|wasn't set|was not set|isn't set|is not set|"
    r"needs? to be|needed|required|requires|must be|due to|the (problem|issue|bug) was|the fix|fixed by|"
    r"so that|expects?|was reading|defaults? to)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])|\n+")
_NOT_A_GOTCHA = {"git", "gh", "cd", "ls", "cat", "brew", "apt", "apt-get", "curl"}
_INSTALLS = re.compile(r"^(pip3?|npm|pnpm|yarn|bun|cargo|go|apt|apt-get|brew|gem|poetry|uv) (install|add|get|i)\b")
# A program that is not there, or cannot be run: the shell's words (dash's `sh: 1: tree: not
# found`, not a web call's `404: Not Found`), its exit code, or Codex's report that it could not
# start the program (`execution error: Io(Os { code: 2, kind: NotFound ...`).
_MISSING = re.compile(
    r"command not found|^\S+: (?:\d+: )?\S+: not found$|not recognized as (an internal|the name)|exit code 127|"
    r"^execution error: .*\b(NotFound|os error 2)\b",
    re.I,
)
_DENIED = re.compile(r"permission denied|not executable|exit code 126", re.I)
# Commands run between a failure and its rerun that change what it needs.
_STATE = re.compile(
    r"^(chmod|chown|mkdir|touch|ln|export|pip3?|npm|pnpm|yarn|bun|uv|poetry|cargo|go|gem|apt|apt-get|brew|"
    r"docker|docker-compose|git (checkout|switch|pull|fetch|submodule)|source|nvm|pyenv)\b"
)
_GENERIC = {"run", "test", "tests", "build", "install", "start", "dev", "exec", "-m", "python", "python3", "node",
            "bash", "sh", "sudo", "npx", ".", "./", "..", "-c", "-lc", "-l"}  # fmt: skip
_RUNNER_NAMES = {
    "tests": "the tests",
    "build": "the build",
    "deploy": "the deploy",
}


def _by_index(evidence: Evidence) -> dict[int, Run]:
    return {r.index: r for r in evidence.runs}


def _explanation(evidence: Evidence, run: Run, fixed_by: int, sig: str, files: list[str]) -> str:
    """The agent's own words on the cause, when an answer around the fix names it: a
    sentence with a causal word that mentions the error's identifiers or a changed file."""
    keys = words_of(sig) | {os.path.basename(f).lower() for f in files}
    keys |= {os.path.splitext(os.path.basename(f))[0].lower() for f in files if len(os.path.basename(f)) > 4}
    keys = {k for k in keys if len(k) > 3 and k not in ("error", "file", "line", "none", "true", "false")}
    picked: list[str] = []
    for answer in answer_between(evidence, run.index, fixed_by):
        for sentence in _SENTENCE.split(answer.text):
            sentence = sentence.strip(" -*")
            low = sentence.lower()
            causal = 20 <= len(sentence) <= 400 and _CAUSAL.search(sentence)
            if causal and any(k in low for k in keys) and sentence not in picked:
                picked.append(sentence)
        if picked:
            break
    return one_line(" ".join(picked[:2]), 400) if picked else ""


def _refusal(evidence: Evidence, run: Run, sig: str) -> str | None:
    """Why this failure makes no gotcha page (None: it may)."""
    # An install may be a trap of the project (a peer-dependency conflict that needs an
    # option): it is judged by how it was resolved; a program that was missing, by its absence.
    installs = bool(_INSTALLS.match(" ".join(run.words))) and not run.outside and not is_probe(run.command)
    # Whatever the program, the agent's sandbox stopping it, or the shell refusing the line's
    # syntax (`&&` in Windows PowerShell), is a trap of where it runs.
    where_it_ran = (
        bool(SANDBOXED.search(run.output) or SHELL_SYNTAX.search(run.error) or passed_outside(evidence, run))
        and not run.outside
    )
    if (
        not_a_run(run)
        and not installs
        and not where_it_ran
        and not (missing_program(run) and not run.outside)
        and not missing_directory(run)
    ):
        return "not a command that runs the project"
    if not sig or not is_telling(sig):
        return "no telling error line"
    if is_assertion(sig):
        return "a test assertion"
    if is_static_finding(sig) or run.purpose in ("lint", "typecheck", "format"):
        return "a linter, type checker or compiler finding"
    return None


def not_a_run(run: Run) -> bool:
    """A command that looks around, asks git, installs or ran elsewhere: its failure is no trap of the project."""
    program = os.path.basename(run.words[0]) if run.words else ""
    if run.command.lstrip().startswith(("{", "[")):
        return True  # a tool's structured input (polling a running command), not a shell line
    return (
        is_probe(run.command) or program in _NOT_A_GOTCHA or bool(_INSTALLS.match(" ".join(run.words))) or run.outside
    )


def names_in(run: Run) -> set[str]:
    """The file names the command line holds, in lower case, without `.exe`."""
    return {re.sub(r"\.exe$", "", os.path.basename(w.strip("'\"")).lower()) for w in run.command.split()}


def missing_program(run: Run) -> bool:
    """The program itself was not there (`tree: command not found`, exit 127)."""
    return bool(_MISSING.search(run.error or ""))


# The shell could not enter the directory the line changed to: bash's `cd: x: No such file or
# directory`, zsh's `cd:1: no such file or directory: x`, PowerShell's `Set-Location : Cannot
# find path`.
_NO_DIRECTORY = re.compile(
    r"\bcd\b\S*:.*(no such file or directory|not a directory)|Set-Location\b.*Cannot find path", re.I
)


def missing_directory(run: Run) -> bool:
    """The line failed at its `cd`: the place was wrong, whatever it ran there (see `_NO_DIRECTORY`)."""
    return bool(_NO_DIRECTORY.search(run.error or ""))


def _objects(run: Run) -> set[str]:
    """What a command works on: its arguments that name something (a file, a package, a
    module), by their last path part, and its program when it is a script (`./run.sh`)."""
    out: set[str] = set()
    for i, word in enumerate(run.words):
        word = word.strip("'\"")
        if not word or word.startswith("-") or "=" in word or (i == 0 and "/" not in word):
            continue
        name = os.path.basename(word.rstrip("/")) or word
        if len(name) >= 3 and name.lower() not in _GENERIC:
            out.add(name.lower())
    return out


def _kin(a: str, b: str) -> bool:
    """Two names of one program (`python`/`python3`, `pip`/`pip3`, `docker-compose`/`docker`)."""
    if not a or not b or a == b:
        return a == b and bool(a)
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and not long[len(short)].isalpha()


def _related(failed: Run, later: Run) -> bool:
    """Is `later` a run for the same purpose as `failed` (the same command, or another
    command line that works on the same thing)?"""
    if later.words and failed.words and command_key(later.command) == command_key(failed.command):
        return True
    # The same file or script (`python3 x.py` for `python x.py`, `bash run.sh` for `./run.sh`),
    # or everything the failed command named (not just a subcommand such as `metadata`).
    # It must run the failed program again, under its name or a kin's: `nl -ba docfx.json`
    # reads the file that `docfx docfx.json` timed out on, it does not do docfx's job.
    objects = _objects(failed)
    words = {os.path.basename(w.strip("'\"").rstrip("/")).lower() for w in later.words}
    runs_it = any(_kin(failed.program, w) and not re.search(r"\.[A-Za-z]", w[len(failed.program) :]) for w in words)
    if runs_it and (any(("." in o or "/" in o) for o in objects & words) or (objects and objects <= words)):
        return True
    return _kin(failed.program, later.program) and len(failed.words) == 1 == len(later.words)


def _other_settings(failed: Run, later: Run) -> Run | None:
    """The part of a later passing line that ran the failed command again with other settings
    (`sudo -u me XDG_RUNTIME_DIR=/run/user/1000 pactl info && pactl list` for `pactl info`), as
    a run of its own; None when no part did, or only word for word the same."""
    key = command_key(failed.command)
    for part in segments(later.line):
        if part != failed.command and key and command_key(part) == key:
            return replace(later, command=part, words=tuple(command_words(part)))
    return None


def difference(failed: str, worked: str) -> str:
    """What the working command line did differently, word by word: a word it quoted, words it
    added, words it dropped (`bcdedit /set {id}` -> `bcdedit /set "{id}"`: quoted `{id}`)."""
    before, after = failed.split(), worked.split()
    quoted = [w for w in after if w not in before and len(w) > 2 and w[0] == w[-1] in "'\"" and w[1:-1] in before]
    added = [w for w in after if w not in before and w not in quoted]
    dropped = [w for w in before if w not in after and w not in {q[1:-1] for q in quoted}]
    if not before or before[0] in dropped or len(added) + len(dropped) > 6:
        return ""  # another program, or another command altogether: the fix line says it all
    parts = [f"quoted `{w[1:-1]}`" for w in quoted[:3]]
    parts += [f"added `{' '.join(added)}`"] if added else []
    parts += [f"dropped `{' '.join(dropped)}`"] if dropped else []
    return "; ".join(parts)


def _same_line(a: Run, b: Run) -> bool:
    return (a.command, a.directory, a.env) == (b.command, b.directory, b.env)


def _same_kind(run: Run, later: Run) -> bool:
    """Could `later` do the job of `run` another way: both looks, or both on an operand in
    common? (Reading the script a missing program was to run does not run it.)"""
    if only_looks(later.command):
        return only_looks(run.command)
    return bool(operands(run.words) & operands(later.words))


def resolution(evidence: Evidence, run: Run) -> tuple[Run, list[Run]] | None:
    """(the later run that passed for the same purpose, the commands run in between that
    changed what it needed) for a failure, or None when it was never resolved."""
    later_runs = [r for r in evidence.runs if r.index > run.index][:AHEAD]
    between: list[Run] = []
    for later in later_runs:
        changes_state = bool(_STATE.match(" ".join(later.words))) and command_key(later.command) != command_key(
            run.command
        )
        if later.ok and changes_state:
            between.append(later)  # `chmod +x run.sh` before `./run.sh` again
        elif later.ok and later.words and _related(run, later) and not _missing_lookup(later):
            return later, between
        elif later.ok and (other := _other_settings(run, later)) is not None:
            return other, between
        elif (
            missing_program(run)
            and later.ok
            and not _missing_lookup(later)
            and later is later_runs[0]
            and _same_kind(run, later)
        ):
            # The program was not there and the very next command did the job another way
            # (`find` when `tree` is missing): only right after, nothing in between, and a
            # look for a look or work on the same operands (`Get-Content package.json` issued
            # beside a missing `bash x.sh` did not do its job).
            return later, []
    return None


_PROJECT_INSTALL = re.compile(
    r"^(?:(?:pip3?|python3? -m pip|uv pip) install(?: -e| --editable| -r| --requirement| -U| --upgrade)*"
    r"(?: \.| \S*requirements\S*\.txt| \.\[[\w,-]+\])?|(?:npm|pnpm|yarn|bun) (?:install|i|ci)|yarn|"
    r"poetry install|uv sync|pdm install|pipenv install|bundle install|go mod (?:download|tidy)|cargo fetch|"
    r"composer install|mix deps\.get)$"
)


def project_install(run: Run) -> bool:
    """Installs what the project declares (`pip install -e .`, `npm ci`, `uv sync`), no package named."""
    words = [w for w in run.words if w not in ("-q", "--quiet", "--silent", "--no-input")]
    return bool(_PROJECT_INSTALL.match(" ".join(words)))


def _missing_lookup(run: Run) -> bool:
    """`which python3`, `command -v tree`: looking for a program, not doing the job."""
    return run.program in ("which", "type", "where", "whereis", "command", "hash", "apropos")


def gotchas(evidence: Evidence) -> tuple[list[Candidate], list[str]]:
    """(candidates, why other failures were refused) for a session."""
    out: list[Candidate] = []
    refused: list[str] = []
    seen: set[str] = set()
    runs = _by_index(evidence)
    for run in evidence.runs:
        if run.ok or not run.error:
            continue
        sig = signature(run.error)
        if not sig or sig in seen:
            continue
        refusal = _refusal(evidence, run, sig)
        resolved = resolution(evidence, run)
        vouched = resolved is not None  # a command line of its own doing the same job
        if resolved is None and run.fixed_by is not None and run.fixed_by in runs:
            # Consolidation's judgement (a broader run of the same test runner passing): only
            # edits or a command run first between them can be the fix, not the other line.
            resolved = (runs[run.fixed_by], [])
        candidate = None
        if refusal is None and resolved is not None:
            candidate, refusal = _fixed(evidence, run, resolved[0], resolved[1], sig, instead_ok=vouched)
        elif refusal is None:
            refusal = "never passed later in the session"
        if candidate is not None:
            seen.add(sig)
            out.append(candidate)
            continue
        if not not_a_run(run):  # (looking around failing is noise, not worth a line)
            refused.append(f"`{one_line(run.command, 80)}` ({sig[:80]}): {refusal}")
        if is_telling(sig) and not is_assertion(sig) and not is_static_finding(sig):
            seen.add(sig)
            out.append(_hit(evidence, run, sig, fixed=resolved is not None))
    made = {c.key for c in out if c.kind == "gotcha"}
    return out + file_tool_gotchas(evidence) + environment_gotchas(evidence, made), refused


def _first_on_it(run: Run, first: list[Run], sig: str) -> list[Run]:
    """Of the commands run first, those on the same thing (`chmod +x run.sh` for `./run.sh`,
    `pip install requests` for "No module named 'requests'"), not whatever else happened. (Of
    the error line, what it quotes or names as a path, not its words: "No module named
    'tabulate'" names tabulate.)"""
    quoted = re.findall(r"['\"`]([^'\"`\s]{2,})['\"`]", sig) + re.findall(r"[\w-]+[./][\w./-]+", sig)
    names = _objects(run) | {os.path.basename(w).lower() for w in quoted}
    return [
        r
        for r in first
        if names & {os.path.basename(w.strip("'\"")).lower() for w in r.words[1:]} or project_install(r)
    ]


def _fixed(
    evidence: Evidence, run: Run, later: Run, first: list[Run], sig: str, *, instead_ok: bool = True
) -> tuple[Candidate | None, str | None]:
    first = _first_on_it(run, first, sig)
    edits = evidence.edits_between(run.index, later.index)
    changed = list(dict.fromkeys(f for e in edits for f in e.files))
    new = evidence.new_files_before(later.index)
    # No edit of the project gives the machine a program it lacks (one a Makefile or script
    # named, yes: editing them to use another is the fix).
    own = missing_program(run) and missing_name(run.error).lower() in names_in(run)
    kept = [f for f in changed if f not in new and not own]
    # (A line the capture cut cannot be compared with the one that worked.)
    instead = "" if _same_line(run, later) or not instead_ok or run.partial else later.command
    syntax = bool(SHELL_SYNTAX.search(run.error)) and joined_otherwise(run.line, later.line)
    if syntax and not instead:
        instead = later.line  # the same commands, written so the shell takes them
    if changed and not kept and not instead:
        return None, "the fix changed only files the session had just made"
    if any(os.path.basename(f) in run.output for f in new if len(os.path.basename(f)) > 3):
        return None, "the failure points into a file the session had just made"
    # The agent's sandbox stopped it and the same line passed when run again: with the
    # permissions the sandbox withholds (the agent asked for them, the user granted them).
    # The sandbox says so (Codex's denial), or only the run that passed does: it asked to
    # run outside (a network call the sandbox cut: "Could not resolve host").
    sandbox = sandbox_of(evidence, run, later) if not kept and not instead and not first else ""
    if not kept and not instead and not first and not sandbox:
        return None, "passed again with nothing changed in between"
    elsewhere = missing_directory(run) and later.directory != run.directory
    if not kept and instead and is_probe(later.command) and not missing_program(run) and not elsewhere and not syntax:
        return None, "another command only looked around"
    what = _RUNNER_NAMES.get(run.purpose or "", f"`{run.words[0]}`" if run.words else "a command")
    title = (
        f"{cut_at_word(sig, 110)}: the shell refused the line"
        if syntax
        else f"{cut_at_word(sig, 110)} when running {what}"
    )
    facts = {
        "signature": sig,
        "error": one_line(run.error, 300),
        "command": run.command,
        "dir": run.directory,
        "files": kept,
        "instead": "" if kept else instead,
        "instead_dir": later.directory if (instead and not kept and later.directory != run.directory) else "",
        "differs": difference(run.line if syntax else run.command, instead) if instead and not kept else "",
        "first": [r.command for r in first][:3] if not kept else [],
        "sandbox": sandbox,
        "explanation": _explanation(evidence, run, later.index, sig, kept),
        "verified": later.command,
        "occurrence": {"date": run.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": True, "files": kept},
    }  # fmt: skip
    if kept:
        how = f"passed after changes to {', '.join(kept[:3])}"
    elif instead:
        how = f"`{one_line(instead, 80)}` worked instead"
    elif sandbox:
        how = f"passed outside the sandbox {sandbox}"
    else:
        how = f"passed after `{one_line(first[0].command, 80)}`"
    reason = f"failed with {sig[:60]!r}, then {how} in {evidence.source}"
    return (
        proposed(
            evidence,
            "gotcha",
            title=title,
            key=sig,
            facts=facts,
            anchors=tuple(kept),
            reason=reason,
            tags=("distilled",),
        ),
        None,
    )


#: In how many sessions an error must recur, unresolved or not, to make a page of its own.
RECUR_SESSIONS = 2


def _hit(evidence: Evidence, run: Run, sig: str, *, fixed: bool) -> Candidate:
    """A failure that may be a known gotcha hit again: it only updates a page of the same
    signature, unless (`recurs`) it is a trap-shaped failure the memory layer has seen in
    other sessions (see `promote`)."""
    facts = {
        "signature": sig,
        "command": run.command,
        "dir": run.directory,
        "error": one_line(run.error, 300),
        "what": _RUNNER_NAMES.get(run.purpose or "", f"`{run.words[0]}`" if run.words else "a command"),
        "recurs": not not_a_run(run),
        "occurrence": {"date": run.date or evidence.date, "by": evidence.agent, "session": evidence.source,
                       "fixed": fixed, "files": []},
    }  # fmt: skip
    return proposed(
        evidence,
        "gotcha-hit",
        title=sig,
        key=sig,
        facts=facts,
        reason=f"the same error ({sig[:60]!r}) again in {evidence.source}",
        create=False,
    )


def promote(hit: Candidate, occurrences: list[dict[str, object]]) -> Candidate:
    """A known failure hit again in `RECUR_SESSIONS` sessions or more, as a gotcha page of its
    own: the error, the command, and each occurrence (no fix: none was seen)."""
    f = hit.facts
    sig = str(f["signature"])
    sessions = list(dict.fromkeys(str(o.get("session")) for o in occurrences))
    title = f"{cut_at_word(sig, 110)} when running {f.get('what')}"
    keep = ("date", "by", "session", "fixed", "files")
    facts = {
        **{k: v for k, v in f.items() if k not in ("recurs", "what")},
        "occurrences": [{k: o.get(k) for k in keep} for o in occurrences],
    }
    return proposed(
        hit,
        "gotcha",
        title=title,
        key=sig,
        facts=facts,
        reason=f"the same error ({sig[:60]!r}) in {len(sessions)} sessions: {', '.join(sessions[:4])}",
        tags=("distilled", "recurring"),
    )
