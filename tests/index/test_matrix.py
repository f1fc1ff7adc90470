"""The in-memory vector matrix that this process's writes patch in place."""

import numpy as np

from wiki_memory.index.embed import from_blobs, to_blob
from wiki_memory.index.matrix import VectorMatrix


def rows_for(ids, page_of, rng, dim=8):
    out = []
    for i in ids:
        v = rng.standard_normal(dim).astype(np.float32)
        out.append((i, dim, to_blob(v / np.linalg.norm(v)), page_of(i)))  # as the index stores them
    return out


def live(matrix: VectorMatrix) -> dict[int, tuple[str, bytes]]:
    ids, vectors, pages, alive = matrix.view()
    keep = np.ones(len(ids), dtype=bool) if alive is None else alive
    return {int(ids[r]): (pages[r], to_blob(vectors[r])) for r in np.flatnonzero(keep)}


def test_rows_are_masked_appended_and_replaced_without_copying_the_matrix_each_time():
    rng = np.random.default_rng(1)
    rows = rows_for(range(1, 101), lambda i: f"p{(i - 1) // 5}.md", rng)  # 20 pages of 5 chunks
    matrix = VectorMatrix.from_rows(rows)
    expected = {r[0]: (r[3], r[2]) for r in rows}
    assert live(matrix) == expected
    as_read = matrix.view()[1]

    # A page rewritten: its rows masked, its new chunks appended.
    matrix.drop_pages(["p3.md"])
    fresh = rows_for(range(101, 104), lambda i: "p3.md", rng)
    ids = np.array([r[0] for r in fresh])
    matrix.put(ids, np.stack([from_blobs(r[2], 8)[0] for r in fresh]), [r[3] for r in fresh])
    for i in range(16, 21):
        del expected[i]
    expected.update({r[0]: (r[3], r[2]) for r in fresh})
    assert live(matrix) == expected
    assert matrix.view()[3] is not None  # masked rows stay until there are many
    roomy = matrix.view()[1]
    assert not np.shares_memory(roomy, as_read)  # the first addition copies, leaving room

    # A chunk already there is replaced, not doubled; the next additions go into the room.
    again = rows_for([7], lambda i: "p1.md", rng)
    matrix.put(np.array([7]), from_blobs(again[0][2], 8), ["p1.md"])
    expected[7] = ("p1.md", again[0][2])
    assert live(matrix) == expected
    more = rows_for(range(200, 215), lambda i: "big.md", rng)
    matrix.put(
        np.array([r[0] for r in more]),
        np.stack([from_blobs(r[2], 8)[0] for r in more]),
        ["big.md"] * len(more),
    )
    expected.update({r[0]: (r[3], r[2]) for r in more})
    assert live(matrix) == expected
    assert np.shares_memory(matrix.view()[1], roomy)  # no copy
    # Past the room, it grows again, keeping every row.
    most = rows_for(range(400, 500), lambda i: "most.md", rng)
    matrix.put(
        np.array([r[0] for r in most]),
        np.stack([from_blobs(r[2], 8)[0] for r in most]),
        ["most.md"] * len(most),
    )
    expected.update({r[0]: (r[3], r[2]) for r in most})
    assert live(matrix) == expected and not np.shares_memory(matrix.view()[1], roomy)

    # Deleting a quarter of the rows compacts them away.
    gone = {"big.md", "most.md"}
    matrix.drop_pages(sorted(gone))
    for i in [i for i, (page, _) in expected.items() if page in gone]:
        del expected[i]
    assert live(matrix) == expected
    assert matrix.view()[3] is None and matrix.size == len(expected)
    # ...and it keeps working after.
    matrix.drop_pages(["p0.md"])
    for i in range(1, 6):
        del expected[i]
    assert live(matrix) == expected


def test_a_matrix_keeps_to_one_dimension():
    rng = np.random.default_rng(2)
    rows = rows_for([1, 2], lambda i: "a.md", rng) + rows_for([3], lambda i: "b.md", rng, dim=4)
    matrix = VectorMatrix.from_rows(rows)
    assert matrix.dim == 8 and sorted(live(matrix)) == [1, 2]
    assert VectorMatrix.from_rows(rows, dim=16) is None
    assert VectorMatrix.from_rows([]) is None
