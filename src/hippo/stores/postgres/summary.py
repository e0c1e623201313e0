"""The whole-agent aggregates of :class:`~hippo.stores.postgres.store.PostgresStore` (see
``SummaryStore``), as in SQLite (``stores/sqlite/summary.py``): the dashboard's stats counted by
PostgreSQL over every chunk in one statement (through ``chunks_summary``, an index holding every
column it reads), and its browse (the per-day counters are both stores': ``stores/sql/blocks.py``).
"""

from __future__ import annotations

from typing import Any

from hippo.core.ports import BrowseOrder
from hippo.stores.postgres.strength import CHUNKS
from hippo.stores.sql.summary import Browse, SqlSummary, SummaryAsk, SummaryCounts

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


class Summary(SqlSummary):
    """The PostgreSQL store's whole-agent aggregates."""

    @staticmethod
    def _order_sql(order: BrowseOrder) -> tuple[str, list[Any]]:
        columns = {"strength": _strength(), "last_access": "s.last_accessed_at", "feedback": "c.feedback"}
        params = [order.decay_lambda, order.now] if "strength" in order.keys else []
        return "".join(f"{columns[k]} DESC, " for k in order.keys) + "c.created_at DESC, c.id DESC", params

    def _summary_counts(self, conn: Any, agent_id: str, ask: SummaryAsk) -> SummaryCounts:
        utc = "AT TIME ZONE 'UTC'"
        rows = conn.execute(
            f"WITH mine AS (SELECT c.created_at, s.last_accessed_at, s.running_intensity, s.access_count, "
            f"c.superseded_by FROM {CHUNKS} WHERE c.agent_id = %(agent)s AND s.agent_id = %(agent)s) "
            f"SELECT 's', {_strength_bin(ask.bins)}::text AS k, count(*) FROM mine s WHERE superseded_by IS NULL "
            f"GROUP BY k UNION ALL "
            f"SELECT 'c', ((created_at {utc})::date)::text AS k, count(*) FROM mine "
            f"WHERE created_at >= %(since)s GROUP BY k UNION ALL "
            f"SELECT 'a', ((last_accessed_at {utc})::date)::text AS k, count(*) FROM mine "
            f"WHERE superseded_by IS NULL AND access_count > 0 AND last_accessed_at >= %(since)s GROUP BY k "
            f"UNION ALL SELECT 't', e.type, count(*) FROM experiences e WHERE e.agent_id = %(agent)s "
            f"AND EXISTS (SELECT 1 FROM chunk_rows c WHERE c.id = e.id) GROUP BY e.type",
            {"agent": agent_id, "now": ask.now, "decay": ask.decay_lambda, "since": ask.since}).fetchall()
        parts: dict[str, dict[str, int]] = {"s": {}, "c": {}, "a": {}, "t": {}}
        for part, key, count in rows:
            parts[part][key] = int(count)
        return SummaryCounts(list(parts["s"].items()), parts["c"], parts["a"], parts["t"])

    def _browsed(self, conn: Any, agent_id: str, browse: Browse) -> tuple[list[str], int]:
        rows = conn.execute(
            f"SELECT c.id, count(*) OVER () FROM {CHUNKS} WHERE c.agent_id = %s AND {browse.clause} "
            f"ORDER BY {browse.key} LIMIT %s OFFSET %s",
            (agent_id, *browse.params, *browse.key_params, browse.limit, browse.offset)).fetchall()
        total = rows[0][1] if rows else conn.execute(f"SELECT count(*) FROM chunk_rows c WHERE c.agent_id = %s "
                                                     f"AND {browse.clause}", (agent_id, *browse.params)).fetchone()[0]
        return [row[0] for row in rows], int(total)
