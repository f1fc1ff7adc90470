"""Credentials on command lines: long flags (`--password X`), the short flags and
positionals of the commands that take them (`docker login -p`, `mysql -pX`, `curl -u`,
`vault login X`), and secrets piped into `--password-stdin`.
"""

from __future__ import annotations

from wiki_memory.capture.redact.http_credentials import _cookie_spans
from wiki_memory.capture.redact.vocabulary import (
    _NAME_CHARS,
    _keep_value,
    _key_kind,
    _looks_random,
    _passwordish,
    _regex,
    _words,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


_LONG_FLAG = (
    r"(?<![\w-])--?(?P<flag>[A-Za-z][\w-]{1,47})(?:=|[ \t]{1,8})"
    r"(?P<v>\"(?:[^\"\\\n]|\\.){0,512}\"|'[^'\n]{0,512}'|[^\s\"'|;&<>]{1,512})"
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
