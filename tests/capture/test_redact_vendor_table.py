"""Every row of the vendor table: its body's characters form a valid class, and a token of
its shape is redacted (a row whose class did not compile made `redact()` raise on any text
holding its prefix)."""

from __future__ import annotations

import random
import re
import string

import pytest

from wiki_memory.capture.redact import find, redact
from wiki_memory.capture.redact.vendors import _VENDORS


def token(prefix: str, chars: str, shortest: int, longest: int, seed: int) -> str:
    """A token of the row's shape: the prefix, then letters and digits its class allows."""
    allowed = [c for c in string.ascii_letters + string.digits if re.fullmatch(f"[{chars}]", c)]
    rng = random.Random(seed)
    return prefix + "".join(rng.choice(allowed) for _ in range(max(shortest, min(longest, 40))))


@pytest.mark.parametrize("row", range(len(_VENDORS)))
def test_a_token_of_every_vendor_row_is_redacted(row):
    family, prefix, chars, shortest, longest = _VENDORS[row]
    re.compile(f"[{chars}]")  # the body's class is a valid pattern
    secret = token(prefix, chars, shortest, longest, row)
    text = f"see {secret} here"
    redacted = redact(text)
    assert secret[len(prefix) :] not in redacted, (family, redacted)
    assert any(f.start <= text.index(secret) < f.end for f in find(text))


@pytest.mark.parametrize(
    ("prefix", "outside"),
    [("pscale_tkn_", "/"), ("pscale_pw_", ":"), ("tfp_", ";"), ("duffel_test_", "/"), ("sntrys_", ":")],
)
def test_a_vendor_token_ends_where_its_characters_do(prefix, outside):
    # `A-Za-z0-9_.-` + `=` once read as the range `.-=`, taking `/`, `:`, `;` and `<` into a body
    _, _, chars, shortest, longest = next(v for v in _VENDORS if v[1] == prefix)
    secret = token(prefix, chars, shortest, longest, 7)
    text = f"{secret}{outside}path/after/it"
    redacted = redact(text)
    assert secret[len(prefix) :] not in redacted
    assert redacted.endswith(f"{outside}path/after/it"), redacted
