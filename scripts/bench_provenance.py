"""What finding where handoffs and preferences came from costs the SessionStart context build.

    python scripts/bench_provenance.py [--commits 1000] [--preferences 30] [--json PATH]

Builds a wiki whose preferences were written in its first commits, then `--commits` commits of
other pages (a handoff every tenth), and times `consolidate.provenance.Provenance` finding the
commit of every preference and handoff at the head, as the first context build after an
upgrade does (later builds find them in the context's cache).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--preferences", type=int, default=30)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wm-bench-provenance-"))
    os.environ.setdefault("WIKI_MEMORY_HOME", str(root / "home"))
    try:
        from wiki_memory.consolidate.provenance import Provenance
        from wiki_memory.pages import Page
        from wiki_memory.store import Author, Store

        store = Store.create(root / "wiki")
        agent = Author.agent("bench")
        prefs = [Page.new(f"Preference {i}", "preference", f"Prefer option {i}.") for i in range(args.preferences)]
        store.write_many(prefs, agent)
        for i in range(args.commits):
            kind = "handoff" if i % 10 == 0 else "note"
            store.write(Page.new(f"{kind.title()} {i}", kind, f"Text {i}."), agent)
        head = store.head()
        wanted = [(p, b) for p, b in store.page_files(head) if p.startswith(("preferences/", "handoffs/"))]
        start = time.perf_counter()
        provenance = Provenance(store, head)
        found = sum(provenance.origin(p, b) is not None for p, b in wanted)
        seconds = time.perf_counter() - start
        store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = {"commits": args.commits, "pages": len(wanted), "found": found, "seconds": round(seconds, 3)}
    print(f"{found} of {len(wanted)} pages' commits found over {args.commits} commits in {seconds:.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
