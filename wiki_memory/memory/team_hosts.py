"""The git host behind the team tier's remote: which one it is (GitHub, GitLab, Gitea), the
address that compares a pushed branch with `main`, and its command-line client (`gh`,
`glab`, `tea`), used to open the pull or merge request when it is installed and logged in.

The host is told from the remote's URL (`https://github.com/o/r.git`, `git@gitlab.com:o/r`,
`ssh://git@gitea.example/o/r`); a host whose name says nothing (a company's own server) is
asked of each installed client (`<cli> auth status --hostname HOST`). A remote on this
machine (a bare repository) has no host: the branch is all there is to say.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from wiki_memory.sync.remotes import local_path

#: The client of each kind of host.
CLIS = {"github": "gh", "gitlab": "glab", "gitea": "tea"}
CLI_TIMEOUT = 30
_SCP = re.compile(r"^(?:[^@/:\s]+@)?(?P<host>[^@/:\s]+):(?P<path>[^\s]+)$")


@dataclass(frozen=True)
class Host:
    """A remote on a git host: its `kind` ("github", "gitlab", "gitea" or "" when its name
    does not say), host name, repository path (`owner/name`) and web address; `login` is
    the name `tea` knows the host by (tea keeps several, and picks by name, not by host)."""

    kind: str
    host: str
    repo: str
    login: str = ""

    @property
    def web(self) -> str:
        return f"https://{self.host}/{self.repo}"

    def compare_url(self, branch: str, base: str = "main") -> str | None:
        """The page that shows `branch` against `base` and offers to open a request."""
        if self.kind == "github":
            return f"{self.web}/compare/{base}...{quote(branch, safe='/')}?expand=1"
        if self.kind == "gitlab":
            return (
                f"{self.web}/-/merge_requests/new?merge_request[source_branch]={quote(branch, safe='')}"
                f"&merge_request[target_branch]={base}"
            )
        if self.kind == "gitea":
            return f"{self.web}/compare/{base}...{quote(branch, safe='/')}"
        return None


@dataclass(frozen=True)
class Request:
    """What asking the host's client for a pull or merge request did: its address when it
    answered with one, else the client's last line of error."""

    cli: str
    url: str | None
    error: str | None = None
    existed: bool = False  # one was open for the branch already: the push updated it


def host_of(url: str) -> Host | None:
    """The host and repository of a remote URL; None for a repository on this machine."""
    if local_path(url) is not None:
        return None
    if "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or ""), parts.path
    else:
        match = _SCP.match(url)
        if match is None:
            return None
        host, path = match.group("host"), match.group("path")
    repo = path.strip("/").removesuffix(".git").strip("/")
    if not host or not repo:
        return None
    name = host.lower()
    kind = next((k for k, words in _KIND_WORDS.items() if any(w in name for w in words)), "")
    return Host(kind, name, repo)


_KIND_WORDS = {"github": ("github",), "gitlab": ("gitlab",), "gitea": ("gitea", "forgejo", "codeberg")}


def _run(argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None


def _logged_in(cli: str, host: str) -> str | None:
    """The login `cli` holds for `host` ("" when the client names none), or None."""
    if shutil.which(cli) is None:
        return None
    if cli == "tea":
        # tea has no `auth status`: its logins, as CSV (`Name`, `URL`, ...), say which one
        # is for this host.
        done = _run([cli, "login", "list", "--output", "csv"])
        if done is None or done.returncode != 0:
            return None
        for row in csv.DictReader(done.stdout.splitlines()):
            url = urlsplit((row.get("URL") or "").strip())
            if (url.hostname or "").lower() == host and row.get("Name"):
                return row["Name"].strip()
        return None
    done = _run([cli, "auth", "status", "--hostname", host])
    return "" if done is not None and done.returncode == 0 else None


def logged_in_client(host: Host) -> tuple[str, Host] | None:
    """The client installed and logged in for `host` (and the host with its kind and login
    settled), or None: then the compare address is printed instead."""
    kinds = [host.kind] if host.kind else list(CLIS)
    for kind in kinds:
        cli = CLIS[kind]
        login = _logged_in(cli, host.host)
        if login is not None:
            return cli, Host(kind, host.host, host.repo, login)
    return None


def open_request(cli: str, host: Host, branch: str, title: str, body: str, base: str = "main") -> Request:
    """Ask the host's client to open a pull (merge) request from `branch` into `base`."""
    if cli == "gh":
        argv = ["gh", "pr", "create", "--repo", f"{host.host}/{host.repo}", "--head", branch, "--base", base]
        argv += ["--title", title, "--body", body]
    elif cli == "glab":
        argv = ["glab", "mr", "create", "--repo", host.web, "--source-branch", branch, "--target-branch", base]
        argv += ["--title", title, "--description", body, "--yes"]
    else:
        argv = ["tea", "pulls", "create", *(["--login", host.login] if host.login else [])]
        argv += ["--repo", host.repo, "--head", branch, "--base", base, "--title", title, "--description", body]
    done = _run(argv)
    if done is None:
        return Request(cli, None, f"{cli} could not be run")
    said = f"{done.stdout}\n{done.stderr}"
    url = _last_url(said)
    if done.returncode == 0:
        return Request(cli, url)
    if "already exists" in said.lower():
        return Request(cli, url, None, existed=True)
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    return Request(cli, None, lines[-1] if lines else f"{cli} exited with {done.returncode}")


def _last_url(text: str) -> str | None:
    found = re.findall(r"https?://\S+", text)
    return found[-1].rstrip(".,)\"'") if found else None
