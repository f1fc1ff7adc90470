"""The `wiki-memory` executable: a thin dispatcher in front of the click commands."""

from __future__ import annotations


def main() -> None:
    from wiki_memory.cli import main as cli_main

    cli_main()
