"""The vocabulary every rule shares: what names a secret (`_key_kind` of a key's words),
what is a reference or a placeholder, what has the look of a generated credential, and
`_keep_value`, the verdict on a value found under a secret's name; and `_regex`, the
patterns every rule compiles on first use (a hook process pays for each it compiles).
"""

from __future__ import annotations

import re
from functools import lru_cache

_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def _regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern, compiled on first use and kept for the life of the process."""
    key = (source, flags)
    pattern = _compiled.get(key)
    if pattern is None:
        pattern = _compiled[key] = re.compile(source, flags)
    return pattern


# What a secret is replaced by; a value that starts with the mark was redacted already.
MARK = "[REDACTED:{}]"
_MARK_PREFIX = "[REDACTED:"

# The characters of a key's name.
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


def _b64decode(value: str, urlsafe: bool = False) -> bytes | None:
    """`value` decoded from base64 (its padding added), or None when it is not base64: strict
    about the alphabet unless `urlsafe` (`-` and `_` for `+` and `/`)."""
    import base64  # deferred: base64 loads struct and binascii, 1 ms of a fresh hook; few texts need it
    import binascii  # deferred: with base64

    padded = value + "=" * (-len(value) % 4)
    try:
        return base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


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


# A key and the separator after it (`name=`, `"name": `, `name :=`, `name =>`): where an assignment rule looks.
_KV = r"(?<![\w-])(?P<name>[A-Za-z_][\w-]{0,63})(?P<sep>\\?[\"'`]?\]?\??[ \t]{0,8}(?::=|=>|==|\?=|\+=|[:=])(?![=:/~]))"


# Hints: literal strings one of which every match of a rule contains (see `Family.applies`).
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
_DIRECTIVE_HINTS = ("header", "setenv", "env ", "_param", "define", "set -", "setx")
_PAIR_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "login(")
_LINE_HINTS = ("requirepass", "masterauth", "password", "passwd", "passphrase", "secret")
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
