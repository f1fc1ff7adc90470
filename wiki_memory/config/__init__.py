"""Where things live: the wiki-memory home, the project of a working directory, settings
(`config.toml`, typed in `config.settings`).

This module is on the hook path: standard library only, no subprocesses, no git porcelain.
"""

from __future__ import annotations

import os
import re
import sys
from collections import namedtuple
from pathlib import Path

from wiki_memory.config.settings import Settings, read_toml
from wiki_memory.errors import WikiMemoryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PROJECT_FILE = ".wiki-memory.toml"


def home(env: Mapping[str, str] | None = None) -> Path:
    """The wiki-memory home: `WIKI_MEMORY_HOME`, else `$XDG_DATA_HOME/wiki-memory`."""
    env = os.environ if env is None else env
    if env.get("WIKI_MEMORY_HOME"):
        return Path(env["WIKI_MEMORY_HOME"]).expanduser().absolute()
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser().absolute() / "wiki-memory"


# Why named tuples and not frozen dataclasses: this module runs in every hook process, and
# `dataclasses` imports `inspect` (with `ast` and `dis`), a fifth of a hook's start-up.


class Project(namedtuple("Project", "id name home wiki root identity warning", defaults=(None, "", None))):
    """A project's memory: its wiki repository and the derived files beside it.

    `home` is WIKI_MEMORY_HOME/projects/<id>; `wiki` the git repository of pages; `root` the
    code repository (or directory) it was resolved from; `identity` what the id hashes
    (remote URL, absolute path, pinned name or store); `warning` what the user should be
    told about how it was resolved (a `.wiki-memory.toml` ignored), or None.
    """

    __slots__ = ()

    @property
    def index_path(self) -> Path:
        return self.home / "index.sqlite"

    @property
    def journal_dir(self) -> Path:
        return self.home / "journal"

    def team(self) -> Project:
        """The project's team tier: a second wiki (a clone of the team's shared repository)
        with its own index, kept beside the personal one under `<home>/team/`. It exists
        once `wiki-memory team join URL` has cloned it (`team().wiki` is then a git
        repository); the personal wiki is never pushed to it except by `share`."""
        team_home = self.home / "team"
        return self._replace(id=f"{self.id}.team", home=team_home, wiki=team_home / "wiki", warning=None)

    def has_team(self) -> bool:
        return (self.home / "team" / "wiki" / ".git").exists()

    def fields(self) -> dict[str, str | None]:
        """The project as another process is handed it (JSON): the background worker, the
        recall helper. `from_fields` reads it back; `warning` stays with the resolver."""
        return {
            "id": self.id,
            "name": self.name,
            "home": str(self.home),
            "wiki": str(self.wiki),
            "root": str(self.root) if self.root else None,
            "identity": self.identity,
        }

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> Project:
        return cls(
            data["id"],
            data["name"],
            Path(data["home"]),
            Path(data["wiki"]),
            Path(data["root"]) if data.get("root") else None,
            data.get("identity") or "",
        )


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read `config.toml` from the home into its typed sections (`config.settings`); a
    missing file is the defaults."""
    path = home(env) / "config.toml"
    return Settings(read_toml(path), path)


def find_code_root(start: Path) -> Path | None:
    """The git top-level containing `start` (a `.git` directory or file), or None."""
    here = start.absolute()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _git_common_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    # Trigger: worktrees and submodules have a `.git` file ("gitdir: <path>").
    # Why: their remotes live in the common directory's config, not beside the file.
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:") :].strip())
    if not git_dir.is_absolute():
        git_dir = (root / git_dir).resolve()
    common = git_dir / "commondir"
    if common.exists():
        rel = common.read_text(encoding="utf-8").strip()
        return (git_dir / rel).resolve()
    return git_dir


_REMOTE_SECTION = re.compile(r'^\s*\[\s*remote\s+"([^"]*)"\s*\]\s*$')
_URL_LINE = re.compile(r"^\s*url\s*=\s*(.+?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[")


def first_remote_url(root: Path) -> str | None:
    """The URL of the first remote in the repository's config file order, if any."""
    git_dir = _git_common_dir(root)
    if git_dir is None:
        return None
    try:
        lines = (git_dir / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    in_remote = False
    for line in lines:
        if _REMOTE_SECTION.match(line):
            in_remote = True
        elif _SECTION.match(line):
            in_remote = False
        elif in_remote and (m := _URL_LINE.match(line)):
            return m.group(1).strip('"')
    return None


def read_head(wiki: Path) -> str | None:
    """The commit id a wiki's HEAD names, read from git's own files (no git library: the
    SessionStart hook and the index's freshness check, before every search, both need it
    cheaply; plain os paths take a third of pathlib's time)."""
    git = os.path.join(wiki, ".git")
    head = _read_small(os.path.join(git, "HEAD"))
    if head is None or not head.startswith("ref:"):
        return head or None
    ref = head[4:].strip()
    found = _read_small(os.path.join(git, ref))
    if found:
        return found
    try:
        with open(os.path.join(git, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except OSError:
        pass
    return None


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return None


def normalize_remote(url: str) -> str:
    """One spelling for one repository, whichever protocol cloned it.

    `git@github.com:org/repo.git`, `https://user@github.com/org/repo` and
    `ssh://git@github.com:22/org/repo.git` all become `github.com/org/repo`, so a project
    cloned differently on two machines still resolves to the same memory.
    """
    url = url.strip()
    m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$", url)
    if m and not url.startswith("file://"):
        host, path = m.group(1).lower(), (m.group(2) or "")
    elif m := re.match(r"^(?:[^@/]+@)?([^/:]+):(?!/)(.+)$", url):  # scp-like syntax
        host, path = m.group(1).lower(), "/" + m.group(2)
    else:
        return url.rstrip("/").removesuffix(".git")
    path = path.rstrip("/").removesuffix(".git").rstrip("/")
    return host + path


def _sha256(data: bytes) -> str:
    # Every hook resolves a project: CPython's built-in SHA-256 spares it hashlib's OpenSSL
    # start-up, a noticeable share of a hook's budget. Same digest; hashlib where the
    # built-in is missing.
    # Each version's own module, by version: a failed import is work a hook would pay for.
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:
        from hashlib import sha256
    return sha256(data).hexdigest()


def _short_hash(text: str) -> str:
    return _sha256(text.encode("utf-8"))[:8]


def _name_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:40].strip("-") or "project"


def read_project_file(root: Path) -> dict[str, Any]:
    return read_toml(root / PROJECT_FILE) or {}


# Trust -------------------------------------------------------------------------------------
#
# A repository's own `.wiki-memory.toml` is written by whoever wrote the repository: honoured
# blindly, `store = "../other"` aimed this machine's commits (session content) at another
# repository, and `name = "..."` pulled another project's handoffs into this one's
# SessionStart. So `store` and `name` count only for a repository the user trusts, in one of
# two ways: `[trust] paths` in their own `config.toml` (a repository at or under one of those
# directories), or `wiki-memory trust` in it (`trust.json` in the home records the file's
# digest: a changed file is no longer trusted). Otherwise the file is ignored with a warning,
# and the repository gets its own memory under the home.

TRUST_FILE = "trust.json"
PINNED_KEYS = ("store", "name")


def _trust_path(env: Mapping[str, str] | None) -> Path:
    return home(env) / TRUST_FILE


def _trusted_files(env: Mapping[str, str] | None) -> dict[str, Any]:
    import json

    try:
        with open(_trust_path(env), "rb") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _digest_of(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return _sha256(f.read())
    except OSError:
        return None


def _under_trusted_path(root: Path, env: Mapping[str, str] | None) -> bool:
    for entry in load_settings(env).trust.paths:
        if not entry.strip():
            continue
        trusted = Path(entry).expanduser()
        if not trusted.is_absolute():
            continue  # relative to what? only absolute paths (or ~) count
        trusted = trusted.resolve()
        if root == trusted or trusted in root.parents:
            return True
    return False


def is_trusted(root: Path, env: Mapping[str, str] | None = None) -> bool:
    """Does the user trust the `.wiki-memory.toml` of the repository at `root` (see above)?"""
    root = root.resolve()
    if _under_trusted_path(root, env):
        return True
    entry = _trusted_files(env).get(str(root))
    digest = _digest_of(root / PROJECT_FILE)
    return isinstance(entry, dict) and digest is not None and entry.get("sha256") == digest


def trust(root: Path, env: Mapping[str, str] | None = None, *, remove: bool = False) -> dict[str, Any]:
    """Trust (or, with `remove`, stop trusting) the `.wiki-memory.toml` of the repository at
    `root` as it is now; returns what the file asks for (its `store` and `name`)."""
    import json

    root = root.resolve()
    asks = {k: v for k, v in read_project_file(root).items() if k in PINNED_KEYS}
    digest = _digest_of(root / PROJECT_FILE)
    if digest is None and not remove:
        raise WikiMemoryError(f"{root} has no {PROJECT_FILE}: there is nothing to trust")
    entries = _trusted_files(env)
    if remove:
        entries.pop(str(root), None)
    else:
        entries[str(root)] = {"sha256": digest, **{k: str(v) for k, v in asks.items()}}
    path = _trust_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps(entries, indent=2, sort_keys=True) + "\n")
    return asks


def _pinned(root: Path, env: Mapping[str, str] | None) -> tuple[dict[str, Any], str | None]:
    """What the repository's `.wiki-memory.toml` pins that may be honoured, and a warning
    when it asks for something that is refused."""
    asks = {k: v for k, v in read_project_file(root).items() if k in PINNED_KEYS and v}
    if not asks or is_trusted(root, env):
        return asks, None
    what = " and ".join(f"{k} = {str(v)!r}" for k, v in asks.items())
    return {}, (
        f"{root / PROJECT_FILE} asks for {what}; ignored, as you have not said you trust this repository: "
        f"run `wiki-memory trust {root}` if you do (its memory stays its own until then)"
    )


def project_for_store(wiki: Path, env: Mapping[str, str] | None = None) -> Project:
    """The project whose wiki is the repository at `wiki`, wherever it lives."""
    wiki = wiki.expanduser().absolute()
    name = wiki.parent.name if wiki.name == "wiki" else wiki.name
    identity = f"store:{wiki}"
    pid = f"{_name_slug(name)}-{_short_hash(identity)}"
    return Project(pid, name, home(env) / "projects" / pid, wiki, None, identity)


def resolve_project(cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Project:
    """The project of a working directory.

    `WIKI_MEMORY_STORE` wins outright. Otherwise the directory's git top-level (or the
    directory itself) is the project root; a `.wiki-memory.toml` there may pin `name` or
    point `store` at another wiki, if the user trusts the repository (see "Trust" above;
    else `Project.warning` says it was ignored); the identity is the first remote URL,
    else the path.
    """
    env = os.environ if env is None else env
    if env.get("WIKI_MEMORY_STORE"):
        return project_for_store(Path(env["WIKI_MEMORY_STORE"]), env)
    # resolve(): a checkout reached through a symlink is still the same project.
    start = (Path(cwd) if cwd is not None else Path.cwd()).resolve()
    code_root = find_code_root(start)
    root = code_root or start
    pinned, warning = _pinned(root, env)
    if pinned.get("store"):
        store = Path(str(pinned["store"])).expanduser()
        return project_for_store(store if store.is_absolute() else root / store, env)
    if pinned.get("name"):
        name = str(pinned["name"])
        identity = f"name:{name}"
    else:
        remote = first_remote_url(root)
        if remote:
            identity = normalize_remote(remote)
            name = identity.rsplit("/", 1)[-1] or root.name
        else:
            identity = str(root)
            name = root.name
    pid = f"{_name_slug(name)}-{_short_hash(identity)}"
    project_home = home(env) / "projects" / pid
    if code_root is None and not pinned.get("name") and not project_home.exists():
        # Said until this folder's memory exists (its first write), not at every command after.
        note = (
            f"{start} is in no git repository: this folder is a project of its own ({pid}), and each folder "
            "outside a repository would be another; run in the repository, or set WIKI_MEMORY_STORE to share one"
        )
        warning = f"{warning}; {note}" if warning else note
    return Project(pid, name, project_home, project_home / "wiki", root, identity, warning)


def replace_file(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` whole: a temporary file beside it (`.NAME.PID.tmp`),
    renamed over it. Whatever fails (a full disk), the temporary file does not stay."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def model_cache_dir(env: Mapping[str, str] | None = None) -> str:
    """Where downloaded embedding models are kept: `FASTEMBED_CACHE_PATH`, else `models/` in
    the wiki-memory home (fastembed's own default is under /tmp, emptied at each reboot)."""
    env = os.environ if env is None else env
    return env.get("FASTEMBED_CACHE_PATH") or str(home(env) / "models")


def template(name: str) -> str:
    """The text of the package's `templates/<name>` (for example `gotcha.md`), read with
    importlib.resources, so it is found however the package is installed."""
    from importlib import resources

    try:
        return (resources.files("wiki_memory") / "templates" / name).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise WikiMemoryError(f"no template {name!r} in the installed package (wiki_memory/templates)") from None
