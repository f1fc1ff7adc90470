"""Capture: what the agents' hooks and transcripts tell us, as observations.

One module per agent (its hook adapter and its transcript reader), the one tool-call
normaliser both use (`toolcalls`), redaction, and the per-session journal. Everything here
is on the hook path: standard library (and `config`) only, heavier standard modules
imported where a transcript is read.
"""
