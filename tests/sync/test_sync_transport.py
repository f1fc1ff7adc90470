"""Sync over the network transports: ssh (the system's ssh command, as git runs it) and
smart HTTP (git's own `git http-backend`), against real bare repositories.

No sshd is needed: `GIT_SSH_COMMAND` names a stand-in for the network hop that runs the
remote command (`git-upload-pack '/path'`) locally, exactly as sshd would on the host.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import git

from wiki_memory.pages import Page
from wiki_memory.store import Author, Store
from wiki_memory.sync import add_remote, sync

CLAUDE = Author.agent("claude-code")

FAKE_SSH = """#!/bin/sh
# Stands in for ssh: `ssh [-x] [-p PORT] [-o OPTION] HOST COMMAND` runs COMMAND here.
echo "$@" >> "$FAKE_SSH_LOG"
while [ $# -gt 1 ]; do
  case "$1" in
    -o) case "$2" in "SetEnv GIT_PROTOCOL="*) GIT_PROTOCOL="${2#SetEnv GIT_PROTOCOL=}"; export GIT_PROTOCOL;; esac
        shift 2;;
    -p|-i|-l) shift 2;;
    -*) shift;;
    *) shift;;  # the host
  esac
done
exec sh -c "$1"
"""


def two_machines(tmp_path: Path, url: str) -> tuple[Store, Store]:
    first = Store.create(tmp_path / "first")
    second = Store.create(tmp_path / "second")
    add_remote(first, "origin", url)
    add_remote(second, "origin", url)
    return first, second


def round_trip(first: Store, second: Store) -> None:
    first.write(Page.new("Over the wire", "fact", "Written on the first machine."), CLAUDE)
    first_report = sync(first, host="first")
    assert first_report.sent_commits == 2
    second.write(Page.new("Back again", "fact", "Written on the second machine."), CLAUDE)
    second_report = sync(second, host="second")
    assert "facts/over-the-wire.md" in second_report.received
    sync(first, host="first")
    for store in (first, second):
        git(store.root, "fsck", "--strict")
        assert "Written on the second machine." in git(store.root, "show", "HEAD:facts/back-again.md")
        assert "Written on the first machine." in git(store.root, "show", "HEAD:facts/over-the-wire.md")
    assert git(first.root, "rev-parse", "HEAD") == git(second.root, "rev-parse", "HEAD")


@pytest.mark.skipif(
    shutil.which("git-upload-pack") is None
    and not os.path.exists(
        os.path.join(
            subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip(), "git-upload-pack"
        )
    ),
    reason="git-upload-pack is not installed",
)
def test_sync_over_ssh(tmp_path, monkeypatch):
    bare = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(ssh.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "ssh.log"
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip()
    monkeypatch.setenv("PATH", exec_path + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    monkeypatch.setenv("FAKE_SSH_LOG", str(log))
    first, second = two_machines(tmp_path, f"ssh://git@memory.example.com:2222{bare}")
    round_trip(first, second)
    calls = log.read_text()
    assert "git@memory.example.com" in calls and "-p 2222" in calls
    assert "git-upload-pack" in calls and "git-receive-pack" in calls
    # The scp-like spelling of the same remote works too.
    third = Store.create(tmp_path / "third")
    add_remote(third, "origin", f"git@memory.example.com:{bare}")
    assert "facts/back-again.md" in sync(third).received


class GitHTTPBackend(BaseHTTPRequestHandler):
    """Smart HTTP through git's own CGI program, `git http-backend`."""

    root = ""

    def log_message(self, *args) -> None:  # quiet
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _run(self) -> None:
        path, _, query = self.path.partition("?")
        env = {
            **os.environ,
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_USER": "tester",
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        body = self._body()
        if self.headers.get("Content-Encoding", "") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        env["CONTENT_LENGTH"] = str(len(body))
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(": ")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _run
    do_POST = _run


@contextlib.contextmanager
def git_http_server(root: Path) -> Iterator[str]:
    """git's own `http-backend` serving the bare repositories under `root` on 127.0.0.1;
    yields the server's base URL."""
    handler = type("Handler", (GitHTTPBackend,), {"root": str(root)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def http_remote(tmp_path):
    root = tmp_path / "srv"
    root.mkdir()
    git(root, "init", "-q", "--bare", "memory.git")
    with git_http_server(root) as base:
        yield f"{base}/memory.git", root / "memory.git"


def test_sync_over_smart_http(tmp_path, http_remote):
    url, bare = http_remote
    first, second = two_machines(tmp_path, url)
    round_trip(first, second)
    git(bare, "fsck", "--strict")
    assert git(bare, "rev-parse", "main") == git(first.root, "rev-parse", "HEAD")
