"""An agent's memory counted whole (the dashboard's stats, issue 22): strength, types and what
happened each day, answered by the store over every chunk rather than drawn from a sample.

Two kinds of per-day figures. What the rows themselves say: how many chunks were stored each day
(and are still held), how many were last retrieved each day. And what only counting can say,
since hippo keeps no log of events: the store adds to the agent's counters of the day in the
transaction of each event, recall's retrieval event (``record_retrievals``), a consolidation run
(:func:`count_day` with its counts) and archiving for size (``core/curation/archive.py``).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from hippo.clock import to_utc
from hippo.core import validation as v
from hippo.core.context import Capability
from hippo.core.experiences.importance import EXPERIENCE_TYPES
from hippo.types import Summary

if TYPE_CHECKING:
    from hippo.core.ports.scoped import AgentStore

__all__ = ["BINS", "COUNTED", "MAX_DAYS", "Summaries", "count_day", "day_of"]

BINS = 10  # strength in steps of 0.1
MAX_DAYS = 366
COUNTED = ("retrievals", "recalls", "consolidated", "merged", "pruned", "archived")  # the per-day counters


def day_of(when: datetime) -> date:
    """The UTC day a time falls on (the counters' day)."""
    return to_utc(when).date()


def count_day(store: "AgentStore", when: datetime, counts: dict[str, float]) -> None:
    """Add the per-day counters among ``counts`` to ``when``'s day (call it inside the transaction
    of the event it counts)."""
    store.add_daily(day_of(when), {name: int(counts.get(name, 0)) for name in COUNTED})


class Summaries(Capability):
    """One agent's memory counted whole."""

    def memory_summary(self, *, days: int = 90) -> Summary:
        """This agent's memory counted whole: strength now, experiences by type, and the last
        ``days`` days (at most 366) of storing, retrieving, consolidating and pruning (see
        :class:`~hippo.types.Summary`). Reading it is not a retrieval."""
        v.check_int(days, "days", 1, MAX_DAYS)
        now = self.ctx.now()
        since = day_of(now) - timedelta(days=days - 1)
        found = self.ctx.store.chunk_summary(now, since=since,
                                             decay_lambda=self.ctx.settings.decay_lambda, bins=BINS)
        counted = self.ctx.store.read_daily(since)
        labels = [(since + timedelta(days=i)).isoformat() for i in range(days)]
        daily = {"stored": [found.stored.get(d, 0) for d in labels],
                 "last_accessed": [found.last_accessed.get(d, 0) for d in labels],
                 **{name: [counted.get(d, {}).get(name, 0) for d in labels] for name in COUNTED}}
        first = next((i for i in range(days) if any(series[i] for series in daily.values())), days - 1)
        types = {name: found.types.get(name, 0) for name in EXPERIENCE_TYPES}
        return Summary(agent_id=self.ctx.agent_id, strength=list(found.strength),
                       types={**types, **{t: n for t, n in found.types.items() if t not in types}},
                       days=labels[first:], daily={name: series[first:] for name, series in daily.items()})
