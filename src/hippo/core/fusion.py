"""Merging vector and keyword candidates into one relevance in [0, 1]. Pure."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Fusion", "keyword_scores"]


def keyword_scores(bm25: dict[str, float]) -> dict[str, float]:
    """BM25 scores scaled against the best keyword match of this query, in [0, 1]."""
    if not bm25:
        return {}
    best = max(bm25.values())
    if best <= 0:
        return {key: 0.0 for key in bm25}
    return {key: max(0.0, score) / best for key, score in bm25.items()}


@dataclass(frozen=True, slots=True)
class Fusion:
    """Relevance as a weighted sum of cosine similarity and scaled BM25.

    A chunk that only one side found gets 0 from the other side, so a rare
    token that the vectors miss still ranks through its keyword score.
    """

    vector_weight: float = 0.5
    # The cosine that unrelated texts get from the embedder (``Thresholds.unrelated``): the vector
    # side reads the cosine above it, rescaled to [0, 1], so that a model whose cosines all sit
    # high (multilingual-e5-small: ~0.7 for unrelated English) still separates its candidates.
    floor: float = 0.0

    def rescaled(self, similarity: float) -> float:
        """A cosine on [0, 1] above the model's unrelated level (``Thresholds.unrelated``)."""
        return min(1.0, max(0.0, (similarity - self.floor) / (1.0 - self.floor)))

    def relevance(self, similarity: float | None, keyword: float | None) -> float:
        sim = self.rescaled(similarity or 0.0)
        kw = keyword or 0.0
        return self.vector_weight * sim + (1.0 - self.vector_weight) * kw
