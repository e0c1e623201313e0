"""The archive: pruning for size moves memories out of recall's way, and never deletes them.

When the database is over its cap (``max_db_bytes``), ``maintain`` ranks each agent's raw memories
by ``exp(feedback x 0.2) x 1 / (1 + days x 0.01)`` (days since the last reinforcement,
else since it was stored) and moves ``prune_percent`` of them to the archive, again and again until
the database is under the cap. The cap is the database's, but the agents share it: the next memory
to go is the least useful one of the agent whose memories take the most bytes (:func:`levelled`),
so an agent that floods the database archives its own memories down to the others' size before
any other agent loses one. An agent within its fair share of the cap (:func:`quiet_agents`) loses
none at all: when archiving the others' memories cannot bring the database under the cap (the
archive counts toward it too), ``maintain`` stops there and says so. Facts and keyed items stay:
they are small, and the current state of what the user said. The archive keeps a memory's text,
metadata, strength, feedback and provenance and an 8-bit copy of its vector (a quarter of the
float32 vector, most of which is what archiving saves); it has its own full-text index, so archived
memories are found by words (``search_archive``, ``include_archived=True`` on recall), and
``restore_memory`` brings one back and embeds it again. Only an explicit forget deletes from it,
reaching it by meaning as it reaches live memories.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Sequence

from hippo.core import validation as v
from hippo.core.fusion import Fusion
from hippo.core.hashing import content_hash
from hippo.core.keywords import ENGLISH_STOPWORDS, keyword_terms
from hippo.core.memories.reembed import Progress
from hippo.core.memories.summary import count_day
from hippo.core.ports import PruneCandidate
from hippo.core.ports.scoped import AgentStore
from hippo.core.ports.vectors import decode_int8, encode_int8
from hippo.core.strength import RETRIEVAL_BOOST, ScoreWeights, final_score, recency_after, strength_after
from hippo.errors import NotFound
from hippo.types import ArchivedHit, Chunk, Hit, MaintainResult

if TYPE_CHECKING:
    import numpy as np

    from hippo.core.embedding import EmbeddingService
    from hippo.core.ports import Store

__all__ = ["archived_hits", "forget_archived", "levelled", "maintain", "prune_rank", "quiet_agents", "restore",
           "search"]

_log = logging.getLogger("hippo.archive")

# 8-bit cosines are within 0.0023 of the exact ones on MiniLM (index/int8.py): archived memories this
# close under a forget's threshold are embedded again and compared exactly, as live ones are.
_NEAR = 0.01
_EMBED_BATCH = 256


def prune_rank(candidate: PruneCandidate, now: datetime) -> float:
    """The ranking for pruning: the feedback factor times recency (higher stays longer)."""
    days = max(0.0, now.timestamp() - candidate.since) / 86400.0
    return math.exp(max(-50.0, min(50.0, candidate.feedback * 0.2))) / (1.0 + days * 0.01)


def levelled(candidates: Sequence[PruneCandidate], now: datetime) -> list[PruneCandidate]:
    """The order in which memories go: each agent's least useful first (:func:`prune_rank`), the
    next one always from the agent whose remaining memories take the most bytes. An agent of 50
    memories loses none while another holds more bytes than it (ranked over every agent together,
    one agent's 5,000 new memories of 1 kB archived 49 of another's 50, issue 32)."""
    queues: dict[str, list[PruneCandidate]] = defaultdict(list)
    for candidate in candidates:
        queues[candidate.agent_id].append(candidate)
    held: dict[str, int] = {}
    for agent, mine in queues.items():
        mine.sort(key=lambda c: (prune_rank(c, now), c.since, c.id), reverse=True)  # taken from the end
        held[agent] = sum(max(1, c.size) for c in mine)
    heap = [(-size, agent) for agent, size in held.items()]
    heapq.heapify(heap)
    order = []
    while heap:
        _, agent = heapq.heappop(heap)
        candidate = queues[agent].pop()
        order.append(candidate)
        held[agent] -= max(1, candidate.size)
        if queues[agent]:
            heapq.heappush(heap, (-held[agent], agent))
    return order


def quiet_agents(candidates: Sequence[PruneCandidate], archived: dict[str, int], used: int, cap: int) -> set[str]:
    """The agents within their fair share of the cap, whose memories ``maintain`` never archives.

    The cap is shared equally by the agents that hold memories (live or archived): each may take
    ``cap / agents`` bytes. An agent's bytes are its memories' rows, live and archived (the archive
    counts toward the cap), with the rest of the database (indexes, facts, blocks, free pages) shared
    out in proportion: ``its rows x used / every agent's rows``. One agent alone, or agents of one
    size, are all over their share whenever the database is over the cap; an agent of 15 memories
    beside another's flood of 400 is not, and keeps them all (issue 46)."""
    held: dict[str, int] = defaultdict(int, archived)
    for candidate in candidates:
        held[candidate.agent_id] += max(1, candidate.size)
    rows = sum(held.values())
    return {agent for agent, size in held.items() if size * used * len(held) <= cap * rows}


def maintain(store: "Store", now: datetime, cap: int | None, percent: float,
             progress: Progress | None = None) -> MaintainResult:
    """Archive the bottom share of memories until the database is under ``cap`` bytes. One process
    at a time: another one's run (several servers on one schedule) makes this one return at once."""
    before = store.used_bytes()
    if cap is None or before <= cap:
        return MaintainResult(cap, before, before, 0)
    with store.exclusive("maintain") as mine:
        if not mine:
            return MaintainResult(cap, before, before, 0, note="another process is maintaining this database")
        return _archive_until_under(store, now, cap, percent, before, progress)


def _archive_until_under(store: "Store", now: datetime, cap: int, percent: float, before: int,
                         progress: Progress | None) -> MaintainResult:
    candidates = store.prune_candidates()
    quiet = quiet_agents(candidates, store.archived_bytes(), before, cap)
    order = levelled([c for c in candidates if c.agent_id not in quiet], now)
    step = max(1, math.ceil(len(order) * percent / 100.0))
    archived, used = 0, before
    for start in range(0, len(order), step):
        if used <= cap:
            break
        by_agent: dict[str, list[str]] = defaultdict(list)
        for candidate in order[start:start + step]:
            by_agent[candidate.agent_id].append(candidate.id)
        for agent, ids in by_agent.items():
            with store.transaction():  # the move and the agent's counter of the day together
                moved = store.archive_chunks(agent, ids, now)
                count_day(AgentStore(store, agent), now, {"archived": moved})
            archived += moved
        used = store.used_bytes()
        if progress is not None:
            progress(min(start + step, len(order)), len(order))
    store.compact()
    after = store.used_bytes()
    note = _over_cap(after, cap, len(quiet)) if after > cap else None
    if note is not None:
        _log.warning("maintain: %s", note)
    return MaintainResult(cap, before, after, archived, note)


def _over_cap(after: int, cap: int, quiet: int) -> str:
    """What ``maintain`` says when it stopped over the cap: what was archived, what was spared, why."""
    if not quiet:
        return (f"still {after:,} bytes, over the cap of {cap:,}: every memory that may be archived is; what is "
                "left is facts, keyed items, blocks and the archive itself")
    return (f"still {after:,} bytes, over the cap of {cap:,}: every memory of the agents over their share of it "
            f"is archived; the agents within their share ({quiet}) keep theirs; the rest is facts, keyed items, "
            "blocks and the archive (forget from it, or raise the cap)")


def search(store: "AgentStore", query: str, limit: int) -> list[ArchivedHit]:
    """The agent's archived memories that match ``query``'s words, best first (BM25)."""
    terms = tuple(keyword_terms(query, stopwords=ENGLISH_STOPWORDS) or keyword_terms(query))
    return [ArchivedHit(chunk, score) for chunk, score in store.search_archive(terms, limit)]


def archived_hits(found: list[ArchivedHit], now: datetime, *, fusion: Fusion, weights: ScoreWeights,
                  decay_lambda: float, min_relevance: float) -> list[Hit]:
    """Archived matches scored as recall scores a live one found by words only (no vector), marked.
    Faded ones (strength under 0.05, which recall hides) are kept: the archive was asked for."""
    from hippo.core.curation import feedback

    best = max((h.score for h in found), default=0.0)
    hits = []
    for item in found:
        c = item.chunk
        relevance = fusion.relevance(None, item.score / best if best > 0 else 0.0)
        strength = strength_after(c.running_intensity, c.access_count,
                                  max(0.0, (now - c.last_accessed_at).total_seconds()) / 3600.0, decay_lambda)
        if relevance < min_relevance:  # asked for the archive: a faded memory is shown, ranked by its strength
            continue
        recency = recency_after(max(0.0, (now - (c.reinforced_at or c.created_at)).total_seconds()) / 3600.0)
        liked = feedback.factor(c.feedback, relevance)
        keyword = item.score / best if best > 0 else 0.0
        hits.append(Hit(c, final_score(relevance, strength, recency, weights) * liked, relevance, None, keyword,
                        strength, recency, 0.0, liked, archived=True))
    return hits


def restore(store: "AgentStore", embedding: "EmbeddingService", chunk_id: str, now: datetime) -> Chunk:
    """Move an archived memory back into recall, embedded again (pending while the embedder is
    down), with a retrieval event: asking for it back is a use, and a faded memory is
    recalled again. A live memory with the same text (stored again meanwhile) wins: the archived
    copy goes."""
    chunk_id = v.check_chunk_id(chunk_id)
    found = store.archived_chunks([chunk_id])
    if not found:
        raise NotFound(f"no archived memory {chunk_id} for agent {store.agent_id!r}")
    chunk = found[0]
    live = store.memories_by_hash([chunk.content_hash or content_hash(chunk.content)])
    if live:
        store.delete_archived([chunk_id])
        return next(iter(live.values()))
    vector = embedding.windows([chunk.content])[0]  # a long memory's windows come back with it
    with store.transaction():
        store.restore_chunks([chunk_id])
        if vector is not None:
            store.set_vectors({chunk_id: vector})
        store.record_retrievals([chunk_id], now, boost=RETRIEVAL_BOOST)
    return store.get_chunks([chunk_id])[0]


def forget_archived(store: "AgentStore", embedding: "EmbeddingService", vector: "np.ndarray | None",
                    words: Sequence[str], threshold: float, limit: int) -> list[tuple[Chunk, float | None]]:
    """Archived chunks a forget reaches, by the rule for live ones: cosine to the description at
    least ``threshold`` (most similar first, with its similarity), then those that hold every word of
    it; at most ``limit``. Memories archived without a vector (before the archive kept them, or
    since a model switch) are embedded here, once: their copy is kept."""
    if limit <= 0:
        return []
    found: dict[str, float | None] = {}
    if vector is not None:
        found.update(_by_meaning(store, embedding, vector, threshold, limit))
    for chunk, _ in store.search_archive(words, limit, every_term=True) if words else []:
        if len(found) < limit:
            found.setdefault(chunk.id, None)
    chunks = {c.id: c for c in store.archived_chunks(list(found))}
    return [(chunks[i], sim) for i, sim in found.items() if i in chunks]


def _by_meaning(store: "AgentStore", embedding: "EmbeddingService", vector: "np.ndarray",
                threshold: float, limit: int) -> dict[str, float]:
    """Archived ids at least ``threshold`` similar to ``vector``, best first: the 8-bit copies pick
    the candidates, which are embedded again for the exact cosine a live memory would be given."""
    import numpy as np

    dimension = len(vector)
    codes = store.archived_vectors()
    lacking = [i for i, code in codes.items() if code is None or len(code) != dimension + 4]
    if lacking:
        codes.update(_embed_archived(store, embedding, lacking))
    kept = {i: code for i, code in codes.items() if code is not None and len(code) == dimension + 4}
    ids = list(kept)
    rough = decode_int8(list(kept.values()), dimension) @ vector
    near = np.flatnonzero(rough >= threshold - _NEAR)
    near = near[np.argsort(-rough[near], kind="stable")][:2 * limit + 10]
    chunks = store.archived_chunks([ids[p] for p in near])
    exact = embedding.windows([c.content for c in chunks])  # a long memory's best window, as live ones
    approx = dict(zip(ids, rough.tolist()))
    sims = {c.id: float((v @ vector).max()) if v is not None else approx[c.id] for c, v in zip(chunks, exact)}
    return dict(sorted(((i, sim) for i, sim in sims.items() if sim >= threshold), key=lambda item: -item[1])[:limit])


def _embed_archived(store: "AgentStore", embedding: "EmbeddingService", ids: list[str]) -> dict[str, bytes]:
    made: dict[str, bytes] = {}
    for start in range(0, len(ids), _EMBED_BATCH):
        chunks = store.archived_chunks(ids[start:start + _EMBED_BATCH])
        vectors = embedding.documents([c.content for c in chunks])
        codes = {c.id: encode_int8(v) for c, v in zip(chunks, vectors) if v is not None}
        store.set_archived_vectors(codes)
        made.update(codes)
    return made
