"""The hook process: what `wiki-memory hook AGENT EVENT` runs on every prompt and tool call.

It sits above `capture` (the journal) and `consolidate` (the handoff it hands a starting
session; the background consolidation it starts when a session ends), and imports only
the standard library and our light modules: a hook costs tens of milliseconds.
"""
