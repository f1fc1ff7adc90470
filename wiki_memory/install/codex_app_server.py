"""A minimal client of `codex app-server` (JSON-RPC, one JSON message per line on stdio),
for the two things an installer needs: list the hooks Codex sees, and record trust in them.

Codex runs a non-managed hook only once its exact definition is trusted: `hooks/list`
gives each hook's `key` (`<hooks.json>:<event>:<group>:<handler>`), its `currentHash` and
its `trustStatus`; trusting a hook is writing `hooks.state.<key>.trusted_hash =
currentHash` into the user's `config.toml`, which `config/batchWrite` does (merging with
`upsert`, so other hooks' trust is kept).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wiki_memory import __version__
from wiki_memory.errors import WikiMemoryError

TIMEOUT = 60.0  # seconds for one request (a cold Codex start can take a few)


class AppServer:
    """`codex app-server` as a context manager::

    with AppServer(codex, codex_home, cwd) as server:
        hooks = server.hooks(cwd)
        server.trust([h for h in hooks if ...])
    """

    def __init__(self, codex: str, codex_home: Path, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.codex = codex
        self.cwd = cwd
        self.env = {**(env if env is not None else os.environ), "CODEX_HOME": str(codex_home)}
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._ids = 0
        self._stderr: list[str] = []

    def __enter__(self) -> AppServer:
        try:
            self._proc = subprocess.Popen(
                [self.codex, "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=self.cwd,
                env=self.env,
            )
        except OSError as e:
            raise WikiMemoryError(f"cannot start `{self.codex} app-server`: {e}") from None
        threading.Thread(target=self._read, args=(self._proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()
        self.request(
            "initialize",
            {"clientInfo": {"name": "wiki-memory", "title": "wiki-memory installer", "version": __version__}},
        )
        self.notify("initialized")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is None:
            return
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
            self._proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()

    @staticmethod
    def _read(stream: Any, lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def _drain(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr = (self._stderr + [line.rstrip()])[-20:]

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self._send(message)

    def _send(self, message: Mapping[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
        except OSError as e:
            raise WikiMemoryError(f"codex app-server stopped: {e}; {self._tail()}") from None

    def _tail(self) -> str:
        return " | ".join(self._stderr[-3:]) or "no message"

    def request(self, method: str, params: Mapping[str, Any]) -> Any:
        """Send one request and wait for its response (notifications are skipped)."""
        self._ids += 1
        request_id = self._ids
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
        while True:
            try:
                line = self._lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise WikiMemoryError(f"codex app-server did not answer {method} in {TIMEOUT:.0f} s") from None
            if line is None:
                raise WikiMemoryError(f"codex app-server exited during {method}: {self._tail()}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") != request_id or "method" in message:
                continue
            if "error" in message:
                error = message["error"]
                raise WikiMemoryError(f"codex app-server {method}: {error.get('message', error)}")
            return message.get("result")

    # -- hooks ------------------------------------------------------------------------------------
    def hooks(self, cwd: Path) -> list[dict[str, Any]]:
        """Every hook Codex would run in `cwd`, with key, command, currentHash, trustStatus."""
        result = self.request("hooks/list", {"cwds": [str(cwd)]})
        hooks: list[dict[str, Any]] = []
        for entry in (result or {}).get("data") or []:
            hooks.extend(h for h in entry.get("hooks") or [] if isinstance(h, dict))
        return hooks

    def trust(self, hooks: Iterable[Mapping[str, Any]]) -> int:
        """Record trust in each hook's current definition; returns how many were written."""
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks if h.get("key") and h.get("currentHash")}
        if state:
            self.request(
                "config/batchWrite", {"edits": [{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]}
            )
        return len(state)
