"""The whole-agent aggregates of :class:`~hippo.stores.sqlite.store.SQLiteStore` (see
``SummaryStore``): the dashboard's stats counted by SQLite over every chunk, and its browse (the
per-day counters are both stores': ``stores/sql/blocks.py``).

The summary reads ``idx_chunks_summary``, which holds every column it needs, instead of the rows
(each carries its text and vector): three aggregate scans of one index. Effective strength is
the effective strength formula in SQL; ``exp`` and ``ln`` are SQLite's math functions, or Python's ``math``
registered on the connection when the library was built without them.
"""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime, timezone
from typing import Any

from hippo.clock import to_iso
from hippo.core.ports import BrowseOrder, ChunkFilter
from hippo.stores.sql.summary import Browse, SqlSummary, SummaryAsk, SummaryCounts
from hippo.stores.sqlite.narrowing.driving import narrowed

__all__ = ["Summary", "register_math"]

_JULIAN_EPOCH = 2440587.5  # julianday('1970-01-01')
_NARROW_CAP = 25_000  # the most rows a browse lists from a filter's own index before it reads them


def _strength() -> str:
    """The SQL of a chunk's effective strength; parameters: the decay lambda, then now as a Julian day."""
    hours = "max(0.0, (? - julianday(last_accessed_at)) * 24.0)"
    return f"running_intensity * exp(-? / (1.0 + ln(1.0 + max(0, access_count)) * 0.3) * {hours})"


def _strength_bin(bins: int) -> str:
    """The SQL of a live chunk's strength bin; parameters: as :func:`_strength`."""
    return f"min({bins - 1}, max(0, CAST({_strength()} * {bins} AS INTEGER)))"


def _browsed_rows(conn: sqlite3.Connection, agent_id: str, where: ChunkFilter) -> tuple[str, list[Any]]:
    """The FROM and first WHERE test of a browse: the rows a filter's own index lists (a tag, a
    session, a type, a period; ``narrowing/driving.py``) when it lists few enough, else the agent's rows read
    through the summary index, which holds every column an order reads."""
    rows = narrowed(conn, agent_id, where, cap=_NARROW_CAP)
    if rows is None:
        return "chunks c INDEXED BY idx_chunks_summary WHERE c.agent_id = ?", [agent_id]
    return ("chunks c WHERE c.rowid IN (SELECT value FROM json_each(?)) AND +c.agent_id = ?",
            [json.dumps(rows.tolist()), agent_id])


def _julian(moment: datetime) -> float:
    return moment.timestamp() / 86400.0 + _JULIAN_EPOCH


class Summary(SqlSummary):
    """The SQLite store's whole-agent aggregates."""

    @staticmethod
    def _order_sql(order: BrowseOrder) -> tuple[str, list[Any]]:
        columns = {"strength": _strength(), "last_access": "last_accessed_at", "feedback": "feedback"}
        params = [order.decay_lambda, _julian(order.now)] if "strength" in order.keys else []
        return "".join(f"{columns[k]} DESC, " for k in order.keys) + "created_at DESC, id DESC", params

    def _summary_counts(self, conn: Any, agent_id: str, ask: SummaryAsk) -> SummaryCounts:
        first = to_iso(datetime(ask.since.year, ask.since.month, ask.since.day, tzinfo=timezone.utc))
        strength = conn.execute(
            f"SELECT {_strength_bin(ask.bins)} AS bin, count(*) FROM chunks INDEXED BY idx_chunks_summary "
            "WHERE agent_id = ? AND superseded_by IS NULL GROUP BY bin",
            (ask.decay_lambda, _julian(ask.now), agent_id)).fetchall()
        stored = conn.execute(
            "SELECT substr(created_at, 1, 10) AS day, count(*) FROM chunks INDEXED BY idx_chunks_summary "
            "WHERE agent_id = ? AND created_at >= ? GROUP BY day", (agent_id, first)).fetchall()
        accessed = conn.execute(
            "SELECT substr(last_accessed_at, 1, 10) AS day, count(*) FROM chunks INDEXED BY idx_chunks_summary "
            "WHERE agent_id = ? AND superseded_by IS NULL AND access_count > 0 AND last_accessed_at >= ? "
            "GROUP BY day", (agent_id, first)).fetchall()
        types = conn.execute(
            # held, not archived: an experience keeps its chunk's rowid while the chunk is held
            # (narrowing/driving.py), so its own index answers (40 ms at 100k through the chunks, 2.5 here)
            "SELECT type, count(*) FROM experiences INDEXED BY idx_experiences_type_chunk WHERE agent_id = ? "
            "AND chunk IS NOT NULL GROUP BY type", (agent_id,)).fetchall()
        return SummaryCounts(strength, dict(stored), dict(accessed), dict(types))

    def _browsed(self, conn: Any, agent_id: str, browse: Browse) -> tuple[list[str], int]:
        source, source_params = _browsed_rows(conn, agent_id, browse.where)
        total = conn.execute(f"SELECT count(*) FROM {source} AND {browse.clause}",
                             (*source_params, *browse.params)).fetchone()[0]
        ids = [row[0] for row in conn.execute(
            f"SELECT c.id FROM {source} AND {browse.clause} ORDER BY {browse.key} LIMIT ? OFFSET ?",
            (*source_params, *browse.params, *browse.key_params, browse.limit, browse.offset))]
        return ids, int(total)


def register_math(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``exp`` and ``ln`` that effective strength needs when the library was built
    without SQLite's math functions (``SQLITE_ENABLE_MATH_FUNCTIONS``): Python's, once per connection."""
    try:
        conn.execute("SELECT exp(0.0), ln(1.0)").fetchone()
    except sqlite3.OperationalError:
        conn.create_function("exp", 1, math.exp, deterministic=True)
        conn.create_function("ln", 1, math.log, deterministic=True)
