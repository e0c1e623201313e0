"""The vector indexes of the SQLite store, which searches vectors in memory (PostgreSQL: pgvector).

``ExactIndex`` (numpy, brute force) and ``HnswIndex`` (hnswlib, the ``ann``
extra) both satisfy :class:`VectorIndex`: integer keys (SQLite rowids) with one
unit vector each, searched by inner product.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["VectorIndex"]


@runtime_checkable
class VectorIndex(Protocol):
    """The vector-index port: add or replace rows by key, remove keys, top-k search."""

    dimension: int

    def __len__(self) -> int: ...

    def add(self, keys: list[int], vectors: "np.ndarray") -> None:
        """Add rows, or replace the vector of keys already present."""

    def remove(self, keys: list[int]) -> None:
        """Drop keys; unknown keys are ignored. A removed key is never returned again."""

    def search(
        self, query: "np.ndarray", limit: int, allowed: "np.ndarray | None" = None, *, quick: bool = False
    ) -> list[tuple[int, float]]:
        """The ``limit`` best ``(key, similarity)`` pairs, best first, only among ``allowed`` keys if given.
        ``quick``: only near-identical vectors matter (a dedup probe); an approximate index may search
        less widely."""

    def rough(self, query: "np.ndarray", allowed: "np.ndarray") -> "tuple[np.ndarray, np.ndarray] | None":
        """The live ones of ``allowed`` (sorted) and scores that order them about as the exact ones
        would, for a caller that picks among them before it needs exact scores (``exact``); None when
        the index would rather not scan that many keys."""

    def exact(self, query: "np.ndarray", keys: "np.ndarray") -> "np.ndarray":
        """The exact similarities of live ``keys``, in their order."""
