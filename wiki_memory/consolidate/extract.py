"""Extractive consolidation: what a session did, failed at and left open, from evidence alone.

No LLM: every line of the summary points at something the session recorded (a prompt, a
command and its exit, an edit, a plan item, the final message). Standard library only, so
SessionStart can summarise a session that ended but was not consolidated yet.

How the verdicts are reached:

- a command that failed and later ran again (the same command, or a broader run of the
  same tool such as `pytest` after `pytest tests/test_x.py`) and passed was *fixed*: it
  goes under Done, with what changed in between;
- a command whose last run failed is *Failed*, and, being the state the session left,
  an *Open item* too; so is an edit that failed and was never redone;
- a command that only looks around (`ls`, `cat`, `grep`, `git status`) failing is noise;
- a call the user refused, and edits undone (`git checkout -- f`, an edit reversing an
  earlier one) are abandoned approaches;
- plan items not completed, questions and next steps in the last message, a request
  never answered, and a session that stopped in the middle of a tool call are open.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from wiki_memory.capture.observation import PlanItem
from wiki_memory.consolidate.session import Session, Step, is_trivial_prompt

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
_UNDO = re.compile(r"^git (checkout( --)?|restore|reset --hard|stash( push)?|revert)\b")
# Errors about the agent's own mechanics (a tool not offered, a file not read first), not the work.
_TOOL_UNAVAILABLE = re.compile(
    r"No such tool available|is not enabled|unsupported call|Unknown tool|"
    r"File has not been read yet|has been modified since (it was )?read",
    re.IGNORECASE,
)
# A statement that something is not finished: "Quoted fields are not handled yet", "the test still fails".
_UNFINISHED = re.compile(
    r"\b(not|n't|never)\b(\s+\w+){0,3}\s+yet\b|\bstill\s+(fail|fails|failing|broken|missing|"
    r"needs?|to be|has to|have to|pending|open|red)\b|\b(remains|remain) to be\b|\bleft to do\b|"
    r"\bTODO\b|\bunfinished\b|\bincomplete\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(perfect|great|done|excellent|sure|okay|ok|alright|all set|got it|awesome|nice)\b[!.]*$", re.IGNORECASE
)
_NEXT = re.compile(
    r"^(next( steps?)?\b|to ?do\b|remaining\b|still (need|to)\b|not (yet|done)\b|left to do|"
    r"follow[- ]?ups?\b|you (may|might|could|should|can|will need to) |consider\b|i would\b|"
    r"i'd (suggest|recommend)|(we|you) (still )?need to|pending\b|open (questions?|issues?)\b|"
    r"todo:)",
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


@lru_cache(maxsize=4096)
def _command_words(command: str) -> tuple[str, ...]:
    return tuple(_split_command(command))


def command_words(command: str) -> list[str]:
    """The words of the command that does the work: `cd x && FOO=1 uv run pytest -q` -> pytest -q."""
    return list(_command_words(command))


def _segments(command: str) -> list[str]:
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
        elif ch in ";\n&|":
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
    return parts


def _split_command(command: str) -> list[str]:
    # The last command of the line that does the work (not `cd`, `export`), and of a
    # pipeline its first stage (`pytest | tee log` is pytest).
    pieces = _segments(command.strip())
    stages: list[str] = []
    for piece in pieces:
        after_pipe, text = piece[0] == "|", piece[1:]
        if not text or re.match(r"^(cd|export|source|\.|set|pushd|popd|true|false|:|exit)(\s|$)", text):
            continue
        if not after_pipe:
            stages.append(text)
    segment = stages[-1] if stages else command.strip()
    if not any(c in segment for c in "'\"\\"):
        words = segment.split()  # nothing quoted: no need for shlex (slow on long sessions)
    else:
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
    while words and (
        re.match(r"^\w+=", words[0]) or words[0] in _WRAPPERS or words[0] == "run" or words[0].startswith("-")
    ):
        words = words[1:]
    if len(words) >= 3 and re.match(r"^python[\d.]*$", words[0]) and words[1] == "-m":
        words = words[2:]
    return words


def command_key(command: str) -> tuple[str, ...]:
    """What makes two runs "the same command": the program and its first two arguments."""
    words = command_words(command)
    return tuple(w for w in words if not w.startswith("-"))[:3]


def is_probe(command: str) -> bool:
    words = command_words(command)
    if not words:
        return True
    program = os.path.basename(words[0])
    if program == "git":
        return len(words) < 2 or words[1] in _GIT_PROBES
    return program in _PROBES


def is_verification(command: str) -> bool:
    return bool(_VERIFY.search(" ".join(command_words(command))))


_TEST_RUNNERS = {"pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox", "ava", "karma"}


def _covers(later: tuple[str, ...], earlier: tuple[str, ...]) -> bool:
    """A later run covers an earlier one: the same command, or a broader run of the same
    test runner (`pytest` after `pytest tests/x.py`; not `make` after `make lint`)."""
    if not later or not earlier or later[0] != earlier[0]:
        return False
    if later == earlier:
        return True
    return earlier[: len(later)] == later and (len(later) >= 2 or os.path.basename(later[0]) in _TEST_RUNNERS)


def relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home + "/"):
        return "~/" + path[len(home) + 1 :]
    return path


_PAGE_PATH = re.compile(
    r"\b((?:decisions|gotchas|procedures|facts|preferences|notes)/[\w.\-/]+?\.md|"
    r"(?:sessions|handoffs)/\d{4}/\d{2}/[\w.\-]+?\.md)\b"
)


@dataclass(frozen=True)
class CommandRun:
    """One command and what came of it."""

    step: Step
    command: str
    ok: bool
    error: str  # the telling line of its output when it failed
    fixed_by: int | None = None  # the index of the later run that passed

    @property
    def outcome(self) -> str:
        if self.step.rejected:
            return "declined by the user"
        if self.step.interrupted:
            return "interrupted"
        if self.step.no_result:
            return "no result (the session stopped)"
        if self.ok:
            return "ok"
        code = self.step.exit_code
        return f"failed (exit {code})" if code is not None else "failed"


@dataclass(frozen=True)
class Summary:
    """What the session pages and the handoff say, each line backed by evidence."""

    session: Session
    goal: str
    requests: tuple[str, ...]
    done: tuple[str, ...]
    failed: tuple[str, ...]
    open: tuple[str, ...]
    files: tuple[str, ...]  # files edited, relative to the working directory
    edits: dict[str, int] = field(default_factory=dict)
    reads: tuple[str, ...] = ()
    commands: tuple[CommandRun, ...] = ()
    stories: tuple[str, ...] = ()  # each failure and what followed it
    final: str = ""
    memory: tuple[str, ...] = ()  # memory pages the session wrote or read
    mid_task: bool = False

    @property
    def substantive(self) -> bool:
        """Worth a handoff: someone asked for something, or the session changed or ran things."""
        return bool(self.goal) or any(s.kind in ("edit", "command") for s in self.session.steps)


def _edit_label(step: Step, cwd: str | None) -> str:
    return ", ".join(relative(f, cwd) for f in step.files) or step.input


def _between(steps: list[Step], start: int, end: int, cwd: str | None) -> list[str]:
    files: list[str] = []
    for s in steps[start + 1 : end]:
        if s.kind == "edit" and not s.error:
            for f in s.files:
                name = relative(f, cwd)
                if name not in files:
                    files.append(name)
    return files


def _split_final(text: str) -> tuple[list[str], list[str], list[str]]:
    """The final message as (statements, questions, open lines), one line each; an open line
    is labelled a stated next step or something reported as unfinished."""
    statements: list[str] = []
    questions: list[str] = []
    steps: list[str] = []
    in_next = False
    after_blank = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("```"):
            after_blank = after_blank or not line
            continue
        heading = re.match(r"^#+\s*(.+)$", line)
        if heading:
            in_next = bool(
                _NEXT.match(heading.group(1))
                or re.search(r"next|remaining|todo|follow", heading.group(1), re.IGNORECASE)
            )
            after_blank = False
            continue
        is_item = bool(re.match(r"^([-*•]|\d+[.)])\s+", line))
        if in_next and after_blank and not is_item:
            in_next = False  # a new paragraph after the list of next steps
        after_blank = False
        body = re.sub(r"^([-*•]|\d+[.)])\s+", "", line)
        body = clean(body, 300)
        if not body:
            continue
        bold = re.match(r"^(next steps?|remaining|to ?do|follow[- ]?ups?)\s*:?\s*$", body, re.IGNORECASE)
        if bold:
            in_next = True
            continue
        sentences = re.split(r"(?<=[.!?:])\s+(?=[A-Z`\"'(])", body)
        for sentence in sentences:
            sentence = sentence.strip()
            if not sentence or _FILLER.match(sentence):
                continue
            if sentence.endswith(":") and re.match(
                r"^(let me|here'?s|here is|i'll|i will|now)\b", sentence, re.IGNORECASE
            ):
                continue  # an introduction to what follows
            if sentence.endswith("?"):
                questions.append(sentence)
            elif in_next or _NEXT.match(sentence) or re.match(r"^next\b", sentence, re.IGNORECASE):
                steps.append(f"Stated next step: {sentence}")
            elif _UNFINISHED.search(sentence):
                steps.append(f"Reported as unfinished: {sentence}")
            else:
                statements.append(sentence)
    return statements, questions, steps


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def summarize(session: Session) -> Summary:
    """The extractive summary of a session."""
    cwd = session.cwd
    steps = session.steps
    prompts = [p.text for p in session.real_prompts]
    goal_index = next((i for i, p in enumerate(prompts) if not is_trivial_prompt(p)), None)
    goal = prompts[goal_index] if goal_index is not None else ""
    requests = tuple(
        p for i, p in enumerate(prompts) if goal_index is not None and i > goal_index and not is_trivial_prompt(p)
    )

    # Commands and their fate.
    runs: list[CommandRun] = []
    for s in steps:
        if s.kind != "command":
            continue
        ok = not s.error and not s.no_result
        runs.append(CommandRun(s, s.input, ok, "" if ok else error_line(s.output) or clean(s.output, 200)))
    keyed = [(command_key(r.command), r) for r in runs]
    fixed: list[CommandRun] = []
    for n, (key, run) in enumerate(keyed):
        if run.ok or run.step.rejected:
            continue
        later = next((r for k, r in keyed[n + 1 :] if r.ok and _covers(k, key)), None)
        if later is not None:
            run = CommandRun(run.step, run.command, run.ok, run.error, later.step.index)
            runs[n] = run
            fixed.append(run)
    keyed = [(command_key(r.command), r) for r in runs]

    done: list[str] = []
    failed: list[str] = []
    open_items: list[str] = []
    stories: list[str] = []

    # Plan items.
    for item in session.plan:
        if item.status == "completed":
            done.append(f"[completed] {clean(item.text, 200)}")
        elif item.status in ("pending", "in_progress", ""):
            label = "in progress" if item.status == "in_progress" else "pending"
            open_items.append(f"[{label}] {clean(item.text, 200)}")

    # Failures that were fixed: Done, with what changed in between.
    reported_fixed: set[tuple[str, ...]] = set()
    for run in fixed:
        key = command_key(run.command)
        assert run.fixed_by is not None
        changed = _between(steps, run.step.index, run.fixed_by, cwd)
        after = f" after changes to {', '.join(changed[:5])}" if changed else ""
        later_cmd = steps[run.fixed_by].input
        again = "then passed" if later_cmd.strip() == run.command.strip() else f"then `{clean(later_cmd, 120)}` passed"
        line = f"`{clean(run.command, 120)}` failed at first ({run.error or run.outcome}), {again}{after}."
        stories.append(line)
        if key not in reported_fixed and not is_probe(run.command):
            reported_fixed.add(key)
            done.append(line)

    # Commands whose last run failed: Failed, and Open (the state the session left).
    last_by_key: dict[tuple[str, ...], CommandRun] = {}
    counts: dict[tuple[str, ...], int] = {}
    for key, run in keyed:
        last_by_key[key] = run
        if not run.ok:
            counts[key] = counts.get(key, 0) + 1
    for key, run in last_by_key.items():
        if run.step.rejected:
            failed.append(f"The user declined to run `{clean(run.command, 160)}`.")
            continue
        if run.ok or run.fixed_by is not None or is_probe(run.command):
            continue
        if run.step.no_result:
            continue  # the session stopped while it ran: reported as a mid-task end
        times = f" ({counts[key]} times)" if counts.get(key, 0) > 1 else ""
        what = "was interrupted" if run.step.interrupted else run.outcome
        failed.append(f"`{clean(run.command, 160)}` {what}{times}" + (f": {run.error}" if run.error else "."))
        stories.append(
            f"`{clean(run.command, 120)}` {what}" + (f" ({run.error})" if run.error else "") + "; no later run passed."
        )
        if not run.step.interrupted:
            open_items.append(
                f"`{clean(run.command, 160)}` was still failing when the session ended"
                + (f" ({run.error})." if run.error else ".")
            )

    # Verification that passed on its last run (and was not already told as a fix).
    for key, run in last_by_key.items():
        if run.ok and is_verification(run.command) and key not in reported_fixed:
            done.append(f"`{clean(run.command, 160)}` passed (last run).")

    # Edits: counts, failures never redone, reverts.
    edits: dict[str, int] = {}
    edit_log: list[tuple[Step, str, str, str]] = []  # (step, file, old digest, new digest)
    for s in steps:
        if s.kind != "edit":
            continue
        if s.error:
            if s.rejected:
                failed.append(f"The user declined the edit of {_edit_label(s, cwd)}.")
                continue
            if _TOOL_UNAVAILABLE.search(s.output):
                continue
            redone = any(t.kind == "edit" and not t.error and set(t.files) & set(s.files) for t in steps[s.index + 1 :])
            if not redone:
                failed.append(f"Editing {_edit_label(s, cwd)} failed: {error_line(s.output) or 'no detail'}")
            continue
        for f in s.files:
            name = relative(f, cwd)
            edits[name] = edits.get(name, 0) + 1
            digests = s.meta.get("edit")
            if isinstance(digests, list) and len(digests) == 2:
                edit_log.append((s, name, str(digests[0]), str(digests[1])))
    for n, (_step, name, old, new) in enumerate(edit_log):
        for _later, later_name, later_old, later_new in edit_log[n + 1 :]:
            if later_name == name and later_old == new and later_new == old:
                failed.append(f"An edit to {name} was made and then undone.")
                break
    for run in runs:
        words = command_words(run.command)
        if run.ok and _UNDO.match(" ".join(words)):
            targets = [w for w in words[2:] if not w.startswith("-") and w not in ("HEAD", "--")]
            what = ", ".join(targets) if targets else "the working tree"
            failed.append(f"Changes to {what} were reverted (`{clean(run.command, 120)}`).")

    # Other calls: refused by the user, or failing and never followed by success.
    for s in steps:
        if s.kind in ("command", "edit", "read") or not s.error:
            continue
        if s.rejected:
            if s.tool.lower() == "exitplanmode":
                failed.append(f"The user rejected the proposed plan: {clean(s.input, 200)}")
            else:
                failed.append(f"The user declined {s.tool}: {clean(s.input, 160)}")
            continue
        if _TOOL_UNAVAILABLE.search(s.output) or s.kind == "plan":
            continue
        if not any(t.tool == s.tool and not t.error for t in steps[s.index + 1 :]):
            failed.append(f"{s.tool} failed ({clean(s.input, 100)}): {error_line(s.output) or 'no detail'}")

    # The final message: what it reports, asks and leaves for later.
    # The last answer, if it answers the last request (not an earlier turn's greeting).
    final = session.final_answer or ""
    if final and session.real_prompts and session.answers[-1].time < session.real_prompts[-1].time:
        final = ""
    if final:
        statements, questions, next_steps = _split_final(final)
        report = clean(" ".join(statements), 400)
        if report:
            done.append(f"Final report: {report}")
        for q in questions[:4]:
            open_items.append(f"Question left for the user: {q}")
        open_items.extend(next_steps[:6])

    # A request nobody answered, and a session that stopped in the middle of a call.
    last_prompt = session.real_prompts[-1] if session.real_prompts else None
    if last_prompt and session.last_kind == "prompt":
        open_items.append(f"The last request got no answer: {clean(last_prompt.text, 200)}")
    mid_task = session.last_kind == "tool"
    if mid_task:
        last = steps[-1]
        what = f"{last.tool} {clean(last.input, 120)}".strip()
        open_items.append(f"The session stopped mid-task, after `{what}`, before giving a final answer.")

    memory = _memory_pages(steps)
    if memory["written"]:
        done.append("Recorded in memory: " + ", ".join(memory["written"][:6]))
    files = tuple(edits)
    if files and not any(line.startswith("`") and "passed" in line for line in done):
        done.append(
            f"Changed {len(files)} file{'s' if len(files) != 1 else ''} ({', '.join(files[:6])}"
            f"{', …' if len(files) > 6 else ''}); no test or build run was recorded afterwards."
        )

    reads: list[str] = []
    for s in steps:
        if s.kind == "read" and s.tool.lower() in ("read", "read_file", "notebookread") and s.input:
            name = relative(s.input, cwd)
            if name not in reads:
                reads.append(name)

    return Summary(
        session=session,
        goal=goal,
        requests=requests,
        done=_dedupe(done),
        failed=_dedupe(failed),
        open=_dedupe(open_items),
        files=files,
        edits=edits,
        reads=tuple(reads),
        commands=tuple(runs),
        stories=_dedupe(stories),
        final=final,
        memory=_dedupe(memory["written"] + memory["read"]),
        mid_task=mid_task,
    )


def _memory_pages(steps: list[Step]) -> dict[str, list[str]]:
    """Memory pages the session wrote (MCP write tools, `wiki-memory write`) or read."""
    written: list[str] = []
    read: list[str] = []
    for s in steps:
        command_write = s.kind == "command" and re.search(r"\bwiki-memory\s+(write|handoff\s+write|edit|mv)\b", s.input)
        if s.kind != "memory" and not command_write:
            continue
        paths = _PAGE_PATH.findall(f"{s.input}\n{s.output}")
        writes = bool(command_write) or bool(
            re.search(r"(write|edit|remember|handoff_write|create|update|append)", s.tool, re.IGNORECASE)
        )
        for path in paths:
            target = written if writes and not s.error else read
            if path not in written and path not in target:
                target.append(path)
    return {"written": written, "read": [p for p in read if p not in written]}


def plan_lines(plan: list[PlanItem]) -> list[str]:
    labels = {"completed": "completed", "in_progress": "in progress", "pending": "pending"}
    return [f"[{labels.get(item.status, item.status or 'pending')}] {clean(item.text, 300)}" for item in plan]
