"""Secret redaction: every pattern that keeps a secret out of the journal, logs, pages and git.

Each family is one named pattern; a match is replaced by `[REDACTED:<family>]`, keeping
the label, header name or user name in front of the secret where there is one (so
`Authorization: Bearer [REDACTED:authorization]` still says what was there). Git SHAs,
UUIDs, sha256 digests, base64 image data and paths that merely contain the word "token"
are not secrets and survive: no pattern matches bare hex or bare base64, and `data:`
URIs are skipped whole.

Users add patterns in `config.toml` (a match is redacted whole, or its first group when it
has groups)::

    [redact]
    patterns = ['corp-[0-9a-f]{32}', 'pin=(\\d{4,})']

Standard library only: this runs on the hook path.
"""

from __future__ import annotations

import re
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


MARK = "[REDACTED:{}]"


class Family(namedtuple("Family", "name source flags hints fold assign", defaults=(0, (), False, False))):
    """One kind of secret: `source` matches it; group `secret` (if named) is what goes.

    `hints` are literal strings at least one of which every match contains (checked in
    the upper-cased text when `fold` is set); a text with none of them is not searched, and
    the pattern is compiled only the first time a text has one. This is what keeps
    redaction to a fraction of a millisecond in a hook process that starts cold. With
    `assign`, a hint counts only where an assignment follows it (the rest of its name, a
    quote, spaces, then `:` or `=`): "PASSED" in a test run is no password.
    """

    __slots__ = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        compiled = _compiled.get(self)
        if compiled is None:
            compiled = _compiled[self] = re.compile(self.source, self.flags)
        return compiled

    def applies(self, text: str, upper: str) -> bool:
        haystack = upper if self.fold else text
        if not self.hints:
            return True
        if self.assign:
            return any(_assigned(haystack, h) for h in self.hints)
        return any(h in haystack for h in self.hints)

    def sub(self, text: str) -> str:
        pattern = self.pattern
        mark = MARK.format(self.name)
        if "secret" not in pattern.groupindex:
            return pattern.sub(mark, text)

        def replace(m: re.Match[str]) -> str:
            start, end = m.span("secret")
            if start < 0 or m.group("secret").lstrip("\"'").startswith("[REDACTED:"):
                return m.group(0)  # absent, or already redacted by a more specific family
            whole_start = m.start()
            return m.group(0)[: start - whole_start] + mark + m.group(0)[end - whole_start :]

        return pattern.sub(replace, text)


_compiled: dict[Family, re.Pattern[str]] = {}
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _assigned(text: str, hint: str) -> bool:
    """Whether some `hint` in `text` is followed by the rest of its name, an optional
    quote, spaces, then `:` or `=` (the shape every assignment family requires)."""
    n = len(text)
    start = text.find(hint)
    while start >= 0:
        i = start + len(hint)
        while i < n and text[i] in _NAME_CHARS:
            i += 1
        if i < n and text[i] in "\"'":
            i += 1
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] in ":=":
            return True
        start = text.find(hint, start + 1)
    return False


def _f(
    name: str, source: str, hints: tuple[str, ...] = (), fold: bool = False, flags: int = 0, assign: bool = False
) -> Family:
    return Family(name, source, flags, hints, fold, assign)


# Order matters only where families overlap: the more specific ones come first so that
# their label is the one shown (an Anthropic key is also shaped like an OpenAI key).
_ASSIGN_WORDS = ("KEY", "TOKEN", "SECRET", "PASSW", "PWD", "PASS", "CREDENTIAL")
FAMILIES: tuple[Family, ...] = (
    _f(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("PRIVATE KEY",),
    ),
    _f(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "ANPA"),
    ),
    _f(
        "aws-secret-key",
        r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{30,})",
        ("SECRET",),
        fold=True,
    ),
    _f(
        "github-token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _f(
        "gitlab-token",
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{20,}",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-"),
    ),
    _f("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _f(
        "slack-token",
        r"\bxox[abposre]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        ("xox", "hooks.slack.com"),
    ),
    _f(
        "stripe-key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b",
        ("_live_", "_test_", "whsec_"),
    ),
    _f("anthropic-key", r"\bsk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    _f("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    _f("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])|\bya29\.[0-9A-Za-z_-]{20,}", ("AIza", "ya29.")),
    _f("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", ("eyJ",)),
    _f("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@'\"\[\]]*:(?P<secret>[^\s@/'\"]+)@", ("://",)),
    _f(
        "authorization",
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|apikey)\s+)?"
        r"(?P<secret>[^\s'\",;]+)",
        ("AUTHORIZATION",),
        fold=True,
    ),
    _f(
        "api-key-header",
        r"(?i)\b(?:x-api-key|api-key|x-auth-token|private-token|x-goog-api-key)\s*:\s*"
        r"(?P<secret>[^\s'\",;]+)",
        ("API-KEY", "AUTH-TOKEN", "PRIVATE-TOKEN"),
        fold=True,
    ),
    _f(
        "cli-password",
        r"(?:\s(?:-u|--user)\s+[\"']?[^\s:'\"]+:|--password[= ]|--passwd[= ]|\bsshpass\s+-p\s*)"
        r"(?P<secret>[^\s'\"]+)",
        ("-u ", "--user", "--pass", "sshpass"),
    ),
    _f(
        "cli-password",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p(?P<secret>[^\s'\"]+)",
        ("mysql", "mariadb"),
    ),
    # NAME_KEY=..., export GH_TOKEN=..., "DB_PASSWORD": "...": environment-style names.
    _f(
        "assignment",
        r"\b[A-Z0-9_]*(?:_KEY|_TOKEN|_SECRET|SECRET|PASSWORD|PASSWD|_PWD|_PASS|_CREDENTIALS?)\b"
        r"[\"']?\s*[:=]\s*(?!\$)(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s'\",;}]+)",
        _ASSIGN_WORDS,
        assign=True,
    ),
    # password = "hunter2", api_key: 'abc123', "client_secret": "..." in code and config.
    _f(
        "assignment",
        r"(?i)\b[a-z0-9_.-]*(?:api[_-]?key|secret[_-]?key|access[_-]?key|private[_-]?key|"
        r"client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|password|passwd|"
        r"secret|token)[\"']?\s*[:=]\s*(?P<secret>\"[^\"\n]{4,}\"|'[^'\n]{4,}')",
        _ASSIGN_WORDS,
        fold=True,
        assign=True,
    ),
    # YAML and .netrc style: `password: hunter2` at the start of a line.
    _f(
        "assignment",
        r"(?im)^\s*(?:password|passwd|secret|token|api_key|apikey)\s*:\s*(?P<secret>[^\s\"'#][^\s#]*)",
        _ASSIGN_WORDS,
        fold=True,
        assign=True,
    ),
    _f(
        "connection-string",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd|"
        r"ClientSecret)\s*=\s*(?P<secret>[^;\s\"']+)",
        ("ACCOUNTKEY", "SHAREDACCESS", "PASSWORD", "PWD", "CLIENTSECRET"),
        fold=True,
    ),
)

# base64 payloads (images, fonts) are long runs no secret pattern should look inside.
_DATA_URI = _f("data-uri", r"data:[\w.+-]+/[\w.+-]+;base64,[A-Za-z0-9+/=]+", (";base64,",))

_user_families: tuple[Family, ...] | None = None


def user_families(patterns: Iterable[str]) -> tuple[Family, ...]:
    """Families from user patterns; a pattern that does not compile is skipped."""
    families = []
    for source in patterns:
        try:
            compiled = re.compile(str(source))
        except re.error:
            continue
        if compiled.groups and "secret" not in compiled.groupindex:
            # Trigger: a user pattern with plain groups. Why: the first group is the secret,
            # the rest of the match is context worth keeping (as for our own families).
            compiled = re.compile(_name_first_group(str(source)))
        families.append(Family("custom", compiled.pattern, compiled.flags))
    return tuple(families)


def _name_first_group(source: str) -> str:
    depth_escape = False
    for i, ch in enumerate(source):
        if depth_escape:
            depth_escape = False
            continue
        if ch == "\\":
            depth_escape = True
        elif ch == "(" and not source.startswith("(?", i):
            return source[: i + 1] + "?P<secret>" + source[i + 1 :]
    return source


def configure(settings: Mapping[str, object] | None) -> None:
    """Load user patterns from the `[redact]` section of the settings (once per process)."""
    global _user_families
    patterns = (settings or {}).get("patterns") or ()
    _user_families = user_families(patterns if isinstance(patterns, (list, tuple)) else ())


def redact(text: str, extra: Iterable[Family] | None = None) -> str:
    """`text` with every secret replaced by `[REDACTED:<family>]`."""
    if not text:
        return text
    families = FAMILIES + tuple(extra if extra is not None else (_user_families or ()))
    if not _DATA_URI.applies(text, ""):
        return _redact_plain(text, families)
    pieces = []
    last = 0
    for m in _DATA_URI.pattern.finditer(text):
        pieces.append(_redact_plain(text[last : m.start()], families))
        pieces.append(m.group(0))
        last = m.end()
    pieces.append(_redact_plain(text[last:], families))
    return "".join(pieces)


def _redact_plain(text: str, families: tuple[Family, ...]) -> str:
    upper = text.upper()
    for family in families:
        if family.applies(text, upper):
            text = family.sub(text)
    return text


def redact_value(value: object) -> object:
    """Redact every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


# Redaction of whole observations, and of text read outside a hook ----------------------------

if TYPE_CHECKING:
    from wiki_memory.capture.observation import Observation

_config_seen: tuple[str, float] | None = None


def reload_user_patterns() -> None:
    """Load the user's `[redact] patterns` from config.toml again when the file changed.

    Why: a hook process reads the settings once and exits; consolidation, an import and the
    MCP server live longer, and must redact with the patterns the user has now.
    """
    global _config_seen
    import os

    from wiki_memory.config import home, load_settings

    path = home() / "config.toml"
    try:
        key = (str(path), os.stat(path).st_mtime)
    except OSError:
        key = (str(path), 0.0)
    if key == _config_seen:
        return
    _config_seen = key
    try:
        configure(load_settings().section("redact"))
    except Exception:  # noqa: BLE001 - a broken config.toml: the built-in patterns still apply
        configure(None)


def redact_with_config(text: str) -> str:
    """`redact(text)` with the user's patterns as config.toml has them now."""
    if not text:
        return text
    reload_user_patterns()
    return redact(text)


def redact_observation(observation: Observation) -> Observation:
    """The observation with every text field passed through redaction: the same fields,
    whether it came from a hook or from a transcript."""
    return observation._replace(
        text=redact(observation.text) if observation.text else observation.text,
        input=redact(observation.input) if observation.input else observation.input,
        output=redact(observation.output) if observation.output else observation.output,
        files=tuple(redact(f) for f in observation.files),
        plan=tuple(p._replace(text=redact(p.text)) for p in observation.plan),
        meta={key: redact_value(value) for key, value in observation.meta.items()},
    )
