"""The MCP server: the project's memory as tools, resources and a prompt for any agent.

`build_server()` makes the server (`server.py`); `serve_stdio` and `serve_http` run it
(`transport.py`). The operations behind the tools are plain functions in `service.py`.
Importing this package is cheap; the `mcp` SDK (about a second to import) loads with
`server.py`.
"""
