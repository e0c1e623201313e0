"""Merging vector and keyword candidates into one relevance in [0, 1]. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["FEW_CHARS", "MANY_CHARS", "Fusion", "keyword_confidence", "keyword_scores"]

# How much text a set of memories must hold before its keyword statistics say something: below
# FEW_CHARS (about 300 words) a shared word is noise and relevance is the meaning's alone; from
# MANY_CHARS (about 3,000 words) the keyword side has its full weight; between, a log ramp.
# Measured in BENCHMARKS.md ("Relevance on small stores"): the small stores hold 180-1,200
# characters each, LongMemEval's session-level stores 48,000 and more, LoCoMo's conversations and
# LongMemEval's turn-level stores are never read whole by one recall.
FEW_CHARS = 1_800
MANY_CHARS = 18_000


def keyword_confidence(chars: int) -> float:
    """How much weight the keyword side earns in a set of memories holding ``chars`` characters in
    all: 0 up to :data:`FEW_CHARS`, 1 from :data:`MANY_CHARS`, log-linear between. BM25's document
    frequencies and its scaling against the best match need a corpus: over six short memories one
    ordinary shared word ("pick") outweighs a memory that answers in other words."""
    if chars <= FEW_CHARS:
        return 0.0
    if chars >= MANY_CHARS:
        return 1.0
    return math.log(chars / FEW_CHARS) / math.log(MANY_CHARS / FEW_CHARS)


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
    # The share of its weight the keyword side keeps in this pool (``trusting_keywords``): 1 but in
    # a small set of memories, whose keyword statistics tell little.
    keyword_share: float = 1.0
    # Whether the embedder's vectors read meaning (``Thresholds.meaning``): only then may a small
    # store trust them over its shared words.
    meaning: bool = True

    def trusting_keywords(self, confidence: float) -> "Fusion":
        """This fusion with the keyword side's weight scaled by ``confidence`` (in [0, 1]). The
        meaning's side keeps its weight, so relevance stays on the configured scale
        (``min_relevance`` means what it meant): in a store this small the keyword side only stops
        reordering. A memory without a vector keeps the full keyword weight (:meth:`relevance`),
        since its words are all recall knows of it. An embedder whose vectors do not read meaning
        (``meaning=False``) keeps its keywords whatever the confidence."""
        if confidence >= 1.0 or not self.meaning:
            return self
        return replace(self, keyword_share=self.keyword_share * max(0.0, confidence))

    def rescaled(self, similarity: float) -> float:
        """A cosine on [0, 1] above the model's unrelated level (``Thresholds.unrelated``)."""
        return min(1.0, max(0.0, (similarity - self.floor) / (1.0 - self.floor)))

    def relevance(self, similarity: float | None, keyword: float | None) -> float:
        kw = keyword or 0.0
        if similarity is None:
            return (1.0 - self.vector_weight) * kw
        sim = self.rescaled(similarity)
        return self.vector_weight * sim + (1.0 - self.vector_weight) * self.keyword_share * kw
