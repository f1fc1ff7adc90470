"""The index's parts through their public seams: real SQLite files, no store, no model."""

from __future__ import annotations

import math

import pytest

from wiki_memory.index import SyncStats, Tuning
from wiki_memory.index.db import Database, Kept
from wiki_memory.index.priors import Priors
from wiki_memory.index.query import filters, parse_query
from wiki_memory.index.ranking import Fused, Ranker
from wiki_memory.index.snippets import grow, passage
from wiki_memory.index.writer import put_page
from wiki_memory.pages.anchors import Anchor, anchors_from_json


def test_a_kept_value_holds_until_anyone_writes(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    names: Kept[str] = Kept(db, survives_embedding=True)
    matrix: Kept[str] = Kept(db)
    names.put("names")
    matrix.put("matrix")
    assert (names.get(), matrix.get()) == ("names", "matrix")

    # A write that only adds vectors keeps what does not depend on them.
    with db.transaction():
        db.bump(embedding_only=True)
    assert (names.get(), matrix.get()) == ("names", None)

    # Another process's write moves the generation: nothing kept here holds.
    matrix.put("matrix")
    other = Database(tmp_path / "index.sqlite", chunk_words=60)
    with other.transaction():
        other.bump()
    other.close()
    assert (names.get(), matrix.get()) == (None, None)

    # A rolled-back write forgets everything (it may have changed what is kept).
    names.put("names")
    with pytest.raises(RuntimeError), db.transaction():
        raise RuntimeError("a write failed")
    assert names.get() is None and db.generation() is not None
    db.close()


def test_a_ctrl_c_after_the_commit_stays_a_ctrl_c(tmp_path):
    """An interrupt that lands once the transaction has ended must reach the caller as
    itself, not as the error of a ROLLBACK with nothing to roll back (the watcher took
    such a Ctrl-C for an index problem and ran on)."""
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    with pytest.raises(KeyboardInterrupt), db.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('probe', 'kept')")
        conn.execute("COMMIT")  # the commit went through...
        raise KeyboardInterrupt  # ...and then the signal arrived
    assert db.meta("probe") == "kept" and not db.conn.in_transaction
    db.close()


def test_a_rebuilt_file_forgets_what_was_kept(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    kept: Kept[int] = Kept(db)
    kept.put(1)
    before = db.generation()
    db.reopen_fresh("full reindex")
    assert kept.get() is None and db.rebuilt == "full reindex" and db.generation() != before
    db.close()
    # Chunks of another size cannot be kept: the file starts over.
    again = Database(tmp_path / "index.sqlite", chunk_words=80)
    assert again.rebuilt == "chunk size changed to 80 words"
    again.close()


def test_fusion_scores_a_page_by_its_cosine_plus_a_share_of_the_best_bm25(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    ranker = Ranker(db, Tuning(fts_weight=0.4))
    fts = [(1, "a.md", 8.0), (2, "a.md", 6.0), (3, "b.md", 4.0), (5, "d.md", 2.0)]
    vector = [(3, "b.md", 0.7), (4, "c.md", 0.5), (1, "a.md", 0.3)]
    # The words are half sure: each bm25 point weighs 0.4 * 0.5 / 8 (the search's best bm25).
    fused = ranker.fuse({"fts": fts, "vector": vector}, sure=0.5)
    unit = 0.4 * 0.5 / 8
    pages = {path: (score, by) for score, path, by in fused.pages}
    assert pages["a.md"] == (pytest.approx(0.3 + 8 * unit), ("fts", "vector"))
    assert pages["b.md"] == (pytest.approx(0.7 + 4 * unit), ("fts", "vector"))
    assert pages["c.md"] == (pytest.approx(0.5), ("vector",))
    # A page meaning did not reach counts the lowest cosine it reached, at most what it had.
    assert pages["d.md"] == (pytest.approx(0.3 + 2 * unit), ("fts",))
    assert fused.chunk_score == pytest.approx(
        {1: 0.3 + 8 * unit, 2: 0.3 + 6 * unit, 3: 0.7 + 4 * unit, 4: 0.5, 5: 0.35}
    )
    assert fused.chunks_of == {"b.md": [3], "c.md": [4], "a.md": [1, 2], "d.md": [5]}
    assert (fused.cosine, fused.floor, fused.word_chunk) == (
        {"b.md": 0.7, "c.md": 0.5, "a.md": 0.3},
        0.3,
        {"a.md": 1, "b.md": 3, "d.md": 5},
    )
    # A cosine far ahead keeps its lead over the best word match; sure words close the gap.
    assert max(fused.pages)[1] == "b.md"
    sure = {path: score for score, path, _ in ranker.fuse({"fts": fts, "vector": vector}, sure=1.0).pages}
    assert sure["a.md"] == pytest.approx(0.3 + 0.4) and sure["b.md"] == pytest.approx(0.7 + 0.2)
    # One ranking alone: its cosine, or its bm25 over the best.
    alone = ranker.fuse({"vector": vector})
    assert {path: score for score, path, _ in alone.pages} == {"b.md": 0.7, "c.md": 0.5, "a.md": 0.3}
    words = ranker.fuse({"fts": fts})
    assert {path: score for score, path, _ in words.pages} == pytest.approx({"a.md": 1.0, "b.md": 0.5, "d.md": 0.25})
    assert words.cosine is None
    db.close()


def test_coverage_weighs_the_querys_words_by_their_rarity(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    ranker = Ranker(db, Tuning())
    texts = ["the export is slow"] * 7 + ["chromium crashed during the export", "chromium sandbox flags", "unrelated"]
    with db.transaction() as conn:
        for n, text in enumerate(texts, 1):
            conn.execute("INSERT INTO chunks(id, page, ordinal, heading, text, hash) VALUES (?, ?, 0, '', ?, '')",
                         (n, f"p{n}.md", text))  # fmt: skip
            conn.execute("INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (?, '', '', ?)", (n, text))
    idf = {word: max(math.log((10 - n + 0.5) / (n + 0.5)), 1e-6) for word, n in (("export", 8), ("chromium", 2))}
    # "missing" is in no chunk: it weighs most, and no chunk holds it.
    idf["missing"] = math.log(10.5 / 0.5)
    total = sum(idf.values())
    shares = ranker.coverage(parse_query("chromium export missing"), [1, 8, 9, 10])
    assert shares == pytest.approx(
        {1: idf["export"] / total, 8: (idf["export"] + idf["chromium"]) / total, 9: idf["chromium"] / total, 10: 0.0}
    )
    # A word in most chunks (export) weighs next to nothing: holding it is not being sure.
    assert shares[1] < 0.01
    # An identifier is matched as a phrase of its parts, and counts once: a chunk holding
    # one of its parts holds none of it.
    for identifier in ("chromium_sandbox", "chromium.sandbox"):
        assert ranker.coverage(parse_query(identifier), [8, 9]) == {8: 0.0, 9: 1.0}
    db.close()


def write_page(db: Database, path: str, front: str, body: str = "Text.") -> None:
    with db.transaction() as conn:
        put_page(conn, path, "blob", f"---\n{front}\n---\n{body}\n", SyncStats(), 60)


def test_logs_rank_below_durable_pages_unless_the_query_asks_what_happened(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    priors = Priors(db, Tuning(log_penalty=0.1))
    write_page(db, "gotchas/g.md", "title: G\ntype: gotcha")
    write_page(db, "sessions/2026/11/s.md", "title: S\ntype: session")
    write_page(db, "handoffs/2026/11/h.md", "title: H\ntype: handoff")
    fused = Fused([(0.80, "sessions/2026/11/s.md", ("vector",)), (0.75, "gotchas/g.md", ("vector",)),
                   (0.60, "handoffs/2026/11/h.md", ("vector",))], {}, {})  # fmt: skip
    assert [(round(score, 2), path) for score, path, _ in priors.top(fused, 3)] == [
        (0.75, "gotchas/g.md"),
        (0.70, "sessions/2026/11/s.md"),
        (0.50, "handoffs/2026/11/h.md"),
    ]
    assert priors.top(fused, 3, history=True)[0][1] == "sessions/2026/11/s.md"
    assert parse_query("what did we try yesterday on the export").history
    assert not parse_query("how do we make the export wait for fonts").history
    db.close()


def test_a_superseded_page_never_ranks_above_its_replacement(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    priors = Priors(db, Tuning(inactive_penalty=0.25))
    write_page(db, "decisions/new.md", "title: Deploy with Argo CD\ntype: decision\nsupersedes: decisions/old.md")
    # Named by title, as a person may write it by hand.
    write_page(
        db, "decisions/old.md", "title: Old\ntype: decision\nstatus: superseded\nsuperseded_by: Deploy with Argo CD"
    )
    write_page(db, "facts/other.md", "title: Other\ntype: fact")
    assert priors.replacements() == {"decisions/old.md": "decisions/new.md"}
    # The old page matches far better than its replacement, which is last and below the
    # k-th score by more than any prior: it is scored anyway, and the old page goes below it.
    fused = Fused([(0.95, "decisions/old.md", ("fts",)), (0.60, "facts/other.md", ("fts",)),
                   (0.10, "decisions/new.md", ("fts",))], {}, {})  # fmt: skip
    ranked = [path for _, path, _ in priors.top(fused, 3)]
    assert ranked == ["facts/other.md", "decisions/new.md", "decisions/old.md"]
    assert [path for _, path, _ in priors.top(fused, 2)] == ["facts/other.md", "decisions/new.md"]
    # A replacement the search did not find leaves the old page where the penalty puts it.
    alone = Fused([(0.95, "decisions/old.md", ("fts",)), (0.60, "facts/other.md", ("fts",))], {}, {})
    assert [(round(s, 2), p) for s, p, _ in priors.top(alone, 2)] == [
        (0.7, "decisions/old.md"),
        (0.6, "facts/other.md"),
    ]
    db.close()


def test_an_index_of_this_version_gains_the_superseded_by_column_in_place(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    write_page(db, "decisions/old.md", "title: Old\nstatus: superseded\nsuperseded_by: decisions/new.md")
    write_page(db, "decisions/new.md", "title: New")
    with db.transaction() as conn:
        conn.execute("INSERT INTO vectors VALUES (1, 'm', 1, x'00000000')")
        conn.execute("ALTER TABLE pages DROP COLUMN superseded_by")  # as files written before it had it
    db.set_meta("head", "abc")
    db.close()
    again = Database(tmp_path / "index.sqlite", chunk_words=60)
    assert again.rebuilt is None and again.head is None  # not rebuilt: the next sync reads the pages again...
    blobs = dict(again.conn.execute("SELECT path, blob FROM pages"))
    assert blobs == {"decisions/old.md": "", "decisions/new.md": "blob"}  # ...the superseded ones only
    assert again.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1  # and no vector is lost
    again.close()


def test_a_passage_grows_under_its_heading_then_joins_the_next_best():
    rows = [
        (10, 0, "Setup", "one two three"),
        (11, 1, "Setup", "four five"),
        (12, 2, "Rollback", "flip the switch back"),
        (13, 3, "Rollback", "within ten minutes"),
        (14, 4, "Rollback", "then tell the on-call engineer"),
    ]
    by_ordinal = {r[1]: r for r in rows}
    # Neighbours under the same heading, before and after, until `want` words.
    assert grow(3, by_ordinal, set(), want=8) == [2, 3, 4]
    assert grow(1, by_ordinal, set(), want=8) == [0, 1]  # "Rollback" is another section
    assert grow(3, by_ordinal, {2}, want=8) == [3, 4]
    tuning = Tuning(passages=2, passage_ratio=0.8)
    heading, ordinal, text = passage(rows, [13, 10], {13: 1.0, 10: 0.9}, want=4, tuning=tuning)
    assert (heading, ordinal) == ("Rollback", 3)
    assert text == "flip the switch back\n\nwithin ten minutes\n…\none two three\n\nfour five"
    # A second passage far below the best one is left out.
    assert passage(rows, [13, 10], {13: 1.0, 10: 0.5}, want=4, tuning=tuning)[2].count("…") == 0
    # Scores that fall off faster (bm25 shares, words alone) take a ratio of their own.
    assert passage(rows, [13, 10], {13: 1.0, 10: 0.5}, want=4, tuning=tuning, ratio=0.5)[2].count("…") == 1


def test_filters_become_one_condition_on_the_pages():
    assert filters(None, None, None, None) == ("1", [])
    where, params = filters("gotcha, decision", ["auth"], "active", "2026-11-01")
    assert where == (
        "p.type IN (?, ?) AND p.path IN (SELECT page FROM page_tags WHERE tag IN (?)) "
        "AND p.status IN (?) AND COALESCE(p.updated, p.created, '') >= ?"
    )
    assert params == ["gotcha", "decision", "auth", "active", "2026-11-01"]


def test_a_pages_anchors_are_kept_in_its_row_as_json(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    meta = (
        "title: Retry\ntype: gotcha\nanchors:\n  - path: ./src/auth/client.py\n"
        "    blob: 3B18E512DBA79E4C8300DD08AEB37F8E728B8DAD\n  - src/auth/admin.py\n  - ../../etc/passwd\n  - 7"
    )
    write_page(db, "gotchas/retry.md", meta)
    write_page(db, "facts/plain.md", "title: Plain")
    rows = dict(db.conn.execute("SELECT path, anchors FROM pages"))
    assert rows["facts/plain.md"] is None
    assert anchors_from_json(rows["gotchas/retry.md"]) == (
        Anchor("src/auth/client.py", "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"),
        Anchor("src/auth/admin.py", None),
    )
    # An index written before the column existed gains it in place, vectors kept.
    with db.transaction() as conn:
        conn.execute("ALTER TABLE pages DROP COLUMN anchors")
    db.close()
    again = Database(tmp_path / "index.sqlite", chunk_words=60)
    assert again.rebuilt is None
    assert "anchors" in {row[1] for row in again.conn.execute("PRAGMA table_info(pages)")}
    again.close()
