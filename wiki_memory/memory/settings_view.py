"""The settings in force for a project, and where each came from: the environment,
`config.toml`, the repository's trusted `.wiki-memory.toml`, or the default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wiki_memory.config import Project, home, load_settings
from wiki_memory.config.settings import SECTIONS
from wiki_memory.recall.settings import FIELDS

#: Settings read from `config.toml`, with their defaults (`[recall]` adds its own table).
DEFAULTS: dict[str, Any] = {f"{cls.name}.{key}": getattr(cls, key) for cls in SECTIONS for key in cls.fields()}
#: The environment variables that change what wiki-memory does, and the setting each stands for.
ENVIRONMENT = {
    "WIKI_MEMORY_HOME": "home",
    "WIKI_MEMORY_STORE": "project.wiki",
    "WIKI_MEMORY_PROJECT": "project.root",
    "WIKI_MEMORY_RECALL": "recall.override",
    "WIKI_MEMORY_EMBED_MODEL": "index.model",
    "WIKI_MEMORY_EMBED_MODEL_PATH": "index.model_path",
    "WIKI_MEMORY_EMBED_THREADS": "index.threads",
    "WIKI_MEMORY_DISABLE": "hooks.disabled",
}
_SECRET_WORDS = ("token", "key", "secret", "password")


@dataclass(frozen=True)
class Setting:
    """One setting: its name (`section.key`), its value, and where that value came from."""

    name: str
    value: Any
    source: str  # default | config.toml path | environment (NAME) | project

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "source": self.source}


def settings_in_force(project: Project, env: Mapping[str, str] | None = None) -> list[Setting]:
    """Every setting that applies to `project`: its paths, the environment's, `config.toml`'s
    (known keys and unknown ones alike) and the defaults of the rest."""
    env = os.environ if env is None else env
    settings = load_settings(env)
    config_path = str(settings.path)
    out: dict[str, Setting] = {}

    def put(name: str, value: Any, source: str) -> None:
        if any(word in name.lower() for word in _SECRET_WORDS) and value:
            value = "[hidden]"
        out[name] = Setting(name, value, source)

    defaults = dict(DEFAULTS)
    defaults.update({f"recall.{k}": v[0] for k, v in FIELDS.items()})
    for name, value in defaults.items():
        put(name, value, "default")
    for section, table in settings.data.items():
        if isinstance(table, dict):
            for key, value in table.items():
                put(f"{section}.{key}", value, config_path)
        else:
            put(section, table, config_path)
    put("home", str(home(env)), "environment (WIKI_MEMORY_HOME)" if env.get("WIKI_MEMORY_HOME") else "default")
    put("config", config_path, "file" if settings.path and os.path.exists(config_path) else "default (no file)")
    for var, name in ENVIRONMENT.items():
        if env.get(var) and var != "WIKI_MEMORY_HOME":
            put(name, env[var], f"environment ({var})")
    put("project.id", project.id, "resolved")
    put("project.name", project.name, "resolved")
    put("project.root", str(project.root) if project.root else None, _project_source(project, env, "root"))
    put("project.wiki", str(project.wiki), _project_source(project, env, "wiki"))
    if project.root is not None and (project.root / ".wiki-memory.toml").is_file():
        put("project.file", str(project.root / ".wiki-memory.toml"), "ignored" if project.warning else "trusted")
    return sorted(out.values(), key=lambda s: s.name)


def _project_source(project: Project, env: Mapping[str, str], what: str) -> str:
    if what == "wiki" and env.get("WIKI_MEMORY_STORE"):
        return "environment (WIKI_MEMORY_STORE)"
    if what == "root" and env.get("WIKI_MEMORY_PROJECT"):
        return "environment (WIKI_MEMORY_PROJECT)"
    if project.root is not None and (project.root / ".wiki-memory.toml").is_file() and not project.warning:
        return f"{project.root / '.wiki-memory.toml'}"
    return "the working directory" if what == "root" else "default"
