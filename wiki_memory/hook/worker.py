"""The detached process a hook starts: `python -m wiki_memory.hook.worker PROJECT session ID`
consolidates one session, `... PROJECT pending` every journal left unconsolidated. It calls
the memory library; what happens goes to `logs/consolidate.log`.
"""

from __future__ import annotations

import json
import sys

from wiki_memory import logs
from wiki_memory.config import Project
from wiki_memory.memory import Memory
from wiki_memory.recall import moment_table


def project_from_arg(text: str) -> Project:
    return Project.from_fields(json.loads(text))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[1] not in ("session", "pending") or (args[1] == "session" and len(args) != 3):
        print("usage: python -m wiki_memory.hook.worker PROJECT-JSON (session ID | pending)", file=sys.stderr)
        return 2

    try:
        project = project_from_arg(args[0])
        with Memory(project) as memory:
            if args[1] == "session":
                memory.consolidate(args[2])
            else:
                memory.consolidate_pending()
        # The gotchas and procedures it distilled, in the table the shell hooks read: here,
        # in the background, rather than in the first command hook after it.
        moment_table.table(project)
    except Exception as e:  # noqa: BLE001 - a background process has no one to tell but the log
        logs.write("consolidate", f"background {args[1]} {args[2] if len(args) > 2 else ''}: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
