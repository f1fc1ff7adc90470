"""Tokens known by their shape with no plain prefix: Telegram bots, Mailchimp, Azure AD
client secrets, Terraform Cloud, Discord bots, and the secret half of an AWS key pair
written near its key id.
"""

from __future__ import annotations

from wiki_memory.capture.redact.vocabulary import _b64decode, _is_placeholder, _regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


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
    pattern = _regex(r"(?<![\w-])(?P<id>[MNO][A-Za-z0-9_-]{23,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![\w-])")
    for m in pattern.finditer(text):
        decoded = _b64decode(m.group("id"), urlsafe=True)
        if decoded is not None and decoded.isdigit() and 17 <= len(decoded) <= 20:
            yield m.start(), m.end(), "discord-bot-token"
