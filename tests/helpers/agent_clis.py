"""The real agent CLIs for end-to-end tests: installed from npm, run offline against the
fake model servers of `fake_models`.

- `ensure_agent_clis()` installs `@anthropic-ai/claude-code`, `@openai/codex`, `opencode-ai`
  and `@google/gemini-cli` (the versions in `PACKAGES`) into `.agent-clis/` at the
  repository root (git-ignored) the first time, and returns their paths and versions; it
  raises `AgentCLIsUnavailable` (with the reason) when npm is missing or the install fails.
  The session-scoped `agent_clis` fixture in `conftest.py` calls it and skips, saying why,
  in that case.
- `run_claude(clis, args, cwd=, home=, base_url=)` runs `claude` (add `-p PROMPT`) with its
  own HOME, talking to a `FakeAnthropic` server.
- `write_codex_config(codex_home, base_url)` points Codex at a `FakeResponses` server
  (provider `fake`, `wire_api = "responses"`, a model Codex knows, the plan tool on);
  `run_codex(clis, args, cwd=, home=, codex_home=)` runs `codex` (add `exec PROMPT`).
- `run_opencode(clis, words, cwd=, home=, base_url=)` runs `opencode run WORDS...` through
  its anthropic provider to a `FakeAnthropic` server; the provider is given in
  `OPENCODE_CONFIG_CONTENT`, so no configuration file is written.
- `write_gemini_settings(home, trusted=)` selects API-key auth in `~/.gemini/settings.json`
  (merged, keeping what is there) and trusts the folders given (Gemini CLI runs hooks only
  in trusted folders); `run_gemini(clis, args, cwd=, home=, base_url=)` runs `gemini` (add
  `-p PROMPT`) against a `FakeGemini` server (`GOOGLE_GEMINI_BASE_URL`).

The runners strip the caller's agent and API variables (ANTHROPIC_*, OPENAI_*, CLAUDE_*,
CODEX_*, GEMINI_*, OPENCODE_*, XDG_*), keep WIKI_MEMORY_* (so the hooks write where the test
reads), and never use the network for a model: the only server they reach is the one on
127.0.0.1.

A whole session, as the capture tests run it::

    with FakeAnthropic([bash("echo hi"), text("Done.")]) as model:
        result = run_claude(agent_clis, ["-p", "say hi"], cwd=repo, home=home, base_url=model.url)
    assert result.returncode == 0, result.stderr
    # the SessionStart hook's additionalContext arrives in the first turn request:
    first_turn = json.dumps(model.turn_requests[0].body)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI_DIR = REPO / ".agent-clis"

#: npm package and the version the tests were written against (Node 20).
PACKAGES = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
    "codex": ("@openai/codex", "0.171.0"),
    "opencode": ("opencode-ai", "1.18.33"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
}
#: The plugin SDK OpenCode installs beside any plugin (its own version): installed once here
#: and copied into each test's configuration folder, so that OpenCode need not fetch it.
OPENCODE_SDK = ("@opencode-ai/plugin", "1.18.33")

#: A model Codex 0.171 has metadata for (so it offers apply_patch and its full tool set).
CODEX_MODEL = "gpt-5.5"

_STRIPPED_PREFIXES = (
    "ANTHROPIC_",
    "OPENAI_",
    "CLAUDE",
    "CODEX_",
    "XDG_",
    "GEMINI_",
    "GOOGLE_",
    "CURSOR_",
    "OPENCODE",
)


class AgentCLIsUnavailable(Exception):
    """npm or the agent CLIs cannot be installed on this machine (the message says why)."""


@dataclass(frozen=True)
class AgentCLIs:
    """Paths of the installed CLIs and the versions npm gave."""

    claude: Path
    codex: Path
    opencode: Path
    gemini: Path
    versions: Mapping[str, str]

    @property
    def bin_dir(self) -> Path:
        return self.claude.parent


def _installed_version(package: str) -> str | None:
    manifest = CLI_DIR / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None


def _npm_install(prefix: Path, specs: Sequence[str], ready: Callable[[], bool], what: str, timeout: float) -> None:
    """`npm install --save-exact SPECS` into `prefix` unless `ready()` (once per machine;
    concurrent callers wait on a lock); AgentCLIsUnavailable, saying why, when it fails."""
    if ready():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise AgentCLIsUnavailable(f"npm is not installed, so {what} cannot be installed")
    prefix.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(CLI_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready():
            return
        command = [npm, "install", "--prefix", str(prefix), "--save-exact", "--no-audit", "--no-fund"]
        try:
            result = _run([*command, "--loglevel=error", *specs], prefix, os.environ, timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise AgentCLIsUnavailable(f"npm install of {what} failed: {e}") from None
        if result.returncode != 0 or not ready():
            tail = (result.stderr or result.stdout).strip()[-800:]
            raise AgentCLIsUnavailable(f"npm install of {what} failed: {tail}")


def ensure_agent_clis(timeout: float = 900) -> AgentCLIs:
    """Install the agent CLIs into `.agent-clis/` if they are not there yet and return them."""
    bins = {name: CLI_DIR / "node_modules" / ".bin" / name for name in PACKAGES}
    wanted = {name: version for name, (_, version) in PACKAGES.items()}

    def ready() -> bool:
        return all(bins[n].exists() and _installed_version(PACKAGES[n][0]) == wanted[n] for n in PACKAGES)

    specs = [f"{package}@{version}" for package, version in PACKAGES.values()]
    _npm_install(CLI_DIR, specs, ready, "the agent CLIs", timeout)
    _as_installed()
    versions = {name: _installed_version(package) or "?" for name, (package, _) in PACKAGES.items()}
    return AgentCLIs(bins["claude"], bins["codex"], bins["opencode"], bins["gemini"], versions)


def _as_installed() -> None:
    """Our package's bytecode compiled, as `pip install` of a wheel leaves it, and the disk's
    pending writes flushed (npm's install is a gigabyte).

    Why: an agent gives the hooks it runs at exit little time (Claude Code's asynchronous
    PostToolUse and its SessionEnd), and a hook that first compiles its modules on a disk
    still writing out the install can miss it; CI then failed on Claude Code's session
    losing its last lines, which no user's installed copy would."""
    import compileall

    import wiki_memory

    compileall.compile_dir(Path(wiki_memory.__file__).parent, quiet=1)
    os.sync()


def _run(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run an agent CLI to its end, its output captured, nothing on its stdin."""
    return subprocess.run(
        list(argv), cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def agent_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without agent and API variables, with HOME = `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}
    env.update(
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        NO_COLOR="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_ERROR_REPORTING="1",
    )
    env.update(extra or {})
    return env


def run_claude(
    clis: AgentCLIs,
    args: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `claude ARGS` in `cwd` with HOME=`home`, talking to the fake Messages server at
    `base_url`. Pass `-p PROMPT` (and `--allowedTools ...` for tools that need permission;
    Bash is allowed by default here through `--allowedTools Bash`)."""
    full_env = agent_env(home, {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "dummy", **(env or {})})
    args = list(args)
    if "--allowedTools" not in args and "--allowed-tools" not in args:
        args += ["--allowedTools", "Bash Edit Write Read TaskCreate TaskUpdate"]
    return _run([str(clis.claude), *args], cwd, full_env, timeout)


def write_codex_config(codex_home: Path, base_url: str, model: str = CODEX_MODEL) -> Path:
    """Point Codex at a fake Responses server: merged into `codex_home/config.toml` (created
    if absent), keeping whatever is there (an installer's MCP entry and hook trust)."""
    import tomlkit

    codex_home.mkdir(parents=True, exist_ok=True)
    path = codex_home / "config.toml"
    doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    doc["model"] = model
    doc["model_provider"] = "fake"
    doc["approval_policy"] = "never"
    doc["sandbox_mode"] = "danger-full-access"
    providers = doc.setdefault("model_providers", tomlkit.table(is_super_table=True))
    providers["fake"] = {
        "name": "fake",
        "base_url": base_url.rstrip("/") + "/v1",
        "wire_api": "responses",
        "env_key": "FAKE_OPENAI_API_KEY",
        "request_max_retries": 0,
        "stream_max_retries": 0,
    }
    tools = doc.setdefault("tools", tomlkit.table(is_super_table=True))
    tools["update_plan"] = {"enabled": True}
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def codex_env(home: Path, codex_home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment `codex` runs in: HOME, CODEX_HOME and the fake provider's key."""
    return agent_env(home, {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_API_KEY": "dummy", **(extra or {})})


def run_codex(
    clis: AgentCLIs,
    args: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    codex_home: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `codex ARGS` in `cwd` with HOME and CODEX_HOME of its own (see
    `write_codex_config`). For a session: `["exec", "--skip-git-repo-check", PROMPT]`."""
    return _run([str(clis.codex), *args], cwd, codex_env(home, codex_home, env), timeout)


# OpenCode --------------------------------------------------------------------------------------

#: The model OpenCode asks for, through its anthropic provider (a model it has metadata for).
OPENCODE_MODEL = "anthropic/claude-sonnet-4-5"


def ensure_opencode_sdk(timeout: float = 600) -> Path:
    """The plugin SDK OpenCode installs beside a plugin, installed once into
    `.agent-clis/opencode-sdk/` (see `seed_opencode_sdk`)."""
    sdk = CLI_DIR / "opencode-sdk"
    package, version = OPENCODE_SDK
    manifest = sdk / "node_modules" / package / "package.json"

    def ready() -> bool:
        try:
            return json.loads(manifest.read_text(encoding="utf-8")).get("version") == version
        except (OSError, ValueError):
            return False

    _npm_install(sdk, [f"{package}@{version}"], ready, "OpenCode's plugin SDK", timeout)
    return sdk


def seed_opencode_sdk(config_dir: Path) -> None:
    """Give an OpenCode configuration folder the plugin SDK OpenCode would otherwise fetch
    from npm (ten seconds) before it loads a plugin: its package.json and a link to the
    shared node_modules. OpenCode's own files, not the installer's."""
    sdk = ensure_opencode_sdk()
    config_dir.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        if not (config_dir / name).exists():
            shutil.copyfile(sdk / name, config_dir / name)
    if not (config_dir / "node_modules").exists():
        (config_dir / "node_modules").symlink_to(sdk / "node_modules", target_is_directory=True)


def opencode_env(home: Path, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment `opencode` runs in: its model through the anthropic provider to
    `base_url`, every permission granted, no model list fetched, no update check."""
    config = {
        "model": OPENCODE_MODEL,
        "provider": {"anthropic": {"options": {"baseURL": base_url.rstrip("/") + "/v1", "apiKey": "dummy"}}},
        "permission": "allow",
        "autoupdate": False,
        "share": "disabled",
    }
    return agent_env(
        home,
        {
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            **(extra or {}),
        },
    )


def run_opencode(
    clis: AgentCLIs,
    words: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 240,
) -> subprocess.CompletedProcess[str]:
    """Run `opencode run WORDS...` in `cwd` with HOME=`home` against a `FakeAnthropic` at
    `base_url`. Give the prompt as separate words: `opencode run` puts quotes around an
    argument with spaces. Its plugin SDK is seeded into the user's configuration folder."""
    seed_opencode_sdk(home / ".config" / "opencode")
    # OpenCode takes its directory from PWD, as a shell that started it in `cwd` sets it.
    return _run(
        [str(clis.opencode), "run", *words],
        cwd,
        opencode_env(home, base_url, {"PWD": str(cwd), **(env or {})}),
        timeout,
    )


# Gemini CLI ------------------------------------------------------------------------------------


def write_gemini_settings(home: Path, trusted: Sequence[Path] = ()) -> Path:
    """Select API-key auth in `~/.gemini/settings.json` (merged: an installer's hooks and MCP
    entry stay; a file that selects it already is left as it is) and trust `trusted`
    folders in `~/.gemini/trustedFolders.json`."""
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    from wiki_memory.install import jsonc

    settings = jsonc.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if settings.get("security", {}).get("auth", {}).get("selectedType") != "gemini-api-key":
        settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
        path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    if trusted:
        folders = path.parent / "trustedFolders.json"
        rules = json.loads(folders.read_text(encoding="utf-8")) if folders.exists() else {}
        rules.update({str(folder): "TRUST_FOLDER" for folder in trusted})
        folders.write_text(json.dumps(rules, indent=2) + "\n", encoding="utf-8")
    return path


def run_gemini(
    clis: AgentCLIs,
    args: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `gemini ARGS` in `cwd` with HOME=`home` against a `FakeGemini` at `base_url` (see
    `write_gemini_settings`). For a session: `["--yolo", "-p", PROMPT]`."""
    full_env = agent_env(home, {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": "dummy", **(env or {})})
    return _run([str(clis.gemini), *args], cwd, full_env, timeout)
