"""What a search shows of each page it found: the page's details and its best passage,
grown around the best chunks and cut to the caller's budget."""

from __future__ import annotations

import json
import sqlite3

from wiki_memory.index.ranking import Candidate, Fused
from wiki_memory.index.results import SearchResult
from wiki_memory.index.tuning import Tuning

ChunkRow = tuple[int, int, str, str]  # a chunk of a page: (id, ordinal, heading, text)


def results(
    conn: sqlite3.Connection,
    top: list[Candidate],
    fused: Fused,
    tuning: Tuning,
    max_chars: int | None,
    *,
    replaced: dict[str, str] | None = None,
    coverage: dict[str, float] | None = None,
) -> list[SearchResult]:
    """The pages of `top` (best first) as search results, each with its best passage (see
    `passage`): long for the first, short for the others. `max_chars` caps the passages'
    total length: a passage that does not fit is cut, and after a first result one left
    with under 200 characters ends the list. Pages gone since they were ranked are left out.

    `replaced`: {superseded page: its replacement}; `coverage`: each page's share of the
    query's words (None: words were not searched). The cosine comes from `fused`."""
    if not top:
        return []
    pages = {}
    rows = conn.execute(
        f"SELECT path, id, title, type, tags, status, created, updated FROM pages "
        f"WHERE path IN ({', '.join('?' * len(top))})",
        [c[1] for c in top],
    )
    for path, pid, title, ptype, tags, status, created, updated in rows:
        pages[path] = (pid, title, ptype, tuple(json.loads(tags or "[]")), status, created, updated)
    top = [c for c in top if c[1] in pages]
    chunks: dict[str, list[ChunkRow]] = {}
    for row in conn.execute(
        f"SELECT page, id, ordinal, heading, text FROM chunks WHERE page IN "
        f"({', '.join('?' * len(top))}) ORDER BY page, ordinal",
        [c[1] for c in top],
    ):
        chunks.setdefault(row[0], []).append(row[1:])
    chunk_score = fused.chunk_score
    # Words alone score a chunk its bm25 share, which falls off faster than a cosine.
    ratio = tuning.passage_ratio if fused.cosine is not None else tuning.words_passage_ratio
    found: list[SearchResult] = []
    budget = max_chars
    for rank, (score, page, retrievers) in enumerate(top):
        pid, title, ptype, tags, status, created, updated = pages[page]
        chunk_ids = sorted(fused.chunks_of[page], key=lambda c: -chunk_score[c])
        want = tuning.context_words if rank == 0 else tuning.other_words
        heading, ordinal, snippet = passage(chunks[page], chunk_ids, chunk_score, want, tuning, ratio)
        if budget is not None:
            if budget <= 0:
                break
            if len(snippet) > budget:
                if found and budget < 200:
                    break
                snippet = cut(snippet, budget)
            budget -= len(snippet)
        found.append(
            SearchResult(
                *(page, title, ptype, heading, snippet, score, retrievers, tags, status, updated, created, pid),
                chunk=ordinal,
                superseded_by=(replaced or {}).get(page),
                similarity=None if fused.cosine is None else fused.cosine.get(page, fused.floor),
                coverage=None if coverage is None else coverage.get(page, 0.0),
            )
        )
    return found


def passage(
    rows: list[ChunkRow],
    chunk_ids: list[int],
    chunk_score: dict[int, float],
    want: int,
    tuning: Tuning,
    ratio: float | None = None,
) -> tuple[str, int, str]:
    """(heading, ordinal, text) of a page's best passage: its best chunk, grown with its
    neighbours while shorter than `want` words, then further well-ranked chunks of the page
    (`passages`, each with at least `ratio` of the best score: Tuning.passage_ratio unless
    given), joined by an ellipsis. `rows` are the page's chunks, `chunk_ids` those found,
    best first.

    The first result gets long passages (`context_words`), the others short ones
    (`other_words`). Why: on LoCoMo a budget of 500 words held only four or five pages,
    and the turn a question needed was often in the sixth page's snippet, or in what the
    second page's padding pushed out; evidence recall within 500 words rose from 0.708 to
    0.758 on the held-out conversations (multi-hop 0.417 -> 0.438).
    """
    by_id = {r[0]: r for r in rows}
    by_ordinal = {r[1]: r for r in rows}
    best = chunk_ids[0]
    _, ordinal, heading, _ = by_id[best]
    used: set[int] = set()
    parts: list[str] = []
    for n, chunk_id in enumerate(chunk_ids[: max(tuning.passages, 1)]):
        if chunk_id not in by_id or by_id[chunk_id][1] in used:
            continue
        if n and chunk_score[chunk_id] < (tuning.passage_ratio if ratio is None else ratio) * chunk_score[best]:
            break
        span = grow(by_id[chunk_id][1], by_ordinal, used, want)
        used.update(span)
        parts.append("\n\n".join(by_ordinal[o][3] for o in span))
    return heading, ordinal, "\n…\n".join(parts)


def grow(ordinal: int, by_ordinal: dict[int, ChunkRow], used: set[int], want: int) -> list[int]:
    """The ordinals of a chunk and, while shorter than `want` words, its nearest neighbours
    under the same heading (before and after, alternately), none of `used`."""
    heading = by_ordinal[ordinal][2]
    span = [ordinal]
    words = len(by_ordinal[ordinal][3].split())
    step = 1
    while words < want and step <= 8:
        grew = False
        for o in (ordinal - step, ordinal + step):
            row = by_ordinal.get(o)
            if row is not None and row[2] == heading and o not in used and words < want:
                span.append(o)
                words += len(row[3].split())
                grew = True
        if not grew:
            break
        step += 1
    return sorted(span)


def cut(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters, at a line or word boundary."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[: max(limit, 0)]
    head = text[: limit - 1]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at >= limit // 2:
            head = head[:at]
            break
    return head.rstrip() + "…"
