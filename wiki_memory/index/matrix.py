"""The vectors of one model in memory, for numpy search, kept current by this process's writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wiki_memory.index.embed import from_blobs

# Compact when more than this share of the rows belong to rewritten or deleted pages.
DEAD_SHARE = 0.25
GROWTH = 1.1  # spare room a write adds: 4,000 rows (6 MB) at 40,000 chunks


class VectorMatrix:
    """Chunk ids, unit vectors and the page of each row.

    A write changes a few rows of tens of thousands (about four per page):
    new rows go into spare room at the end, and the rows of a rewritten or deleted page are
    masked, not removed, until over a quarter of all rows are masked. Why: dropping and
    adding rows by copying the whole matrix made every write pay for the whole wiki.

    Rows are in no particular order; searches break ties by chunk id.
    """

    def __init__(self, ids: Any, vectors: Any, pages: list[str]):
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        self.dim = int(vectors.shape[1])
        self.size = len(ids)  # rows in use, masked ones included
        self._ids = ids
        self._vectors = vectors  # may be read-only (a view of the bytes read): copied on first growth
        self._pages = pages
        self._alive = np.ones(self.size, dtype=bool)
        self._masked = 0
        self._rows_of: dict[str, list[int]] | None = None  # page -> its rows, built on the first change

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[int, int, bytes, str]], dim: int | None = None) -> VectorMatrix | None:
        """From (chunk, dim, vector bytes, page) rows, or None when there are none; rows of
        another dimension (`dim`, else the first row's) are left out."""
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        if not rows:
            return None
        dim = rows[0][1] if dim is None else dim
        rows = [r for r in rows if r[1] == dim]
        if not rows:
            return None
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        vectors = from_blobs([r[2] for r in rows], dim)
        return cls(ids, vectors, [r[3] for r in rows])

    def view(self) -> tuple[Any, Any, list[str], Any]:
        """(ids, vectors, pages, live rows or None when all are) of the rows in use."""
        n = self.size
        return self._ids[:n], self._vectors[:n], self._pages, (self._alive[:n] if self._masked else None)

    def drop_pages(self, pages: Sequence[str]) -> None:
        """Mask every row of `pages`."""
        rows_of = self._page_rows()
        for page in pages:
            for row in rows_of.pop(page, ()):
                self._mask(row)
        self._compact_if_sparse()

    def put(self, ids: Any, vectors: Any, pages: Sequence[str]) -> None:
        """Add rows; a chunk already present is replaced."""
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        if not len(ids):
            return
        rows_of = self._page_rows()
        n = self.size
        for row in np.flatnonzero(np.isin(self._ids[:n], ids) & self._alive[:n]).tolist():
            self._mask(row)
            rows_of[self._pages[row]].remove(row)
        end = n + len(ids)
        if end > len(self._ids):
            self._grow(end)
        self._ids[n:end] = ids
        self._vectors[n:end] = vectors
        self._alive[n:end] = True
        for offset, page in enumerate(pages):
            self._pages.append(page)
            rows_of.setdefault(page, []).append(n + offset)
        self.size = end
        self._compact_if_sparse()

    def _page_rows(self) -> dict[str, list[int]]:
        if self._rows_of is None:
            rows_of: dict[str, list[int]] = {}
            alive = self._alive
            for row, page in enumerate(self._pages[: self.size]):
                if alive[row]:
                    rows_of.setdefault(page, []).append(row)
            self._rows_of = rows_of
        return self._rows_of

    def _mask(self, row: int) -> None:
        if self._alive[row]:
            self._alive[row] = False
            self._masked += 1

    def _grow(self, needed: int) -> None:
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        capacity = max(needed, int(len(self._ids) * GROWTH) + 16)
        n = self.size
        ids = np.empty(capacity, dtype=np.int64)
        ids[:n] = self._ids[:n]
        vectors = np.empty((capacity, self.dim), dtype=np.float32)
        vectors[:n] = self._vectors[:n]
        alive = np.zeros(capacity, dtype=bool)
        alive[:n] = self._alive[:n]
        self._ids, self._vectors, self._alive = ids, vectors, alive

    def _compact_if_sparse(self) -> None:
        """Drop the masked rows once they are over DEAD_SHARE of all (one copy)."""
        if self._masked <= DEAD_SHARE * self.size:
            return
        import numpy as np  # deferred: numpy only where vectors are used: a search by words never loads it

        keep = np.flatnonzero(self._alive[: self.size])
        self._ids = self._ids[keep]
        self._vectors = self._vectors[keep]
        self._pages = [self._pages[row] for row in keep.tolist()]
        self.size = len(keep)
        self._alive = np.ones(self.size, dtype=bool)
        self._masked = 0
        self._rows_of = None
