#!/usr/bin/env python3
"""Evaluation: the no-LLM distiller's rules on held-out inputs written to break them.

`scripts/data/distill/rules.json` was written after the rules were set and was not used to
change them: sentences of prompts (should each make a preference, a decision, or nothing?)
and failures' telling lines (may a fix of it be a gotcha page, or is it an assertion, a
linter or compiler finding, a line that tells nothing?). Real transcripts hold too few of
either to measure these two distillers (see docs/lifecycle.md), so this is their precision.

    python scripts/eval_distill_rules.py
    python scripts/eval_distill_rules.py --json bench-results/distill-rules.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "scripts" / "data" / "distill" / "rules.json"


def main() -> None:
    from wiki_memory.consolidate.distill.signature import is_assertion, is_static_finding, is_telling, signature
    from wiki_memory.consolidate.distill.statements import judge

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    data = json.loads(DATA.read_text())

    made = right = wanted = found = 0
    mistakes: list[str] = []
    for item in data["statements"]:
        kind, why = judge(item["text"])
        want = None if item["want"] == "none" else item["want"]
        if kind is not None:
            made += 1
            right += kind == want
        if want is not None:
            wanted += 1
            found += kind == want
        if kind != want:
            mistakes.append(f"statement {item['text']!r}: made {kind or 'nothing'}, wanted {want or 'nothing'} ({why})")
    statements = {"pages": made, "correct": right, "precision": right / made if made else 1.0,
                  "recall": found / wanted if wanted else 1.0, "sentences": len(data["statements"])}  # fmt: skip

    said = good = traps = caught = 0
    for item in data["errors"]:
        sig = signature(item["line"])
        trap = bool(sig) and is_telling(sig) and not is_assertion(sig) and not is_static_finding(sig)
        if trap:
            said += 1
            good += item["trap"]
        if item["trap"]:
            traps += 1
            caught += trap
        if trap != item["trap"]:
            mistakes.append(f"error {item['line']!r}: {'may' if trap else 'may not'} make a gotcha ({sig!r})")
    errors = {"may_make_gotcha": said, "correct": good, "precision": good / said if said else 1.0,
              "recall": caught / traps if traps else 1.0, "lines": len(data["errors"])}  # fmt: skip

    print(f"statements: {statements['sentences']} sentences -> {made} pages, {right} right: precision "
          f"{statements['precision']:.2f}, recall {statements['recall']:.2f}")  # fmt: skip
    print(f"error lines: {errors['lines']} lines -> {said} may make a gotcha, {good} right: precision "
          f"{errors['precision']:.2f}, recall {errors['recall']:.2f}")  # fmt: skip
    for line in mistakes:
        print(f"  {line}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps({"statements": statements, "errors": errors, "mistakes": mistakes}, indent=1)
        )


if __name__ == "__main__":
    main()
