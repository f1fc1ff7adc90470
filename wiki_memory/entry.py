"""The `wiki-memory` executable: a thin dispatcher in front of the click commands.

`wiki-memory hook AGENT [EVENT]` is run by the agents on every prompt and tool call, so it
goes straight to the hook process (`hook/`): nothing but the standard library and our light
modules are imported on that path (no click, no dulwich). `wiki-memory hook --help` and everything
else go to click.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv[1:]):
        from wiki_memory.hook.main import main as hook_main

        sys.exit(hook_main(argv[1:]))
    from wiki_memory.cli import main as cli_main  # deferred: click and the commands, never on the hook path

    cli_main()
