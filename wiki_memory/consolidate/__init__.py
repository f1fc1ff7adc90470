"""Consolidation: what a finished session left behind (its journal, its transcript) turned
into a session page and a handoff page, and the handoff turned into what the next session
is told when it starts.

- `session`, `claude_code`, `codex`: observations from the journal and the transcripts,
  merged into one account of the session (standard library only).
- `extract`: the extractive summary (no LLM): goal, done, failed, open items, files.
- `render`: the session and handoff pages, and a handoff page as SessionStart text.
- `llm`: the optional LLM rewording (OpenAI-compatible chat completions or Anthropic).
- `run`: consolidating a session or every pending one, idempotently, as one commit.
- `context`: the small file beside the wiki that SessionStart reads (no git on the hook path).
- `handoff`: the public entry points (`handoff_for_next_session`, `write_explicit_handoff`).
- `importer`: past transcripts imported as session pages.

The modules the hook path uses (`session`, `extract`, `render`, `context`, `handoff`,
`background`) import only the standard library, `config` and `capture` at import time.
"""
