"""The index's parts through their public seams: real SQLite files, no store, no model."""

from __future__ import annotations

import pytest

from wiki_memory.index import SyncStats, Tuning
from wiki_memory.index.db import Database, Kept
from wiki_memory.index.query import filters
from wiki_memory.index.ranking import Ranker
from wiki_memory.index.snippets import grow, passage
from wiki_memory.index.writer import put_page


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


def test_fusion_adds_each_pages_reciprocal_ranks(tmp_path):
    db = Database(tmp_path / "index.sqlite", chunk_words=60)
    tuning = Tuning(rrf_k=20, fts_weight=1.0)
    ranker = Ranker(db, tuning)
    fts = [(1, "a.md", 9.0), (2, "a.md", 8.0), (3, "b.md", 7.0)]
    vector = [(3, "b.md", 0.9), (4, "c.md", 0.8)]
    fused = ranker.fuse({"fts": fts, "vector": vector}, vector_weight=0.5)
    pages = {path: (score, by) for score, path, by in fused.pages}
    # A page's rank is its best chunk's among distinct pages: b is second in fts, not third.
    assert pages["a.md"] == (1 / 21, ("fts",))
    assert pages["b.md"] == (1 / 22 + 0.5 / 21, ("fts", "vector"))
    assert pages["c.md"] == (0.5 / 22, ("vector",))
    # Chunks keep their own ranks, for the passages shown.
    assert fused.chunk_score == {1: 1 / 21, 2: 1 / 22, 3: 1 / 23 + 0.5 / 21, 4: 0.5 / 22}
    assert fused.chunks_of == {"a.md": [1, 2], "b.md": [3], "c.md": [4]}
    assert [path for _, path, _ in ranker.top(fused, 2)] == ["b.md", "a.md"]
    # One ranking alone counts in full, whatever its weight.
    alone = ranker.fuse({"vector": vector}, vector_weight=0.5)
    assert {path: score for score, path, _ in alone.pages} == {"b.md": 1 / 21, "c.md": 1 / 22}
    db.close()


def write_page(db: Database, path: str, front: str, body: str = "Text.") -> None:
    with db.transaction() as conn:
        put_page(conn, path, "blob", f"---\n{front}\n---\n{body}\n", SyncStats(), 60)


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


def test_filters_become_one_condition_on_the_pages():
    assert filters(None, None, None, None) == ("1", [])
    where, params = filters("gotcha, decision", ["auth"], "active", "2026-11-01")
    assert where == (
        "p.type IN (?, ?) AND p.path IN (SELECT page FROM page_tags WHERE tag IN (?)) "
        "AND p.status IN (?) AND COALESCE(p.updated, p.created, '') >= ?"
    )
    assert params == ["gotcha", "decision", "auth", "active", "2026-11-01"]
