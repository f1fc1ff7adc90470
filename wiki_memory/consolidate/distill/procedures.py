"""Procedures: the commands that test, type-check, lint, format, build or deploy the project,
or run one of its own scripts, and worked, one page per purpose ("How to run the tests"),
with where to run them and what they need; a recorded command that fails again is noted on its page.

Precision first: a command counts only when it succeeded (a run piped into `tail` only when
its output says it passed) and ran inside the project. A run narrowed to one test or one
file is kept as a part ("for one file: ..."), never as the way to run the whole suite, and
its failures are not noted (one test failing says nothing of the procedure). A failure
alone never makes a page, and neither does an ecosystem's default run at the project's root
with nothing set up (`pytest`, `npm test`, `cargo test`, `mix test --seed 0`): every agent
tries those first, so a page would say nothing new. Such a run still updates a page that
exists.
"""

from __future__ import annotations

import os
import re

from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence, Run
from wiki_memory.consolidate.distill.signature import signature

TITLES = {
    "tests": "How to run the tests",
    "typecheck": "How to type-check the code",
    "lint": "How to lint the code",
    "format": "How to format the code",
    "build": "How to build the project",
    "deploy": "How to deploy",
    "scripts": "How to run the project's scripts",
}


#: What every developer of an ecosystem runs first, minor flags left out.
DEFAULTS = frozenset(
    """pytest|py.test|python -m pytest|python3 -m pytest|python -m unittest|python3 -m unittest|tox|nox|
    npm test|npm run test|pnpm test|pnpm run test|yarn test|yarn run test|bun test|jest|npx jest|vitest|npx vitest|
    vitest run|npx vitest run|cargo test|go test|go test ./...|mix test|rspec|bundle exec rspec|dotnet test|deno test|
    swift test|mvn test|gradle test|./gradlew test|phpunit|ctest|ruff|ruff check|ruff check .|flake8|pylint|eslint|
    eslint .|npm run lint|pnpm lint|pnpm run lint|yarn lint|cargo clippy|golangci-lint run|mix credo|rubocop|mypy|
    mypy .|pyright|tsc --noEmit|npx tsc --noEmit|npm run typecheck|pnpm typecheck|yarn typecheck|ruff format|
    ruff format .|black .|prettier --write .|npx prettier --write .|cargo fmt|gofmt -w .|mix format|npm run build|
    pnpm build|pnpm run build|yarn build|cargo build|go build|go build ./...|make|python -m build|mix compile|
    dotnet build|mvn package|gradle build""".split("|")
)
DEFAULTS = frozenset(" ".join(d.split()) for d in DEFAULTS)
_MINOR_FLAG = re.compile(r"^-{1,2}[\w-]+$")


def trivial(run: Run) -> bool:
    """A default run (see DEFAULTS) at the project's root with nothing set up, or one part
    of the suite run at the root: it would make a page that says nothing new."""
    if run.directory != "." or run.env:
        return False
    if run.narrow:
        return True
    words = run.command.split()
    kept: list[str] = []
    skip_value = False
    for word in words:
        if skip_value and re.match(r"^\d+$", word):
            skip_value = False
            continue
        skip_value = False
        keep = ("--noEmit", "--write", "--filter", "-F", "-C", "--workspace")
        if (
            _MINOR_FLAG.match(word)
            and word not in keep
            and not (word == "-m" and kept[-1:] in (["python"], ["python3"]))
        ):
            skip_value = True
            continue
        kept.append(word)
    return " ".join(kept) in DEFAULTS


def _usable(run: Run, made: set[str]) -> bool:
    if run.purpose == "scripts" and script_name(run) in made:
        return False  # a script the session wrote for itself, not one of the project's
    return run.purpose is not None and not run.outside and bool(run.words)


def script_name(run: Run) -> str:
    """The file name of the script a `scripts` run runs (`sync.py` for `python3 scripts/sync.py`)."""
    path = next((w for w in run.words if not w.startswith("-") and ("/" in w or "." in w)), run.words[0])
    return os.path.basename(path)


def procedures(evidence: Evidence) -> list[Candidate]:
    """One candidate per purpose the session ran a command for successfully, holding each
    distinct command that worked (its last run) and the commands that failed last."""
    worked: dict[str, dict[str, Run]] = {}
    failed: dict[str, dict[str, Run]] = {}
    for run in evidence.runs:
        made = {os.path.basename(f) for f in evidence.new_files_before(run.index)}
        if not _usable(run, made):
            continue
        assert run.purpose is not None
        # A later run of the same command decides: the last one is how the session left it.
        worked.setdefault(run.purpose, {}).pop(run.command, None)
        failed.setdefault(run.purpose, {}).pop(run.command, None)
        if run.ok:
            worked[run.purpose][run.command] = run
        elif run.error and run.fixed_by is None and not run.narrow and run.purpose != "scripts":
            # (Each script is its own procedure: another one that worked is no way to run a
            # script that failed, and the moment hook would offer it as one.)
            failed[run.purpose][run.command] = run
    out = []
    for purpose, title in TITLES.items():
        good = list(worked.get(purpose, {}).values())
        bad = list(failed.get(purpose, {}).values())
        if not good and not bad:
            continue
        who = {"by": evidence.agent, "session": evidence.source}
        commands = [
            {
                "command": r.command,
                "dir": r.directory,
                "env": list(r.env),
                "last_worked": r.date or evidence.date,
                **who,
                **({"part": True} if r.narrow else {}),
            }
            for r in good
        ]
        failures = [
            {"command": r.command, "dir": r.directory, "error": signature(r.error) or r.error,
             "date": r.date or evidence.date, **who}
            for r in bad
        ]  # fmt: skip
        reason = (
            f"{len(good)} command{'s' if len(good) != 1 else ''} for {purpose} worked in {evidence.source}"
            if good
            else f"a recorded {purpose} command failed in {evidence.source}"
        )
        out.append(
            proposed(
                evidence,
                "procedure",
                title=title,
                key=purpose,
                facts={"purpose": purpose, "commands": commands, "failures": failures},
                reason=reason,
                create=any(not trivial(r) for r in good),  # nor does a failure, nor a default run
                tags=("distilled", purpose),
            )
        )
    return out
