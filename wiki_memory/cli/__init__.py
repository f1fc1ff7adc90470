"""The `wiki-memory` command line: click commands that parse arguments, call one library
function and print. Each command group lives in its own module and registers on `main`."""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from wiki_memory import __version__
from wiki_memory.config import Project
from wiki_memory.errors import WikiMemoryError, disk_full, is_disk_full
from wiki_memory.memory import Memory


@dataclass
class App:
    """What every command needs: the project of `--project` (or of the working directory),
    resolved lazily, and its memory, opened once and closed when the command ends."""

    project_dir: str | None = None
    _memory: Memory | None = field(default=None, repr=False)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            self._memory = Memory.at(self.project_dir)
            if self._memory.project.warning:
                click.echo(f"wiki-memory: warning: {self._memory.project.warning}", err=True)
            # Close packs and files when the command ends, not in interpreter teardown.
            ctx = click.get_current_context(silent=True)
            if ctx is not None:
                ctx.call_on_close(self._memory.close)
        return self._memory

    @property
    def project(self) -> Project:
        return self.memory.project


class WikiGroup(click.Group):
    """Turns errors a user can cause into one line and a non-zero exit."""

    def invoke(self, ctx: click.Context) -> Any:
        # A Python warning (no embedding model, ...) is one line on stderr, as it happens,
        # not Python's two lines naming our source file.
        warnings.showwarning = _one_line_warning
        try:
            return super().invoke(ctx)
        except WikiMemoryError as e:
            raise click.ClickException(str(e)) from None
        except PermissionError as e:
            raise click.ClickException(f"permission denied: {e.filename}") from None
        except OSError as e:
            if is_disk_full(e):
                raise click.ClickException(str(disk_full(e, "the wiki-memory home"))) from None
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


def _one_line_warning(message: Warning | str, *_args: Any, **_kwargs: Any) -> None:
    click.echo(f"wiki-memory: warning: {message}", err=True)


pass_app = click.make_pass_decorator(App)


@click.group(cls=WikiGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--project",
    "project_dir",
    metavar="DIR",
    envvar="WIKI_MEMORY_PROJECT",
    help="Act on the project of DIR instead of the current directory.",
)
@click.version_option(__version__, prog_name="wiki-memory")
@click.pass_context
def main(ctx: click.Context, project_dir: str | None) -> None:
    """One shared, long-term memory per project for AI coding agents.

    Pages are Markdown files in a git repository per project; agents' hooks record
    sessions, and the next session (in any agent) is handed what the last one did.

    \b
    Example:
      wiki-memory init
      wiki-memory write --title "Retry policy" --type decision --body "Retry twice, then fail."
      wiki-memory list
      git -C "$(wiki-memory path)" log
    """
    if project_dir is not None and not os.path.isdir(project_dir):
        raise click.BadParameter(f"{project_dir} is not a directory", param_hint="--project")
    ctx.obj = App(str(Path(project_dir).absolute()) if project_dir else None)


# Command modules register themselves on `main` when imported.
from wiki_memory.cli import handoff as _handoff  # noqa: E402,F401
from wiki_memory.cli import inout as _inout  # noqa: E402,F401
from wiki_memory.cli import install as _install  # noqa: E402,F401
from wiki_memory.cli import lifecycle as _lifecycle  # noqa: E402,F401
from wiki_memory.cli import pages as _pages  # noqa: E402,F401
from wiki_memory.cli import recall as _recall  # noqa: E402,F401
from wiki_memory.cli import search as _search  # noqa: E402,F401
from wiki_memory.cli import secrets as _secrets  # noqa: E402,F401
from wiki_memory.cli import serve as _serve  # noqa: E402,F401
from wiki_memory.cli import sync as _sync  # noqa: E402,F401
from wiki_memory.cli import trust as _trust  # noqa: E402,F401
from wiki_memory.cli import ui as _ui  # noqa: E402,F401
