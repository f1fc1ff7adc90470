"""The doctor's check of the MCP server: the entry an agent has does start a server that
lists our tools. The server is started as a subprocess and spoken to with the MCP SDK's
own client, over stdio, as the agent would; nothing of `wiki_memory.mcp` is imported."""

from __future__ import annotations

import tempfile
import time
from typing import Any

TOOLS = ("search", "read", "write", "edit", "delete", "recent", "history", "links", "handoff", "handoff_write")
TIMEOUT_S = 60.0

# One start per distinct entry: the four agents usually run the same command.
_results: dict[tuple[Any, ...], tuple[str, str]] = {}


async def _list_tools(command: str, args: list[str], cwd: str, env: dict[str, str], errlog: Any) -> list[str]:
    import anyio  # deferred: the MCP SDK and anyio load only when doctor probes a server
    from mcp import (  # deferred: the MCP SDK and anyio load only when doctor probes a server
        Client,
        StdioServerParameters,
    )
    from mcp.client.stdio import stdio_client  # deferred: the MCP SDK and anyio load only when doctor probes a server

    params = StdioServerParameters(command=command, args=args, cwd=cwd, env=env)
    with anyio.fail_after(TIMEOUT_S):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]


def probe(command: str, args: list[str], cwd: str, env: dict[str, str]) -> tuple[str, str]:
    """(status, detail) of starting `command args` and listing its tools."""
    import anyio  # deferred: the MCP SDK and anyio load only when doctor probes a server

    key = (command, tuple(args), cwd, tuple(sorted(env.items())))
    if key in _results:
        return _results[key]
    started = time.monotonic()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            names = anyio.run(_list_tools, command, args, cwd, env, errlog)
            failure = None
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            while len(getattr(e, "exceptions", ())) == 1:  # the client's task groups wrap the cause
                e = e.exceptions[0]  # type: ignore[attr-defined]
            errlog.seek(0)
            said = [line.strip() for line in errlog.read().splitlines() if line.strip()]
            # What the server said on stderr explains more than the client's broken pipe.
            failure = (
                said[-1]
                if said
                else f"no answer within {TIMEOUT_S:.0f} s"
                if isinstance(e, TimeoutError)
                else (str(e).strip().splitlines() or [type(e).__name__])[0]
            )
    if failure is not None:
        result = ("fail", f"`{command} {' '.join(args)}` did not start as an MCP server: {failure[:300]}")
    else:
        missing = [t for t in TOOLS if t not in names]
        seconds = time.monotonic() - started
        if missing:
            result = (
                "fail",
                f"the server lists {len(names)} tools but not {', '.join(missing)} "
                "(an older wiki-memory? run the install again)",
            )
        else:
            result = ("ok", f"starts and lists its {len(names)} tools ({seconds:.1f} s)")
    _results[key] = result
    return result
