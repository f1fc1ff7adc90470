"""Query parsing and the small pure parts of the index (no model, no store)."""

from __future__ import annotations

import re
import sqlite3

import pytest

from wiki_memory.errors import WikiMemoryError
from wiki_memory.index import cut, parse_since
from wiki_memory.index.links import Resolver
from wiki_memory.index.query import fts_expression, parse_query


@pytest.mark.parametrize(
    "text",
    [
        '"',
        "NEAR(a b)",
        "a* -b",
        "col:x",
        "AND OR NOT",
        "(((",
        "a^2",
        "'quoted'",
        "x\u00a0y",
        "日本語のテキスト",
        "emoji 🚀 rocket",
        "a" * 500,
    ],
)
def test_every_expression_is_valid_fts5(text):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('near and or not quoted rocket x y')")
    expression = fts_expression(parse_query(text))
    if expression is not None:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (expression,)).fetchall()


def test_identifiers_become_phrases_and_common_words_drop():
    q = parse_query("Why does src/auth/jwt.py raise ERR_CONN_RESET?")
    assert ("src", "auth", "jwt", "py") in q.phrases
    assert "why" not in q.words and "does" not in q.words and "err_conn_reset" in q.words
    assert parse_query("what is it").words == ("what", "is", "it")  # nothing else left: keep them
    assert fts_expression(parse_query("   ")) is None


def test_since_accepts_dates_and_ages():
    assert parse_since("2026-11-01") == "2026-11-01"
    assert parse_since("2026-11-01T10:00:00Z") == "2026-11-01T10:00:00Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", parse_since("7d"))
    assert parse_since("2w") < parse_since("1d")
    assert parse_since(None) is None
    with pytest.raises(WikiMemoryError):
        parse_since("last tuesday")


def test_cut_keeps_to_the_limit_at_a_boundary():
    text = "alpha beta gamma delta\nepsilon zeta eta theta"
    assert cut(text, 100) == text
    short = cut(text, 20)
    assert len(short) <= 20 and short.endswith("…") and "gam" not in short.replace("gamma", "")


def test_link_resolution_prefers_path_then_title_then_file_name():
    r = Resolver(
        [
            ("decisions/retry-policy.md", "Retry policy"),
            ("notes/retry-policy.md", "Old retry policy"),
            ("gotchas/jwt.md", "JWT refresh must happen before the retry"),
        ]
    )
    assert r.resolve("notes/retry-policy") == "notes/retry-policy.md"
    assert r.resolve("Old retry policy") == "notes/retry-policy.md"
    assert r.resolve("jwt refresh must happen before the retry") == "gotchas/jwt.md"
    assert r.resolve("Retry Policy") == "decisions/retry-policy.md"
    assert r.resolve("jwt") == "gotchas/jwt.md"
    assert r.resolve("Nothing like it") is None
