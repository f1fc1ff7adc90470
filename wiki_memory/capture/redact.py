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

Why one module of this size: the rules, the vocabulary they share (what names a secret,
what is a reference or a placeholder) and the engine are read and audited together.

Standard library only, and no `typing` at run time: this runs on the hook path.
"""

from __future__ import annotations

import re
from collections import namedtuple
from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    Span = tuple[int, int, str]
    Finder = Callable[[str], Iterable[Span]]


MARK = "[REDACTED:{}]"
_MARK_PREFIX = "[REDACTED:"


class Finding(namedtuple("Finding", "start end family")):
    """One secret in a text: `text[start:end]` is it, `family` names its kind."""

    __slots__ = ()


class Family(namedtuple("Family", "name source flags hints fold finder assign", defaults=(0, (), False, None, False))):
    """One rule. Either a regex (`source`; group `secret`, if named, is what goes) or a
    `finder` (text -> (start, end, family) spans, for rules that judge candidates in code).

    `hints` are literal strings at least one of which every match contains (looked for in
    the lower-cased text when `fold` is set); a text with none of them is not searched, and
    the rule's patterns are compiled only the first time a text has one. With `assign`, a
    hint counts only where an assignment follows it (the rest of its name, a quote, spaces,
    then `:` or `=`): "PASSED" in a test run is no password.
    """

    __slots__ = ()

    @property
    def pattern(self) -> re.Pattern[str]:
        return _regex(self.source, self.flags)

    def applies(self, text: str, lower: str) -> bool:
        if not self.hints:
            return True
        haystack = lower if self.fold else text
        if self.assign:
            return any(_assigned(haystack, h) for h in self.hints)
        return any(h in haystack for h in self.hints)

    def spans(self, text: str) -> Iterable[Span]:
        if self.finder is not None:
            return self.finder(text)
        return self._regex_spans(text)

    def _regex_spans(self, text: str) -> Iterator[Span]:
        pattern = self.pattern
        grouped = "secret" in pattern.groupindex
        for m in pattern.finditer(text):
            start, end = m.span("secret") if grouped else m.span()
            if end > start:
                yield start, end, self.name

    def sub(self, text: str) -> str:
        """`text` with this family's matches redacted (the other families left alone)."""
        return _apply(text, _merge(list(self.spans(text)), {self.name: 0}))


_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def _assigned(text: str, hint: str) -> bool:
    """Whether some `hint` in `text` is followed, within a name's length, by the rest of
    the name, an optional quote or bracket, spaces, then `:` or `=`."""
    n = len(text)
    start = text.find(hint)
    while start >= 0:
        i = start + len(hint)
        stop = min(n, i + 64)  # bounded: a long run of name characters is no key
        while i < stop and text[i] in _NAME_CHARS:
            i += 1
        if i < n and text[i] == "\\":
            i += 1
        if i < n and text[i] in "\"'`]":
            i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in ":=":
            return True
        start = text.find(hint, max(i, start + 1))
    return False


def _regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern, compiled on first use and kept for the life of the process."""
    key = (source, flags)
    pattern = _compiled.get(key)
    if pattern is None:
        pattern = _compiled[key] = re.compile(source, flags)
    return pattern


# The vocabulary ------------------------------------------------------------------------------

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

# Words that make a key name a secret's name wherever they are its last word.
_SECRET_WORDS = frozenset(
    "password passwd passphrase passcode pwd pw pass secret token apikey credential credentials creds "
    "mnemonic psk privatekey secretkey accesskey authtoken accesstoken refreshtoken sessiontoken "
    "clientsecret apitoken authkey masterkey signingkey encryptionkey sharedaccesskey accountkey "
    "sharedaccesssignature connectionstring jwt dockerconfigjson dockercfg".split()
)
# Words before `key` that make it a secret's key (`api key`, `AWS_SECRET_ACCESS_KEY`) ...
_KEY_SECRET = frozenset(
    "api secret private access encryption decryption signing sign master client app application auth "
    "license licence account shared service hmac jwt webhook session cookie storage subscription admin "
    "deploy consumer crypto aes root write ingest ingestion server live prod production stripe openai "
    "anthropic sendgrid mailgun twilio algolia mapbox firebase datadog newrelic sentry pusher gpg pgp "
    "tls ssl x509 mistral groq cohere gemini google azure aws gcp github gitlab slack discord telegram "
    "cloudflare fastly heroku vercel netlify supabase openrouter deepseek replicate pinecone resend "
    "postmark mailjet sendinblue brevo segment mixpanel amplitude rollbar bugsnag honeycomb".split()
)
# ... and words before `key` or `token` that make it no secret (`SORT_KEY`, `max_tokens`).
_NOT_SECRET_QUALIFIERS = frozenset(
    "public pub sort primary foreign partition cache idempotency dedup dedupe deduplication unique "
    "composite range row shard routing lookup map dict object field column index i18n translation "
    "message label group order s3 bucket file path name metric event feature flag state lock tracking "
    "cursor next prev previous parent child node item entry record hot short sequence natural schema "
    "idx site join distribution clustering search query registry react list page continuation "
    "pagination sync cancel cancellation csrf xsrf max min input output completion prompt context total "
    "lexer parse parser end start eos bos pad unk sep cls mask special delimiter stop word sentence id "
    "first last current peek lookahead num count design css theme color style bearer publishable client_side "
    "recaptcha_site site_verification".split()
)
# Words after a secret word that make the key about the secret, not the secret itself.
_NOT_SECRET_SUFFIXES = frozenset(
    "name names id ids arn path paths file files dir directory url uri urls endpoint host type kind "
    "length len size count max min limit ref reference env var variable field header prefix suffix "
    "format version expiry expires expiration expire expired ttl timeout lifetime age hint policy "
    "rotation enabled enable disabled required hash hashed digest sha sha1 sha256 sha512 md5 "
    "fingerprint salt algorithm alg method mode store location source provider manager label "
    "description help prompt regex pattern rule rules strength reset check valid validation "
    "validator error errors message input placeholder usage budget index position offset start end "
    "class style color icon button link form spec schema template generator backend encoding "
    "charset lock flag mapping map maps dialog modal screen page view route handler callback "
    "helper util utils id_hash count_limit status state secret_ref selector generated issued "
    "created updated at mount volume ref_name key_ref from stdin command cmd".split()
)
_HEADERS_AUTH = frozenset(("authorization", "proxy-authorization"))
_SCHEME_TOKEN_ONLY = frozenset(
    "bearer basic token apikey api-key key sso-key bot jwt dpop negotiate ntlm splunk ssws genie-key "
    "geniekey client-id zoho-oauthtoken otp pat".split()
)
_BOOLISH = frozenset(
    "true false null none nil undefined yes no on off empty required optional unset inherit include "
    "omit same-origin n/a na tbd default auto disabled enabled read write".split()
)
_TYPE_NAMES = frozenset(
    "str string int integer bool boolean bytes number float any secretstr securestring text char "
    "varchar object dict list array secret[str] optional[str] str|none string|undefined".split()
)
_PROSE_STOPWORDS = frozenset(
    "expired invalid required missing incorrect wrong correct set unset changed reset hidden masked "
    "encrypted hashed provided given ok valid empty blank pending rotated revoked stored saved "
    "not the a an in at still now being also too weak strong short long same different there here "
    "managed generated random unknown needed necessary configured protected sent shown printed logged "
    "only never always".split()
)

_FUNCTION_WORDS = frozenset(
    "the a an in of to for from with on at by and or not is are was see use ask stored kept managed "
    "lives its it this that our your their".split()
)
_PLACEHOLDER = (
    r"(?:^|[^a-z])(?:your|insert|replace|placeholder|example|sample|dummy|redacted|changeme|change[-_ ]me|"
    r"changeit|xxx|\*\*\*|\.\.\.|…|•••)"
)
_PLACEHOLDER_WORDS = (
    r"(?:^|[-_ ./:])(?:todo|fixme|tbd|here|none|null|secret|password|token|key|apikey|api[-_]key|pass)(?:$|[-_ ./:])"
)
_REFERENCE_PREFIXES = (
    "${",
    "$(",
    "{{",
    "{%",
    "<%",
    "#{",
    "@{",
    "%(",
    "env(",
    "env.",
    "env:",
    "env[",
    "ENV[",
    "ENV.",
    "ENV(",
    "process.env",
    "os.environ",
    "os.getenv",
    "getenv(",
    "System.getenv",
    "Environment.GetEnvironmentVariable",
    "import.meta.env",
    "Deno.env",
    "Bun.env",
    "secrets.",
    "vars.",
    "!Ref",
    "!Sub",
    "!GetAtt",
    "!vault",
    "!secret",
    "ref+",
    "vault:",
    "op://",
    "ssm:",
    "arn:",
    "keyring:",
    "ENC(",
    "$__",
    "lookup(",
    "var.",
    "local.",
    "data.",
)
# Unquoted values that read as code (an attribute, a call, a subscript), not a literal.
_CODE_ROOTS = frozenset(
    "self this os env config settings args opts options params props ctx context request req cfg conf "
    "app data creds credentials auth user account client session environ window document kwargs "
    "process vault secrets vars input form body payload headers response res resp result json cls "
    "module exports it st".split()
)


def _words(name: str) -> list[str]:
    """The lower-case words of a key name: `dbPassword` -> db, password; `X-API-Key` -> x, api, key."""
    return [w.lower() for w in _regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall(name)]


def _secret_word(word: str) -> bool:
    if word.startswith(("csrf", "xsrf")):
        return False  # anti-forgery tokens (gitleaks allows them too)
    if word in _SECRET_WORDS:
        return True
    if word.endswith(("password", "passwd", "secret", "apikey", "authtoken", "accesstoken", "privatekey")):
        return not word.startswith("secretar")  # `secretary` is a person
    if word.endswith("token") and word not in ("tokentoken",):
        return True
    if word.endswith("pass") and len(word) > 4:
        return word not in ("bypass", "compass", "trespass", "overpass", "underpass", "surpass", "encompass")
    return word.endswith("pwd")


def _key_kind(words: list[str], query: bool = False) -> str | None:
    """How strongly a key name names a secret: `strong` (any literal value is one), `weak`
    (only a random-looking value is), `header` (an HTTP Authorization header) or None."""
    if not words:
        return None
    joined = "-".join(words)
    if joined in _HEADERS_AUTH or words[-1] == "authorization":
        return "header"
    last = None
    for i in range(len(words) - 1, -1, -1):
        word = words[i]
        before = words[i - 1] if i else ""
        if word == "key":
            if before in _KEY_SECRET or (
                i >= 2 and words[i - 2] in _KEY_SECRET and before not in _NOT_SECRET_QUALIFIERS
            ):
                last, kind = i, "strong"
            elif before in _NOT_SECRET_QUALIFIERS:
                return None
            else:
                last, kind = i, "weak"
            break
        if word == "token" and before in _NOT_SECRET_QUALIFIERS:
            return None
        if word in ("auth", "cookie") and i == len(words) - 1:
            last, kind = i, "weak"
            break
        if query and word in ("sig", "signature", "appid", "apikey", "app_key"):
            last, kind = i, "strong"
            break
        if _secret_word(word):
            if before in ("public", "pub"):
                return None
            last, kind = i, "strong"
            break
    if last is None:
        return None
    after = words[last + 1 :]
    if any(w in _NOT_SECRET_SUFFIXES for w in after):
        return None
    if after:
        return "weak"  # SECRET_KEY_BASE: a secret, judged by its value
    return kind


def _is_reference(value: str) -> bool:
    """`$VAR`, `${VAR}`, `%VAR%`, `{{ x }}`, `<token>`, `os.environ[...]` and their kin."""
    s = value.strip()
    if not s:
        return True
    first = s[0]
    if first == "$":
        return len(s) == 1 or s[1].isalnum() or s[1] in "_{(@"
    if first == "%":
        return len(s) <= 4 or s.endswith("%") or s.startswith("%(")
    if s.startswith(_REFERENCE_PREFIXES):
        return True
    if len(s) > 1 and ((first, s[-1]) in (("<", ">"), ("{", "}"), ("[", "]"), ("@", "@")) or s[:2] == s[-2:] == "__"):
        return True
    return first == "{" and "}" in s  # f"{token}", Caddy's {env.TOKEN}


_FILLER = frozenset("-_ .:/")


@lru_cache(maxsize=4096)  # one value is judged by several rules (a header's token: its header's and Bearer's)
def _is_placeholder(value: str) -> bool:
    s = value.strip().strip("\"'`")
    low = s.lower()
    if len(set(low) - _FILLER) <= 3:
        return True  # xxxx, ****, 0000, ...
    if low.endswith(("example", "examplekey")):
        return True  # AWS's documented keys (gitleaks allows `.+EXAMPLE$` too)
    if _regex(_PLACEHOLDER).search(low) is not None:
        return True
    # my-password, todo, none: words only, one of them a secret's name
    return _regex(_PLACEHOLDER_WORDS).search(low) is not None and _regex(r"[a-z_ ./:-]+").fullmatch(low) is not None


def _is_path(value: str) -> bool:
    if not value.startswith(("/", "~/", "./", "../", "file://")) or "+" in value or "=" in value:
        return False
    return _regex(r"(?:~|\.\.?|file:/)?/[a-z][\w.-]*(?:/|$)").match(value) is not None


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters `value` mixes."""
    return (
        (value.upper() != value)
        + (value.lower() != value)
        + (_regex(r"\d").search(value) is not None)
        + (_regex(r"[^A-Za-z0-9]").search(value) is not None)
    )


@lru_cache(maxsize=4096)
def _looks_random(value: str, min_len: int = 12) -> bool:
    """A value with the look of a generated credential: long enough, mixing character
    classes, and not a word, an identifier in snake or kebab case, or a version."""
    if len(value) < min_len or " " in value:
        return False
    if _classes(value) < 2 or _regex(r"[a-z]+(?:[_.-][a-z0-9]+)*|[A-Z]+(?:_[A-Z0-9]+)*|[\d.]+").fullmatch(value):
        return False
    segments = _regex(r"[-_.:/]").split(value)
    # grid-col-12-md-6: words and numbers joined
    return not all(len(seg) <= 10 and (seg.isalpha() or seg.isdigit() or not seg) for seg in segments)


def _generated(value: str) -> bool:
    """A value that can only be a generated credential, whatever names it: 20 characters or
    more mixing upper and lower case with digits scattered through it (three switches
    between letters and digits at least: `getUserById2Async` has two), no dot (a dotted
    name, a file, a version), not a path (`uploads/2024/...`), and not a hash or a public key
    named by its prefix (SRI's `sha512-`, go.sum's `h1:`, an SSH public key's `AAAA`)."""
    if len(value) < 20 or "." in value or not _looks_random(value, 20):
        return False
    if value.lower() == value or value.upper() == value:
        return False
    if _regex(r"(?i:sha\d{0,3}|md5|h1)[-:=]|AAAA|(?:[a-z0-9_-]{2,}/){2}").match(value) is not None:
        return False
    if len(_regex(r"(?<=[A-Za-z])\d|(?<=\d)[A-Za-z]").findall(value)) < 3:
        return False
    # Words run long in one case (`OrderIdentifier2024Key9`: 2.9 characters a run); a
    # generated token changes case or class every one or two characters.
    runs = len(_regex(r"[a-z]+|[A-Z]+|\d+|[^A-Za-z\d]+").findall(value))
    return len(value) <= 2.5 * runs


def _passwordish(value: str) -> bool:
    """An unquoted word in prose that reads as a password: a digit or symbol in it, or a
    capital past its first letter."""
    if len(value) < 4 or value.lower() in _PROSE_STOPWORDS:
        return False
    if value.isalpha():
        return any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return not value.isdigit() or len(value) >= 6


def _keep_value(value: str, quoted: bool, words: list[str] | None = None) -> bool:
    """Whether a value under a secret's name is not a secret after all."""
    s = value.strip()
    if len(s) < 3 or s.startswith(_MARK_PREFIX):
        return True
    low = s.lower()
    if low in _BOOLISH or low in _TYPE_NAMES or (s.isdigit() and len(s) < 6):
        return True
    if words and low.replace("-", "_") == "_".join(words):
        return True  # password=password: a variable handed on, or a default of the same name
    if _is_reference(s) or _is_placeholder(s) or _is_path(s):
        return True
    if low.startswith(("http://", "https://")) and "@" not in s:
        return True  # an address (a password in it is the URL rule's)
    if _regex(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:[_-][a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+").fullmatch(s) and _key_kind(
        _words(s)
    ):
        return True  # password: DB_PASSWORD names the variable that holds it
    if not quoted:
        root = _regex(r"([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*(\(|\[)?").match(s)
        if root and (root.end() == len(s) or root.group(2)) and ("." in s[: root.end()] or root.group(2)):
            return root.group(1) in _CODE_ROOTS or bool(root.group(2))  # settings.API_KEY, getpass()
    return False


# Rules: shapes -------------------------------------------------------------------------------

# Character sets of token bodies.
_AN = "A-Za-z0-9"
_ANU = "A-Za-z0-9_"
_ANUD = "A-Za-z0-9_-"
_ANUDD = "A-Za-z0-9_.-"
_HEX = "0-9a-fA-F"
_UD = "A-Z0-9"
_B64 = "A-Za-z0-9+/="
_B64U = "A-Za-z0-9_=-"
_PATH = "A-Za-z0-9/_-"

# (family, prefix, body characters, shortest body, longest body). Sources: gitleaks
# config/gitleaks.toml (2026-07) and GitHub's secret scanning patterns; fakes of each are in
# tests/fixtures/secrets/.
_VENDORS: tuple[tuple[str, str, str, int, int], ...] = (
    ("aws-access-key", "AKIA", _UD, 16, 16),
    ("aws-access-key", "ASIA", _UD, 16, 16),
    ("aws-access-key", "ABIA", _UD, 16, 16),
    ("aws-access-key", "ACCA", _UD, 16, 16),
    ("aws-bedrock-key", "ABSK", _B64, 100, 300),
    ("github-token", "ghp_", _AN, 30, 255),
    ("github-token", "gho_", _AN, 30, 255),
    ("github-token", "ghu_", _AN, 30, 255),
    ("github-token", "ghs_", _AN, 30, 255),
    ("github-token", "ghr_", _AN, 30, 255),
    ("github-token", "github_pat_", _ANU, 22, 255),
    ("gitlab-token", "glpat-", _ANUDD, 20, 300),
    ("gitlab-token", "gldt-", _ANUD, 20, 100),
    ("gitlab-token", "glrt-", _ANUDD, 20, 300),
    ("gitlab-token", "glptt-", _ANUD, 20, 100),
    ("gitlab-token", "glft-", _ANUD, 20, 100),
    ("gitlab-token", "glsoat-", _ANUD, 20, 100),
    ("gitlab-token", "glcbt-", _ANUD, 20, 100),
    ("gitlab-token", "glimt-", _ANUD, 20, 100),
    ("gitlab-token", "glagent-", _ANUD, 40, 100),
    ("gitlab-token", "gloas-", _ANUD, 40, 100),
    ("gitlab-token", "glffct-", _ANUD, 20, 100),
    ("gitlab-token", "GR1348941", _ANUD, 20, 100),
    ("npm-token", "npm_", _AN, 36, 36),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc", _ANUD, 50, 1000),
    ("pypi-token", "pypi-AgENdGVzdC5weXBpLm9yZw", _ANUD, 50, 1000),
    ("slack-token", "xoxb-", _ANUD, 10, 255),
    ("slack-token", "xoxp-", _ANUD, 10, 255),
    ("slack-token", "xoxa-", _ANUD, 10, 255),
    ("slack-token", "xoxo-", _ANUD, 10, 255),
    ("slack-token", "xoxs-", _ANUD, 10, 255),
    ("slack-token", "xoxr-", _ANUD, 10, 255),
    ("slack-token", "xoxe-", _ANUD, 10, 255),
    ("slack-token", "xoxe.xox", _ANUD, 10, 255),
    ("slack-token", "xapp-", _ANUD, 10, 255),
    ("slack-token", "hooks.slack.com/services/", _PATH, 20, 255),
    ("slack-token", "hooks.slack.com/workflows/", _PATH, 20, 255),
    ("slack-token", "hooks.slack.com/triggers/", _PATH, 20, 255),
    ("discord-webhook", "discord.com/api/webhooks/", _PATH, 40, 255),
    ("discord-webhook", "discordapp.com/api/webhooks/", _PATH, 40, 255),
    ("teams-webhook", ".webhook.office.com/webhookb2/", _PATH + "@", 60, 400),
    ("stripe-key", "sk_live_", _AN, 16, 255),
    ("stripe-key", "sk_test_", _AN, 16, 255),
    ("stripe-key", "sk_prod_", _AN, 16, 255),
    ("stripe-key", "rk_live_", _AN, 16, 255),
    ("stripe-key", "rk_test_", _AN, 16, 255),
    ("stripe-key", "rk_prod_", _AN, 16, 255),
    ("stripe-key", "whsec_", _AN, 24, 255),
    ("anthropic-key", "sk-ant-", _ANUD, 30, 300),
    ("openai-key", "sk-proj-", _ANUD, 20, 300),
    ("openai-key", "sk-svcacct-", _ANUD, 20, 300),
    ("openai-key", "sk-admin-", _ANUD, 20, 300),
    ("openai-key", "sk-None-", _ANUD, 20, 300),
    ("openai-key", "sk-", _ANUD, 20, 300),  # OpenAI's older keys, DeepSeek, OpenRouter, Moonshot ...
    ("google-api-key", "AIza", _ANUD, 35, 35),
    ("google-oauth-secret", "GOCSPX-", _ANUD, 24, 40),
    ("google-oauth-token", "ya29.", _ANUDD, 20, 2048),
    ("huggingface-token", "hf_", _AN, 30, 40),
    ("huggingface-token", "api_org_", _AN, 30, 40),
    ("sendgrid-key", "SG.", _ANUDD, 60, 80),
    ("digitalocean-token", "dop_v1_", _HEX, 64, 64),
    ("digitalocean-token", "doo_v1_", _HEX, 64, 64),
    ("digitalocean-token", "dor_v1_", _HEX, 64, 64),
    ("docker-token", "dckr_pat_", _ANUD, 20, 100),
    ("docker-token", "dckr_oat_", _ANUD, 20, 100),
    ("shopify-token", "shpat_", _HEX, 32, 32),
    ("shopify-token", "shpca_", _HEX, 32, 32),
    ("shopify-token", "shppa_", _HEX, 32, 32),
    ("shopify-token", "shpss_", _HEX, 32, 32),
    ("atlassian-token", "ATATT3", _B64U, 150, 300),
    ("bitbucket-token", "ATBB", _AN, 28, 64),
    ("databricks-token", "dapi", _HEX, 32, 34),
    ("doppler-token", "dp.pt.", _AN, 40, 50),
    ("doppler-token", "dp.st.", _ANUDD, 40, 80),
    ("doppler-token", "dp.sa.", _AN, 40, 50),
    ("doppler-token", "dp.ct.", _AN, 40, 50),
    ("doppler-token", "dp.scim.", _AN, 40, 50),
    ("doppler-token", "dp.audit.", _AN, 40, 50),
    ("grafana-token", "glc_", _B64, 32, 400),
    ("grafana-token", "glsa_", _ANU, 32, 50),
    ("grafana-token", "eyJrIjoi", _B64, 70, 400),
    ("vault-token", "hvs.", _ANUD, 24, 300),
    ("vault-token", "hvb.", _ANUD, 100, 400),
    ("vault-token", "hvr.", _ANUD, 24, 300),
    ("postman-key", "PMAK-", _HEX + "-", 59, 59),
    ("pulumi-token", "pul-", _HEX, 40, 40),
    ("sentry-token", "sntrys_", _B64U + "+/", 50, 400),
    ("sentry-token", "sntryu_", _HEX, 64, 64),
    ("perplexity-key", "pplx-", _AN, 40, 60),
    ("groq-key", "gsk_", _AN, 40, 64),
    ("replicate-token", "r8_", _AN, 30, 48),
    ("xai-key", "xai-", _AN, 60, 100),
    ("linear-key", "lin_api_", _AN, 40, 40),
    ("langsmith-key", "lsv2_pt_", _ANU, 32, 64),
    ("langsmith-key", "lsv2_sk_", _ANU, 32, 64),
    ("notion-token", "ntn_", _AN, 40, 50),
    ("notion-token", "secret_", _AN, 43, 43),
    ("heroku-key", "HRKU-AA", _ANUD, 58, 58),
    ("flyio-token", "fo1_", _ANUD, 43, 43),
    ("flyio-token", "fm1r_", _B64, 100, 2048),
    ("flyio-token", "fm1a_", _B64, 100, 2048),
    ("flyio-token", "fm2_", _B64, 100, 2048),
    ("1password-token", "ops_eyJ", _B64, 250, 4096),
    ("age-secret-key", "AGE-SECRET-KEY-1", _UD, 58, 58),
    ("square-token", "sq0atp-", _ANUD, 22, 60),
    ("square-token", "sq0csp-", _ANUD, 40, 60),
    ("square-token", "EAAA", _ANUD, 60, 64),
    ("facebook-token", "EAAB", _AN, 90, 400),
    ("facebook-token", "EAAC", _AN, 90, 400),
    ("facebook-token", "EAAG", _AN, 90, 400),
    ("facebook-token", "EAAM", _AN, 90, 400),
    ("twilio-key", "SK", _HEX, 32, 32),
    ("mailgun-key", "key-", _HEX, 32, 32),
    ("alibaba-key", "LTAI", _AN, 20, 24),
    ("artifactory-key", "AKCp", _AN, 60, 80),
    ("artifactory-key", "cmVmd", _AN, 59, 59),
    ("easypost-key", "EZAK", _AN, 54, 54),
    ("easypost-key", "EZTK", _AN, 54, 54),
    ("dynatrace-token", "dt0c01.", _ANUDD, 80, 100),
    ("planetscale-token", "pscale_tkn_", _ANUDD + "=", 32, 64),
    ("planetscale-token", "pscale_pw_", _ANUDD + "=", 32, 64),
    ("planetscale-token", "pscale_oauth_", _ANUDD + "=", 32, 64),
    ("prefect-key", "pnu_", _AN, 36, 36),
    ("readme-key", "rdme_", _AN, 70, 70),
    ("rubygems-key", "rubygems_", _HEX, 48, 48),
    ("scalingo-token", "tk-us-", _ANUD, 48, 48),
    ("sendinblue-key", "xkeysib-", _AN + "-", 70, 90),
    ("shippo-token", "shippo_live_", _HEX, 40, 40),
    ("shippo-token", "shippo_test_", _HEX, 40, 40),
    ("typeform-token", "tfp_", _ANUDD + "=", 50, 70),
    ("frameio-token", "fio-u-", _ANUD + "=", 64, 64),
    ("duffel-token", "duffel_live_", _ANUD + "=", 43, 43),
    ("duffel-token", "duffel_test_", _ANUD + "=", 43, 43),
    ("flutterwave-key", "FLWSECK_TEST-", _AN + "-", 12, 40),
    ("flutterwave-key", "FLWSECK-", _AN + "-", 12, 40),
    ("clojars-token", "CLOJARS_", _AN, 60, 60),
    ("adobe-secret", "p8e-", _AN, 32, 32),
    ("infracost-token", "ico-", _AN, 32, 32),
    ("newrelic-key", "NRAK-", _UD, 27, 27),
    ("newrelic-key", "NRII-", _ANUD, 32, 32),
    ("supabase-token", "sbp_", _HEX, 40, 40),
    ("supabase-token", "sb_secret_", _ANUD, 20, 80),
    ("netlify-token", "nfp_", _AN, 36, 40),
    ("buildkite-token", "bkua_", _HEX, 40, 40),
    ("circleci-token", "CCIPAT_", _ANU, 20, 80),
    ("render-key", "rnd_", _AN, 28, 40),
    ("tailscale-key", "tskey-", _ANUD, 20, 120),
    ("mapbox-token", "sk.eyJ", _ANUDD, 60, 400),
    ("sourcegraph-token", "sgp_", _ANU, 40, 80),
    ("contentful-token", "CFPAT-", _ANUD, 40, 50),
    ("figma-token", "figd_", _ANUD, 30, 60),
    ("cloudflare-ca-key", "v1.0-", _HEX + "-", 160, 180),
    ("crates-token", "cio", _AN, 32, 32),
    ("nuget-key", "oy2", _AN, 43, 43),
    ("braintree-token", "access_token$production$", _AN + "$", 40, 80),
    ("braintree-token", "access_token$sandbox$", _AN + "$", 40, 80),
    ("firecrawl-key", "fc-", _HEX, 32, 32),
    ("resend-key", "re_", _ANU, 30, 40),
    ("fireworks-key", "fw_", _AN, 20, 64),
    # A private key block, base64-encoded again (Kubernetes secrets, CI variables).
    ("private-key", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBQUklWQVRFIEtF", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtF", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZ", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxP", _B64, 60, 16384),
)
# Prefixes common in words or identifiers: their bodies must also look generated.
_RANDOM_BODY = frozenset(
    ("sk-", "cio", "oy2", "re_", "key-", "secret_", "SK", "EAAA", "dapi", "fc-", "ico-", "p8e-", "fw_")
)
_VENDOR_INDEX: dict[str, list[tuple[str, str, str, int, int]]] = {}
for _vendor in _VENDORS:
    if _vendor[1][0] not in "./":
        _VENDOR_INDEX.setdefault(_vendor[1][:2], []).append(_vendor)
_VENDOR_URLS = tuple(v for v in _VENDORS if v[1][0] in "./" or "/" in v[1])


def _vendor_spans(text: str) -> Iterator[Span]:
    """Vendor-prefixed tokens. Why not one `find` per prefix: 170 searches of a 16 KB
    prompt cost milliseconds; one pass over the text's long words costs a tenth of that."""
    for m in _regex(r"(?<![A-Za-z0-9_-])[A-Za-z0-9][A-Za-z0-9_.$-]{11}").finditer(text):
        start = m.start()
        for vendor in _VENDOR_INDEX.get(text[start : start + 2], ()):
            if text.startswith(vendor[1], start):
                yield from _vendor_token(text, start, vendor)
    for vendor in _VENDOR_URLS:
        start = text.find(vendor[1])
        while start >= 0:
            yield from _vendor_token(text, start, vendor)
            start = text.find(vendor[1], start + 1)


def _vendor_token(text: str, start: int, vendor: tuple[str, str, str, int, int]) -> Iterator[Span]:
    family, prefix, chars, shortest, longest = vendor
    body_start = start + len(prefix)
    body = _regex(f"[{chars}]*").match(text, body_start, body_start + longest + 1).group()  # type: ignore[union-attr]
    if shortest <= len(body) <= longest and _real_body(prefix, body):
        yield start, body_start + len(body), family


def _real_body(prefix: str, body: str) -> bool:
    if _is_placeholder(body) or (prefix[0] in "./" and "@" not in body and len(set(body)) < 8):
        return False
    if prefix in _RANDOM_BODY:
        longest = max(_regex(r"[-_.]").split(body), key=len)
        return len(longest) >= 16 and _classes(longest) >= 2 and not longest.isdigit()
    return True


def _pem_spans(text: str) -> Iterator[Span]:
    """Private key blocks, to their END line or, cut short, to the end of the text; an END
    line whose BEGIN was cut off takes the base64 lines above it."""
    covered = 0
    begin = _regex(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    end = _regex(r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    for m in begin.finditer(text):
        if m.start() < covered:
            continue
        close = end.search(text, m.end())
        covered = close.end() if close else len(text)
        yield m.start(), covered, "private-key"
    covered = 0
    for m in end.finditer(text):
        if m.start() < covered:
            continue
        window = text[max(0, m.start() - 16384) : m.start()]
        run = _regex(r"[A-Za-z0-9+/=\s\\]*").match(window[::-1])
        start = m.start() - (run.end() if run else 0)
        if begin.search(text, max(0, start - 80), m.start()) is None:
            yield start, m.end(), "private-key"
        covered = m.end()
    covered = 0
    if "Private-Lines:" in text:  # PuTTY: the private lines and their MAC
        for m in _regex(r"Private-Lines: *\d{1,4}").finditer(text):
            if m.start() < covered:
                continue
            mac = text.find("Private-MAC:", m.end())
            newline = text.find("\n", mac) if mac >= 0 else -1
            covered = len(text) if mac < 0 else (newline if newline >= 0 else len(text))
            yield m.end(), covered, "private-key"


def _basic_spans(text: str) -> Iterator[Span]:
    """`Basic <base64>` wherever it is, when it decodes to `user:password`."""
    import base64
    import binascii

    for m in _regex(r"(?<![\w-])(?i:basic)[ \t]{1,4}(?P<secret>[A-Za-z0-9+/]{8,1024}={0,2})(?![\w+/=])").finditer(text):
        encoded = m.group("secret")
        try:
            decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if ":" in decoded and decoded.isprintable():
            yield m.start("secret"), m.end("secret"), "authorization"


def _bearer_spans(text: str) -> Iterator[Span]:
    """`Bearer <token>` wherever it is, when the token looks generated."""
    for m in _regex(r"(?<![\w-])(?i:bearer)[ \t]{1,4}(?P<secret>[A-Za-z0-9._~+/=-]{8,4096})").finditer(text):
        token = m.group("secret").rstrip(".")
        if not _is_placeholder(token) and (_looks_random(token, 16) or token.count(".") == 2):
            yield m.start("secret"), m.start("secret") + len(token), "authorization"


def _url_spans(text: str) -> Iterator[Span]:
    """`scheme://user:password@host`: the password (up to the last `@` before the host)."""
    pattern = _regex(
        r"(?<![\w+.-])[A-Za-z][\w+.-]{0,30}://(?P<user>[^\s/:@'\"<>\[\]]{0,128}):"
        r"(?P<secret>[^\s/'\"<>\[\]@]{1,256}(?:@[^\s/'\"<>\[\]@]{1,256}){0,3})@(?=[\w\[%-])"
    )
    for m in pattern.finditer(text):
        secret = m.group("secret")
        if secret == m.group("user") or _keep_value(secret, quoted=True):
            continue
        yield m.start("secret"), m.end("secret"), "url-password"


# Rules: places -------------------------------------------------------------------------------

_KV = r"(?<![\w-])(?P<name>[A-Za-z_][\w-]{0,63})(?P<sep>\\?[\"'`]?\]?\??[ \t]{0,8}(?::=|=>|==|\?=|\+=|[:=])(?![=:/~]))"
_QUOTED = {
    '"': r'"(?P<v>(?:[^"\\\n]|\\.){0,1024})"',
    "'": r"'(?P<v>[^'\n]{0,1024})'",
    "`": r"`(?P<v>[^`\n]{0,1024})`",
    '\\"': r'\\"(?P<v>(?:[^"\\\n]|\\[^"\n]){0,1024})\\"',
    "\\'": r"\\'(?P<v>[^'\\\n]{0,1024})\\'",
    "\u201c": r"\u201c(?P<v>[^\u201d\n]{0,1024})\u201d",
}
_UNQUOTED = r"[^\s,;&|<>\"'`)\]}\\]{1,512}"
_KV_HINTS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "sig",
    "mnemonic",
    "cookie",
    "psk",
    "pw",
    "appid",
    "jwt",
)


def _read_value(text: str, pos: int) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value that starts at `pos` (after spaces, a `[` of a Go
    map, a string prefix like f"..."), or None."""
    m = _regex(r"[ \t]{0,8}(?:\[[ \t]{0,4})?(?:[fbrutFBRU]{1,2}(?=[\"'`]))?").match(text, pos)
    pos = m.end() if m else pos
    for opening in ('\\"', "\\'", '"', "'", "`", "\u201c"):
        if text.startswith(opening, pos):
            q = _regex(_QUOTED[opening]).match(text, pos)
            if q is None:
                return None
            return q.start("v"), q.end("v"), True
    u = _regex(_UNQUOTED).match(text, pos)
    if u is None:
        return None
    return u.start(), u.end(), False


def _line_start(text: str, pos: int) -> bool:
    """Whether only indentation, `- `, `export ` or `set ` stands before `pos` on its line."""
    line = text.rfind("\n", max(0, pos - 200), pos) + 1
    before = text[line:pos].strip()
    return before in ("", "-", "export", "set", "setx", "ENV", "env", "$env:", "- name:") or before.startswith("#")


def _kv_spans(text: str) -> Iterator[Span]:
    """Values under a key that names a secret, whatever the syntax."""
    reach = [0]  # where the last value read ends: keys inside it were judged with it
    for m in _regex(_KV).finditer(text):
        name = m.group("name")
        low = name.lower()
        start = m.start()
        if start < reach[0] or (not any(h in low for h in _KV_HINTS) and low not in ("name", "key")):
            continue
        if text[max(0, start - 2) : start] == "${":
            continue  # ${DB_PASSWORD:-default}: a reference with its default
        yield from _kv_value(text, m, name, start, reach)


def _context_words(text: str, start: int, name: str) -> list[str]:
    """The key's words, with the dotted path before it (`fs.s3a.secret.key`) or the word
    before it in prose (`API key:`)."""
    words = _words(name)
    if start and text[start - 1] == ".":
        m = _regex(r"[\w.-]{1,64}\Z").search(text, max(0, start - 64), start)
        if m:
            words = _words(m.group().replace(".", " ")) + words
    elif start >= 2 and text[start - 1] == " " and words and words[-1] in ("key", "token", "secret"):
        m = _regex(r"[A-Za-z]{2,12} \Z").search(text, max(0, start - 14), start)
        if m and m.group().strip().lower() in _KEY_SECRET | {"bearer", "refresh", "auth", "client"}:
            words = [m.group().strip().lower()] + words
    return words


def _kv_value(text: str, m: re.Match[str], name: str, start: int, reach: list[int]) -> Iterator[Span]:
    sep = m.group("sep")
    query = start > 0 and text[start - 1] in "?&"
    words = _context_words(text, start, name)
    low = name.lower()
    if low in ("name", "key"):
        yield from _named_value(text, m.end())
        return
    if words and words[-1] == "cookie":
        reach[0] = _regex(r"[^\n\"'`]{0,4096}").match(text, m.end()).end()  # type: ignore[union-attr]
        yield from _cookie_spans(text, m.end())
        return
    kind = _key_kind(words, query)
    if kind is None:
        return
    if ":" in sep and _regex(r"[ \t]{0,8}[|>][-+]?[ \t]*\n").match(text, m.end()):
        block = _yaml_block(text, start, m.end())  # password: |
        if block and not _keep_value(text[block[0] : block[1]], True, words):
            reach[0] = block[1]
            yield block[0], block[1], "assignment"
        return
    value = _read_value(text, m.end())
    if value is None:
        return
    v_start, v_end, quoted = value
    reach[0] = v_end
    if "==" in sep and not quoted:
        return
    family = _kv_family(text, start, name, words, sep, kind)
    if kind == "header":
        yield from _credential(text, v_start, v_end, quoted, family)
        return
    if not quoted and "=" in sep and family == "connection-string":
        stop = text.find(";", v_start, v_start + 256)
        newline = text.find("\n", v_start, v_start + 256)
        if stop > 0 and (newline < 0 or stop < newline) and "=" not in text[v_end:stop]:
            v_end = stop  # Password=two words;
    elif not quoted and (":" in sep or sep.endswith((" ", "\t"))) and _line_start(text, start) and _config_name(name):
        v_end = _line_end_value(text, v_start)  # YAML `db_password: two words`, INI `pass = a b`
    secret = text[v_start:v_end]
    if not quoted:
        secret = secret.rstrip(".,:!?")
        v_end = v_start + len(secret)
        if _code_context(text, start, m.end(), v_end, secret, sep):
            return
        follows = _regex(r"[ \t]+[A-Za-z]").match(text, v_end)
        if follows and secret.isalpha() and not _line_start(text, start):
            return  # prose: "token: expired again"
        if secret.isalpha() and secret.lower() in _PROSE_STOPWORDS:
            return
        if " " in secret and any(w in _FUNCTION_WORDS for w in secret.lower().split()):
            return  # password: see the vault
    if _keep_value(secret, quoted, words):
        return
    if kind == "weak" and not (_looks_random(secret, 8) or _user_pass(secret)):
        return
    yield v_start, v_end, family


def _kv_family(text: str, start: int, name: str, words: list[str], sep: str, kind: str) -> str:
    if kind == "header":
        return "authorization"
    if "aws" in words and "secret" in words:
        return "aws-secret-key"
    if "-" in name and words[0] in ("x", "api", "private", "auth", "access", "ocp", "dd", "circle", "job"):
        return "api-key-header"
    before = text[max(0, start - 2) : start].strip()
    if sep.strip() == "=" and (before.endswith(";") or "".join(words) in ("accountkey", "sharedaccesskey", "pwd")):
        return "connection-string"
    if (
        sep.strip() == "="
        and _regex(r"[^\n;=]{0,200};").match(text, start + len(name))
        and "user" in text[max(0, start - 200) : start].lower().replace(" ", "")
    ):
        return "connection-string"
    return "assignment"


def _yaml_block(text: str, key_start: int, pos: int) -> tuple[int, int] | None:
    """The lines of a YAML block scalar (`password: |`) that follow, indented deeper than its key."""
    line = text.rfind("\n", max(0, key_start - 200), key_start) + 1
    indent = key_start - line if text[line:key_start].strip() in ("", "-") else 0
    newline = text.find("\n", pos, pos + 16)
    if newline < 0:
        return None
    first = _regex(r"(?:[ \t]*\n){0,8}(?P<ind>[ \t]+)(?=\S)").match(text, newline + 1)
    if first is None or len(first.group("ind")) <= indent:
        return None
    start = end = first.end()
    for row in _regex(r"(?P<ind>[ \t]*)(?P<body>[^\n]*)(?:\n|$)").finditer(
        text, first.start("ind"), first.start("ind") + 8192
    ):
        if row.group("body") and len(row.group("ind")) <= indent:
            break
        if row.group("body"):
            end = row.start("body") + len(row.group("body").rstrip())
        if not row.group():
            break
    return (start, end) if end > start else None


def _config_name(name: str) -> bool:
    """A key spelled as in a config file (`db_password`, `smtp.pass`, `apiKey`), not a word of prose."""
    return any(c in name for c in "_.-") or name.islower() or (name[:1].islower() and not name.isalpha())


def _line_end_value(text: str, start: int) -> int:
    """The end of an unquoted config value that runs to the end of its line (a trailing
    ` #` or ` ;` comment left out)."""
    newline = text.find("\n", start, start + 1024)
    end = newline if newline >= 0 else min(len(text), start + 1024)
    line = text[start:end]
    for comment in (" #", " ;", " //"):
        cut = line.find(comment)
        if cut >= 0:
            line = line[:cut]
    return start + len(line.rstrip())


def _code_context(text: str, key_start: int, sep_end: int, v_end: int, value: str, sep: str) -> bool:
    """An unquoted identifier handed on in code (`login(user, password=pw)`, `pw = password;`)."""
    if not _regex(r"[A-Za-z_]\w*").fullmatch(value):
        return False
    after = text[v_end : v_end + 1]
    if after in (")", ","):
        return True
    return after == ";" and (sep.startswith((" ", "\t")) or sep.endswith((" ", "\t")))


def _user_pass(value: str) -> bool:
    user, sep, password = value.partition(":")
    return bool(sep and user and len(password) >= 3 and not _is_reference(password))


def _credential(text: str, start: int, end: int, quoted: bool, family: str) -> Iterator[Span]:
    """The credential in an Authorization value: the token after its scheme (`Bearer x`),
    or everything after a scheme with parameters (`Digest ...`, `AWS4-HMAC-SHA256 ...`)."""
    scheme = _regex(r"[ \t]*([A-Za-z][\w-]{0,30})[ \t]+(?=\S)").match(text, start, end if quoted else start + 64)
    if scheme and not _looks_random(scheme.group(1)):
        rest_start = scheme.end()
        if scheme.group(1).lower() in _SCHEME_TOKEN_ONLY:
            token = _regex(r"\{[^}\n]{0,200}\}?|[^\s,;'\"\]}]{1,4096}").match(
                text, rest_start, end if quoted else len(text)
            )
            rest_end = token.end() if token else rest_start
        else:  # parameters to the end of the value (or of the line)
            stop = end if quoted else _regex(r"[^\n]{0,4096}").match(text, rest_start).end()  # type: ignore[union-attr]
            rest_end = rest_start + len(text[rest_start:stop].rstrip().rstrip("\"';"))
        secret = text[rest_start:rest_end]
        if len(secret) >= 4 and not _keep_value(secret, True):
            yield rest_start, rest_end, family
        return
    token = _regex(r"[ \t]*(?P<t>[^\s,;'\"\]}]{1,4096})").match(text, start, end if quoted else len(text))
    if token and token.group("t").lower() in _SCHEME_TOKEN_ONLY | {"digest", "hmac", "oauth"}:
        # "Bearer " + token: the scheme alone in quotes, the credential concatenated after it
        joined = _regex(r"[ \t]*[\"'`][ \t]*\+[ \t]*(?P<q>[\"'`])(?P<v>[^\"'`\n]{6,4096})(?P=q)").match(text, end)
        if joined and not _keep_value(joined.group("v"), True):
            yield joined.start("v"), joined.end("v"), family
    elif token and len(token.group("t")) >= 6 and not _keep_value(token.group("t"), True):
        yield token.start("t"), token.end("t"), family


def _named_value(text: str, pos: int) -> Iterator[Span]:
    """`name: DB_PASSWORD` / `key="Authorization"` followed by `value: ...`: Kubernetes env
    entries, Postman and Envoy headers, `<add key="ApiKey" value="..."/>`, `<entry key="password">...`."""
    value = _read_value(text, pos)
    if value is None:
        return
    n_start, n_end, _ = value
    words = _words(text[n_start:n_end])
    kind = _key_kind(words)
    if kind is None or n_end - n_start > 64:
        return
    family = "authorization" if kind == "header" else "assignment"
    after = n_end + 1 if text[n_end : n_end + 1] in "\"'`" else n_end
    element = _regex(r"[^<>\n]{0,100}?>(?P<v>[^<\n]{1,512})<").match(text, after)
    if element:
        v_start, v_end = element.span("v")
        if kind == "header":
            yield from _credential(text, v_start, v_end, True, family)
        elif not _keep_value(element.group("v"), True, words):
            yield v_start, v_end, family
        return
    following = _regex(r"(?<![\w-])value\\?[\"']?[ \t]{0,8}[:=](?![=:])").search(text, after, after + 160)
    if following is None or text.count("\n", after, following.start()) > 2:
        return
    value = _read_value(text, following.end())
    if value is None:
        return
    v_start, v_end, quoted = value
    if kind == "header":
        yield from _credential(text, v_start, v_end, quoted, family)
    elif not _keep_value(text[v_start:v_end], quoted, words) and (
        kind != "weak" or _looks_random(text[v_start:v_end], 8)
    ):
        yield v_start, v_end, family


_COOKIE_NAMES = ("sess", "sid", "token", "auth", "jwt", "remember", "login", "secret", "_key", "credential")


def _cookie_spans(text: str, pos: int) -> Iterator[Span]:
    """Session cookies in a `Cookie:` / `Set-Cookie:` value (`curl -b` too)."""
    end = _regex(r"[^\n\"'`]{0,4096}").match(text, pos).end()  # type: ignore[union-attr]
    for m in _regex(r"(?P<n>[\w.-]{1,64})=(?P<v>[^;\s,]{1,4096})").finditer(text, pos, end):
        low = m.group("n").lower()
        if any(w in low for w in _COOKIE_NAMES) and "csrf" not in low and "xsrf" not in low:
            v = m.group("v")
            if not _keep_value(v, True) and len(v) >= 8:
                yield m.start("v"), m.end("v"), "cookie"


def _directive_spans(text: str) -> Iterator[Span]:
    """Header and environment directives with no `:` or `=`: nginx `proxy_set_header
    Authorization "Bearer x";`, Apache `RequestHeader set` / `SetEnv`, Caddy `header_up`,
    HAProxy `http-request set-header`, Dockerfile `ENV NAME value`, `fastcgi_param`."""
    pattern = _regex(
        r"(?i)(?<![\w-])(?:proxy_set_header|grpc_set_header|add_header|more_set_headers|more_set_input_headers"
        r"|requestheader|header_up|header_down|header|set-header|add-header|setenv|env|fastcgi_param|uwsgi_param"
        r"|scgi_param|define|setx|set[ \t]{1,4}-[A-Za-z]{1,4})[ \t]{1,8}"
        r"(?:(?:set|append|add|merge|setifempty|always|onsuccess)[ \t]{1,8}){0,2}"
        r"\\?[\"']?(?P<name>[\w.-]{1,64})\\?[\"']?[ \t]{1,8}(?=\S)"
    )
    reach = 0
    for m in pattern.finditer(text):
        if m.start() < reach:
            continue
        words = _words(m.group("name"))
        kind = _key_kind(words)
        if kind is None:
            continue
        value = _read_value(text, m.end())
        if value is None:
            continue
        start, end, quoted = value
        reach = end
        if kind == "header":
            if not quoted:
                end = reach = _regex(r"[^\n;]{0,2048}").match(text, start).end()  # type: ignore[union-attr]
            yield from _credential(text, start, end, True, "authorization")
        elif not _keep_value(text[start:end], quoted, words) and (kind != "weak" or _looks_random(text[start:end], 8)):
            yield start, end, "assignment"


def _xml_spans(text: str) -> Iterator[Span]:
    """`<password>...</password>` (its text or a CDATA section), `<name>db.password</name>
    <value>...</value>`, and plists' `<key>Password</key><string>...</string>`."""
    element = _regex(
        r"<(?P<tag>[A-Za-z_][\w:.-]{0,63})(?:[ \t][^<>\n]{0,256})?>"
        r"(?:<!\[CDATA\[(?P<cdata>[^\]\n]{1,1024})\]\]>|(?P<text>[^<\n]{1,1024}))</(?P=tag)[ \t]*>"
    )
    for m in element.finditer(text):
        group = "text" if m.group("text") is not None else "cdata"
        words = _words(m.group("tag").rpartition(":")[2])
        kind = _key_kind(words)
        value = m.group(group).strip()
        if kind and not _keep_value(value, True, words) and (kind != "weak" or _looks_random(value, 8)):
            start = m.start(group) + len(m.group(group)) - len(m.group(group).lstrip())
            yield start, start + len(value), "assignment"
    pair = _regex(
        r"<(?P<t1>name|key)>(?P<n>[^<\n]{1,128})</(?P=t1)>\s{0,64}<(?P<t2>value|string)>(?P<v>[^<\n]{1,1024})</(?P=t2)>"
    )
    for m in pair.finditer(text):
        words = _words(m.group("n"))
        kind = _key_kind(words)
        value = m.group("v").strip()
        if kind and not _keep_value(value, True, words) and (kind != "weak" or _looks_random(value, 8)):
            start = m.start("v") + len(m.group("v")) - len(m.group("v").lstrip())
            yield start, start + len(value), "assignment"


_PAIR_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "login(")


def _pair_spans(text: str) -> Iterator[Span]:
    """A secret's name and its value as two quoted arguments: `os.Setenv("API_KEY", "x")`,
    `setRequestHeader("Authorization", "Bearer x")`, `auth=("user", "x")`, `.login(user, "x")`."""
    pair = _regex(
        r"(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{0,63})(?P=q)[ \t]{0,4}(?:,|=>)[ \t]{0,4}[fb]?"
        r"(?P<q2>[\"'`])(?P<v>[^\"'`\n]{1,1024})(?P=q2)"
    )
    for m in pair.finditer(text):
        words = _words(m.group("name"))
        kind = _key_kind(words)
        if kind is None:
            continue
        start, end = m.span("v")
        value = m.group("v")
        if kind == "header":
            yield from _credential(text, start, end, True, "authorization")
        elif not _keep_value(value, True, words) and (
            _looks_random(value, 8) or (kind == "strong" and _passwordish(value))
        ):
            yield start, end, "assignment"
    login = _regex(
        r"(?i)(?:(?<![\w-])auth[ \t]{0,4}=[ \t]{0,4}\(|basicauth\(|\.login\(|set_?(?:password|auth|credentials)\()"
        r"[ \t]{0,4}"
        r"(?:[\"'][^\"'\n]{0,128}[\"']|[\w.]{1,64})[ \t]{0,4},[ \t]{0,4}(?P<q>[\"'])(?P<v>[^\"'\n]{1,512})(?P=q)"
    )
    for m in login.finditer(text):
        value = m.group("v")
        if not _keep_value(value, True) and (_passwordish(value) or _looks_random(value, 8)):
            yield m.start("v"), m.end("v"), "assignment"


def _table_spans(text: str) -> Iterator[Span]:
    """A Markdown table row naming a secret, then its value: `| DB_PASSWORD | hunter2 |`."""
    row = _regex(
        r"\|[ \t]{0,8}`?(?P<name>[A-Za-z_][\w.-]{0,63})`?[ \t]{0,8}\|[ \t]{0,8}`?(?P<v>[^|`\s]{3,256})`?[ \t]{0,8}\|"
    )
    for m in row.finditer(text):
        words = _words(m.group("name"))
        kind = _key_kind(words)
        value = m.group("v")
        if kind and not _keep_value(value, True, words) and (_looks_random(value, 8) or _passwordish(value)):
            yield m.start("v"), m.end("v"), "assignment"


_MISC_HINTS = (
    "::add-mask::",
    ":5432:",
    ":6432:",
    ":5433:",
    ":*:",
    "connect ",
    "> auth ",
    ">auth ",
    "requirepass",
    "masterauth",
)


def _misc_spans(text: str) -> Iterator[Span]:
    """GitHub Actions' `::add-mask::X`, `.pgpass` lines, SQL*Plus `CONNECT user/pass@db`."""
    pattern = _regex(
        r"::add-mask::(?P<mask>[^\s]{1,512})"
        r"|(?m:^[\w.*-]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,63}:[^:\s]{1,63}:(?P<pgpass>[^\s]{1,256})$)"
        r"|(?i:(?<![\w-])conn(?:ect)?[ \t]{1,8}[\w$#]{1,30}/(?P<conn>[^@\s/]{1,128})(?=@|\s|$))"
        r"|(?i:\d>[ \t]{0,4}auth[ \t]{1,4}(?:[^\s]{1,64}[ \t]{1,4})?(?P<redis>[^\s]{1,256}))"
        r"|(?i:config[ \t]{1,4}set[ \t]{1,4}(?:requirepass|masterauth)[ \t]{1,4}(?P<config>[^\s]{1,256}))"
    )
    for m in pattern.finditer(text):
        group = m.lastgroup or ""
        value = m.group(group)
        if not _keep_value(value, True):
            yield m.start(group), m.end(group), "cli-password" if group != "pgpass" else "assignment"


# Command lines ---------------------------------------------------------------------------------

_LONG_FLAG = (
    r"(?<![\w-])--?(?P<flag>[A-Za-z][\w-]{1,47})(?:=|[ \t]{1,8})"
    r"(?P<v>\"(?:[^\"\\\n]|\\.){0,512}\"|'[^'\n]{0,512}'|[^\s\"'|;&<>]{1,512})"
)
_FLAG_HINTS = (
    "-pass",
    "-token",
    "-secret",
    "-pwd",
    "-auth",
    "-cred",
    "-user",
    "-bearer",
    "-api",
    "-storepass",
    "-keypass",
)
_FLAG_NOT = ("no", "ask", "prompt", "use", "with", "skip", "allow", "require", "show", "print", "read", "from")


def _flag_spans(text: str) -> Iterator[Span]:
    """`--password X`, `--token=X`, `-storepass X`, `--auth user:pass`: long flags whose name
    ends with a secret's name (`--password-file`, `--password-stdin` and `--max-tokens` do not)."""
    for m in _regex(_LONG_FLAG).finditer(text):
        words = m.group("flag").lower().replace("_", "-").split("-")
        single_dash = not m.group().startswith("--")
        if words[0] in _FLAG_NOT or (single_dash and len(words[0]) < 3):
            continue
        last = words[-1]
        joined = "".join(words[-2:])
        if not (
            last in ("password", "passwd", "pass", "pwd", "token", "secret", "passphrase", "storepass", "keypass")
            or last in ("creds", "credentials", "auth", "user", "bearer")
            or joined in ("apikey", "secretkey", "secretstring", "clientsecret", "authtoken", "accesstoken")
        ):
            continue
        value = m.group("v")
        start = m.start("v")
        if value[:1] in "\"'":
            value, start = value[1:-1], start + 1
        if value.startswith("-") and len(value) > 1:
            continue
        if last in ("creds", "credentials", "auth", "user"):
            user, sep, password = value.partition(":")
            if not sep or not user or _keep_value(password, True):
                continue
            start, value = start + len(user) + 1, password
        elif last == "bearer" and m.group("flag").lower() != "oauth2-bearer":
            continue
        if words[-2:] == ["secret"] and _regex(r"(?:id|src|type|env|source|target)=").match(value):
            continue  # docker build --secret id=npmrc,src=...
        if not _keep_value(value, True, words):
            yield start, start + len(value), "cli-password"


# (commands, a word that must come first, flag, how the value is given): `next` (-p X),
# `attached` (-pX), `both`, `userpass` (-u user:pass), `user%pass`, `user,pass`, `pass:` (openssl).
_CLI_FLAGS: tuple[tuple[frozenset[str], str | None, str, str], ...] = (
    (
        frozenset("docker podman nerdctl buildah helm oras skopeo crane oc regctl finch cf".split()),
        "login",
        "-p",
        "both",
    ),
    (frozenset(["sshpass"]), None, "-p", "both"),
    (
        frozenset("mongo mongosh mongodump mongorestore mongoexport mongoimport mongostat mongotop".split()),
        None,
        "-p",
        "next",
    ),
    (
        frozenset(
            "mysql mysqldump mysqladmin mysqlimport mysqlshow mysqlcheck mysqlpump mysqlsh mysqlbinlog mariadb "
            "mariadb-dump mariadb-admin mariadb-import".split()
        ),
        None,
        "-p",
        "attached",
    ),
    (frozenset("redis-cli valkey-cli keydb-cli".split()), None, "-a", "both"),
    (frozenset("sqlcmd bcp osql isql".split()), None, "-P", "both"),
    (frozenset("zip unzip zipcloak funzip".split()), None, "-P", "both"),
    (frozenset("7z 7za 7zr 7zz rar unrar".split()), None, "-p", "attached"),
    (frozenset(["twine"]), None, "-p", "next"),
    (
        frozenset(
            "ldapsearch ldapmodify ldapadd ldapdelete ldapwhoami ldappasswd ldapcompare ldapmodrdn ldapexop".split()
        ),
        None,
        "-w",
        "both",
    ),
    (frozenset(["ssh-keygen"]), None, "-N", "next"),
    (frozenset(["ssh-keygen"]), None, "-P", "next"),
    (frozenset(["az"]), None, "-p", "next"),
    (frozenset(["curl"]), None, "-u", "userpass"),
    (frozenset(["curl"]), None, "-U", "userpass"),
    (frozenset(["curl"]), None, "-b", "cookie"),
    (frozenset("http https xh xhs".split()), None, "-a", "userpass"),
    (frozenset(["lftp"]), None, "-u", "user,pass"),
    (frozenset("smbclient rpcclient smbmap smbget".split()), None, "-U", "user%pass"),
    (frozenset(["keytool"]), None, "-storepass", "next"),
    (frozenset(["keytool"]), None, "-keypass", "next"),
    (frozenset(["keytool"]), None, "-srcstorepass", "next"),
    (frozenset(["keytool"]), None, "-deststorepass", "next"),
    (frozenset(["openssl"]), None, "-passin", "pass:"),
    (frozenset(["openssl"]), None, "-passout", "pass:"),
    (frozenset(["openssl"]), None, "-pass", "pass:"),
    (frozenset(["openssl"]), None, "-k", "next"),
    (frozenset("ncftp ncftpput ncftpget".split()), None, "-p", "next"),
    (frozenset("psexec psexec.exe paexec".split()), None, "-p", "next"),
    (frozenset("mosquitto_pub mosquitto_sub".split()), None, "-P", "next"),
    (frozenset(["gh"]), "secret", "-b", "next"),
    (frozenset(["gh"]), "secret", "--body", "next"),
    (frozenset(["az"]), "secret", "--value", "next"),
    (frozenset(["influx"]), None, "-t", "next"),
    (frozenset(["rdesktop"]), None, "-p", "next"),
    (frozenset(["ConvertTo-SecureString"]), None, "-String", "next"),
)
_POSITIONAL = frozenset(
    "vault aws htpasswd rabbitmqctl npm yarn pnpm poetry composer cargo ngrok net xfreerdp wlfreerdp sdl-freerdp "
    "sqlplus rman expdp impdp sqlldr dgmgrl ConvertTo-SecureString".split()
)
_CLI_COMMANDS = frozenset(c for commands, _, _, _ in _CLI_FLAGS for c in commands) | _POSITIONAL
_PIPE_END = frozenset(("|", "||", "&&", ";", "&"))


def _cli_spans(text: str) -> Iterator[Span]:
    """Credentials given as short flags or positionals of the commands that take them
    (`docker login -p X`, `mysql -pX`, `curl -u me:X`, `vault login X`): each logical line
    that names one is split into words once and read left to right."""
    starts = []
    for command in _CLI_COMMANDS:
        pos = text.find(command)
        while pos >= 0:
            after = pos + len(command)
            after += 4 if text.startswith(".exe", after) else 0
            if (pos == 0 or text[pos - 1] not in _NAME_CHARS) and text[after : after + 1] in (
                " ",
                "\t",
                '"',
                "'",
                ",",
                "]",
            ):
                starts.append(pos)
            pos = text.find(command, pos + 1)
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        end = start
        while True:  # a logical line: continuations with `\` (or PowerShell's backtick)
            newline = text.find("\n", end, start + 4096)
            if newline < 0:
                end = min(len(text), start + 4096)
                break
            end = newline + 1
            last = newline - 1 if newline and text[newline - 1] == "\r" else newline
            if last <= 0 or text[last - 1] not in "\\`":
                break
        done = end
        yield from _cli_line(text, start, end)


def _cli_line(text: str, start: int, end: int) -> Iterator[Span]:
    tokens = [
        (t.start(), t.end(), t.group())
        for t in _regex(r"(?:\"(?:[^\"\\\n]|\\.){0,512}\"|'[^'\n]{0,512}'|[^\s\"',\[\]()])+").finditer(text, start, end)
    ]
    cmd: str | None = None
    seen: list[str] = []
    i = 0
    while i < len(tokens):
        t_start, t_end, token = tokens[i]
        bare = token.strip("\"'")
        base = bare.rsplit("/", 1)[-1].removesuffix(".exe")
        i += 1
        if base in _CLI_COMMANDS:
            cmd, seen = base, []
            continue
        if token in _PIPE_END or token.endswith(";"):
            cmd = None
            continue
        if cmd is None:
            continue
        if not bare.startswith("-") or (cmd == "net" and seen[:1] == ["use"]):
            seen.append(bare)
            yield from _positional(cmd, seen, t_start, t_end, token)
            continue
        for commands, first, flag, how in _CLI_FLAGS:
            if cmd not in commands or (first and first not in seen):
                continue
            value: tuple[int, int, str] | None = None
            if bare == flag and how != "attached" and i < len(tokens) and not tokens[i][2].startswith("-"):
                value = tokens[i]
                i += 1
            elif (
                how in ("attached", "both", "userpass")
                and bare.startswith(flag)
                and len(bare) > len(flag)
                and (flag != "-P" or bare.startswith("-P="))
            ):
                offset = (
                    t_start
                    + (1 if token[0] in "\"'" else 0)
                    + len(flag)
                    + (1 if bare[len(flag) : len(flag) + 1] == "=" else 0)
                )
                value = (offset, t_end - (1 if token[-1:] in "\"'" and token[0] in "\"'" else 0), text[offset:t_end])
            if value is not None:
                yield from _flag_value(text, value, how)
                break


def _flag_value(text: str, value: tuple[int, int, str], how: str) -> Iterator[Span]:
    v_start, v_end, _ = value
    if text[v_start : v_start + 1] in "\"'" and v_end - v_start >= 2:
        v_start, v_end = v_start + 1, v_end - 1
    secret = text[v_start:v_end]
    separators = {"userpass": ":", "user%pass": "%", "user,pass": ",", "pass:": ":"}
    if how == "cookie":
        yield from _cookie_spans(text, v_start)
        return
    if how in separators:
        head, sep, tail = secret.partition(separators[how])
        if not sep or (how == "pass:" and head != "pass"):
            return
        v_start, secret = v_start + len(head) + 1, tail
    if secret and not _keep_value(secret, True):
        yield v_start, v_start + len(secret), "cli-password"


def _positional(cmd: str, seen: list[str], start: int, end: int, token: str) -> Iterator[Span]:
    """Positional credentials: `vault login TOKEN`, `aws configure set aws_secret_access_key X`,
    `htpasswd -b FILE USER PASS`, `rabbitmqctl add_user USER PASS`."""
    value = token.strip("\"'")
    if token[:1] in "\"'":
        start, end = start + 1, end - 1
    hit = False
    n = len(seen)
    if cmd in ("vault", "cargo") and seen[:1] == ["login"] and n == 2 and "=" not in value:
        hit = _looks_random(value, 8) or value.startswith(("s.", "hvs."))
    elif cmd == "aws" and seen[:2] == ["configure", "set"] and n == 4:
        hit = _key_kind(_words(seen[2])) == "strong"
    elif cmd in ("npm", "yarn", "pnpm") and seen[:2] == ["config", "set"] and n == 4:
        hit = _key_kind(_words(seen[2].rpartition(":")[2])) == "strong"
    elif cmd in ("poetry", "composer") and seen[:1] == ["config"] and n == 4 and seen[1].startswith("http-basic."):
        hit = True
    elif cmd == "ngrok" and n >= 2 and seen[-2] in ("add-authtoken", "authtoken"):
        hit = _looks_random(value, 16)
    elif cmd == "htpasswd" and n in (2, 3):
        hit = n == 3
    elif cmd == "rabbitmqctl" and seen[:1] in (["add_user"], ["change_password"]) and n == 3:
        hit = True
    elif cmd == "net" and seen[:1] == ["use"] and n >= 2:
        hit = not value.startswith(("\\\\", "/")) and not value.endswith(":") and value != "*"
        hit = hit and (_passwordish(value) or _looks_random(value, 8))
    elif cmd in ("xfreerdp", "wlfreerdp", "sdl-freerdp") and value.startswith(("/p:", "-p:")):
        start, value = start + 3, value[3:]
        hit = True
    elif cmd == "ConvertTo-SecureString" and n == 1:
        hit = True  # `ConvertTo-SecureString "X" -AsPlainText`: the password, in the clear
    elif cmd in ("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl"):
        user, slash, rest = value.partition("/")
        if slash and user and not user.startswith("@"):
            password = rest.partition("@")[0]
            start, value = start + len(user) + 1, password
            hit = bool(password)
    if hit and not _keep_value(value, True):
        yield start, start + len(value), "cli-password"


def _echo_spans(text: str) -> Iterator[Span]:
    """`echo SECRET | docker login --password-stdin`, `| sudo -S`, `| chpasswd`."""
    pattern = _regex(
        r"(?<![\w-])(?:echo|printf)[ \t]{1,8}(?:-[neE]{1,3}[ \t]{1,8})?(?:(?:\"%s(?:\\n)?\"|'%s(?:\\n)?')[ \t]{1,8})?"
        r"(?P<v>\"(?:[^\"\\\n]|\\.){1,256}\"|'[^'\n]{1,256}'|[^\s|;&'\"]{1,256})[ \t]*\|[ \t]*(?P<rest>[^\n|;&]{0,200})"
    )
    for m in pattern.finditer(text):
        rest = m.group("rest").lower()
        if not ("stdin" in rest or "sudo -s" in rest or "chpasswd" in rest or "secret create" in rest):
            continue
        value, start = m.group("v"), m.start("v")
        if value[:1] in "\"'":
            value, start = value[1:-1], start + 1
        if "chpasswd" in rest and ":" in value:
            head = value.partition(":")[0]
            value, start = value[len(head) + 1 :], start + len(head) + 1
        if not _keep_value(value, True):
            yield start, start + len(value), "cli-password"


# Prose ---------------------------------------------------------------------------------------

_PROSE = (
    r"(?i)(?<![\w-])(?P<kw>pass(?:word|phrase|code)s?|pwd|pw|pin|token|secret|api[ _-]?key|access[ _-]?key|"
    r"secret[ _-]?key|private[ _-]?key|key|credentials?|creds|login)(?P<gap>(?:[ \t]{1,4}[^\s]{1,40}){0,6}?)[ \t]{0,4}"
    r"(?:[ \t](?:is|was|are|were|will be|should be|would be|has been|had been|became|becomes|remains|to|=)|:|=)"
    r"(?:[ \t]{1,4}(?:now|still|currently|just|set to|changed to|reset to|updated to))?[ \t]{0,4}:?[ \t]{0,4}"
    r"(?P<v>[\"'`\u201c\u2018][^\"'`\u201d\u2019\n]{1,200}[\"'`\u201d\u2019]|[^\s]{1,200})"
)


_PROSE_HINTS = (
    "password",
    "passphrase",
    "passcode",
    "pwd",
    "pw ",
    "pw:",
    "pin ",
    "token",
    "secret",
    "key",
    "cred",
    "identified",
    "login",
)


def _prose_spans(text: str) -> Iterator[Span]:
    """ "the password is hunter2!", "my API key for staging: ...", "PIN is 4821"."""
    for m in _regex(_PROSE).finditer(text):
        kw = m.group("kw").lower()
        gap = [w.strip(",.:").lower() for w in m.group("gap").split()]
        value, start = m.group("v"), m.start("v")
        quoted = value[:1] in "\"'`\u201c\u2018"
        if quoted:
            value, start = value[1:-1], start + 1
        else:
            value = value.rstrip(".,;:!?)")
        generated = _generated(value)
        if any(w in _NOT_SECRET_SUFFIXES or w in _NOT_SECRET_QUALIFIERS for w in gap) and not generated:
            continue  # "the token limit is 4096", but "the key for the staging bucket is Xk9..."
        if kw == "key":
            # A key of any kind ("the key is to restart") only when its value has the look of
            # a generated credential ("Unseal Key 1: ...", rclone's `key = K0...`), and not
            # one a word before it says is no secret ("primary key", "partition key").
            before = _regex(r"([A-Za-z]{1,20})[ \t_-]\Z").search(text, max(0, m.start() - 21), m.start())
            if before and before.group(1).lower() in _NOT_SECRET_QUALIFIERS:
                continue
            if generated and not _keep_value(value, quoted):
                yield start, start + len(value), "prose-secret"
            continue
        if kw.startswith(("cred", "login")):
            # "creds are deploy / Xy9..." or "credentials: deploy:Xy9..."
            other = _regex(r"[ \t]{0,4}/[ \t]{0,4}(?P<p>[^\s]{3,200})").match(text, m.end("v"))
            if other:
                value, start, quoted = other.group("p").rstrip(".,;!?)"), other.start("p"), False
            elif ":" in value and not quoted:
                head = value.partition(":")[0]
                value, start = value[len(head) + 1 :], start + len(head) + 1
            else:
                continue
        if kw.startswith("pin"):
            ok = value.isdigit() and 4 <= len(value) <= 8  # a PIN is all digits, however short
        elif not value or _keep_value(value, quoted):
            continue
        elif kw.startswith(("pass", "pw", "cred", "login")):
            ok = quoted or _passwordish(value)
        else:
            ok = (quoted and len(value) >= 8) or _looks_random(value, 12)
        if ok:
            yield start, start + len(value), "prose-secret"
    # "use password X", "with password 'X'", SQL's IDENTIFIED BY 'X' and PASSWORD 'X'.
    bare = _regex(
        r"(?i)(?<![\w-])(?:pass(?:word|phrase)|pwd|identified(?:[ \t]{1,4}with[ \t]{1,4}\w{1,40})?[ \t]{1,4}by)"
        r"[ \t]{1,4}"
        r"(?P<v>'[^'\n]{1,200}'|\"[^\"\n]{1,200}\"|[^\s'\"]{6,200})"
    )
    yield from _bare_spans(text, bare)
    # "`Xy9...` is the new password", "use Xy9... as the password".
    reverse = _regex(
        r"(?i)(?<![^\s(\"'`])(?P<v>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]{4,200})[ \t]{1,4}"
        r"(?:is|as|was|for)[ \t]{1,4}(?:(?:the|my|our|your|a|new|current|old|temporary|temp|admin|root|wifi|db|"
        r"database)[ \t]{1,4}){0,3}(?:password|passphrase|passcode|pin)(?![\w-])"
    )
    for m in reverse.finditer(text):
        value, start = m.group("v"), m.start("v")
        quoted = value[:1] in "\"'`"
        if quoted:
            value, start = value[1:-1], start + 1
        if value and not _keep_value(value, quoted) and (quoted or _passwordish(value)):
            yield start, start + len(value), "prose-secret"


def _bare_spans(text: str, bare: re.Pattern[str]) -> Iterator[Span]:
    for m in bare.finditer(text):
        value, start = m.group("v"), m.start("v")
        quoted = value[:1] in "\"'"
        if quoted:
            value, start = value[1:-1], start + 1
        else:
            value = value.rstrip(".,;:!?)")
        if value and not _keep_value(value, quoted) and (quoted or (_passwordish(value) and not value.isalpha())):
            yield start, start + len(value), "prose-secret"


_LINE_HINTS = ("requirepass", "masterauth", "password", "passwd", "passphrase", "secret")


def _directive_line_spans(text: str) -> Iterator[Span]:
    """Config lines with the value after a space: redis `requirepass X`, `masterauth X`,
    `.netrc` `login me password X`, wpa `psk X`, a line that is only `password X`."""
    pattern = _regex(
        r"(?im)^[ \t]*(?:machine[ \t]+\S{1,200}[ \t]+)?(?:login[ \t]+\S{1,200}[ \t]+)?"
        r"(?P<d>requirepass|masterauth|insecure-password|password|passwd|passphrase|secret|wpa_passphrase)"
        r"[ \t]{1,8}(?P<v>\S{1,512})[ \t]*(?:#.*)?$"
    )
    for m in pattern.finditer(text):
        value = m.group("v")
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
            start = m.start("v") + 1
        else:
            start = m.start("v")
        if value[:1] in ":=" or _keep_value(value, False):
            continue
        plain = m.group("d").lower() in ("secret", "password", "passwd", "passphrase") and value.isalpha()
        if plain and value.islower() and "login" not in m.group().lower():
            continue  # "password reset" as a heading
        yield start, start + len(value), "assignment"


# The rule set ------------------------------------------------------------------------------

_SPECIAL = (
    r"(?<![\w:])(?:bot)?(?P<telegram>\d{8,10}:AA[\w-]{33})(?![\w-])"
    r"|(?<![\w-])(?P<mailchimp>[0-9a-f]{32}-us\d{1,2})(?![\w-])"
    r"|(?<![\w~.])(?P<azure>[\w~.]{3}\dQ~[\w~.-]{31,34})(?![\w~.-])"
    r"|(?<![\w-])(?P<terraform>[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70})(?![\w=-])"
)


def _special_spans(text: str) -> Iterator[Span]:
    """Tokens with a shape but no plain prefix: Telegram bots, Mailchimp, Azure AD client
    secrets, Terraform Cloud."""
    names = {
        "telegram": "telegram-bot-token",
        "mailchimp": "mailchimp-key",
        "azure": "azure-ad-secret",
        "terraform": "terraform-token",
    }
    for m in _regex(_SPECIAL).finditer(text):
        group = m.lastgroup or ""
        yield m.start(group), m.end(group), names.get(group, group)


_AWS_KEY_ID = r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
_AWS_SECRET = r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
_AWS_NEAR = 240  # characters around a key id in which its secret half is looked for


def _aws_pair_spans(text: str) -> Iterator[Span]:
    """The secret half of an AWS key pair, written near its access key id with no name
    that says so ("access key AKIA... secret wJalr..."): 40 characters of base64 mixing
    upper case, lower case and digits (a commit id or a hex digest mixes two)."""
    for key in _regex(_AWS_KEY_ID).finditer(text):
        lo, hi = max(0, key.start() - _AWS_NEAR), min(len(text), key.end() + _AWS_NEAR)
        for m in _regex(_AWS_SECRET).finditer(text, lo, hi):
            value = m.group("s")
            if (
                any(c.islower() for c in value)
                and any(c.isupper() for c in value)
                and any(c.isdigit() for c in value)
                and not _is_placeholder(value)
            ):
                yield m.start("s"), m.end("s"), "aws-secret-key"


def _discord_spans(text: str) -> Iterator[Span]:
    """Discord bot tokens: the bot's id in base64 (it decodes to digits), a dot, six
    characters, a dot, the signature."""
    import base64
    import binascii

    pattern = _regex(r"(?<![\w-])(?P<id>[MNO][A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w-])")
    for m in pattern.finditer(text):
        head = m.group("id")
        try:
            decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        except (binascii.Error, ValueError):
            continue
        if decoded.isdigit() and 17 <= len(decoded) <= 20:
            yield m.start(), m.end(), "discord-bot-token"


def _okta_spans(text: str) -> Iterator[Span]:
    """Okta API tokens after their `SSWS` scheme, wherever it is written (prose, a log)."""
    for m in _regex(r"(?<![\w-])SSWS[ \t]{1,4}(?P<t>[A-Za-z0-9_-]{30,80})(?![\w-])").finditer(text):
        if not _is_placeholder(m.group("t")):
            yield m.start("t"), m.end("t"), "okta-token"


def _cookie_map_spans(text: str) -> Iterator[Span]:
    """Session cookies handed to an HTTP client in code: `cookies={"sessionid": "..."}`,
    `cookies: {session: '...'}`, `cookies=dict(sessionid="...")`."""
    opening = _regex(r"(?i)(?<![\w-])cookies?[\"'`]?\]?[ \t]{0,8}[:=][ \t]{0,8}(?:dict\(|\{)")
    pair = _regex(
        r"[\"'`]?(?P<n>[\w.-]{1,64})[\"'`]?[ \t]{0,8}[:=][ \t]{0,8}(?P<q>[\"'`])(?P<v>[^\"'`\n]{1,4096})(?P=q)"
    )
    for m in opening.finditer(text):
        close = text.find(")" if m.group().endswith("(") else "}", m.end(), m.end() + 4096)
        for p in pair.finditer(text, m.end(), close if close >= 0 else min(len(text), m.end() + 4096)):
            low, value = p.group("n").lower(), p.group("v")
            named = any(w in low for w in _COOKIE_NAMES) and "csrf" not in low and "xsrf" not in low
            if named and len(value) >= 8 and not _keep_value(value, True):
                yield p.start("v"), p.end("v"), "cookie"


FAMILIES: tuple[Family, ...] = (
    Family("private-key", "", 0, ("PRIVATE KEY", "Private-Lines:"), False, _pem_spans),
    Family("vendor", "", 0, (), False, _vendor_spans),
    Family("special", "", 0, (":AA", "-us", "Q~", ".atlasv1."), False, _special_spans),
    Family("jwt", r"(?<![\w-])eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*", 0, ("eyJ",)),
    Family("url-password", "", 0, ("://",), False, _url_spans),
    Family("cli-password", "", 0, (), False, _cli_spans),
    Family("cli-password", "", 0, _FLAG_HINTS, True, _flag_spans),
    Family("cli-password", "", 0, ("stdin", "sudo -s", "chpasswd", "secret create"), True, _echo_spans),
    Family("assignment", "", 0, _KV_HINTS + ("name", "key"), True, _kv_spans, True),
    Family(
        "assignment", "", 0, ("header", "setenv", "env ", "_param", "define", "set -", "setx"), True, _directive_spans
    ),
    Family("assignment", "", 0, _PAIR_HINTS, True, _pair_spans),
    Family("assignment", "", 0, ("|",), False, _table_spans),
    Family("assignment", "", 0, _MISC_HINTS, True, _misc_spans),
    Family("assignment", "", 0, ("</",), False, _xml_spans),
    Family("assignment", "", 0, _LINE_HINTS, True, _directive_line_spans),
    Family("authorization", "", 0, ("basic ", "basic\t"), True, _basic_spans),
    Family("authorization", "", 0, ("bearer ", "bearer\t"), True, _bearer_spans),
    Family("prose-secret", "", 0, _PROSE_HINTS, True, _prose_spans),
    Family("aws-secret-key", "", 0, ("AKIA", "ASIA", "ABIA", "ACCA"), False, _aws_pair_spans),
    Family("discord-bot-token", "", 0, (".",), False, _discord_spans),
    Family("okta-token", "", 0, ("SSWS",), False, _okta_spans),
    Family("cookie", "", 0, ("cookie",), True, _cookie_map_spans),
)
# The label shown where findings overlap: the first family in this order that found it.
_RANK = {
    name: rank
    for rank, name in enumerate(
        [
            "private-key",
            *dict.fromkeys(family for family, *_ in _VENDORS),
            "telegram-bot-token",
            "discord-bot-token",
            "okta-token",
            "mailchimp-key",
            "azure-ad-secret",
            "terraform-token",
            "jwt",
            "aws-secret-key",
            "url-password",
            "authorization",
            "api-key-header",
            "cookie",
            "connection-string",
            "cli-password",
            "assignment",
            "prose-secret",
        ]
    )
}

# base64 payloads (images, fonts) are long runs no secret pattern should look inside.
_DATA_URI = r"data:[\w.+-]{1,64}/[\w.+-]{1,64};base64,[A-Za-z0-9+/=]*"

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


def configure(settings: RedactSettings | None) -> None:
    """Load user patterns from the `[redact]` section of the settings (once per process)."""
    global _user_families
    _user_families = user_families(settings.patterns if settings is not None else ())


# The engine ----------------------------------------------------------------------------------


def find(text: str, extra: Iterable[Family] | None = None) -> list[Finding]:
    """Every secret in `text`, in order; overlapping findings merged into one."""
    if not text:
        return []
    families = FAMILIES + tuple(extra if extra is not None else (_user_families or ()))
    lower = text.lower()
    spans: list[Span] = []
    for family in families:
        if family.applies(text, lower):
            spans.extend(family.spans(text))
    if not spans:
        return []
    skip = _skipped(text)
    if skip:
        spans = _outside(spans, skip)
    return _merge(spans, _RANK)


def _outside(spans: list[Span], skip: list[tuple[int, int]]) -> list[Span]:
    """The spans that do not lie inside one of `skip` (both walked in order once)."""
    spans.sort()
    skip.sort()
    kept = []
    i = 0
    for span in spans:
        while i < len(skip) and skip[i][1] <= span[0]:
            i += 1
        if not (i < len(skip) and skip[i][0] <= span[0] and span[1] <= skip[i][1]):
            kept.append(span)
    return kept


def _skipped(text: str) -> list[tuple[int, int]]:
    """Spans no finding may lie inside: `[REDACTED:...]` marks and `data:` URIs."""
    skip = []
    start = text.find(_MARK_PREFIX)
    while start >= 0:
        end = text.find("]", start, start + 64)
        if end < 0:
            break
        skip.append((start, end + 1))
        start = text.find(_MARK_PREFIX, end)
    if ";base64," in text:
        skip.extend(m.span() for m in _regex(_DATA_URI).finditer(text))
    return skip


def _merge(spans: list[Span], rank: Mapping[str, int]) -> list[Finding]:
    spans.sort()
    merged: list[Finding] = []
    for start, end, family in spans:
        if merged and start < merged[-1].end:
            last = merged[-1]
            label = family if rank.get(family, len(rank)) < rank.get(last.family, len(rank)) else last.family
            merged[-1] = Finding(last.start, max(last.end, end), label)
        else:
            merged.append(Finding(start, end, family))
    return merged


def _apply(text: str, findings: list[Finding]) -> str:
    if not findings:
        return text
    pieces = []
    last = 0
    for f in findings:
        pieces.append(text[last : f.start])
        pieces.append(MARK.format(f.family))
        last = f.end
    pieces.append(text[last:])
    return "".join(pieces)


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


# Redaction of whole observations, and of text read outside a hook ----------------------------

if TYPE_CHECKING:
    from wiki_memory.capture.observation import Observation
    from wiki_memory.config.settings import RedactSettings

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
        configure(load_settings().redact)
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
