"""The whole-agent aggregates of :class:`~hippo.stores.postgres.store.PostgresStore` (see
``SummaryStore``), as in SQLite (``stores/sqlite/summary.py``): the dashboard's stats counted by
PostgreSQL over every chunk in one statement (through ``chunks_summary``, an index holding every
column it reads), and its browse (the per-day counters are both stores': ``stores/sql/blocks.py``).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Callable, Sequence

from hippo.stores.base import BrowseOrder, ChunkFilter, ChunkSummary
from hippo.stores.postgres.filters import filter_sql
from hippo.stores.postgres.strength import CHUNKS
from hippo.types import Chunk

if TYPE_CHECKING:
    from hippo.stores.postgres.connection import Connections

__all__ = ["Summary"]


def _strength(decay: str = "%s", now: str = "%s") -> str:
    """The SQL of a chunk's effective strength; parameters: the decay lambda, then now. PostgreSQL's
    ``exp`` raises on underflow where SQLite's gives 0, so the exponent stops at -700 (e^-700 ≈ 0)."""
    hours = f"greatest(0.0, extract(epoch FROM {now}::timestamptz - s.last_accessed_at)::double precision / 3600.0)"
    exponent = f"-{decay}::float8 / (1.0 + ln(1.0 + greatest(0, s.access_count)) * 0.3) * {hours}"
    return f"s.running_intensity * exp(greatest(-700.0, {exponent}))"


def _strength_bin(bins: int) -> str:
    """The SQL of a live chunk's strength bin; parameters: decay lambda, now."""
    return f"least({bins - 1}, greatest(0, floor({_strength('%(decay)s', '%(now)s')} * {bins})))::int"


def _order_sql(order: BrowseOrder) -> tuple[str, list[Any]]:
    """The ORDER BY of a browse (see ``BrowseOrder``) and its parameters."""
    columns = {"strength": _strength(), "last_access": "s.last_accessed_at", "feedback": "c.feedback"}
    params = [order.decay_lambda, order.now] if "strength" in order.keys else []
    return "".join(f"{columns[k]} DESC, " for k in order.keys) + "c.created_at DESC, c.id DESC", params


class Summary:
    """The PostgreSQL store's whole-agent aggregates, through its ``db``."""

    db: "Connections"
    get_chunks: Callable[[str, Sequence[str]], list[Chunk]]

    def chunk_summary(self, agent_id: str, now: datetime, *, since: date, decay_lambda: float,
                      bins: int) -> ChunkSummary:
        utc = "AT TIME ZONE 'UTC'"
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(
                f"WITH mine AS (SELECT c.created_at, s.last_accessed_at, s.running_intensity, s.access_count, "
                f"c.superseded_by FROM {CHUNKS} WHERE c.agent_id = %(agent)s AND s.agent_id = %(agent)s) "
                f"SELECT 's', {_strength_bin(bins)}::text AS k, count(*) FROM mine s WHERE superseded_by IS NULL "
                f"GROUP BY k UNION ALL "
                f"SELECT 'c', ((created_at {utc})::date)::text AS k, count(*) FROM mine "
                f"WHERE created_at >= %(since)s GROUP BY k UNION ALL "
                f"SELECT 'a', ((last_accessed_at {utc})::date)::text AS k, count(*) FROM mine "
                f"WHERE superseded_by IS NULL AND access_count > 0 AND last_accessed_at >= %(since)s GROUP BY k "
                f"UNION ALL SELECT 't', e.type, count(*) FROM experiences e WHERE e.agent_id = %(agent)s "
                f"AND EXISTS (SELECT 1 FROM chunk_rows c WHERE c.id = e.id) GROUP BY e.type",
                {"agent": agent_id, "now": now, "decay": decay_lambda, "since": since}).fetchall()
        parts: dict[str, dict[str, int]] = {"s": {}, "c": {}, "a": {}, "t": {}}
        for part, key, count in rows:
            parts[part][key] = int(count)
        histogram = [0] * bins
        for index, count in parts["s"].items():
            histogram[int(index)] += count
        return ChunkSummary(tuple(histogram), parts["c"], parts["a"], parts["t"])

    def browse_chunks(self, agent_id: str, where: ChunkFilter, order: BrowseOrder, *, offset: int,
                      limit: int) -> tuple[list[Chunk], int]:
        clause, params = filter_sql(where)
        key, key_params = _order_sql(order)
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT c.id, count(*) OVER () FROM {CHUNKS} WHERE c.agent_id = %s AND {clause} "
                f"ORDER BY {key} LIMIT %s OFFSET %s", (agent_id, *params, *key_params, limit, offset)).fetchall()
            total = rows[0][1] if rows else conn.execute(f"SELECT count(*) FROM chunk_rows c WHERE c.agent_id = %s "
                                                         f"AND {clause}", (agent_id, *params)).fetchone()[0]
        return self.get_chunks(agent_id, [row[0] for row in rows]), int(total)
