"""A learned re-scoring of recall's fused candidates (``Settings.rerank = "learned"``, opt-in).

Recall's default ranks a candidate by a fixed fusion of its cosine and keyword score, plus what its
neighbours in the conversation lend (``hippo.core.recall.context``). This stage re-scores the same pool by
a logistic regression over what recall already knows of each candidate, read together: its own
relevance, cosine and keyword score; where each side ranked it; how far its cosine is from the
pool's best; whether it was observed in the period the query names; how long it is; and the best
relevance of its neighbours one and two places away in the same conversation (the neighbours of the
best :data:`SEEDS` candidates join the pool, as context's do). The weights are in
``rerank_model.json``, fitted by ``bench/rerank.py`` on the two development benchmarks' pools
(LoCoMo's turns and LongMemEval's user turns), with the embedder named there.

The model's probability replaces ``relevance + context`` in the score: ``Hit.relevance`` stays the
memory's own match (``min_relevance`` and surfacing read it) and ``Hit.context`` is what the model
added to it, or took from it. Measured in BENCHMARKS.md ("A learned reranking stage"): it lifts
both development files, and is opt-in because it does not reach every target the default is held to.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hippo.core.fusion import Fusion
from hippo.core.ports import Candidates
from hippo.core.recall.context import REACH, Widened, best_seeds, with_neighbours

if TYPE_CHECKING:
    from hippo.core.ports import ChunkFilter
    from hippo.core.ports.scoped import AgentStore

__all__ = ["FEATURES", "SEEDS", "Model", "Pool", "features", "load_model", "rescored"]

MODEL_PATH = Path(__file__).with_name("rerank_model.json")
SEEDS = 20  # the best candidates whose conversation neighbours join the pool and lend
FEATURES = ("relevance", "similarity", "keyword", "keyword_found", "keyword_rank", "similarity_rank",
            "similarity_gap", "dated", "log_length", "context_1", "context_2", "joined")


@dataclass(frozen=True, slots=True)
class Pool:
    """What the features read of one query's candidates (``ids`` in pool order): own relevance,
    raw cosine and keyword score where known, those observed in the named period, lengths in
    characters, and the neighbours ``(id, distance)`` of each seed; ``joined`` ids came as neighbours."""

    ids: list[str]
    relevance: dict[str, float]
    similarity: dict[str, float]
    bm25: dict[str, float]
    preferred: frozenset[str]
    lengths: dict[str, int]
    near: dict[str, list[tuple[str, int]]]
    joined: frozenset[str]


@dataclass(frozen=True, slots=True)
class Model:
    """A logistic regression over :data:`FEATURES` (raw values: any scaling is in the weights)."""

    weights: np.ndarray
    bias: float

    def probability(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> Model:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{path.name} was fitted on other features: {data['features']}")
    return Model(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]))


def _ranks(scores: list[float | None]) -> np.ndarray:
    """1 / (1 + rank) of each known score among the known ones (best first), 0 where unknown."""
    known = sorted((i for i, s in enumerate(scores) if s is not None), key=lambda i: (-(scores[i] or 0.0), i))
    out = np.zeros(len(scores))
    for rank, i in enumerate(known):
        out[i] = 1.0 / (1.0 + rank)
    return out


def _context(pool: Pool) -> np.ndarray:
    """Per candidate, the best relevance of a neighbour one and two places away (seeds and theirs)."""
    where = {chunk_id: n for n, chunk_id in enumerate(pool.ids)}
    out = np.zeros((len(pool.ids), REACH))
    for seed, others in pool.near.items():
        for other, distance in others:
            if seed not in where or other not in where:
                continue
            a, b = where[seed], where[other]
            out[a, distance - 1] = max(out[a, distance - 1], pool.relevance.get(other, 0.0))
            out[b, distance - 1] = max(out[b, distance - 1], pool.relevance.get(seed, 0.0))
    return out


def features(pool: Pool, fusion: Fusion) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate of ``pool``, in its order."""
    ids = pool.ids
    cosine = np.array([pool.similarity.get(i, 0.0) for i in ids])
    best_bm25 = max(pool.bm25.values(), default=0.0)
    keyword = np.array([max(0.0, pool.bm25.get(i, 0.0)) / best_bm25 if best_bm25 > 0 else 0.0 for i in ids])
    context = _context(pool)
    columns = [
        np.array([pool.relevance.get(i, 0.0) for i in ids]),
        np.array([fusion.rescaled(c) for c in cosine]),
        keyword,
        np.array([float(i in pool.bm25) for i in ids]),
        _ranks([pool.bm25.get(i) for i in ids]),
        _ranks([pool.similarity.get(i) for i in ids]),
        cosine - (cosine.max() if len(ids) else 0.0),
        np.array([float(i in pool.preferred) for i in ids]),
        np.array([math.log1p(pool.lengths.get(i, 0)) for i in ids]),
        context[:, 0],
        context[:, 1],
        np.array([float(i in pool.joined) for i in ids]),
    ]
    return np.stack(columns, axis=1) if ids else np.zeros((0, len(FEATURES)))


def rescored(store: "AgentStore", found: Candidates, relevance: dict[str, float], query_vector: np.ndarray | None, *,
             fusion: Fusion, preferred: frozenset[str], where: "ChunkFilter") -> Widened:
    """The candidates with the seeds' neighbours joined, their own relevance, and per candidate what
    the model adds to it (its probability minus the own relevance): ``recall.rank`` reads the sum."""
    if not relevance:
        return found, relevance, {}
    near = store.neighbours(best_seeds(found, relevance, SEEDS), REACH, where)
    pooled = set(relevance)
    found, relevance = with_neighbours(store, found, relevance, near, query_vector, fusion)
    ids = [c.id for c in found.chunks]
    pool = Pool(ids, relevance, found.similarity, found.bm25, preferred, store.lengths(ids), near,
                frozenset(i for i in ids if i not in pooled))
    probability = load_model().probability(features(pool, fusion))
    return found, relevance, {i: float(p) - relevance.get(i, 0.0) for i, p in zip(ids, probability)}
