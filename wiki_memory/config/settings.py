"""`config.toml`, read once into one typed record per section.

Each section is a class below: its annotated attributes are the table's keys and their
values the defaults, the one place they are written (docs/configuration.md says what each
does; `tests/test_docs.py` holds the two together). `[recall]` has its own record in
`recall/settings.py`, with ranges.

A value of the wrong type is replaced by its default, and a line naming the file and the
key says so (`Settings.problems`; `wiki-memory doctor` shows them): a hook must never fail
over a typo. A part that cannot go on with a default (a model provider with a timeout of
"soon") raises that line instead (`Settings.check`). A file that is not TOML at all is one
`WikiMemoryError` naming it.

Standard library only, no `typing` or `dataclasses` at run time: the hook path reads it.
"""

from __future__ import annotations

import sys

from wiki_memory.errors import WikiMemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path
    from typing import Any

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})


class Section:
    """One `config.toml` table: a subclass's annotated class attributes are its keys."""

    name = ""  # the table's name in config.toml

    def __init__(self, **values: Any) -> None:
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"[{self.name}] settings are read-only")

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.fields())
        return f"{type(self).__name__}({shown})"

    @classmethod
    def fields(cls) -> dict[str, str]:
        """key -> its type as written in the class (`"float"`, `"list[str]"`, `"int | None"`)."""
        return {k: v for k, v in cls.__annotations__.items() if not k.startswith("_") and k != "name"}

    @classmethod
    def parse(cls, table: Mapping[str, Any], where: str) -> tuple[Section, dict[str, str]]:
        """The record of `table`, and key -> the line saying why its value was not taken."""
        values: dict[str, Any] = {}
        problems: dict[str, str] = {}
        types = cls.fields()
        for key, value in table.items():
            kind = types.get(key)
            if kind is None:
                problems[key] = f"{where}: [{cls.name}] has no setting {key!r} (known: {', '.join(types)})"
                continue
            ok, taken = _coerce(kind.removesuffix(" | None"), value)
            if ok:
                values[key] = taken
            else:
                default = getattr(cls, key)
                problems[key] = f"{where}: [{cls.name}] {key} = {value!r} is not {_WHAT[kind]}; using {default!r}"
        return cls(**values), problems


_WHAT = {
    "bool": "true or false",
    "int": "a whole number",
    "int | None": "a whole number",
    "float": "a number",
    "float | None": "a number",
    "str": "a string",
    "str | None": "a string",
    "tuple[str, ...]": "a string or a list of strings",
}


def _coerce(kind: str, value: object) -> tuple[bool, object]:
    """(True, the value as `kind`) or (False, None)."""
    if kind == "bool":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return True, value.strip().lower() in _TRUE
    elif kind in ("int", "float"):
        number: object = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                return False, None
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            if kind == "float":
                return True, float(number)
            if float(number).is_integer():
                return True, int(number)
    elif kind == "str":
        if isinstance(value, str):
            return True, value
    elif kind == "tuple[str, ...]":
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list) and all(isinstance(v, str) for v in items):
            return True, tuple(items)
    return False, None


# The sections ---------------------------------------------------------------------------------


class ConsolidateSettings(Section):
    name = "consolidate"
    provider: str = "none"
    model: str = ""
    base_url: str = ""
    api_key_env: str | None = None
    timeout: float = 60.0
    max_input_chars: int = 24000
    max_tokens: int = 2000
    json_mode: bool = True
    enabled: bool = True
    settle_seconds: float = 5.0
    related_search: str = "fts"


class DistillSettings(Section):
    name = "distill"
    enabled: bool = True
    llm: str = "none"
    budget: int = 6000
    timeout: float = 120.0
    model: str = ""
    program: str = ""


class IndexSettings(Section):
    name = "index"
    provider: str = "fastembed"
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    model_path: str | None = None
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = None
    dimensions: int | None = None
    timeout: float = 10.0
    batch_size: int | None = None
    threads: int | None = None


class SearchSettings(Section):
    name = "search"
    rerank: str = ""
    rerank_url: str = ""
    rerank_model: str = ""
    rerank_path: str = ""
    rerank_api_key_env: str = ""
    rerank_recall: bool = False
    rerank_timeout: float = 5.0
    rerank_top: int = 20


class SyncSettings(Section):
    name = "sync"
    auto: bool = False
    remote: str = ""
    host: str = ""


class PagesSettings(Section):
    name = "pages"
    large_kb: float = 256.0


class RedactSettings(Section):
    name = "redact"
    patterns: tuple[str, ...] = ()


class ExportSettings(Section):
    name = "export"
    targets: tuple[str, ...] = ()


class McpSettings(Section):
    name = "mcp"
    projects: tuple[str, ...] = ()


class TrustSettings(Section):
    name = "trust"
    paths: tuple[str, ...] = ()


class TeamSettings(Section):
    name = "team"
    recall: str = "reviewed"


SECTIONS: tuple[type[Section], ...] = (
    ConsolidateSettings,
    DistillSettings,
    IndexSettings,
    SearchSettings,
    SyncSettings,
    PagesSettings,
    RedactSettings,
    ExportSettings,
    McpSettings,
    TrustSettings,
    TeamSettings,
)
#: Tables with a record elsewhere (their keys are checked there).
ELSEWHERE = ("recall",)


class Settings:
    """The whole of `config.toml` (`data`, from `path`), each known section as its record."""

    consolidate: ConsolidateSettings
    distill: DistillSettings
    index: IndexSettings
    search: SearchSettings
    sync: SyncSettings
    pages: PagesSettings
    redact: RedactSettings
    export: ExportSettings
    mcp: McpSettings
    trust: TrustSettings
    team: TeamSettings

    def __init__(self, data: Mapping[str, Any] | None = None, path: Path | None = None) -> None:
        self.data: Mapping[str, Any] = dict(data or {})
        self.path = path
        where = str(path) if path is not None else "config.toml"
        self._problems: dict[tuple[str, str], str] = {}
        for cls in SECTIONS:
            table = self.data.get(cls.name, {})
            if not isinstance(table, dict):
                self._problems[(cls.name, "")] = f"{where}: [{cls.name}] is not a table; using its defaults"
                table = {}
            record, problems = cls.parse(table, where)
            setattr(self, cls.name, record)
            self._problems.update({(cls.name, key): line for key, line in problems.items()})

    def section(self, name: str) -> dict[str, Any]:
        """A table as written, for a section whose record lives elsewhere (`[recall]`)."""
        value = self.data.get(name, {})
        return dict(value) if isinstance(value, dict) else {}

    @property
    def problems(self) -> list[str]:
        """One line per value not taken (and per unknown key), naming the file and the key."""
        return list(self._problems.values())

    def check(self, section: str, keys: Iterable[str] | None = None) -> None:
        """Raise the first problem with a value of `section` (of `keys`, when given)."""
        for (name, key), line in self._problems.items():
            if name == section and key and (keys is None or key in keys) and " has no setting " not in line:
                raise WikiMemoryError(line.split("; using ", 1)[0])


def read_toml(path: Path) -> dict[str, Any] | None:
    """A TOML file's contents, or None when there is no file.

    tomllib is imported only when there is a file to read: this is on the hook path,
    where most calls find no config.toml and no .wiki-memory.toml.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the `with` below, once tomllib is imported
    except FileNotFoundError:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    with f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise WikiMemoryError(f"{path}: invalid TOML: {e}") from None
