"""Conversational context in recall: a memory is also as relevant as the memories around it.

Memories stored one after another in one conversation explain each other: the answer to "when did
Caroline go to the support group?" is often the turn after the one that names the group
("Yesterday!"). So recall lends each memory part of its neighbours' relevance: ``weight`` times the
best relevance one place away, half that two places away, reported as ``(1 - r) x context`` beside
the memory's own relevance ``r`` so that the two stay in [0, 1] and a memory never loses by its
neighbours.

Neighbours are the memories (not facts) of the same conversation, the same ``session_id`` (a
captured memory has its observed session's), stored up to :data:`REACH` places before or after in
id order. A memory without a session borrows nothing, and memories that merely share an hour lend
nothing: in one database an agent's experiences, its imported notes and its captured turns are
written side by side without being one conversation (issue 33: a prompt about billing surfaced a
key-rotation error stored in the same hour). The best :data:`SEEDS` candidates by their own
relevance bring their neighbours into the pool, scored by their own cosine (they are outside the
pool, so their keyword score is taken as none). What context adds only reorders: whatever decides
that a memory is relevant enough to show reads its own relevance (``recall.rank``).

Measured on LoCoMo development (``bench/locomo.py``; docs/decisions/recall.md, "Conversational context"). Bounding
neighbours by the session instead of the hour (issue 33) changed none of its figures: each LoCoMo
session falls on one date, and no two on the same one (R@10 0.738 both).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from hippo.core.fusion import Fusion
from hippo.core.ports import Candidates

if TYPE_CHECKING:
    from hippo.core.ports import ChunkFilter
    from hippo.core.ports.scoped import AgentStore

__all__ = ["REACH", "SEEDS", "Widened", "best_seeds", "in_context", "with_neighbours"]

REACH = 2
SEEDS = 8


# The candidates widened by their neighbours, each one's own relevance, and what the neighbours add.
Widened = tuple[Candidates, dict[str, float], dict[str, float]]


def in_context(store: "AgentStore", found: Candidates, relevance: dict[str, float], query_vector: np.ndarray | None,
               *, fusion: Fusion, weight: float, where: ChunkFilter) -> Widened:
    """The candidates with the neighbours of the best ones added, their own relevance, and what
    context adds to each. Only neighbours that pass ``where`` join or lend; ``weight`` 0 adds
    nothing."""
    if weight <= 0 or not relevance:
        return found, relevance, {}
    near = store.neighbours(best_seeds(found, relevance, SEEDS), REACH, where)
    found, relevance = with_neighbours(store, found, relevance, near, query_vector, fusion)
    context: dict[str, list[float]] = {}  # id -> best neighbour relevance at each distance
    for seed, others in near.items():
        for other, distance in others:
            for a, b in ((seed, other), (other, seed)):
                best = context.setdefault(a, [0.0] * REACH)
                best[distance - 1] = max(best[distance - 1], relevance.get(b, 0.0))
    added = {}
    for chunk_id, best in context.items():
        lent = min(1.0, sum(weight * 0.5**d * r for d, r in enumerate(best)))
        added[chunk_id] = (1.0 - relevance.get(chunk_id, 0.0)) * lent
    return found, relevance, added


def best_seeds(found: Candidates, relevance: dict[str, float], count: int) -> list[str]:
    """The ``count`` best live candidates by their own relevance: whose neighbours join and lend."""
    live = {c.id for c in found.chunks if c.superseded_by is None}
    return sorted((i for i in relevance if i in live), key=lambda i: (-relevance[i], i))[:count]


def with_neighbours(
    store: "AgentStore",
    found: Candidates,
    relevance: dict[str, float],
    near: dict[str, list[tuple[str, int]]],
    query_vector: np.ndarray | None,
    fusion: Fusion,
) -> tuple[Candidates, dict[str, float]]:
    """Neighbours outside the pool joined to it, with their relevance from their cosine alone."""
    missing = list(dict.fromkeys(o for others in near.values() for o, _ in others if o not in relevance))
    if not missing:
        return found, relevance
    added, cosines = store.score(missing, query_vector)
    similarity = {**found.similarity, **cosines}
    relevance = {**relevance, **{c.id: fusion.relevance(similarity.get(c.id), None) for c in added}}
    return replace(found, chunks=[*found.chunks, *added], similarity=similarity), relevance
