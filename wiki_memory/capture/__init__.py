"""Capture: the agents' hook payloads turned into observations in a per-session journal.

Everything here is on the hook path: standard library (and `config`) only.
"""
