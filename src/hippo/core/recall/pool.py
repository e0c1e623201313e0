"""Hybrid recall: vector and keyword candidates, fused, scored by relevance, strength and recency
(:func:`hippo.core.strength.final_score`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from hippo.core.curation import feedback
from hippo.core.fusion import Fusion, keyword_confidence, keyword_scores
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.ports import Candidates, ChunkFilter, SearchQuery
from hippo.core.recall.context import in_context
from hippo.core.recall.dates import named_period
from hippo.core.recall.later import LOOK, Ranked, asks_about_the_past, later_first
from hippo.core.recall.rerank import rescored
from hippo.core.strength import (
    HIDDEN_BELOW,
    ScoreWeights,
    final_score,
    recency_after,
    retrieval_boost,
    strength_after,
)
from hippo.types import Hit

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.ports.scoped import AgentStore

__all__ = ["as_hits", "current_then", "find_candidates", "keyword_match", "own_relevance", "rank", "ranked_pool",
           "touched", "trusted", "unseen_relevance"]

MAX_POOL = 10_000  # candidates per side at most, when decayed ones crowd the first pool


def unseen_relevance(found: Candidates, fusion: Fusion) -> float:
    """An upper bound on the relevance of any chunk a larger pool would add: keyword scores
    are scaled against this pool's best, which a larger pool cannot raise."""
    best = max(found.bm25.values(), default=0.0)
    return fusion.relevance(found.unseen_similarity, found.unseen_bm25 / best if best > 0 else 0.0)


def keyword_match(query: str) -> tuple[str, ...]:
    """The words a recall query is searched by: stop words dropped unless nothing else is left."""
    return tuple(keyword_terms(query, stopwords=ENGLISH_STOPWORDS) or keyword_terms(query))


def find_candidates(
    store: "AgentStore",
    query: str,
    query_vector: np.ndarray | None,
    pool: int,
    where: ChunkFilter,
) -> Candidates:
    """One pass of recall: the store's candidates for the query's vector and words. At an ``as_of``
    date the store found what was current then: a version superseded since is ranked as live."""
    return current_then(store.search(SearchQuery(query_vector, keyword_match(query), where, pool)), where)


def current_then(found: Candidates, where: ChunkFilter) -> Candidates:
    """At an ``as_of`` date, the candidates (which passed ``where``: current then) ranked as live: a
    version superseded since was not superseded yet."""
    if where.as_of is None or where.include_superseded:
        return found
    return replace(found, chunks=[replace(c, superseded_by=None) if c.superseded_by else c for c in found.chunks])


def own_relevance(
    found: Candidates, fusion: Fusion, preferred: frozenset[str] = frozenset(), preference: float = 0.0
) -> dict[str, float]:
    """Each candidate's relevance from its own cosine and keyword score; ``preferred`` chunks
    (observed in the period the query names) get ``preference`` added, at most 1."""
    keyword = keyword_scores(found.bm25)
    out = {}
    for chunk in found.chunks:
        relevance = fusion.relevance(found.similarity.get(chunk.id), keyword.get(chunk.id))
        out[chunk.id] = min(1.0, relevance + preference) if chunk.id in preferred else relevance
    return out


def rank(
    found: Candidates,
    relevance: dict[str, float],
    now: datetime,
    *,
    limit: int,
    weights: ScoreWeights,
    decay_lambda: float,
    min_relevance: float = 0.0,
    context: dict[str, float] | None = None,
) -> list[Ranked]:
    """Score every live candidate by its own ``relevance`` plus what its ``context`` adds, drop
    the decayed (< 0.05) and those whose own relevance is below ``min_relevance`` (context
    reorders what is relevant, it does not make an unrelated memory relevant), keep the best
    ``limit``. Each keeps its own relevance as its relevance, and what context lent apart: what
    decides whether a hit is worth showing (surfacing's threshold) reads the first."""
    context = context or {}
    keyword = keyword_scores(found.bm25)
    now_s = now.timestamp()
    ranked = []
    for chunk in found.chunks:
        if chunk.superseded_by is not None or relevance.get(chunk.id, 0.0) < min_relevance:
            continue
        idle_hours = max(0.0, now_s - chunk.last_accessed) / 3600.0  # clock skew counts as zero
        strength = strength_after(chunk.running_intensity, chunk.access_count, idle_hours, decay_lambda)
        if strength < HIDDEN_BELOW:
            continue
        recency = recency_after(max(0.0, now_s - chunk.created) / 3600.0)
        lent = context.get(chunk.id, 0.0)
        total = relevance[chunk.id] + lent
        liked = feedback.factor(chunk.feedback, relevance[chunk.id])
        parts = (final_score(total, strength, recency, weights) * liked, relevance[chunk.id],
                 found.similarity.get(chunk.id), keyword.get(chunk.id), strength, recency, lent, liked)
        ranked.append(Ranked(chunk, parts))
    ranked.sort(key=lambda r: (-r.score, r.standing.id))
    return ranked[:limit]


def as_hits(store: "AgentStore", ranked: list[Ranked]) -> list[Hit]:
    """The ranked candidates as hits, whole chunks read unless a step before read them (one deleted
    meanwhile is left out)."""
    chunks = {r.standing.id: r.chunk for r in ranked if r.chunk is not None}
    missing = [r.standing.id for r in ranked if r.chunk is None]
    chunks.update({c.id: c for c in store.get_chunks(missing)} if missing else {})
    return [Hit(chunks[r.standing.id], *r.parts) for r in ranked if r.standing.id in chunks]


def touched(hits: list[Hit], now: datetime) -> list[Hit]:
    """The hits as they stand after the retrieval event (the store applies it): one more access,
    accessed now, intensity raised by :data:`~hippo.core.strength.RETRIEVAL_BOOST`."""
    out = []
    for hit in hits:
        c = hit.chunk
        chunk = replace(
            c, running_intensity=retrieval_boost(c.running_intensity), access_count=c.access_count + 1,
            last_accessed_at=now,
        )
        out.append(replace(hit, chunk=chunk))
    return out


def _without(found: Candidates, ids: frozenset[str]) -> Candidates:
    """The candidates but ``ids``, left out before keyword scores are scaled against the best."""
    if not ids:
        return found
    return replace(found, chunks=[c for c in found.chunks if c.id not in ids],
                   similarity={k: v for k, v in found.similarity.items() if k not in ids},
                   bm25={k: v for k, v in found.bm25.items() if k not in ids})


def trusted(store: "AgentStore", query: str, found: Candidates, fusion: Fusion,
            query_vector: np.ndarray | None) -> Fusion:
    """The fusion for this pool: when the pool holds every memory the recall may return (both sides
    exhausted) and they hold little text, the keyword side weighs what its statistics can tell
    (:func:`~hippo.core.fusion.keyword_confidence`). A larger set, a recall by keywords alone, or a
    query naming an identifier (a word with three digits or more: a code, an error number, a year,
    which the vectors barely see; not "7am", "k8s" or "14th") keeps the configured weights."""
    if query_vector is None or not fusion.meaning or not found.exhausted or not found.chunks:
        return fusion
    if any(sum(ch.isdigit() for ch in term) >= 3 for term in keyword_match(query)):
        return fusion
    return fusion.trusting_keywords(keyword_confidence(sum(store.lengths([c.id for c in found.chunks]).values())))


def ranked_pool(store: "AgentStore", query: str, query_vector: np.ndarray | None, where: ChunkFilter,
                limit: int, now: datetime, *, settings: "Settings", fusion: Fusion,
                weights: ScoreWeights, exclude: frozenset[str] = frozenset()) -> tuple[list[Ranked], Candidates]:
    """The best ``limit`` candidates (none of ``exclude``) and the pool they came from. A query that
    names a day or month ("on October 13, 2023") prefers what was observed then, unless the caller
    bounded the time."""
    pool = max(50, limit * 5)
    period = None
    if settings.date_preference and where.since is None and where.until is None:
        period = named_period(query, now)
    while True:
        found = _without(find_candidates(store, query, query_vector, pool, where), exclude)
        if settings.keyword_trust:
            fusion = trusted(store, query, found, fusion, query_vector)
        unseen = unseen_relevance(found, fusion)
        preferred: frozenset[str] = frozenset()
        if period is not None:
            dated = _without(find_candidates(store, query, query_vector, pool,
                                             replace(where, since=period[0], until=period[1])), exclude)
            unseen = max(unseen, unseen_relevance(dated, fusion) + settings.date_preference)
            found, preferred = found.merged(dated), frozenset(c.id for c in dated.chunks)
        relevance = own_relevance(found, fusion, preferred, settings.date_preference)
        if settings.rerank == "learned":
            found, relevance, context = rescored(store, found, relevance, query_vector, fusion=fusion,
                                                 preferred=preferred, where=where)
        else:
            found, relevance, context = in_context(store, found, relevance, query_vector, fusion=fusion,
                                                   weight=settings.context_weight, where=where)
        found = current_then(found, where)  # the neighbours context joined passed ``where`` too
        ranked = rank(found, relevance, now, limit=max(limit, LOOK), weights=weights, context=context,
                      decay_lambda=settings.decay_lambda, min_relevance=settings.min_relevance)
        if settings.prefer_later and period is None and not asks_about_the_past(query):
            ranked = later_first(store, ranked, fusion, weights)
        ranked = ranked[:limit]
        # Decayed or irrelevant candidates may have crowded live ones out of the pool; a larger
        # pool helps only if a chunk outside it could still reach min_relevance.
        if len(ranked) >= limit or found.exhausted or pool >= MAX_POOL or unseen < settings.min_relevance:
            return ranked, found
        pool *= 4
