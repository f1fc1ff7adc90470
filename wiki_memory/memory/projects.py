"""The projects a wiki-memory home holds: each `projects/<id>/` with a `project.json` (written
when its wiki is made), read back as a `Project` without touching its working directory."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from wiki_memory.config import Project, home, resolve_project
from wiki_memory.errors import NotFoundError


def project_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders of the home's projects, sorted by id."""
    projects = home(env) / "projects"
    try:
        return sorted(d for d in projects.iterdir() if (d / "project.json").is_file())
    except FileNotFoundError:
        return []


def read_info(project_home: Path) -> dict[str, object]:
    """A project's `project.json` ({} when unreadable)."""
    try:
        data = json.loads((project_home / "project.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def load_project(project_home: Path) -> Project:
    """The project of a `projects/<id>/` folder, as its `project.json` describes it."""
    info = read_info(project_home)
    root = info.get("root")
    return Project(
        id=project_home.name,
        name=str(info.get("name") or project_home.name),
        home=project_home,
        wiki=Path(str(info.get("wiki") or project_home / "wiki")),
        root=Path(str(root)) if root else None,
        identity=str(info.get("identity") or ""),
    )


def known_projects(env: Mapping[str, str] | None = None) -> list[Project]:
    """Every project of the home that has a wiki, sorted by name."""
    found = [load_project(d) for d in project_dirs(env)]
    return sorted((p for p in found if (p.wiki / ".git").is_dir()), key=lambda p: (p.name.casefold(), p.id))


def named_project(value: str, env: Mapping[str, str] | None = None) -> Project:
    """The project a person or a caller names: a directory (absolute path), or a project's id or name."""
    value = value.strip()
    if not value:
        raise NotFoundError("`project` is empty: give the project's directory (absolute path) or its id")
    path = Path(value).expanduser()
    if path.is_absolute():
        if path.is_dir():
            return resolve_project(path, env)
        raise NotFoundError(f"project directory {value} does not exist")
    projects = home(env) / "projects"
    if (projects / value / "project.json").is_file() and "/" not in value:
        return load_project(projects / value)
    named = [d for d in project_dirs(env) if read_info(d).get("name") == value]
    if len(named) == 1:
        return load_project(named[0])
    if len(named) > 1:
        ids = ", ".join(sorted(d.name for d in named))
        raise NotFoundError(f"{len(named)} projects are named {value!r} ({ids}); give the id or the directory")
    raise NotFoundError(
        f"unknown project {value!r}: give the project's directory (an absolute path) or the "
        "id of an existing project (`wiki-memory path --json` shows it)"
    )
