"""A long memory's window vectors in the same index as every memory's own vector.

A memory longer than the model reads is embedded in overlapping windows (``embed_windows``): its
own vector (the first window) is held under its key as before, each later window under a key
derived from it (:func:`window_key`), in the same exact or HNSW index. :class:`WindowedIndex`
answers at the memory's level: a memory's similarity is the best of its vectors', and a search
returns each memory once. Keys below :data:`WINDOW_BASE` are memories (SQLite rowids); an index
without windows is searched exactly as before.
"""

from __future__ import annotations

import numpy as np

from hippo.stores.sqlite.index import VectorIndex
from hippo.stores.sqlite.index.exact import top_positions

__all__ = ["WINDOW_BASE", "WINDOW_SLOTS", "WindowedIndex", "owners", "window_key", "window_range"]

WINDOW_BASE = 1 << 62  # past any rowid SQLite hands out in practice; hnswlib takes it as a label
WINDOW_SLOTS = 256  # keys per memory: window n (1..255) of rowid r is WINDOW_BASE + r*256 + n


def window_key(rowid: int, n: int) -> int:
    """The key of window ``n`` (1 is the one after the memory's own vector) of the memory ``rowid``."""
    return WINDOW_BASE + rowid * WINDOW_SLOTS + n


def window_range(rowid: int) -> tuple[int, int]:
    """The lowest and highest key any window of the memory ``rowid`` can have."""
    return window_key(rowid, 1), window_key(rowid, WINDOW_SLOTS - 1)


def owners(keys: np.ndarray) -> np.ndarray:
    """The memory (rowid) each key stands for: itself, or the memory a window belongs to."""
    keys = np.asarray(keys, dtype=np.int64)
    return np.where(keys >= WINDOW_BASE, (keys - WINDOW_BASE) // WINDOW_SLOTS, keys)


def _best_per_owner(keys: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each memory once (sorted), with the best score of its keys."""
    mine = owners(keys)
    if not len(mine):
        return mine, np.asarray(scores)
    order = np.argsort(mine, kind="stable")
    mine, scores = mine[order], np.asarray(scores)[order]
    starts = np.flatnonzero(np.concatenate([[True], mine[1:] != mine[:-1]]))
    return mine[starts], np.maximum.reduceat(scores, starts)


class WindowedIndex:
    """A :class:`~hippo.stores.sqlite.index.VectorIndex` of memories over ``inner``, which also holds window keys.

    ``add`` takes a memory's vectors as one row (``(dimension,)``) or several (``(windows,
    dimension)``, the first its own vector): its earlier windows are replaced. ``remove`` takes
    memories' keys and removes their windows too. ``len`` counts memories."""

    def __init__(self, inner: VectorIndex, windows: np.ndarray | None = None) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self._windows = np.zeros(0, dtype=np.int64)
        self._owners = np.zeros(0, dtype=np.int64)
        self._set_windows(np.unique(np.asarray(windows if windows is not None else [], dtype=np.int64)))

    def _set_windows(self, windows: np.ndarray) -> None:
        """The sorted window keys held, and their memories (sorted too: a key grows with its rowid)."""
        self._windows, self._owners = windows, owners(windows)

    def __len__(self) -> int:
        return len(self.inner) - len(self._windows)

    @property
    def windows(self) -> int:
        """How many window vectors the index holds beside the memories' own."""
        return len(self._windows)

    def windows_of(self, rowids: np.ndarray) -> np.ndarray:
        """The window keys held for these memories, sorted: each memory's are one run of the sorted
        keys, found by bisection (a month's 4,000 memories among 78,000 windows: no scan of them)."""
        if not len(self._windows) or not len(rowids):
            return np.zeros(0, dtype=np.int64)
        rowids = np.unique(np.asarray(rowids, dtype=np.int64))
        low = np.searchsorted(self._owners, rowids, side="left")
        high = np.searchsorted(self._owners, rowids, side="right")
        counts = high - low
        if not counts.any():
            return np.zeros(0, dtype=np.int64)
        starts = np.repeat(low - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return self._windows[starts + np.arange(counts.sum())]

    def put(self, rows: dict[int, np.ndarray]) -> None:
        """Each memory's vectors (one row or several), replacing what it had."""
        keys: list[int] = []
        vectors: list[np.ndarray] = []
        for rowid, matrix in rows.items():
            matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
            keys += [rowid, *(window_key(rowid, n) for n in range(1, len(matrix)))]
            vectors += list(matrix)
        stale = np.setdiff1d(self.windows_of(np.fromiter(rows, dtype=np.int64, count=len(rows))), keys)
        if len(stale):
            self.inner.remove(stale.tolist())
            self._set_windows(np.setdiff1d(self._windows, stale, assume_unique=True))
        if keys:
            self.inner.add(keys, np.stack(vectors))
            fresh = np.asarray([k for k in keys if k >= WINDOW_BASE], dtype=np.int64)
            if len(fresh):
                self._set_windows(np.union1d(self._windows, fresh))

    def add(self, keys: list[int], vectors: np.ndarray) -> None:
        """Memories' own vectors, one row each (their windows stay)."""
        self.inner.add(keys, vectors)

    def remove(self, keys: list[int]) -> None:
        """Memories leave, with their windows."""
        doomed = self.windows_of(np.asarray(keys, dtype=np.int64))
        self.inner.remove([*keys, *doomed.tolist()])
        if len(doomed):
            self._set_windows(np.setdiff1d(self._windows, doomed, assume_unique=True))

    def _with_windows(self, allowed: np.ndarray | None) -> np.ndarray | None:
        if allowed is None or not len(self._windows):
            return allowed
        # Sorted already: every window key is above every rowid.
        return np.concatenate([np.asarray(allowed, dtype=np.int64), self.windows_of(allowed)])

    def search(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None, *,
               quick: bool = False) -> list[tuple[int, float]]:
        """The ``limit`` best memories by their best vector. ``quick`` (a dedup probe, which asks
        whether the whole text was stored already) compares the memories' own vectors only."""
        if not len(self._windows):
            return self.inner.search(query, limit, allowed, quick=quick)
        allowed = self._with_windows(allowed)
        want = min(len(self.inner), 2 * limit + 8)
        while True:
            found = self.inner.search(query, want, allowed, quick=quick)
            every = len(found) < want or want >= len(self.inner)
            if quick:
                found = [(k, s) for k, s in found if k < WINDOW_BASE]
            keys = np.asarray([k for k, _ in found], dtype=np.int64)
            mine, best = _best_per_owner(keys, np.asarray([s for _, s in found], dtype=np.float64))
            if len(mine) >= limit or every:
                top = top_positions(best, limit)
                return [(int(mine[i]), float(best[i])) for i in top]
            want = min(len(self.inner), 2 * want)

    def rough(self, query: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        found = self.inner.rough(query, self._with_windows(allowed))  # type: ignore[arg-type]
        if found is None or not len(self._windows):
            return found
        return _best_per_owner(*found)

    def exact(self, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        windows = self.windows_of(keys)
        if not len(windows):
            return self.inner.exact(query, keys)
        scores = self.inner.exact(query, np.concatenate([keys, windows]))
        best = np.array(scores[:len(keys)], dtype=np.float64)
        at = {int(k): i for i, k in enumerate(keys)}
        np.maximum.at(best, [at[int(o)] for o in owners(windows)], scores[len(keys):])
        return best
