"""WindowedIndex: memories with window vectors in one exact or HNSW index, answered per memory by
the best of its vectors, checked against a brute-force maximum over the same vectors."""

from __future__ import annotations

import numpy as np
import pytest

from hippo.providers.base import normalize_rows, window_starts
from hippo.stores.sqlite.index.exact import ExactIndex
from hippo.stores.sqlite.index.windowed import WINDOW_BASE, WindowedIndex, owners, window_key

DIM = 16


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    return normalize_rows(rng.normal(size=(n, DIM)))


def inners() -> list:
    made = [lambda: ExactIndex(DIM)]
    try:
        from hippo.stores.sqlite.index.hnsw import HnswIndex, require_hnswlib

        require_hnswlib()
        made.append(lambda: HnswIndex(DIM))
    except ImportError:
        pass
    return made


@pytest.fixture(params=inners(), ids=lambda f: type(f()).__name__)
def corpus(request):
    """60 memories, every third with 1-9 windows; the index and each memory's vectors."""
    rng = np.random.default_rng(7)
    vectors = {rowid: unit(rng, 1 + (rowid % 9 if rowid % 3 == 0 else 0)) for rowid in range(1, 61)}
    index = WindowedIndex(request.param())
    index.put(vectors)
    return index, vectors


def brute(vectors: dict[int, np.ndarray], query: np.ndarray, allowed=None) -> list[tuple[int, float]]:
    scores = {r: float((m @ query).max()) for r, m in vectors.items() if allowed is None or r in allowed}
    return sorted(scores.items(), key=lambda item: -item[1])


def test_keys_name_their_memory():
    keys = np.array([5, window_key(5, 1), window_key(5, 255), window_key(123456789, 7)])
    assert owners(keys).tolist() == [5, 5, 5, 123456789]
    assert window_key(1, 1) > WINDOW_BASE


def test_search_answers_each_memory_once_by_its_best_vector(corpus):
    index, vectors = corpus
    assert len(index) == 60 and index.windows == sum(len(m) - 1 for m in vectors.values())
    rng = np.random.default_rng(1)
    for query in unit(rng, 20):
        found = index.search(query, 10)
        truth = brute(vectors, query)[:10]
        assert len({r for r, _ in found}) == len(found) == 10
        assert [r for r, _ in found] == [r for r, _ in truth]
        assert np.allclose([s for _, s in found], [s for _, s in truth], atol=1e-5)


def test_allowed_memories_bring_their_windows(corpus):
    index, vectors = corpus
    allowed = np.array([3, 6, 9, 10, 11, 12, 30])
    query = vectors[6][-1]  # a window of memory 6 (7 vectors)
    found = index.search(query, 3, allowed)
    assert found[0][0] == 6 and found[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [r for r, _ in found] == [r for r, _ in brute(vectors, query, set(allowed.tolist()))[:3]]
    keys, scores = index.rough(query, allowed)
    assert keys.tolist() == sorted(allowed.tolist())
    truth = dict(brute(vectors, query, set(allowed.tolist())))
    assert np.allclose(scores, [truth[k] for k in keys.tolist()], atol=0.02)  # int8 scores under HNSW
    assert np.allclose(index.exact(query, allowed), [truth[k] for k in allowed.tolist()], atol=1e-5)


def test_a_dedup_probe_compares_whole_texts_only(corpus):
    index, vectors = corpus
    query = vectors[6][-1]
    assert index.search(query, 1)[0][0] == 6
    assert all(r != 6 or s < 0.99 for r, s in index.search(query, 5, quick=True))


def test_new_vectors_replace_a_memorys_windows_and_remove_takes_them(corpus):
    index, vectors = corpus
    count = index.windows
    query = vectors[6][-1]
    index.put({6: vectors[6][0]})  # a new text of one window
    assert index.windows == count - (len(vectors[6]) - 1)
    assert dict(index.search(query, 60))[6] < 0.99
    index.put({6: vectors[6]})
    assert index.search(query, 1)[0][0] == 6
    index.remove([6, 12])
    assert len(index) == 58 and index.windows == count - (len(vectors[6]) - 1) - (len(vectors[12]) - 1)
    assert all(r not in (6, 12) for r, _ in index.search(query, 58))


@pytest.mark.parametrize("length", [1, 254, 255, 600, 5000, 100_000])
def test_windows_cover_the_text_end_to_end(length):
    starts = window_starts(length, 254, 190, 64)
    assert starts[0] == 0 and starts == sorted(set(starts)) and len(starts) <= 64
    assert starts[-1] + 254 >= length  # the last window reaches the end
    if length <= 254:
        assert starts == [0]
    elif len(starts) < 64:
        assert max(np.diff(starts)) <= 190  # overlapping as asked
    else:
        assert max(np.diff(starts)) == pytest.approx((length - 254) / 63, abs=1)  # spread evenly


def test_a_search_that_finds_nothing_answers_nothing(corpus):
    index, vectors = corpus
    query = vectors[6][0]
    assert index.search(query, 5, np.array([1000, 1001])) == []
    assert index.rough(query, np.array([1000]))[0].tolist() == []
