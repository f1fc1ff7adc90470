"""What the long-running front ends (the MCP server and the web viewer) share:

- `http`: which addresses need a token, the listening socket, the Host and Origin gate of a
  loopback bind, and the one way an ASGI middleware answers a request itself;
- `workspaces`: each project's `Memory`, opened once and kept, on a thread of its own.
"""
