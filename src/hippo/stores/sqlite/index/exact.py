"""Exact cosine search over a float32 matrix kept in memory.

Rows are unit vectors, so cosine similarity is one matrix-vector product. The
matrix grows by appending and shrinks by compaction; it is rebuilt from the
store when another connection changed the agent's vectors.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExactIndex", "locate", "top_positions"]


def top_positions(scores: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the ``limit`` highest ``scores``, highest first, ties by position: the start of
    a stable sort of all, so a longer call extends a shorter one (of rows tied at the cut, the first
    ones are taken, not any that a partition happens to leave there)."""
    limit = min(limit, len(scores))
    if limit <= 0:
        return np.zeros(0, dtype=np.intp)
    negated = -np.asarray(scores)
    cut = np.partition(negated, limit - 1)[limit - 1]
    above = np.flatnonzero(negated < cut)
    top = np.concatenate([above, np.flatnonzero(negated == cut)[:limit - len(above)]])
    if len(top) < limit:  # NaN scores: no order to keep
        top = np.argpartition(negated, limit - 1)[:limit]
    return top[np.lexsort((top, negated[top]))]


def locate(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``keys``: its position in ``sorted_keys`` and whether it is there."""
    at = np.searchsorted(sorted_keys, keys)
    found = at < len(sorted_keys)
    found[found] = sorted_keys[at[found]] == keys[found]
    return at, found


class ExactIndex:
    """Row keys (integers) with one unit vector each; brute-force top-k."""

    def __init__(self, dimension: int, keys: np.ndarray | None = None, matrix: np.ndarray | None = None) -> None:
        self.dimension = dimension
        self._keys = np.asarray(keys if keys is not None else [], dtype=np.int64)
        self._matrix = (
            np.asarray(matrix, dtype=np.float32)
            if matrix is not None
            else np.zeros((0, dimension), dtype=np.float32)
        )
        self._position = {int(k): i for i, k in enumerate(self._keys)}

    def __len__(self) -> int:
        return len(self._keys)

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The keys and their vectors, row for row."""
        return self._keys, self._matrix

    def add(self, keys: list[int], vectors: np.ndarray) -> None:
        """Add or replace rows."""
        fresh_keys, fresh_rows = [], []
        if not self._matrix.flags.writeable:  # loaded straight from the database's bytes
            self._matrix = self._matrix.copy()
        for key, vector in zip(keys, vectors):
            pos = self._position.get(key)
            if pos is None:
                fresh_keys.append(key)
                fresh_rows.append(vector)
            else:
                self._matrix[pos] = vector
        if fresh_keys:
            start = len(self._keys)
            self._keys = np.concatenate([self._keys, np.asarray(fresh_keys, dtype=np.int64)])
            self._matrix = np.vstack([self._matrix, np.asarray(fresh_rows, dtype=np.float32)])
            for offset, key in enumerate(fresh_keys):
                self._position[key] = start + offset

    def remove(self, keys: list[int]) -> None:
        doomed = [self._position[k] for k in keys if k in self._position]
        if not doomed:
            return
        keep = np.ones(len(self._keys), dtype=bool)
        keep[doomed] = False
        self._keys = self._keys[keep]
        self._matrix = self._matrix[keep]
        self._position = {int(k): i for i, k in enumerate(self._keys)}

    def search(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None, *,
               quick: bool = False) -> list[tuple[int, float]]:
        """The ``limit`` most similar keys, optionally only among ``allowed`` keys (exact: ``quick``
        changes nothing)."""
        if len(self._keys) == 0 or limit <= 0:
            return []
        scores = self._matrix @ np.asarray(query, dtype=np.float32)
        if allowed is not None:
            scores = np.where(np.isin(self._keys, allowed), scores, -np.inf)
        return [(int(self._keys[i]), float(scores[i])) for i in top_positions(scores, limit) if np.isfinite(scores[i])]

    def rough(self, query: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The live ones of ``allowed`` and their scores, exact already."""
        rows = np.flatnonzero(np.isin(self._keys, allowed))
        rows = rows[np.argsort(self._keys[rows])]
        return self._keys[rows], self._matrix[rows] @ np.asarray(query, dtype=np.float32)

    def exact(self, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
        rows = [self._position[int(k)] for k in keys]
        return self._matrix[rows] @ np.asarray(query, dtype=np.float32)
