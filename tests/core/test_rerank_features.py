"""The learned reranking stage's features and model file (hippo.core.recall.rerank), without a store."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hippo.config import load_settings
from hippo.core.fusion import Fusion
from hippo.core.recall.rerank import FEATURES, MODEL_PATH, Pool, features, load_model
from hippo.errors import ConfigError


def pool(**changes) -> Pool:
    base = dict(
        ids=["a", "b", "c", "d"],
        relevance={"a": 0.9, "b": 0.3, "c": 0.5, "d": 0.2},
        similarity={"a": 0.8, "b": 0.1, "c": 0.6, "d": 0.4},
        bm25={"a": 4.0, "c": 2.0},
        preferred=frozenset({"c"}),
        lengths={"a": 40, "b": 9, "c": 120},
        near={"a": [("b", 1), ("d", 2)]},
        joined=frozenset({"d"}),
    )
    return Pool(**{**base, **changes})


def column(x: np.ndarray, name: str) -> list[float]:
    return [round(float(v), 6) for v in x[:, FEATURES.index(name)]]


def test_each_feature_reads_what_recall_knows_of_a_candidate():
    x = features(pool(), Fusion(vector_weight=0.6))
    assert x.shape == (4, len(FEATURES))
    assert column(x, "relevance") == [0.9, 0.3, 0.5, 0.2]
    assert column(x, "keyword") == [1.0, 0.0, 0.5, 0.0]
    assert column(x, "keyword_found") == [1, 0, 1, 0]
    assert column(x, "keyword_rank") == [1.0, 0.0, 0.5, 0.0]  # 1 / (1 + rank) among the keyword matches
    assert column(x, "similarity_rank") == [1.0, 0.25, 0.5, round(1 / 3, 6)]
    assert column(x, "similarity_gap") == [0.0, -0.7, -0.2, -0.4]
    assert column(x, "dated") == [0, 0, 1, 0]
    assert column(x, "log_length") == [round(math.log1p(n), 6) for n in (40, 9, 120, 0)]
    assert column(x, "joined") == [0, 0, 0, 1]


def test_neighbours_lend_both_ways_at_their_distance():
    x = features(pool(), Fusion(vector_weight=0.6))
    # a's neighbour b one place away, d two; each of them sees a.
    assert column(x, "context_1") == [0.3, 0.9, 0.0, 0.0]
    assert column(x, "context_2") == [0.2, 0.0, 0.0, 0.9]


def test_the_cosine_is_read_above_the_models_unrelated_level():
    x = features(pool(), Fusion(vector_weight=0.6, floor=0.5))
    assert column(x, "similarity") == [0.6, 0.0, 0.2, 0.0]


def test_an_empty_pool_has_no_rows():
    empty = pool(ids=[], relevance={}, similarity={}, bm25={}, near={}, joined=frozenset())
    assert features(empty, Fusion()).shape == (0, len(FEATURES))


def test_the_shipped_model_matches_the_features_and_prefers_a_better_match():
    data = json.loads(MODEL_PATH.read_text())
    assert data["features"] == list(FEATURES) and len(data["weights"]) == len(FEATURES)
    model = load_model()
    x = features(pool(), Fusion(vector_weight=0.6))
    p = model.probability(x)
    assert ((0 < p) & (p < 1)).all()
    assert p[0] > p[1]  # the best match by both sides stays above a weak one


def test_rerank_takes_only_its_named_choices():
    assert load_settings(rerank="learned").rerank == "learned"
    assert load_settings().rerank == "none"
    with pytest.raises(ConfigError, match="rerank must be 'none' or 'learned'"):
        load_settings(rerank="cross-encoder")
