"""The `wiki-memory` command line: click commands that parse arguments, call one library
function and print. Each command group lives in its own module and registers on `main`."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from wiki_memory import __version__
from wiki_memory.config import Project, resolve_project
from wiki_memory.errors import WikiMemoryError


@dataclass
class App:
    """What every command needs: the project (resolved lazily) and its store."""

    project_dir: str | None = None
    _project: Project | None = field(default=None, repr=False)
    _store: Any = field(default=None, repr=False)
    _index: Any = field(default=None, repr=False)

    @property
    def project(self) -> Project:
        if self._project is None:
            self._project = resolve_project(self.project_dir)
        return self._project

    def store(self, create: bool = False):  # -> Store; imported lazily (dulwich)
        """The project's store; `create` makes the wiki on first use."""
        if self._store is None:
            from wiki_memory.store import Store

            wiki = self.project.wiki
            if not (wiki / ".git").is_dir():
                if not create:
                    raise WikiMemoryError(f"no wiki yet for this project ({wiki}); run `wiki-memory init`")
                self._store = Store.create(wiki)
                write_project_file(self.project)
            else:
                self._store = Store(wiki)
            # Close packs and files when the command ends, not in interpreter teardown.
            ctx = click.get_current_context(silent=True)
            if ctx is not None:
                ctx.call_on_close(self._store.close)
            self._attach_index(self._store)
        return self._store

    def _attach_index(self, store) -> None:
        """Every write through this store lands in the search index at once (FTS; vectors
        when the model is loaded in this process, else at the next sync or search)."""
        try:
            self.index().attach(store)
        except Exception as e:  # noqa: BLE001 - the index is derived; a write must not fail on it
            click.echo(
                f"wiki-memory: warning: the search index is unavailable ({e}); `wiki-memory reindex` rebuilds it",
                err=True,
            )

    def index(self):  # -> Index; imported lazily
        """The project's search index, attached to the store once there is one."""
        if self._index is None:
            from wiki_memory.index import Index

            self._index = Index.open(self.project)
            if self._store is not None:
                self._index.attach(self._store)
        return self._index


def write_project_file(project: Project) -> None:
    """`project.json` beside the wiki says which code repository the memory belongs to."""
    project.home.mkdir(parents=True, exist_ok=True)
    info = {
        "id": project.id,
        "name": project.name,
        "root": str(project.root) if project.root else None,
        "identity": project.identity,
        "wiki": str(project.wiki),
    }
    (project.home / "project.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


class WikiGroup(click.Group):
    """Turns errors a user can cause into one line and a non-zero exit."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WikiMemoryError as e:
            raise click.ClickException(str(e)) from None
        except PermissionError as e:
            raise click.ClickException(f"permission denied: {e.filename}") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


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
from wiki_memory.cli import install as _install  # noqa: E402,F401
from wiki_memory.cli import pages as _pages  # noqa: E402,F401
from wiki_memory.cli import search as _search  # noqa: E402,F401
from wiki_memory.cli import serve as _serve  # noqa: E402,F401
from wiki_memory.cli import sync as _sync  # noqa: E402,F401
