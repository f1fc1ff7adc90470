"""The web viewer (`wiki-memory ui`): a project's memory in the browser.

Recent activity from git (sessions, handoffs, edits by agents and people), search, pages
with their front matter, links and backlinks, editing, history with diffs and reverts, the
handoff the next agent gets, the review list and the link graph. A front end like the CLI
and the MCP server: every view reads and every action writes through `Memory`.

- `app`: the routes and templates; `views` (GET) and `actions` (POST, one commit each);
- `auth`: who may use the viewer: the token, Host, Origin and CSRF checks and the security headers;
- `render`: Markdown, snippets, diffs and times as HTML;
- `server`: the launcher (`wiki-memory ui`).

Templates and assets (CSS, a little JavaScript) ship in the package: no CDN, works offline.
"""
