"""What the commands share to read input and print: JSON, progress bars for long runs,
warnings on stderr, and text read from stdin that must be UTF-8."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, ClassVar

import click

from wiki_memory.memory import InputError


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def read_stdin(what: str) -> str:
    """All of stdin as UTF-8 text, or one clear error naming `what` it was for."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"the {what} on stdin is not UTF-8 text (byte {data[e.start]:#04x} at {e.start})") from None


@contextmanager
def warnings_to_stderr() -> Iterator[None]:
    """Python warnings raised inside (no embedding model, ...) as `wiki-memory: warning:` lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        click.echo(f"wiki-memory: warning: {w.message}", err=True)


class Progress:
    """A progress bar on stderr per stage (`index`, `embed`), shown only for long runs;
    the `progress(stage, done, total)` callback that indexing and embedding take."""

    LABELS: ClassVar[dict[str, str]] = {"index": "indexing pages", "embed": "embedding chunks"}

    def __init__(self, quiet: bool, *, least: int = 200):
        self.quiet = quiet
        self.least = least
        self.bars: dict[str, Any] = {}
        self.done: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.quiet or total < self.least:
            return
        if stage not in self.bars:
            bar = click.progressbar(length=total, label=self.LABELS.get(stage, stage), file=sys.stderr)
            bar.__enter__()
            self.bars[stage] = bar
            self.done[stage] = 0
        self.bars[stage].update(done - self.done[stage])
        self.done[stage] = done
        if done >= total:
            self.bars.pop(stage).__exit__(None, None, None)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.__exit__(None, None, None)
        self.bars.clear()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def say_redacted(families: Sequence[str]) -> None:
    """Tell the writer that secrets were taken out of what they wrote."""
    if families:
        kinds = ", ".join(dict.fromkeys(families))
        click.echo(
            f"wiki-memory: {len(families)} secret(s) ({kinds}) replaced by [REDACTED:...] before the commit",
            err=True,
        )
