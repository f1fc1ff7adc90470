"""Redaction: one test per family of secret, the things that must survive, user patterns,
and no secret reaching the journal or the log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wiki_memory.capture import redact as redaction
from wiki_memory.capture.redact import redact, user_families
from wiki_memory.config import resolve_project

# (family, text with a secret, the secret that must go, what must stay)
CASES = [
    ("aws-access-key", "export AWS_ACCESS_KEY_ID=AKIAQ3EGUTV5XKZ7NW4R", "AKIAQ3EGUTV5XKZ7NW4R", "AWS_ACCESS_KEY_ID="),
    (
        "aws-secret-key",
        "aws_secret_access_key = 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",
        "9dXq2Lk7vR3mT8pWz1bYc6NhJ/G4sE0aUoKiQx5V",
        "aws_secret_access_key",
    ),
    (
        "github-token",
        "git push https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/a/b",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github.com/a/b",
    ),
    (
        "github-token",
        "GITHUB_TOKEN is github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz012345",
        "GITHUB_TOKEN is",
    ),
    ("gitlab-token", "token glpat-AbCdEfGhIjKlMnOpQrSt12 expired", "glpat-AbCdEfGhIjKlMnOpQrSt12", "expired"),
    (
        "npm-token",
        "//registry.npmjs.org/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "registry.npmjs.org",
    ),
    (
        "slack-token",
        "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "SLACK",
    ),
    (
        "slack-token",
        "post to https://hooks.slack.com/services/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",
        "T04A1B2C3/B05D6E7F8/q1W2e3R4t5Y6u7I8o9P0aSdF",
        "post to",
    ),
    ("stripe-key", "stripe.api_key = sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe"),
    (
        "openai-key",
        "client = OpenAI(api_key=sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ0123456789)",
        "sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ0123456789",
        "OpenAI(",
    ),
    (
        "anthropic-key",
        "key: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCd",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCd",
        "key:",
    ),
    (
        "google-api-key",
        "maps?key=AIzaSyA1234567890abcdefghijklmnopqrstuv&q=x",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "&q=x",
    ),
    (
        "jwt",
        "cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c end",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "end",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98\nabc\n-----END RSA PRIVATE KEY-----\nafter",
        "MIIEpAIBAAKCAQEA7bq98",
        "after",
    ),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n(cut here",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
        "",
    ),
    ("url-password", "DATABASE_URL postgres://app:s3cr3t-pw@db.internal:5432/app", "s3cr3t-pw", "postgres://app:"),
    (
        "authorization",
        "curl -H 'Authorization: Bearer abc123.def456' https://api",
        "abc123.def456",
        "Authorization: Bearer",
    ),
    ("authorization", "authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic"),
    ("api-key-header", "curl -H 'x-api-key: 0123456789abcdef' https://api", "0123456789abcdef", "x-api-key:"),
    ("cli-password", "curl -u admin:hunter2pass https://x", "hunter2pass", "-u admin:"),
    ("cli-password", "mysql -h db -u root -pHunter2secret app", "Hunter2secret", "mysql -h db -u root -p"),
    ("cli-password", "pg_dump --password=swordfish42 db", "swordfish42", "--password="),
    ("assignment", "export OPENAI_API_KEY=abcdefgh12345678", "abcdefgh12345678", "OPENAI_API_KEY="),
    ("assignment", "GH_TOKEN=tok_9f8e7d6c5b", "tok_9f8e7d6c5b", "GH_TOKEN="),
    ("assignment", "CLIENT_SECRET='q1w2e3r4t5'", "q1w2e3r4t5", "CLIENT_SECRET="),
    ("assignment", "PASSWORD=correcthorsebattery", "correcthorsebattery", "PASSWORD="),
    ("assignment", 'db = connect(password="hunter22")', "hunter22", "connect(password="),
    ("assignment", '{"client_secret": "abcd-efgh-ijkl"}', "abcd-efgh-ijkl", "client_secret"),
    ("assignment", "smtp:\n  password: mailpass99\n  user: me", "mailpass99", "user: me"),
    (
        "connection-string",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFy+/==;EndpointSuffix=x",
        "Zm9vYmFy+/==",
        "AccountName=acct",
    ),
    ("connection-string", "Server=tcp:db;Database=app;User Id=sa;Password=P@ssw0rd!;", "P@ssw0rd!", "User Id=sa"),
]


@pytest.mark.parametrize("family,text,secret,kept", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_family_is_redacted(family, text, secret, kept):
    out = redact(text)
    assert secret not in out, out
    assert f"[REDACTED:{family}]" in out, out
    assert kept in out


SURVIVORS = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "session 123e4567-e89b-12d3-a456-426614174000 started",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "digest: sha256=2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "edited src/auth/token_refresh.py and tests/test_tokens.py",
    "cat ~/.config/gh/token_cache.json",
    "max_tokens=4096 input_tokens: 120 tokens_used=600",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "the API_KEY=$API_KEY comes from the environment",
    "ssh -p 2222 host && mkdir -p build",
    "Use the token bucket algorithm; a password reset flow",
]


@pytest.mark.parametrize("text", SURVIVORS)
def test_non_secrets_survive(text):
    assert redact(text) == text


def test_data_uri_is_kept_whole_even_when_it_contains_a_key_shape():
    uri = "data:image/png;base64,AAAA+AKIAQ3EGUTV5XKZ7NW4R+BBBB"
    assert redact(f"img {uri} and AKIAQ3EGUTV5XKZ7NW4R") == f"img {uri} and [REDACTED:aws-access-key]"


def test_user_patterns_add_families():
    families = user_families([r"corp-[0-9a-f]{8}", r"pin=(\d{4,})", r"(unbalanced"])
    out = redact("id corp-deadbeef and pin=1234", extra=families)
    assert out == "id [REDACTED:custom] and pin=[REDACTED:custom]"


def test_user_patterns_come_from_config_toml(tmp_path):
    from wiki_memory.config import home

    home().mkdir(parents=True, exist_ok=True)
    (home() / "config.toml").write_text("[redact]\npatterns = ['ticket-[0-9]{6}']\n")
    hook_in_subprocess(
        {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit", "prompt": "see ticket-123456"}
    )
    line = journal_lines(tmp_path, "s")[0]
    assert line["text"] == "see [REDACTED:custom]"


def hook_in_subprocess(payload: dict, agent: str = "claude-code") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wiki_memory", "hook", agent],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
    )


def journal_lines(cwd, session_id: str) -> list[dict]:
    from wiki_memory.capture.journal import journal_file

    path = journal_file(resolve_project(cwd).journal_dir, session_id)
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_no_secret_reaches_the_journal(tmp_path):
    secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
    payload = {
        "session_id": "s2",
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"GITHUB_TOKEN={secret} gh pr list"},
        "tool_response": {
            "stdout": f"using {secret}\n" + "x" * 5000 + f"\nAuthorization: Bearer {secret}",
            "stderr": "",
            "interrupted": False,
        },
        "transcript_path": f"/tmp/{secret}.jsonl",
    }
    assert hook_in_subprocess(payload).returncode == 0
    from wiki_memory.config import home

    for root, _, files in os.walk(home()):
        for name in files:
            assert secret not in Path(root, name).read_text(errors="replace"), name
    line = journal_lines(tmp_path, "s2")[0]
    assert line["input"] == "GITHUB_TOKEN=[REDACTED:github-token] gh pr list"
    assert "[REDACTED:" in line["output"]


def test_a_secret_cut_by_the_excerpt_boundary_does_not_leak_its_tail(tmp_path):
    secret = "sk-proj-Qm4Zt8Rv2Lx9Kc3Hw7Pb5Nd1Jf6Gs0Ay4Ue8Io2Vq7Tr3Wz9Xe5Bn1Mk6Lp0Hd"
    head = "a" * 1349 + " "  # the excerpt's head (1,365 characters) ends inside the secret
    payload = {
        "session_id": "s3",
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "env"},
        "tool_response": {"stdout": head + secret + " " + "b" * 20000, "stderr": "", "interrupted": False},
    }
    assert hook_in_subprocess(payload).returncode == 0
    output = journal_lines(tmp_path, "s3")[0]["output"]
    assert secret[8:24] not in output and secret[-16:] not in output, output


def test_compiled_lazily():
    # Plain prose compiles one pattern: the scan for long words that vendor tokens start.
    redaction._compiled.clear()
    redact("nothing to see here")
    assert len(redaction._compiled) <= 1


def test_a_test_run_that_passed_compiles_no_assignment_pattern():
    # "PASSED" holds the hint PASS, but nothing is assigned: the hook need not compile the
    # three assignment patterns (a share of a cold hook process) for every test run it sees.
    log = (
        "tests/test_api.py::test_login PASSED                         [ 50%]\n"
        "tests/test_api.py::test_token_refresh PASSED                 [100%]\n"
        "============================== 2 passed in 0.31s ==============================\n"
    )
    redaction._compiled.clear()
    assert redact(log) == log
    assert (redaction._KV, 0) not in redaction._compiled
    assert redact(log + "API_TOKEN = abcdef123456\n").endswith("API_TOKEN = [REDACTED:assignment]\n")


def test_a_secret_cut_by_the_prompt_limit_does_not_leak_its_head(tmp_path):
    secret = "ghp_Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"
    prompt = "a" * (16384 - 20) + " " + secret + " and more"  # the 16 KB cut falls inside the token
    payload = {"session_id": "s4", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    assert hook_in_subprocess(payload).returncode == 0
    text = journal_lines(tmp_path, "s4")[0]["text"]
    assert secret[:12] not in text and "more characters cut" in text


# Syntaxes the corpus has few of: (text, the secret that must go).
MORE_PLACES = [
    ('[Environment]::SetEnvironmentVariable("API_KEY", "q8Zr2mVt7Lx3Nw9P", "User")', "q8Zr2mVt7Lx3Nw9P"),
    ('req.Header.Set("Authorization", "Bearer abcDEF123ghiJKL456mno")', "abcDEF123ghiJKL456mno"),
    ("headers = {'Authorization': 'Bearer ' + 'Zq8mV2xL7pK4Rt9Wn3Bc6Hj1'}", "Zq8mV2xL7pK4Rt9Wn3Bc6Hj1"),
    ('resp = requests.get(url, auth=("admin", "Tr0ub4dor&3"))', "Tr0ub4dor&3"),
    ('echo "::add-mask::ya7Hq2Lp9Zr4"', "ya7Hq2Lp9Zr4"),
    ("db.internal:5432:acme:app:S3cr3tPass9", "S3cr3tPass9"),
    ("sqlplus scott/T1gerPass@orcl", "T1gerPass"),
    ("poetry config http-basic.acme ci Qz8vN2mL4xR7", "Qz8vN2mL4xR7"),
    ("net use Z: \\\\files\\share Pa55w0rd! /user:ACME\\bob", "Pa55w0rd!"),
    ("xfreerdp /v:10.0.0.5 /u:admin /p:Rdp-Pass-991", "Rdp-Pass-991"),
    ('#define API_SECRET "aB3dE5gH7jK9mN1p"', "aB3dE5gH7jK9mN1p"),
    ("set -gx DB_PASSWORD h7Gq2ZpLm9", "h7Gq2ZpLm9"),
    ("| DB_PASSWORD | Zx8Qw2Lp9Vn4 |", "Zx8Qw2Lp9Vn4"),
    ("use `Kt4!rPz9` as the wifi password", "Kt4!rPz9"),
    ("creds are deploy / Sup3r-S3cret", "Sup3r-S3cret"),
    ("db:\n  password: |\n    Blk9Pass-Zq2\n  user: app\n", "Blk9Pass-Zq2"),
    ("127.0.0.1:6379> AUTH Rd5Qx8Lm2", "Rd5Qx8Lm2"),
    ("ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY 'My5qlRoot!';", "My5qlRoot!"),
    ("The admin password has been changed to Ch4ng3d!Pw", "Ch4ng3d!Pw"),
    ('<string name="google_maps_key">Gm4Kq8Zx2Lp7Vn3R</string>', "Gm4Kq8Zx2Lp7Vn3R"),
    ('"Env": ["PATH=/usr/bin", "DB_PASSWORD=Yp3Lq8Zm2Vx7"]', "Yp3Lq8Zm2Vx7"),
    ('{"auths":{"registry.acme.test":{"auth":"Y2k6WnE4bVYyeEw3cEs5"}}}', "Y2k6WnE4bVYyeEw3cEs5"),
    ('127.0.0.1 - - "GET /bot5012179580:AAOJH9Mh4-fgsehv3hGRQNPp_c5w6brNvW1/getMe"', "AAOJH9Mh4-fgsehv3hGRQNPp"),
    ("the safe's PIN is 73914", "73914"),
]

MORE_KEEPS = [
    'headers.set("Authorization", `Bearer ${token}`)',
    't("password", "Passwort")',
    "requests.get(url, auth=(user, password))",
    "| password | The user's password (min 12 characters) |",
    "the password is stored in 1Password",
    "docker build --secret id=npmrc,src=$HOME/.npmrc .",
    "sqlplus / as sysdba",
    "permissions: { contents: read, id-token: write }",
    "Set-Cookie: csrftoken=abc123def456; Path=/",
    "password: ${DB_PASSWORD:-postgres}",
    'header_up Authorization "Bearer {env.UPSTREAM_TOKEN}"',
    "proxy_set_header Authorization $http_authorization;",
    "openssl rsa -in k.pem -passin file:/run/secrets/pass",
    "docker run -u 1000:1000 alpine id",
    "the token limit is 4096",
    "STRIPE_PUBLISHABLE_KEY=pk_test_TYooMQauvdEDq54NiTphI7jx",
]


@pytest.mark.parametrize("text,secret", MORE_PLACES)
def test_more_places_a_secret_sits(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", MORE_KEEPS)
def test_more_look_alikes_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    "command,secret",
    [
        ("<datasource>\n  <user>acme</user>\n  <password>{s}</password>\n</datasource>", "pqixp1qx1YrjUP98Ul"),
        ("return [\n    'driver' => 'smtp',\n    'password' => '{s}',\n];", "7VOljCwukxiQsG5r2CMrdV5H"),
    ],
    ids=["xml", "php-array"],
)
def test_a_file_name_taken_out_of_a_command_keeps_no_secret(tmp_path, command, secret):
    """The shell reads `<password>x</password>` and `'password' => 'x',` as redirections: the
    names it yields lose the context that marks the secret, and are judged against the
    secrets their command held."""
    import io
    import json

    from wiki_memory.config import resolve_project
    from wiki_memory.hook import main as hook

    payload = {
        "session_id": "redact-path-1",
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {"command": command.format(s=secret)},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
    }
    out = io.BytesIO()
    assert hook.main(["claude-code", "PostToolUse"], stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out) == 0
    journal = (resolve_project(tmp_path).journal_dir / "redact-path-1.jsonl").read_text(encoding="utf-8")
    assert "[REDACTED" in journal and secret not in journal
