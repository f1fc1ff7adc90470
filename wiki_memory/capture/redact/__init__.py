"""Secret redaction: find credentials by where they sit and by their shape, and replace them.

`find(text)` returns where the secrets are (`Finding(start, end, family)`, merged and in
order); `redact(text)` replaces each with `[REDACTED:<family>]`, keeping the label, header
name, scheme or user name in front of it (`Authorization: Bearer [REDACTED:authorization]`).
`store.rewrite.scan` runs the same rules over a wiki's whole history.

Two kinds of rule:

- **Shape**: vendor-prefixed tokens (`_VENDORS`: the prefixes of gitleaks' rule set,
  config/gitleaks.toml, and of GitHub's secret scanning partners), JWTs, private key
  blocks (PEM, OpenSSH, PGP, PuTTY), passwords in URLs, `Basic` credentials that decode
  to `user:password`, long `Bearer` tokens.
- **Place**: a value is a secret because of what names it: a key that names a secret in
  env files, YAML, TOML, INI, JSON, code, XML elements and attributes, HTTP headers in any
  syntax (header lines, log header maps, curl `-H`, nginx/Apache/Caddy directives), the
  credential flags of common command lines (`--password`, `docker login -p`, `mysql -pX`,
  `curl -u user:pass`, `ConvertTo-SecureString "..." -AsPlainText`), and prose ("the
  password is ...", "pw is ..."; "the key ... is" or `key =` only with a value that can be
  nothing but a generated credential, `_generated`).

What is not a secret survives: references (`$VAR`, `${VAR}`, `%VAR%`, `${{ secrets.X }}`,
`{{ x }}`, `os.environ[...]`, `process.env.X`), obvious placeholders (`<token>`,
`sk-your-key-here`, `xxxx`, `changeme`, AWS's documented `...EXAMPLE` keys), key names
that only look like secrets (`SORT_KEY`, `PRIMARY_KEY`, `max_tokens`, `token_type`,
`secretName`, `password_hash`), and every bare hash, UUID, commit id, SRI or go.sum hash,
public key and certificate: no rule matches bare hex or base64, and `data:` URIs are
skipped whole.

**Linear time.** A hook has seconds, not minutes: every rule runs in time linear in the
text. Patterns start only where a token begins (a negative look-behind on the token's own
characters, so a run of characters is entered once), every repetition that could
backtrack is bounded, adjacent repetitions never share characters, and each candidate is
then judged by Python code that looks at a bounded window. `scripts/bench_redact.py`
measures the worst cases.

**Cold start.** A hook process pays for every pattern it compiles, so a rule is compiled
only the first time a text holds one of its `hints` (literal strings every match
contains); most texts compile nothing.

Users add patterns in `config.toml` (a match is redacted whole, or its first group when it
has groups)::

    [redact]
    patterns = ['corp-[0-9a-f]{32}', 'pin=(\\d{4,})']

Where each part lives: `vocabulary` (what names a secret, what is a reference, a
placeholder or a generated value; the hints; patterns compiled on first use), `vendors`
(the prefix table), one module per family of rules or small group of them (`private_keys`,
`token_shapes`, `http_credentials`, `assignments`, `directives`, `markup`, `code_pairs`,
`command_lines`, `prose`), and `engine` (what a rule is, the rule set in order, the user's
patterns, `find`). The engine imports a family's module the first time a text holds one of
its hints, so a hook process loads only the rules its texts call for. This module is the
API: redact a text, a JSON-like value, a whole observation. Names with a leading underscore
are the package's own.

Standard library only, and no `typing` at run time: this runs on the hook path.
"""

from __future__ import annotations

from wiki_memory.capture.redact.engine import (
    FAMILIES,
    Family,
    Finding,
    _apply,
    configure,
    find,
    reload_user_patterns,
    user_families,
)
from wiki_memory.capture.redact.vocabulary import _KV as _KV
from wiki_memory.capture.redact.vocabulary import MARK

# The tests look at the cache of compiled patterns and the assignment pattern.
from wiki_memory.capture.redact.vocabulary import _compiled as _compiled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from wiki_memory.capture.observation import Observation


__all__ = [
    "FAMILIES",
    "MARK",
    "Family",
    "Finding",
    "configure",
    "find",
    "redact",
    "redact_found",
    "redact_observation",
    "redact_value",
    "redact_with_config",
    "reload_user_patterns",
    "user_families",
]


def redact(text: str, extra: Iterable[Family] | None = None) -> str:
    """`text` with every secret replaced by `[REDACTED:<family>]`."""
    if not text:
        return text
    return _apply(text, find(text, extra))


def redact_found(text: str) -> tuple[str, list[Finding]]:
    """`text` redacted with the user's patterns as config.toml has them now, and what was
    found (to tell the writer)."""
    if not text:
        return text, []
    reload_user_patterns()
    found = find(text)
    return (_apply(text, found) if found else text), found


def redact_value(value: object) -> object:
    """Redact every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def redact_with_config(text: str) -> str:
    """`redact(text)` with the user's patterns as config.toml has them now."""
    if not text:
        return text
    reload_user_patterns()
    return redact(text)


def redact_observation(observation: Observation) -> Observation:
    """The observation with every text field passed through redaction: the same fields,
    whether it came from a hook or from a transcript."""
    raw_input = observation.input or ""
    found = find(raw_input) if raw_input else []
    secrets = [raw_input[f.start : f.end] for f in found]
    return observation._replace(
        text=redact(observation.text) if observation.text else observation.text,
        input=_apply(raw_input, found) if raw_input else observation.input,
        output=redact(observation.output) if observation.output else observation.output,
        files=tuple(_redact_path(f, secrets) for f in observation.files),
        plan=tuple(p._replace(text=redact(p.text)) for p in observation.plan),
        meta={key: redact_value(value) for key, value in observation.meta.items()},
    )


def _redact_path(path: str, secrets: list[str]) -> str:
    """A file name the call named, redacted: alone, and against the secrets its command held.

    Why: a name taken out of a command (a redirection's target, `sed -i`'s file) loses the
    context that marks a secret (`<password>x</password>` parsed as `> x</password`, PHP's
    `'password' => 'x',` as `> x,`), so a name that holds a secret found in the command, or
    is a long part of one, is redacted whole."""
    alone = redact(path)
    if alone != path:
        return alone
    for secret in secrets:
        core = secret.strip("'\"")
        if (len(core) >= 8 and core in path) or (len(path) >= 8 and path in secret):
            return "[REDACTED:path]"
    return path
