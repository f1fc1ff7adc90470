"""Consolidation: what a finished session left behind (its journal, its transcript) turned
into a session page and a handoff page, and the handoff turned into what the next session
is told when it starts.

- `session`: the journal's and the transcript's observations folded into one account of the
  session (the transcripts are read by each agent's module in `capture`).
- `session_sources`: a session read back from its journal and its transcript (`load_session`).
- `extract` (with `commands`, `command_runs`, `state_changes`, `final_message`, `oneline`): the
  extractive summary (no LLM): goal, done, failed, open items, files.
- `render`: the session and handoff pages, and a handoff page as SessionStart text.
- `llm`: the optional LLM rewording (OpenAI-compatible chat completions or Anthropic).
- `run`: consolidating a session or every pending one, idempotently, as one commit, in the
  store it is handed (the memory layer opens it).
- `state`: which journals wait, the state each consolidation leaves, the log.
- `context`: the small file beside the wiki that SessionStart reads (no git on the hook
  path); `context_build` builds it from the store.
- `handoff`: what a starting session is handed (`handoff_for_next_session`) and handoffs
  written on purpose (`write_explicit_handoff`).
- `importer`: past transcripts read as session pages.

The modules the hook path uses (`session`, `session_sources`, `extract`, `render`, `context`,
`handoff`, `state`) import only the standard library, `config` and `capture` at import time.
"""
