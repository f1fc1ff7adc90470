"""How a command's output says it ended: the exit code it reports, the lines that say it
failed when it reports none, the header Codex writes before the output, and Codex's report
of a command its sandbox stopped. Standard library only: this is the hook path.
"""

from __future__ import annotations

import re

# Compiled on first use (see `_regex`): most hook calls need none of them.
_PATTERNS = {
    "exit-code": (r"(?:Process exited with code|Exit code:?|exit code:?|exited with code|Exit Code:)\s*(-?\d+)", 0),
    # The lines Codex writes before a command's output ("Exit code: 0\nWall time: 1 s\nOutput:\n"),
    # or before an output it cut ("Total output lines: 245\n\n").
    "codex-header": (
        r"\A(?:(?:Chunk ID|Wall time|Process exited with code|Process running with session ID|Exit code|"
        r"Original token count|Total output lines)\b[^\n]*\n)*Output:\n|\ATotal output lines: \d+\n\n",
        0,
    ),
    # Lines that say a command failed even when no exit code is given (Codex's shell output;
    # its `execution error: ...` when the command could not be started at all).
    "failure": (
        r"^(?:Traceback \(most recent call last\):|fatal: |error(?:\[E\d+\])?: |Error: |ERROR[: ]|FAILED\b|"
        r"npm ERR!|E\s{3}\w|panic: |Segmentation fault|execution error: )"
        r"|: command not found$|: No such file or directory$|: Permission denied$|: cannot access '"
        r"|^=+ .*\b\d+ (?:failed|errors?)\b.* =+$|\bAssertionError\b",
        re.M,
    ),
}
_compiled: dict[str, re.Pattern[str]] = {}


def _regex(name: str) -> re.Pattern[str]:
    if name not in _compiled:
        _compiled[name] = re.compile(*_PATTERNS[name])
    return _compiled[name]


def read_exit_code(text: str) -> int | None:
    """The exit code a shell tool's output reports, if it reports one."""
    m = _regex("exit-code").search(text)
    return int(m.group(1)) if m else None


def looks_failed(text: str) -> bool:
    """Whether shell output reads as a failure (a non-zero exit code, or a failure line)."""
    code = read_exit_code(text)
    if code is not None:
        return code != 0
    return has_failure_line(text)


def command_output(text: str) -> tuple[str, int | None]:
    """A command's output without the header Codex writes before it, and the exit code
    the output reports (in the header or, failing that, anywhere)."""
    header = _regex("codex-header").match(text)
    if header:
        head = header.group(0)
        code = read_exit_code(head)
        running = re.search(r"Process running with session ID (\S+)", head)
        if code is None and running:
            # Still running: its result comes with a later `write_stdin` to this session.
            return f"[running: session {running.group(1)}]\n" + text[header.end() :], None
        return text[header.end() :], code
    nested = _NESTED.match(text)
    if nested:
        # Newer Codex wraps the report in a message string: one level of escapes more.
        text = re.sub(r"\\(.)", r"\1", nested.group(1))
    denied = _SANDBOX_DENIED.match(text)
    if denied:
        return sandbox_denial(text, denied)
    return text, read_exit_code(text)


# Codex's report of a command its sandbox stopped, as Rust prints the error ("failed in sandbox
# MacosSeatbelt with execution error: Denied { output: ExecToolCallOutput { exit_code: 128, ...
# aggregated_output: StreamOutput { text: \"fatal: ...\" ...").
_SANDBOX_DENIED = re.compile(
    r"\A(?:failed in sandbox (\w+) with execution error: |Codex\(Sandbox\()(\w+)\b.*?\bexit_code: (-?\d+)", re.S
)
# Codex 0.11x: `exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: ...`.
_NESTED = re.compile(r'\Aexec_command failed: CreateProcess \{ message: "(Codex\(Sandbox\(.*)"\s*\}\s*\Z', re.S)
_STREAM_TEXT = r'{name}: StreamOutput \{{ text: "((?:[^"\\]|\\.)*)"'


def sandbox_denial(text: str, denied: re.Match[str]) -> tuple[str, int]:
    """(what the command printed, then a line naming the sandbox that stopped it; its exit code)."""
    printed = ""
    for name in ("aggregated_output", "stderr", "stdout"):
        m = re.search(_STREAM_TEXT.format(name=name), text)
        if m and m.group(1).strip():
            printed = re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), m.group(1))
            break
    code = int(denied.group(3))
    sandbox = denied.group(1) or "Codex"  # (newer Codex does not name it)
    return (
        f"{printed.rstrip()}\n[{denied.group(2).lower()} by the sandbox {sandbox}: exit code {code}]",
        code or 1,
    )


def has_failure_line(text: str) -> bool:
    """Whether some line of `text` says a command failed (a traceback, `fatal:`, `FAILED`...)."""
    return bool(_regex("failure").search(text))
