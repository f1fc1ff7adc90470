"""The real agent CLIs for end-to-end tests: installed from npm, run offline against the
fake model servers of `fake_models`.

- `ensure_agent_clis()` installs `@anthropic-ai/claude-code` and `@openai/codex` (the
  versions in `PACKAGES`) into `.agent-clis/` at the repository root (git-ignored) the
  first time, and returns their paths and versions; it raises `AgentCLIsUnavailable`
  (with the reason) when npm is missing or the install fails. The session-scoped
  `agent_clis` fixture in `conftest.py` calls it and skips, saying why, in that case.
- `run_claude(clis, args, cwd=, home=, base_url=)` runs `claude` (add `-p PROMPT`) with its
  own HOME, talking to a `FakeAnthropic` server.
- `write_codex_config(codex_home, base_url)` points Codex at a `FakeResponses` server
  (provider `fake`, `wire_api = "responses"`, a model Codex knows, the plan tool on);
  `run_codex(clis, args, cwd=, home=, codex_home=)` runs `codex` (add `exec PROMPT`).

Both runners strip the caller's agent and API variables (ANTHROPIC_*, OPENAI_*, CLAUDE_*,
CODEX_*, XDG_*), keep WIKI_MEMORY_* (so the hooks write where the test reads), and never
use the network: the only server they reach is the one on 127.0.0.1.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI_DIR = REPO / ".agent-clis"

#: npm package and the version the tests were written against (Node 20).
PACKAGES = {"claude": ("@anthropic-ai/claude-code", "2.1.197"), "codex": ("@openai/codex", "0.171.0")}

#: A model Codex 0.171 has metadata for (so it offers apply_patch and its full tool set).
CODEX_MODEL = "gpt-5.5"

_STRIPPED_PREFIXES = ("ANTHROPIC_", "OPENAI_", "CLAUDE", "CODEX_", "XDG_", "GEMINI_", "CURSOR_")


class AgentCLIsUnavailable(Exception):
    """npm or the agent CLIs cannot be installed on this machine (the message says why)."""


@dataclass(frozen=True)
class AgentCLIs:
    """Paths of the installed CLIs and the versions npm gave."""

    claude: Path
    codex: Path
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


def ensure_agent_clis(timeout: float = 900) -> AgentCLIs:
    """Install the agent CLIs into `.agent-clis/` if they are not there yet (once per
    machine; concurrent callers wait on a lock) and return them."""
    bins = {name: CLI_DIR / "node_modules" / ".bin" / name for name in PACKAGES}
    wanted = {name: version for name, (_, version) in PACKAGES.items()}

    def ready() -> bool:
        return all(bins[n].exists() and _installed_version(PACKAGES[n][0]) == wanted[n] for n in PACKAGES)

    if not ready():
        npm = shutil.which("npm")
        if npm is None:
            raise AgentCLIsUnavailable("npm is not installed, so the agent CLIs cannot be installed")
        CLI_DIR.mkdir(exist_ok=True)
        import fcntl

        with open(CLI_DIR / ".install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not ready():
                specs = [f"{package}@{version}" for package, version in PACKAGES.values()]
                try:
                    result = subprocess.run(
                        [
                            npm,
                            "install",
                            "--prefix",
                            str(CLI_DIR),
                            "--no-audit",
                            "--no-fund",
                            "--loglevel=error",
                            *specs,
                        ],
                        capture_output=True,
                        text=True,
                        timeout=timeout,
                        stdin=subprocess.DEVNULL,
                    )
                except (OSError, subprocess.TimeoutExpired) as e:
                    raise AgentCLIsUnavailable(f"npm install of the agent CLIs failed: {e}") from None
                if result.returncode != 0 or not ready():
                    tail = (result.stderr or result.stdout).strip()[-800:]
                    raise AgentCLIsUnavailable(f"npm install of the agent CLIs failed: {tail}")
    versions = {name: _installed_version(package) or "?" for name, (package, _) in PACKAGES.items()}
    return AgentCLIs(bins["claude"], bins["codex"], versions)


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
    return subprocess.run(
        [str(clis.claude), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


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
    return subprocess.run(
        [str(clis.codex), *args],
        cwd=cwd,
        env=codex_env(home, codex_home, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
