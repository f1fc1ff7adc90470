"""The MCP server: the project's memory as tools, resources and a prompt for any agent.

`build_server()` makes the server (`server.py`, its tools in `tools.py`); `serve_stdio` and
`serve_http` run it (`transport.py`). Each tool calls one operation of the project's
`Memory` on the project's own thread (`service.py`) and returns its result models
(`models.py`). Importing this package is cheap; the `mcp` SDK (about a second to import)
loads with `server.py`.
"""
