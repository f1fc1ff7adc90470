"""The secrets corpus: realistic text (logs, shell sessions, configs, diffs, chat) holding
fake secrets and look-alikes, in `tests/fixtures/secrets/<part>.txt`.

A file is a list of cases, each opened by a line `=== <id> <what it is>`; lines before the
first case are comments. Inside a case's text:

- `⟦s:TEXT⟧` is a secret written out (a password, a passphrase);
- `⟦g:SPEC⟧` is a secret generated here, fake but of the real shape (prefix, length,
  characters), the same on every run: `ghp_|AN|36` (prefix|charset|length[|suffix]),
  `jwt`, `pem|RSA PRIVATE KEY`, `pemjson|PRIVATE KEY` (escaped `\\n`), `slack|xoxb`,
  `sendgrid`, `telegram`, `azure`, `discord`, `basic|USER`, `pw|N`, `uuid`;
- `⟦k:TEXT⟧` is a look-alike that must survive verbatim.

Why generated: a token-shaped string is written nowhere in the repository, so no secret
scanner (ours included, or a code host's push protection) trips over the fixtures.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import uuid
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "secrets"
PARTS = ("tuning", "held-out", "audit")
_MARK = re.compile(r"⟦([sgk]):(.*?)⟧", re.S)
_CHARSETS = {
    "AN": string.ascii_letters + string.digits,
    "ANU": string.ascii_letters + string.digits + "_",
    "ANUD": string.ascii_letters + string.digits + "_-",
    "HEX": "0123456789abcdef",
    "HEXU": "0123456789ABCDEF",
    "UD": string.ascii_uppercase + string.digits,
    "B64": string.ascii_letters + string.digits + "+/",
    "B64U": string.ascii_letters + string.digits + "-_",
    "L": string.ascii_lowercase,
    "LD": string.ascii_lowercase + string.digits,
    "D": string.digits,
    "PW": string.ascii_letters + string.digits + "!@#%^&*-_+=?",
}


@dataclass(frozen=True)
class Case:
    id: str
    part: str
    what: str
    text: str
    secrets: tuple[str, ...]
    keeps: tuple[str, ...]

    def fragments(self) -> list[tuple[str, str]]:
        """(secret, piece) pairs: a piece of a stored secret that must be found nowhere.
        Long secrets are checked by three pieces (head, middle, tail), so a half-redacted
        one counts as stored; a private key by each of its lines."""
        out = []
        for secret in self.secrets:
            lines = [ln for ln in re.split(r"\n|\\n", secret) if len(ln) >= 16 and "-----" not in ln]
            if len(lines) > 1:
                out += [(secret, ln) for ln in lines]
            elif len(secret) >= 24:
                mid = len(secret) // 2
                out += [(secret, secret[:12]), (secret, secret[mid - 6 : mid + 6]), (secret, secret[-12:])]
            else:
                out.append((secret, secret))
        return out


def load(part: str) -> list[Case]:
    """The cases of one part, secrets generated."""
    text = (FIXTURES / f"{part}.txt").read_text(encoding="utf-8")
    cases = []
    for block in re.split(r"^=== ", text, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        case_id, _, what = head.strip().partition(" ")
        body = body.rstrip("\n")
        secrets: list[str] = []
        keeps: list[str] = []
        pieces = []
        last = generated = 0
        for m in _MARK.finditer(body):
            kind, content = m.group(1), m.group(2)
            if kind == "k":
                keeps.append(content)
                value = content
            elif kind == "s":
                value = content
                secrets.append(value)
            else:  # seeded by the case and the generated secret's rank in it
                value = generate(content, f"{part}:{case_id}:{generated}")
                generated += 1
                secrets.append(value)
            pieces += [body[last : m.start()], value]
            last = m.end()
        expanded = "".join(pieces) + body[last:]
        assert "⟦" not in expanded and "⟧" not in expanded, f"{case_id}: unbalanced marker"
        assert len(expanded) <= 1000, f"{case_id}: {len(expanded)} characters (the journal keeps 1,000 of a tool input)"
        assert secrets or keeps, f"{case_id}: marks nothing"
        cases.append(Case(case_id, part, what.strip(), expanded, tuple(secrets), tuple(keeps)))
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return cases


def generate(spec: str, seed: str) -> str:
    """A fake secret of the shape `spec` names, the same for the same seed."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())

    def chars(charset: str, n: int) -> str:
        return "".join(rng.choice(_CHARSETS[charset]) for _ in range(n))

    kind, *args = spec.split("|")
    if kind == "jwt":
        header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
        claims = {
            "sub": str(rng.randrange(10**6, 10**7)),
            "iat": rng.randrange(1_700_000_000, 1_800_000_000),
            "role": "service",
        }
        return f"{header}.{_b64url(json.dumps(claims).encode())}.{chars('B64U', 43)}"
    if kind in ("pem", "pemjson"):
        label = args[0]
        start = "b3BlbnNzaC1rZXktdjEAAAAA" if "OPENSSH" in label else "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
        body = start + chars("B64", 64 * 7 - len(start)) + chars("B64", 28) + "=="
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        joiner = "\\n" if kind == "pemjson" else "\n"
        return joiner.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])
    if kind == "slack":
        return f"{args[0]}-{chars('D', 12)}-{chars('D', 13)}-{chars('AN', 24)}"
    if kind == "sendgrid":
        return f"SG.{chars('B64U', 22)}.{chars('B64U', 43)}"
    if kind == "telegram":
        return f"{rng.randrange(10**9, 7 * 10**9)}:AA{chars('B64U', 33)}"
    if kind == "azure":
        return f"{chars('AN', 3)}{rng.randrange(10)}Q~{chars('AN', 34)}"
    if kind == "discord":
        bot_id = str(rng.randrange(10**17, 10**19)).encode()
        return f"{_b64url(bot_id)}.{chars('ANUD', 6)}.{chars('ANUD', 38)}"
    if kind == "basic":
        return base64.b64encode(f"{args[0]}:{password(rng, 16)}".encode()).decode()
    if kind == "pw":
        return password(rng, int(args[0]))
    if kind == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    prefix, charset, length, *suffix = [kind, *args]
    return prefix + chars(charset, int(length)) + "".join(suffix)


def password(rng: random.Random, n: int) -> str:
    """A password with every character class in it."""
    while True:
        pw = "".join(rng.choice(_CHARSETS["PW"]) for _ in range(n))
        classes = (string.ascii_lowercase, string.ascii_uppercase, string.digits)
        if all(any(c in s for c in pw) for s in classes) and any(not c.isalnum() for c in pw):
            return pw


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
