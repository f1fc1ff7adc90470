"""The `wiki-memory` command line: click commands that parse arguments, call one library
function and print. Each command group lives in its own module and registers on `main`."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wiki_memory import __version__
from wiki_memory.config import Project
from wiki_memory.errors import WikiMemoryError, disk_full, is_disk_full

if TYPE_CHECKING:
    from wiki_memory.memory import Memory, Searching


@dataclass
class App:
    """What every command needs: the project of `--project` (or of the working directory),
    resolved lazily, and its memory, opened once and closed when the command ends."""

    project_dir: str | None = None
    _memory: Memory | None = field(default=None, repr=False)
    _searching: Searching | None = field(default=None, repr=False)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            from wiki_memory.memory import Memory  # deferred: git and the index; `search` needs none of it

            self._memory = Memory.at(self.project_dir)
            if self._memory.project.warning:
                click.echo(f"wiki-memory: warning: {self._memory.project.warning}", err=True)
            # Close packs and files when the command ends, not in interpreter teardown.
            ctx = click.get_current_context(silent=True)
            if ctx is not None:
                ctx.call_on_close(self._memory.close)
        return self._memory

    @property
    def searching(self) -> Memory | Searching:
        """The project's memory for a search alone: no git store, no numpy loaded (see
        `memory.searching`); the whole memory when a command opened it already."""
        if self._memory is not None:
            return self._memory
        if self._searching is None:
            from wiki_memory.memory import Searching  # deferred: the search front, only for the commands that search

            self._searching = Searching.at(self.project_dir)
            if self._searching.project.warning:
                click.echo(f"wiki-memory: warning: {self._searching.project.warning}", err=True)
            ctx = click.get_current_context(silent=True)
            if ctx is not None:
                ctx.call_on_close(self._searching.close)
        return self._searching

    @property
    def project(self) -> Project:
        return self.memory.project


# The module that defines each command: `wiki-memory search` imports cli/search.py and no
# other command's module (tests/test_cli.py checks the table against the commands). A name
# not listed loads every module.
COMMAND_MODULES = {
    **dict.fromkeys(("anchor", "mark", "review", "supersede"), "review"),
    **dict.fromkeys(("consolidate", "demo", "handoff", "import"), "handoff"),
    **dict.fromkeys(("diff", "edit", "init", "list", "log", "mv", "path", "revert", "rm", "show"), "pages"),
    **dict.fromkeys(("status", "write"), "pages"),
    **dict.fromkeys(("doctor", "hook", "install", "uninstall"), "install"),
    **dict.fromkeys(("forget", "scan"), "secrets"),
    **dict.fromkeys(("install-instructions", "serve"), "serve"),
    **dict.fromkeys(("links", "reindex", "search"), "search"),
    **dict.fromkeys(("recall", "stats"), "recall"),
    **dict.fromkeys(("share", "shared"), "share"),
    **dict.fromkeys(("open", "remote", "sync", "watch"), "sync"),
    **dict.fromkeys(("config", "export", "projects", "prune", "sessions"), "inout"),
    "team": "team",
    "token": "tokens",
    "trust": "trust",
    "ui": "ui",
}

_all_loaded = False


def load_commands() -> None:
    """Import every module of the package (each registers its commands on `main`)."""
    global _all_loaded
    if not _all_loaded:
        _all_loaded = True

        import pkgutil  # deferred: only `--help` and shell completion list every module

        for found in pkgutil.iter_modules(__path__):
            importlib.import_module(f"wiki_memory.cli.{found.name}")


class WikiGroup(click.Group):
    """Turns errors a user can cause into one line and a non-zero exit; loads a command's
    module when the command is asked for (`commands` and `--help` load them all)."""

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        load_commands()
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        self._commands[name or cmd.name or ""] = cmd

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        importlib.import_module(f"wiki_memory.cli.{module}")
        return self._commands.get(cmd_name)

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
