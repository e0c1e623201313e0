"""The whole-agent aggregates both relational stores give alike (see ``SummaryStore``): the read, the
strength histogram and the browse's page; each backend counts and orders in its own SQL
(``sqlite/summary.py``, ``postgres/summary.py``), inside the read this module opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Callable, Sequence

from hippo.core.ports import BrowseOrder, ChunkFilter, ChunkSummary
from hippo.stores.sql.database import SqlDatabase
from hippo.types import Chunk

__all__ = ["Browse", "SqlSummary", "SummaryAsk", "SummaryCounts"]


@dataclass(frozen=True)
class SummaryAsk:
    """What a summary counts: strength as of ``now`` (decaying by ``decay_lambda``) in ``bins``,
    days from ``since``."""

    now: datetime
    since: date
    decay_lambda: float
    bins: int


@dataclass(frozen=True)
class SummaryCounts:
    """A summary's counts: live chunks per strength bin, chunks stored and accessed per day (ISO
    date), held experiences per type."""

    strength: Sequence[tuple[Any, int]]
    stored: dict[str, int]
    accessed: dict[str, int]
    types: dict[str, int]


@dataclass(frozen=True)
class Browse:
    """One page of a browse: the filter (and its SQL test on ``c``), the ORDER BY and its
    parameters, the page."""

    where: ChunkFilter
    clause: str
    params: list[Any]
    key: str
    key_params: list[Any]
    offset: int
    limit: int


class SqlSummary:
    """``chunk_summary`` and ``browse_chunks`` over the backend's own counting (``_summary_counts``)
    and listing (``_browsed``, ordered by ``_order_sql``), through ``db``."""

    db: SqlDatabase
    get_chunks: Callable[[str, Sequence[str]], list[Chunk]]

    def chunk_summary(self, agent_id: str, now: datetime, *, since: date, decay_lambda: float,
                      bins: int) -> ChunkSummary:
        with self.db.reading(agent_id) as conn:
            counts = self._summary_counts(conn, agent_id, SummaryAsk(now, since, decay_lambda, bins))
        histogram = [0] * bins
        for index, count in counts.strength:
            histogram[int(index)] += count
        return ChunkSummary(tuple(histogram), counts.stored, counts.accessed, counts.types)

    def browse_chunks(self, agent_id: str, where: ChunkFilter, order: BrowseOrder, *, offset: int,
                      limit: int) -> tuple[list[Chunk], int]:
        clause, params = self.db.filter_sql(where)
        key, key_params = self._order_sql(order)
        with self.db.reading(agent_id) as conn:
            ids, total = self._browsed(conn, agent_id, Browse(where, clause, params, key, key_params, offset, limit))
        return self.get_chunks(agent_id, ids), int(total)  # in the order of ids

    @staticmethod
    def _order_sql(order: BrowseOrder) -> tuple[str, list[Any]]:
        """The ORDER BY of a browse (see ``BrowseOrder``) and its parameters."""
        raise NotImplementedError

    def _summary_counts(self, conn: Any, agent_id: str, ask: SummaryAsk) -> SummaryCounts:
        """Inside the read: the agent's counts."""
        raise NotImplementedError

    def _browsed(self, conn: Any, agent_id: str, browse: Browse) -> tuple[list[str], int]:
        """Inside the read: the ids of the page's chunks, in order, and how many pass the filter."""
        raise NotImplementedError
