"""Approximate nearest neighbours (HNSW, via hnswlib) behind the same interface as ``ExactIndex``.

Keys are hnswlib labels. hnswlib only marks removed elements; this index also
overwrites a removed element's vector with zeros first, so a saved file never
holds a removed vector, and it rebuilds itself once removed elements make up a
quarter of the graph.

Filtered searches over few allowed keys are answered without the graph: an
int8 copy of the vectors kept beside it (``Int8Rows``, a quarter of their
float32 size) picks the best ``limit + RESCORE_EXTRA`` allowed keys, whose
exact scores are then computed from the full vectors; larger filtered searches
use hnswlib's filter. hnswlib hands vectors back slowly (through Python lists),
so full vectors are read from ``source`` when the owner has a faster copy (the
SQLite store reads its own rows).
Measurements behind the defaults: ``bench/ann_choice.py`` and docs/decisions/speed.md.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from hippo.errors import MissingDependency
from hippo.stores.sqlite.index.exact import top_positions
from hippo.stores.sqlite.index.int8 import Int8Rows

__all__ = ["HnswIndex", "ann_available", "require_hnswlib"]

M = 16
EF_CONSTRUCTION = 100  # half the build and insert time of 200, recall@10 0.996 vs 0.998 (BENCHMARKS.md)
EF_SEARCH = 256  # recall@10 0.997 at 100k, 0.991 at 1M (BENCHMARKS.md); 128 would give 0.995
# A dedup probe (SearchQuery.near_duplicates) looks for a vector at cosine >= ~0.93 to the query:
# measured at 100k, ef 32 finds it as ef 256 does (docs/decisions/filtered-recall.md, "Issue 19's targets, measured").
QUICK_EF = 32
EXACT_FILTER_MIN = 1_000  # a filtered search over at most max(this, 50·sqrt(len)) keys is exact
# The int8 scan costs ~0.3 µs per allowed key; hnswlib's filter, with the set of allowed keys built
# per search, ~0.6·len/k ms for k allowed keys. On real vectors they cross at ~15k of 100k and
# ~60k of 1M keys (bench/ann_choice.py --sweep, BENCHMARKS.md), ~50·sqrt(len).
EXACT_FILTER_SCALE = 50
# Candidates beyond ``limit`` whose exact scores are read after the int8 scan. int8 scores are
# within 0.0023 of exact on 100k MiniLM vectors; 5 extra already gave the exact top 10/20/50 in
# all 2,700 filtered searches measured (docs/decisions/filtered-recall.md).
RESCORE_EXTRA = 16
_REBUILD_SHARE = 0.25  # removed elements, as a share of the graph, that trigger a rebuild
_MIN_CAPACITY = 1024


def ann_available() -> bool:
    """Whether hnswlib (the ``ann`` extra) can be imported."""
    try:
        require_hnswlib()
    except ImportError:
        return False
    return True


def require_hnswlib() -> ModuleType:
    try:
        import hnswlib
    except ImportError as exc:  # the ANN vector index: the ann extra
        raise MissingDependency("hnswlib", "ann") from exc
    return hnswlib


class HnswIndex:
    """Integer keys with one unit vector each; approximate top-k by inner product (cosine)."""

    def __init__(
        self,
        dimension: int,
        keys: np.ndarray | None = None,
        matrix: np.ndarray | None = None,
        *,
        m: int = M,
        ef_construction: int = EF_CONSTRUCTION,
        ef_search: int = EF_SEARCH,
        source: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.dimension = dimension
        self.source = source
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        count = 0 if keys is None else len(keys)
        self._graph = self._new_graph(max(_MIN_CAPACITY, count))
        self._rows = Int8Rows(dimension)  # also the record of which keys are live
        if count:
            self.add([int(k) for k in keys], np.asarray(matrix, dtype=np.float32))  # type: ignore[union-attr]

    def _new_graph(self, capacity: int) -> Any:
        graph = require_hnswlib().Index(space="ip", dim=self.dimension)
        graph.init_index(max_elements=capacity, M=self.m, ef_construction=self.ef_construction)
        graph.set_ef(self.ef_search)
        return graph

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def removed(self) -> int:
        """Removed elements still taking a slot in the graph (zeroed, never returned)."""
        return self._graph.element_count - len(self._rows)

    def keys(self) -> np.ndarray:
        """The live keys, sorted."""
        return self._rows.live()[0].copy()

    def add(self, keys: list[int], vectors: np.ndarray) -> None:
        """Add rows, or replace the vector of keys already present (removed keys come back)."""
        if not keys:
            return
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dimension)
        needed = self._graph.element_count + len(keys)
        if needed > self._graph.get_max_elements():
            self._graph.resize_index(max(needed, 2 * self._graph.get_max_elements()))
        # An existing label (live or removed) is updated in place and unmarked by hnswlib.
        self._graph.add_items(vectors, np.asarray(keys, dtype=np.uint64))
        self._rows.put(np.asarray(keys, dtype=np.int64), vectors)

    def remove(self, keys: list[int]) -> None:
        """Zero the vectors of ``keys`` and mark them removed; unknown keys are ignored."""
        unique = np.unique(np.asarray(keys, dtype=np.int64))
        doomed = unique[self._rows.holds(unique)].tolist()
        if not doomed:
            return
        labels = np.asarray(doomed, dtype=np.uint64)
        self._graph.add_items(np.zeros((len(doomed), self.dimension), dtype=np.float32), labels)
        for key in doomed:
            self._graph.mark_deleted(key)
        self._rows.drop(np.asarray(doomed, dtype=np.int64))
        if self.removed > _REBUILD_SHARE * self._graph.element_count and self.removed > _MIN_CAPACITY:
            self._rebuild()

    def _rebuild(self) -> None:
        keys = self.keys()
        vectors = self.vectors(keys)
        self._graph = self._new_graph(max(_MIN_CAPACITY, len(keys)))
        self._rows = Int8Rows(self.dimension)
        self.add(keys.tolist(), vectors)

    def vectors(self, keys: np.ndarray) -> np.ndarray:
        """The vectors of live ``keys``, one row each (from ``source`` when there is one)."""
        if len(keys) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.source is not None:
            found = np.asarray(self.source(keys), dtype=np.float32)
            return found if found.size else np.zeros((len(keys), self.dimension), dtype=np.float32)
        return np.asarray(self._graph.get_items(np.asarray(keys, dtype=np.uint64)), dtype=np.float32)

    def graph_vectors(self, keys: np.ndarray) -> np.ndarray:
        """The vectors the graph itself holds for ``keys`` (slow: for checks, not for search)."""
        return np.asarray(self._graph.get_items(np.asarray(keys, dtype=np.uint64)), dtype=np.float32)

    def search(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None, *,
               quick: bool = False) -> list[tuple[int, float]]:
        """The ``limit`` most similar keys, optionally only among ``allowed`` keys. ``quick`` (a dedup
        probe) walks the graph with a candidate list of ``QUICK_EF``: a near-identical vector is
        found by the first steps of the walk."""
        ef = QUICK_EF if quick else self.ef_search
        query = np.asarray(query, dtype=np.float32)
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.int64)
            if len(allowed) > max(EXACT_FILTER_MIN, EXACT_FILTER_SCALE * len(self._rows) ** 0.5):
                keep = set(allowed.tolist())
                found = self._approximate(query, min(limit, len(keep)), keep.__contains__, ef)
                if found is not None:
                    return found
            return self._exact(query, limit, allowed)
        found = self._approximate(query, min(limit, len(self._rows)), None, ef)
        return found if found is not None else self._exact(query, limit, self.keys())

    def _approximate(self, query: np.ndarray, k: int, keep: Any,
                     ef: int | None = None) -> list[tuple[int, float]] | None:
        """hnswlib's answer, or None when it could not find ``k`` live (and allowed) elements; ``ef``:
        the candidate list of this walk (``ef_search`` unless given)."""
        if k <= 0:
            return []
        self._graph.set_ef(max(self.ef_search if ef is None else ef, k))
        try:
            labels, distances = self._graph.knn_query(query, k=k, num_threads=1, filter=keep)
        except RuntimeError:
            return None  # fewer than k reachable: removed elements or a narrow filter
        return [(int(key), 1.0 - float(d)) for key, d in zip(labels[0], distances[0])]

    def rough(self, query: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The live ones of ``allowed`` and their int8 scores; None past the size where hnswlib's
        filter is the faster search (see ``search``)."""
        if len(allowed) > max(EXACT_FILTER_MIN, EXACT_FILTER_SCALE * len(self._rows) ** 0.5):
            return None
        return self._rows.scores(np.asarray(query, dtype=np.float32), np.asarray(allowed, dtype=np.int64))

    def exact(self, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return self.vectors(np.asarray(keys, dtype=np.int64)) @ np.asarray(query, dtype=np.float32)

    def _exact(self, query: np.ndarray, limit: int, keys: np.ndarray) -> list[tuple[int, float]]:
        """The best ``limit`` of the live ones of ``keys``: picked by the int8 copy, scored exactly."""
        if len(keys) == 0 or limit <= 0:
            return []
        keys, rough = self._rows.scores(query, keys)
        keys = keys[top_positions(rough, limit + RESCORE_EXTRA)]
        scores = self.vectors(keys) @ query
        return [(int(keys[i]), float(scores[i])) for i in top_positions(scores, limit)]

    # -- files ----------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the graph to ``path`` and the live keys with their int8 rows beside it
        (``<path>.rows.npz``), each atomically."""
        path = Path(path)
        for target, write in ((path, self._graph.save_index), (_rows_path(path), self._save_rows)):
            tmp = target.with_name(target.name + f".{os.getpid()}.tmp")
            try:
                write(str(tmp))
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)

    def _save_rows(self, tmp: str) -> None:
        keys, codes, scales = self._rows.live()
        with open(tmp, "wb") as handle:
            np.savez(handle, keys=keys, codes=codes, scales=scales)

    @classmethod
    def load(cls, path: str | os.PathLike[str], dimension: int, *, ef_search: int = EF_SEARCH) -> "HnswIndex":
        """The index saved at ``path``; raises ``OSError`` or ``ValueError`` when it cannot be read."""
        path = Path(path)
        try:
            with np.load(_rows_path(path), allow_pickle=False) as saved:
                rows = Int8Rows.from_arrays(saved["keys"], saved["codes"], saved["scales"])
        except (KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"cannot read the rows of the ANN index {path}: {exc}") from None
        if rows.dimension != dimension:
            raise ValueError(f"the ANN index {path} holds rows of another dimension")
        self = cls.__new__(cls)
        self.dimension, self.ef_search, self.source = dimension, ef_search, None
        graph = require_hnswlib().Index(space="ip", dim=dimension)
        try:
            graph.load_index(str(path), max_elements=max(_MIN_CAPACITY, len(rows)))
        except RuntimeError as exc:
            raise ValueError(f"cannot read the ANN index {path}: {exc}") from None
        self.m, self.ef_construction = graph.M, graph.ef_construction
        graph.set_ef(ef_search)
        self._graph, self._rows = graph, rows
        if graph.element_count < len(rows):
            raise ValueError(f"the ANN index {path} holds fewer elements than its key list")
        return self


def _rows_path(path: Path) -> Path:
    return path.with_name(path.name + ".rows.npz")
