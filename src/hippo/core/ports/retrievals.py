"""Recalls' retrieval events, as the core hands them to a store's queue.

A recall that counts as a retrieval raises its hits' access counts and intensity and strengthens
the co-recall links among its best hits. The core does not write that itself: it adds a
:class:`RetrievalEvent` to the store's :class:`RetrievalQueue`, which writes it behind the answer,
merged with the moment's other events into one :class:`RetrievalBatch` per agent
(:meth:`~hippo.core.ports.memories.ChunkStore.write_retrievals`). Reads of a recall happen inside
:meth:`RetrievalQueue.recall_reads`, so that they rank what earlier recalls left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import ContextManager, Protocol

from hippo.clock import to_utc

__all__ = ["RetrievalBatch", "RetrievalEvent", "RetrievalQueue"]


@dataclass(frozen=True)
class RetrievalEvent:
    """One recall's retrieval: its hits (``ids``) and the co-recall pairs among its best ones."""

    agent_id: str
    ids: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    at: datetime
    boost: float


@dataclass
class RetrievalBatch:
    """One agent's queued events, merged: per memory (times retrieved, last time, summed boost),
    per co-recall pair (times, last time), and the events themselves for the daily counters."""

    chunks: dict[str, tuple[int, datetime, float]] = field(default_factory=dict)
    links: dict[tuple[str, str], tuple[int, datetime]] = field(default_factory=dict)
    events: list[RetrievalEvent] = field(default_factory=list)

    def day_counts(self, found: set[str]) -> dict[date, tuple[int, int]]:
        """Per day: (memories retrieved, recalls that retrieved any), counting only ``found`` ids
        (those the write reached), as each event's own write would have counted them."""
        days: dict[date, tuple[int, int]] = {}
        for event in self.events:
            retrieved = sum(1 for i in event.ids if i in found)
            if retrieved:
                day = to_utc(event.at).date()
                total, recalls = days.get(day, (0, 0))
                days[day] = (total + retrieved, recalls + 1)
        return days


class RetrievalQueue(Protocol):
    """A store's queue of recalls' retrieval events, written behind the answer: a process that is
    killed loses at most the last moments of boosts, never a memory."""

    def add(self, event: RetrievalEvent) -> None:
        """Queue one recall's event; a write that fails leaves the recall's answer alone."""
        ...

    def recall_reads(self, agent_id: str, now: datetime) -> ContextManager[None]:
        """Around the reads of ``agent_id``'s recall at ``now``: the agent's events old enough that
        the queue would have written them by then are written first; the recall's own reads wait
        for nothing else."""
        ...

    def flush(self) -> None:
        """Write everything queued, now, in the caller's thread."""
        ...

    def pending(self) -> int:
        """How many events wait to be written."""
        ...
