"""Consolidation: the short-term buffer's important experiences move to long-term memory.

When (:func:`due`): the buffer is over 80% full, or an experience of importance 0.7 or more
arrived; also on :meth:`Memory.consolidate`, and every ``consolidate_every`` seconds in ``hippo
serve`` when configured. What (:func:`run`):

1. the entries of at least ``consolidation_threshold`` importance (0.6), most important first;
2. in one transaction: taken out of the buffer, written through the one writer (a verbatim or
   near-duplicate of a stored memory strengthens it instead: the embedder's duplicate band), and
   their type, importance and context recorded beside the memories;
3. then the buffer's pruning: entries older than ``short_term_max_age`` (an hour) and of importance
   under 0.5 leave the buffer;
4. the agent's long-term bounds (``ltm_max_memories``, ``ltm_min_importance``) are kept by
   archiving, never by deleting.

The counters (:class:`~hippo.types.ConsolidationStats`, and the day's: ``core/memories/summary.py``) are added to in the
transaction of the write they count (the move, the pruning, each archiving), so a process killed
between two steps leaves them saying what is stored; only ``runs`` and the buffer's own counts
(recorded, evicted) are written at the end of a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from hippo.core.curation.archive import prune_rank
from hippo.core.experiences.importance import record_of
from hippo.core.memories import writer
from hippo.core.memories.summary import count_day
from hippo.core.memories.writer import MemoryInput
from hippo.core.ports import ChunkFilter, ExperienceFilter
from hippo.core.strength import strength_after
from hippo.types import Consolidation, Experience

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core.embedding import EmbeddingService
    from hippo.core.experiences.short_term import Buffer
    from hippo.core.ports.scoped import AgentStore

__all__ = ["FULL_SHARE", "HIGH_IMPORTANCE", "KEEP_IMPORTANCE", "Outcome", "due", "keep_bounds", "run"]

FULL_SHARE = 0.8  # consolidate when the buffer is more than 80% full
HIGH_IMPORTANCE = 0.7  # ... or when an experience this important arrives
KEEP_IMPORTANCE = 0.5  # the buffer's pruning keeps old entries at least this important


@dataclass(frozen=True, slots=True)
class Outcome:
    result: Consolidation
    moved: dict[str, str] = field(default_factory=dict)  # short-term id -> long-term id


def due(entry: Experience, size: int, settings: "Settings") -> bool:
    return entry.importance >= HIGH_IMPORTANCE or size > FULL_SHARE * settings.short_term_size


def run(store: "AgentStore", embedding: "EmbeddingService", buffer: "Buffer", now: datetime,
        settings: "Settings", *, flush: bool = True) -> Outcome:
    """One consolidation (see the module docstring). ``flush``: write the counters even when
    nothing moved (an explicit run; a triggered one that moved nothing writes nothing)."""
    entries = buffer.entries()
    chosen = sorted((e for e in entries if e.importance >= settings.consolidation_threshold),
                    key=lambda e: (-e.importance, e.id))
    moved, merged = _move(store, embedding, buffer, chosen, now, settings) if chosen else ({}, 0)
    max_age = settings.short_term_max_age
    old = [e.id for e in entries if e.id not in moved and e.importance < KEEP_IMPORTANCE
           and (now - e.created_at).total_seconds() >= max_age]
    pruned = 0
    if old:
        with store.transaction():  # a durable buffer's removal and its count together
            pruned = len(buffer.take(old))
            if pruned:
                _count(store, now, {"pruned": pruned})
    if moved:
        keep_bounds(store, now, settings)
    counts = buffer.drain_counts()
    if moved or pruned or flush:
        with store.transaction():
            _count(store, now, {**counts, "runs": 1, "last_run_at": now.timestamp()})
    else:
        buffer.count(counts)  # put back what was drained: written with the next run that writes
    result = Consolidation(considered=len(entries), consolidated=len(moved), merged=merged, pruned=pruned,
                           remaining=len(entries) - len(moved) - pruned, ids=list(dict.fromkeys(moved.values())))
    return Outcome(result, moved)


def _move(store: "AgentStore", embedding: "EmbeddingService", buffer: "Buffer", chosen: list[Experience],
          now: datetime, settings: "Settings") -> tuple[dict[str, str], int]:
    """Write ``chosen`` to long-term memory in one transaction; short-term id -> memory id, and
    how many strengthened a memory already held."""
    inputs = [writer.check(MemoryInput(e.content, {"tags": e.tags} if e.tags else None, e.importance,
                                       e.observed_at, e.source, e.session_id), max_chars=settings.max_content_chars)
              for e in chosen]
    embedding.documents([e.content for e in chosen])  # outside the lock; the writer finds them cached
    taken: set[str] = set()
    try:
        with store.transaction():
            taken = set(buffer.take([e.id for e in chosen]))
            kept = [(e, item) for e, item in zip(chosen, inputs) if e.id in taken]
            results = writer.write(store, embedding, [item for _, item in kept], lambda: now,
                                   merge_near=True)
            store.put_experiences([record_of(e, r.id, now) for (e, _), r in zip(kept, results)])
            if results:  # counted with the write: a kill after the commit leaves the count true
                _count(store, now, {"consolidated": len(results),
                                              "merged": sum(r.action == "strengthened" for r in results)})
    except BaseException:
        buffer.restore([e for e in chosen if e.id in taken])
        raise
    moved = {e.id: r.id for (e, _), r in zip(kept, results)}
    return moved, sum(r.action == "strengthened" for r in results)


def keep_bounds(store: "AgentStore", now: datetime, settings: "Settings") -> int:
    """The long-term bounds, kept by archiving (curation's archive; nothing is deleted): the
    experiences whose strength has decayed below ``ltm_min_importance``, then, while the agent holds
    more than ``ltm_max_memories`` memories, the lowest by curation's pruning rank. How many moved."""
    archived = 0
    if settings.ltm_min_importance is not None:
        ids = store.list_experiences(ChunkFilter(kinds=("memory",), experience=ExperienceFilter()),
                                     settings.short_term_size * 1000)
        standings, _ = store.score(ids, None)
        hours = [max(0.0, now.timestamp() - s.last_accessed) / 3600.0 for s in standings]
        faded = [s.id for s, h in zip(standings, hours)
                 if strength_after(s.running_intensity, s.access_count, h, settings.decay_lambda)
                 < settings.ltm_min_importance]
        archived += _archive(store, faded, now)
    if settings.ltm_max_memories is not None:
        over = store.counts()["memories"] - settings.ltm_max_memories
        if over > 0:
            mine = store.prune_candidates()
            lowest = sorted(mine, key=lambda c: (prune_rank(c, now), c.id))[:over]
            archived += _archive(store, [c.id for c in lowest], now)
    return archived


def _archive(store: "AgentStore", ids: list[str], now: datetime) -> int:
    if not ids:
        return 0
    with store.transaction():  # the move and its count together
        moved = store.archive_chunks(ids, now)
        _count(store, now, {"archived": moved})
    return moved


def _count(store: "AgentStore", now: datetime, counts: dict[str, float]) -> None:
    """Add to the agent's totals and the day's counters (inside the transaction of what they count)."""
    store.add_stats(counts)
    count_day(store, now, counts)
