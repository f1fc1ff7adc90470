"""Is a new page a duplicate of one that exists? And do two decisions contradict each other?

Pure functions over texts, names and a cosine: the memory layer finds the nearest pages of
the same type in the index and asks `same_page`; `scripts/eval_dedup.py` measures the rule
on labelled pairs (tuned on one half, reported on the other).

The rule, in order:
1. both name things (tools, libraries, `code`, identifiers) and share none of them, or both
   carry codes (`SHOP_DB_URL`, `ERESOLVE`) and share none: not the same page ("Use Postgres"
   is not "Use SQLite", `KeyError: 'SHOP_API_KEY'` is not `KeyError: 'SHOP_DB_URL'`);
2. one turns down what the other chose ("not SQLite" against "go with SQLite"): not the same;
3. the same words (`WORDS_ALONE`): the same page;
4. close in meaning (`MEANING`) and sharing enough words (`MEANING_WORDS`): the same page.

The thresholds are the ones `scripts/eval_dedup.py` picks on its tuning half: the most
recall at a precision of 1.0 with a margin (held out: precision 1.00, recall 0.35; see
docs/lifecycle.md). Words alone merge only texts of the same words: a paraphrase needs
the model's meaning too.

A contradiction, for `review`: two active decisions on one topic (close in meaning,
`TOPIC`) whose choices differ (each names something the other does not choose) or where one
turns down what the other chose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from wiki_memory.consolidate.distill.statements import content_words, names_of

#: Picked by scripts/eval_dedup.py on its tuning half (see the module docstring).
WORDS_ALONE = 1.0
MEANING = 0.78
MEANING_WORDS = 0.35
TOPIC = 0.55


@dataclass(frozen=True)
class Thresholds:
    words_alone: float = WORDS_ALONE
    meaning: float = MEANING
    meaning_words: float = MEANING_WORDS


DEFAULT = Thresholds()

_STEM = re.compile(r"(ing|ed|es|s)$")
_DOUBLE = re.compile(r"([b-df-hj-np-tv-z])\1$")


def stem(word: str) -> str:
    """A light stem: committing/commit, tests/test, running/run."""
    if re.match(r"^[a-z]+$", word) and len(word) > 4:
        word = _DOUBLE.sub(r"\1", _STEM.sub("", word))
    return word


def words(text: str) -> set[str]:
    """Content words, lightly stemmed."""
    return {stem(w) for w in content_words(text)}


def word_similarity(a: str, b: str) -> float:
    """Dice's coefficient of the two texts' content words (0 to 1)."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return 2 * len(wa & wb) / (len(wa) + len(wb))


def names(text: str) -> set[str]:
    return set(names_of(text))


_CODE = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z][A-Z0-9]{3,}\b|\b[a-z]+_[a-z0-9_]+\b")
_NOT_CODES = {"ERROR", "FAIL", "FAILED", "WARN", "WARNING", "NOTE", "TODO", "HTTP", "HTTPS", "JSON", "YAML", "HTML",
              "UTF8", "ASCII", "NULL", "TRUE", "FALSE", "README"}  # fmt: skip


def codes(text: str) -> set[str]:
    """Error codes and identifiers (`SHOP_DB_URL`, `ERESOLVE`, `max_retries`)."""
    return {c for c in _CODE.findall(text) if c not in _NOT_CODES}


@dataclass(frozen=True)
class Pair:
    """What `same_page` weighs for two texts."""

    words: float
    cosine: float | None  # None when meaning is not known (no model)
    names_a: frozenset[str]
    names_b: frozenset[str]
    turned_down: bool  # one turns down what the other chose
    disjoint_codes: bool = False  # both carry codes, and none in common

    @property
    def disjoint_names(self) -> bool:
        return bool(self.names_a) and bool(self.names_b) and not (self.names_a & self.names_b)


def pair(
    a: str,
    b: str,
    cosine: float | None = None,
    negated_a: Iterable[str] = (),
    negated_b: Iterable[str] = (),
) -> Pair:
    na, nb = names(a) - set(negated_a), names(b) - set(negated_b)
    turned_down = bool(set(negated_a) & nb) or bool(set(negated_b) & na)
    ca, cb = codes(a), codes(b)
    return Pair(
        word_similarity(a, b), cosine, frozenset(na), frozenset(nb), turned_down, bool(ca and cb and not ca & cb)
    )


def same_page(p: Pair, t: Thresholds = DEFAULT) -> bool:
    """Are the two texts one page (see the module docstring)?"""
    if p.disjoint_names or p.turned_down or p.disjoint_codes:
        return False
    if p.words >= t.words_alone:
        return True
    return p.cosine is not None and p.cosine >= t.meaning and p.words >= t.meaning_words


def needs_meaning(p: Pair, t: Thresholds = DEFAULT) -> bool:
    """Would the cosine change the verdict? (Words alone settle it otherwise: no model load.)"""
    if p.disjoint_names or p.turned_down or p.disjoint_codes or p.words >= t.words_alone:
        return False
    return p.words >= t.meaning_words


def contradicts(p: Pair, topic: float = TOPIC) -> bool:
    """Two decisions on one topic that choose differently (see the module docstring)."""
    if p.turned_down:
        return True
    if p.cosine is None or p.cosine < topic:
        return False
    return bool(p.names_a - p.names_b) and bool(p.names_b - p.names_a) and p.disjoint_names


def reverses(new_negated: Iterable[str], new_names: Iterable[str], old_names: Iterable[str]) -> bool:
    """Does a new decision reverse an old one: it turns down everything the old one chose,
    and chooses something itself ("Postgres, not SQLite" after "go with SQLite")?"""
    old, negated, chosen = set(old_names), set(new_negated), set(new_names) - set(new_negated)
    return bool(old) and old <= negated and bool(chosen)
