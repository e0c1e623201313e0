"""The int8 copy of an HNSW index's vectors, and the filtered exact path that scans it."""

from __future__ import annotations

import numpy as np
import pytest

from hippo.core.ports.vectors import quantize
from hippo.stores.sqlite.index.hnsw import HnswIndex, ann_available
from hippo.stores.sqlite.index.int8 import Int8Rows

DIM = 64


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def as_dict(rows: Int8Rows, query: np.ndarray, keys) -> dict[int, float]:
    found, scores = rows.scores(query, np.asarray(keys))
    return dict(zip(found.tolist(), scores.tolist()))


def test_scores_are_close_to_exact_dot_products():
    rng = np.random.default_rng(0)
    vectors, queries = unit(rng, 2_000), unit(rng, 20)
    rows = Int8Rows(DIM)
    rows.put(np.arange(2_000) * 5, vectors)
    for query in queries:
        keys, scores = rows.scores(query, np.arange(10_000))  # keys not present are skipped
        assert np.array_equal(keys, np.arange(2_000) * 5)
        assert np.abs(scores - vectors @ query).max() < 0.01
    codes, scales = quantize(vectors[:3])
    assert codes.dtype == np.int8 and np.allclose(codes * scales[:, None], vectors[:3], atol=scales.max())


def test_put_replaces_drop_hides_and_put_brings_back():
    rng = np.random.default_rng(1)
    a, b = unit(rng, 2)
    rows = Int8Rows(DIM)
    rows.put(np.array([10, 20, 30]), np.stack([a, a, a]))
    rows.put(np.array([20, 20]), np.stack([a, b]))  # twice in one batch: the last vector wins
    assert as_dict(rows, b, [20])[20] == pytest.approx(1.0, abs=0.01)
    rows.drop(np.array([10, 99]))  # an unknown key is ignored
    assert set(as_dict(rows, a, [10, 20, 30])) == {20, 30} and len(rows) == 2
    keys, codes, _ = rows.live()
    assert keys.tolist() == [20, 30]
    rows.put(np.array([10]), b[None])
    assert as_dict(rows, b, [10])[10] == pytest.approx(1.0, abs=0.01) and len(rows) == 3


def test_keys_out_of_order_and_compaction_keep_every_row_right():
    rng = np.random.default_rng(2)
    vectors = unit(rng, 3_000)
    rows = Int8Rows(DIM)
    for start in range(1_000, 3_000, 250):  # appended in batches, then earlier keys fill the gaps
        rows.put(np.arange(start, start + 250), vectors[start:start + 250])
    rows.put(np.arange(999, -1, -1), vectors[999::-1])
    doomed = np.arange(0, 3_000, 3)
    rows.drop(doomed[:500])
    rows.drop(doomed[500:])  # a third dead: compacted
    zero = np.zeros(DIM, dtype=np.float32)
    rows.put(np.array([3]), zero[None])  # a zero vector is a live row all the same
    query = unit(rng, 1)[0]
    found = as_dict(rows, query, np.arange(3_000))
    expected = sorted({*range(3_000)} - {*doomed.tolist()} | {3})
    assert sorted(found) == expected
    for key in expected:
        want = 0.0 if key == 3 else float(vectors[key] @ query)
        assert found[key] == pytest.approx(want, abs=0.01)


def test_live_rows_round_trip_and_bad_arrays_are_refused():
    rng = np.random.default_rng(3)
    rows = Int8Rows(DIM)
    rows.put(np.arange(100), unit(rng, 100))
    rows.drop(np.array([5]))
    again = Int8Rows.from_arrays(*rows.live())
    query = unit(rng, 1)[0]
    assert as_dict(again, query, np.arange(100)) == as_dict(rows, query, np.arange(100))
    keys, codes, scales = rows.live()
    with pytest.raises(ValueError):
        Int8Rows.from_arrays(keys[::-1], codes, scales)
    with pytest.raises(ValueError):
        Int8Rows.from_arrays(keys, codes.astype(np.float32), scales)
    with pytest.raises(ValueError):
        Int8Rows.from_arrays(keys[:-1], codes, scales)


@pytest.mark.skipif(not ann_available(), reason="needs hnswlib (the ann extra)")
def test_filtered_exact_path_matches_brute_force_through_changes(tmp_path):
    rng = np.random.default_rng(4)
    vectors, queries = unit(rng, 5_000), unit(rng, 30)
    live = dict(enumerate(vectors))
    index = HnswIndex(DIM, np.arange(4_000), vectors[:4_000])
    index.add(list(range(4_000, 5_000)), vectors[4_000:])

    def check(idx: HnswIndex) -> None:
        allowed = np.arange(0, 5_000, 7)  # 715 keys: the exact path
        keys = [k for k in allowed.tolist() if k in live]
        matrix = np.stack([live[k] for k in keys])
        for query in queries:
            scores = matrix @ query
            truth = [keys[i] for i in np.argsort(-scores)[:10]]
            found = idx.search(query, 10, allowed)
            assert [k for k, _ in found] == truth
            assert [s for _, s in found] == pytest.approx(sorted(scores, reverse=True)[:10], abs=1e-5)

    check(index)
    gone = list(range(0, 5_000, 2))[:1_500]  # enough to trigger the graph's rebuild
    index.remove(gone)
    for key in gone:
        del live[key]
    index.add([7, 14], vectors[[1, 2]])  # replaced vectors are the ones scored
    live[7], live[14] = vectors[1], vectors[2]
    check(index)
    index.save(tmp_path / "graph.bin")
    check(HnswIndex.load(tmp_path / "graph.bin", DIM))
    saved_keys = HnswIndex.load(tmp_path / "graph.bin", DIM)._rows.live()[0].tolist()
    assert sorted(saved_keys) == sorted(live) and not (set(gone) - {14}) & set(saved_keys)
