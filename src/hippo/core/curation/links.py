"""Curation's links: memories recalled together link together, and a newer fact links to the
one it superseded.

Every recall that counts as a retrieval (``touch``) strengthens the ``co_recall`` link of each pair
among its best ``CO_RECALL_TOP`` hits by 1; a
link's strength is the number of recalls that returned both. ``related(id)`` lists a memory's links;
``recall_memories(..., expand=True)`` adds, after the hits, the memories linked at least
``EXPAND_MIN_STRENGTH`` times to one of the best ``EXPAND_FROM`` hits, each marked with the hit
that brought it (``linked_from``). Links hold only ids and go with either end: a forget leaves none.
A link that stays weak (one recall returned both ends) fades after 30 days without another, and an
agent keeps at most 100,000 weak links (:mod:`hippo.core.curation.rules`): the table stays bounded.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from itertools import combinations
from typing import TYPE_CHECKING

from hippo.core import validation as v
from hippo.core.curation.rules import STRONG_LINK
from hippo.core.fusion import Fusion
from hippo.core.ports import Candidates
from hippo.core.recall.pool import as_hits, rank
from hippo.core.strength import ScoreWeights
from hippo.errors import NotFound
from hippo.types import Hit, Link

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.ports.scoped import AgentStore

__all__ = ["CO_RECALL_TOP", "EXPAND_FROM", "EXPAND_MIN_STRENGTH", "co_recall_pairs", "expand", "related"]

CO_RECALL_TOP = 5  # the hits of one recall that link to each other: 10 pairs at most
EXPAND_FROM = 3  # the hits whose partners expand=True adds
EXPAND_MIN_STRENGTH = STRONG_LINK  # a link is strong from the second recall that returned both


def co_recall_pairs(hits: list[Hit]) -> tuple[tuple[str, str], ...]:
    """The pairs among a recall's best hits (live ones: the archive is not linked), each link's
    ends in order: the links its retrieval event strengthens (:mod:`hippo.core.ports.retrievals`)."""
    ids = sorted(h.id for h in hits[:CO_RECALL_TOP] if not h.archived)
    return tuple(combinations(ids, 2))


def related(store: "AgentStore", chunk_id: str) -> list[Link]:
    """A memory's links to live memories, strongest first (NotFound for an unknown id)."""
    chunk_id = v.check_chunk_id(chunk_id)
    if not store.get_chunks([chunk_id]):
        raise NotFound(f"no memory {chunk_id} for agent {store.agent_id!r}")
    rows = store.links([chunk_id])
    chunks = {c.id: c for c in store.get_chunks([r[1] for r in rows])}
    kinds = {("supersedes", True): "supersedes", ("supersedes", False): "superseded_by"}  # relation: as it is
    return [Link(chunks[other], kinds.get((kind, outgoing), kind), strength)
            for _, other, kind, strength, outgoing in rows if other in chunks]


def expand(store: "AgentStore", hits: list[Hit], vector: "np.ndarray | None", now: datetime, *,
           fusion: Fusion, weights: ScoreWeights, decay_lambda: float) -> list[Hit]:
    """The strong co-recall partners of the best hits that are not hits already, scored as recall
    scores them (by meaning alone: they were not found by the query's words), marked."""
    seeds = [h.id for h in hits[:EXPAND_FROM] if not h.archived]
    have = {h.id for h in hits}
    partners: dict[str, str] = {}
    for chunk, other, kind, _, _ in store.links(seeds, EXPAND_MIN_STRENGTH):
        if kind == "co_recall" and other not in have:
            partners.setdefault(other, chunk)
    if not partners:
        return []
    standings, cosines = store.score(list(partners), vector)
    found = Candidates(standings, cosines, {}, exhausted=True)
    relevance = {s.id: fusion.relevance(cosines.get(s.id), None) for s in standings}
    ranked = rank(found, relevance, now, limit=len(partners), weights=weights, decay_lambda=decay_lambda)
    return [replace(h, linked_from=partners[h.id]) for h in as_hits(store, ranked)]
