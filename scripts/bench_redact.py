"""Benchmark: the worst case of every redaction rule, and that it grows linearly.

Each adversarial input repeats what one rule looks for (a hint with no end, an unclosed
quote, a header with no value, a key with a long run of name characters ...) to the given
size; the issue's own case is 8,000 characters of `a.a.a....token=x`. For each input it
times `redact()` (every rule that applies) and each rule's own search, at 8,000 and at
64,000 characters: a linear rule takes about 8x as long on the larger input (a quadratic
one 64x).

    python scripts/bench_redact.py
    python scripts/bench_redact.py --json bench-results/redact.json

Then a large body (issue 27): 1 MB of curl `-H 'Authorization: Bearer ...'` lines, one
token repeated and every token different, timed through `redact()` and through a whole
`wiki-memory write` of it into a new wiki (redaction, the commit and the search index, by
words: no model), the way an agent's write of a pasted log goes.

Times are CPU time, the best of five. Target: every input under 50 ms at 8,000
characters, and growth under 16x for 8x the size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wiki_memory.capture import redact as redaction

SMALL, LARGE = 8_000, 64_000


def fill(unit: str, size: int, tail: str = "") -> str:
    return (unit * (size // max(1, len(unit)) + 1))[: size - len(tail)] + tail


def inputs() -> dict[str, tuple[str, str]]:
    """name -> (unit, tail): the text is `unit` repeated to the size, then `tail`."""
    cases: dict[str, tuple[str, str]] = {
        "issue: a.a.a....token=x": ("a.", "token=x"),
        "name run: aaaa...=x": ("a", "_token=x"),
        "name run with dashes": ("a-", "password: x"),
        "hint soup": ("passwordtokensecretkeyauthcred", "=x"),
        "hint then separator": ("token=", ""),
        "quoted key no value": ('"password": "', ""),
        "unclosed quote value": ('password="', "a" * 50),
        "escaped quotes": ('\\"password\\":\\"', ""),
        "private key BEGIN, no END": ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", ""),
        "private key END, no BEGIN": ("QUFBQUFB\n-----END RSA PRIVATE KEY-----\n", ""),
        "putty lines": ("Private-Lines: 1\n", ""),
        "jwt heads": ("eyJ", ""),
        "jwt two parts": ("eyJhbGci.eyJzdWIi.", ""),
        "vendor prefixes glued": ("ghp_sk-AKIAxoxb-glpat-hf_SG.npm_", ""),
        "sk- dashes": ("sk-", ""),
        "vendor body run": ("ghp_" + "A" * 30, ""),
        "base64 PEM prefix": ("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBL", ""),
        "url schemes": ("a://b:", ""),
        "url at-signs": ("https://u:p@", ""),
        "url long password": ("https://u:" + "p" * 40, "@"),
        "cli commands": ("curl ", ""),
        "cli flags": ("docker login -p ", ""),
        "mysql attached": ("mysql -p", ""),
        "long flags": ("--password ", ""),
        "long flag equals": ("--token=", ""),
        "echo pipes": ("echo x | ", "docker login --password-stdin"),
        "auth headers": ("Authorization: Bearer ", ""),
        "auth scheme runs": ("Authorization: ", "Digest a"),
        "basic base64 run": ("Basic ", "QUFB" * 100),
        "bearer long run": ("Bearer ", "a" * 200),
        "xml open tags": ("<password>", ""),
        "xml name/value": ("<name>password</name>", ""),
        "xml unclosed value": ("<password>" + "a" * 60, ""),
        "table rows": ("| password |", ""),
        "named value": ("name: DB_PASSWORD ", ""),
        "key=Authorization": ('"key": "Authorization", ', ""),
        "cookies": ("Cookie: session=a;", ""),
        "directives": ("proxy_set_header Authorization ", ""),
        "fish set": ("set -gx API_TOKEN ", ""),
        "directive lines": ("password \n", ""),
        "prose": ("the password is ", ""),
        "prose gaps": ("password for a b c d e f g ", ""),
        "reverse prose": ("x is the password ", ""),
        "prose bare key": ("the key for the bucket is ", ""),
        "generated-looking values": ("key is Ab1Cd2Ef3Gh4Ij5Kl6Mn7 ", ""),
        "cdata": ("<password><![CDATA[", ""),
        "securestring": ("ConvertTo-SecureString ", ""),
        "quoted pairs": ('"password", "', ""),
        "auth tuples": ("auth=(", ""),
        "add-mask": ("::add-mask::", ""),
        "pgpass-ish": ("a:1:b:c:", ""),
        "sql connect": ("connect a/", ""),
        "references": ("${", ""),
        "mark-like": ("[REDACTED:", ""),
        "data uri": ("data:image/png;base64,", "QUFB"),
        "telegram-ish": ("12345678:AA", ""),
        "azure-ish": ("abc1Q~", ""),
        "long word": ("x", ""),
        "spaces": (" ", ""),
        "newlines": ("\n", ""),
    }
    return cases


def header_lines(size: int, distinct: bool) -> str:
    """`size` characters of curl header lines, each token new (`distinct`) or the same."""
    import random
    import string

    rng = random.Random(27)
    lines, n = [], 0
    token = "eyJhbGciOiJIUzI1NiJ9" + "Ab3dEf6hIj9lMn2pQr5t"
    while n < size:
        if distinct:
            token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
        line = f"-H 'Authorization: Bearer {token}'\n"
        lines.append(line)
        n += len(line)
    return "".join(lines)[:size]


def large_body() -> list[dict[str, object]]:
    """Redaction and a whole write of 1 MB of header lines (seconds, wall clock for the write)."""
    import tempfile

    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WIKI_MEMORY_HOME"] = str(Path(tmp) / "home")
        os.environ["WIKI_MEMORY_EMBED_MODEL_PATH"] = str(Path(tmp) / "no-model")  # words only
        from wiki_memory.config import project_for_store
        from wiki_memory.memory import Memory

        memory = Memory(project_for_store(Path(tmp) / "wiki"))
        memory.store(create=True)
        for distinct in (False, True):
            body = header_lines(1_000_000, distinct)
            redact_s = timed(redaction.redact, body, repeat=1) / 1000
            started = time.perf_counter()
            memory.write(f"Pasted headers {distinct}", body, "note")
            rows.append(
                {
                    "input": f"1 MB of -H 'Authorization: ...' lines, {'every token new' if distinct else 'one token'}",
                    "redact_s": round(redact_s, 3),
                    "write_s": round(time.perf_counter() - started, 2),
                }
            )
        memory.close()
    return rows


def timed(fn: Callable[[str], object], text: str, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):  # CPU time: other processes on the machine do not count
        started = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = parser.parse_args()

    for unit, tail in inputs().values():  # compile every pattern outside the timings
        redaction.redact(fill(unit, 2_000, tail))
    rows = []
    per_rule: dict[str, float] = {}
    for name, (unit, tail) in inputs().items():
        small, large = fill(unit, SMALL, tail), fill(unit, LARGE, tail)
        t_small = timed(redaction.redact, small)
        t_large = timed(redaction.redact, large)
        lower = small.lower()
        for family in redaction.FAMILIES:
            if family.applies(small, lower):
                label = family.finder.__name__ if family.finder else family.name
                t = timed(lambda text, f=family: list(f.spans(text)), small, repeat=1)
                per_rule[label] = max(per_rule.get(label, 0.0), t)
        rows.append(
            {
                "input": name,
                "ms_8k": round(t_small, 2),
                "ms_64k": round(t_large, 2),
                "growth": round(t_large / max(t_small, 0.01), 1),
            }
        )
    rows.sort(key=lambda r: -r["ms_8k"])
    print(f"{'adversarial input':<28} {'8,000 ch ms':>12} {'64,000 ch ms':>13} {'growth':>7}")
    for row in rows:
        print(f"{row['input']:<28} {row['ms_8k']:>12.2f} {row['ms_64k']:>13.2f} {row['growth']:>6.1f}x")
    worst = rows[0]
    growth = max(r["growth"] for r in rows if r["ms_8k"] >= 0.5)
    print(f"\nworst at 8,000 characters: {worst['input']} {worst['ms_8k']:.2f} ms")
    print(f"largest growth for 8x the size: {growth}x")
    print("slowest search of each rule at 8,000 characters (ms):")
    for label, t in sorted(per_rule.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<24} {t:8.2f}")
    verdict = "met" if worst["ms_8k"] < 50 and growth < 16 else "NOT met"
    print(f"target (< 50 ms at 8,000 characters, growth < 16x): {verdict}")
    large = large_body()
    for row in large:
        print(f"{row['input']}: redact {row['redact_s']:.3f} s, whole write {row['write_s']:.2f} s")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "per_rule_ms_8k": per_rule,
                    "large_body": large,
                    "target_met": verdict == "met",
                    "python": sys.version.split()[0],
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
