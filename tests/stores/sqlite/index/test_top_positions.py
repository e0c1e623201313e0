"""``top_positions``: the start of a stable sort of the scores, however many are asked for."""

from __future__ import annotations

import numpy as np

from hippo.stores.sqlite.index.exact import top_positions


def test_a_longer_ranking_extends_a_shorter_one_ties_included():
    """Rows tied at the cut are taken by position (duplicated texts score alike): a narrow filter's
    rows are tested in this order, ranked further as more are needed, and none may be passed over."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        scores = rng.integers(0, 8, int(rng.integers(1, 500))).astype(np.float32)
        stable = np.argsort(-scores, kind="stable")
        for count in (1, 5, 76, 600):
            np.testing.assert_array_equal(top_positions(scores, count), stable[:min(count, len(scores))])


def test_unscorable_rows_and_empty_asks():
    assert top_positions(np.array([-np.inf, 1.0, -np.inf]), 3).tolist() == [1, 0, 2]
    assert len(top_positions(np.array([1.0, np.nan, 2.0, np.nan]), 3)) == 3
    assert top_positions(np.array([1.0, 2.0]), 0).tolist() == []
    assert top_positions(np.zeros(0), 5).tolist() == []
