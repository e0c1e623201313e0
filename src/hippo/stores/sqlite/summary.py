"""The whole-agent aggregates of :class:`~hippo.stores.sqlite.store.SQLiteStore` (see
``SummaryStore``): the dashboard's stats counted by SQLite over every chunk, and the per-day
counters.

The summary reads ``idx_chunks_summary``, which holds every column it needs, instead of the rows
(each carries its text and vector): three aggregate scans of one index. Effective strength is
seed 000's formula in SQL; ``exp`` and ``ln`` are SQLite's math functions, or Python's ``math``
registered on the connection when the library was built without them.
"""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import date, datetime, timezone
from typing import Any, Callable, ContextManager, Sequence

from hippo.clock import to_iso, to_utc
from hippo.stores.base import BrowseOrder, ChunkFilter, ChunkSummary
from hippo.stores.sqlite.driving import narrowed
from hippo.stores.sqlite.filters import filter_sql
from hippo.types import Chunk

__all__ = ["SummaryMixin", "count_retrievals", "register_math"]

_JULIAN_EPOCH = 2440587.5  # julianday('1970-01-01')
_NARROW_CAP = 25_000  # the most rows a browse lists from a filter's own index before it reads them


def _strength() -> str:
    """The SQL of a chunk's effective strength; parameters: the decay lambda, then now as a Julian day."""
    hours = "max(0.0, (? - julianday(last_accessed_at)) * 24.0)"
    return f"running_intensity * exp(-? / (1.0 + ln(1.0 + max(0, access_count)) * 0.3) * {hours})"


def _strength_bin(bins: int) -> str:
    """The SQL of a live chunk's strength bin; parameters: as :func:`_strength`."""
    return f"min({bins - 1}, max(0, CAST({_strength()} * {bins} AS INTEGER)))"


def _order_sql(order: BrowseOrder) -> tuple[str, list[Any]]:
    """The ORDER BY of a browse (see ``BrowseOrder``) and its parameters."""
    columns = {"strength": _strength(), "last_access": "last_accessed_at", "feedback": "feedback"}
    params = [order.decay_lambda, _julian(order.now)] if "strength" in order.keys else []
    return "".join(f"{columns[k]} DESC, " for k in order.keys) + "created_at DESC, id DESC", params


def _browsed_rows(conn: sqlite3.Connection, agent_id: str, where: ChunkFilter) -> tuple[str, list[Any]]:
    """The FROM and first WHERE test of a browse: the rows a filter's own index lists (a tag, a
    session, a type, a period; ``driving.py``) when it lists few enough, else the agent's rows read
    through the summary index, which holds every column an order reads."""
    rows = narrowed(conn, agent_id, where, cap=_NARROW_CAP)
    if rows is None:
        return "chunks c INDEXED BY idx_chunks_summary WHERE c.agent_id = ?", [agent_id]
    return ("chunks c WHERE c.rowid IN (SELECT value FROM json_each(?)) AND +c.agent_id = ?",
            [json.dumps(rows.tolist()), agent_id])


def _julian(moment: datetime) -> float:
    return moment.timestamp() / 86400.0 + _JULIAN_EPOCH


def count_retrievals(conn: sqlite3.Connection, agent_id: str, now: datetime, retrieved: int) -> None:
    """Inside ``record_retrievals``' transaction: the day's ``retrievals`` and ``recalls``."""
    if retrieved:
        count_retrieval_days(conn, agent_id, {to_utc(now).date(): (retrieved, 1)})


def count_retrieval_days(conn: sqlite3.Connection, agent_id: str, days: dict[date, tuple[int, int]]) -> None:
    """Inside ``write_retrievals``' transaction: per day, (memories retrieved, recalls)."""
    for day, (retrieved, recalls) in days.items():
        _add(conn, agent_id, day.isoformat(), {"retrievals": retrieved, "recalls": recalls})


def _add(conn: sqlite3.Connection, agent_id: str, day: str, counts: dict[str, int]) -> None:
    conn.executemany(
        "INSERT INTO agent_daily (agent_id, day, name, value) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(agent_id, day, name) DO UPDATE SET value = value + excluded.value",
        [(agent_id, day, name, int(value)) for name, value in counts.items() if value])


class SummaryMixin:
    _conn: sqlite3.Connection
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]
    get_chunks: Callable[[str, Sequence[str]], list[Chunk]]

    def chunk_summary(self, agent_id: str, now: datetime, *, since: date, decay_lambda: float,
                      bins: int) -> ChunkSummary:
        julian_now = _julian(now)
        first = to_iso(datetime(since.year, since.month, since.day, tzinfo=timezone.utc))
        with self._reading(agent_id) as conn:
            strength = conn.execute(
                f"SELECT {_strength_bin(bins)} AS bin, count(*) FROM chunks INDEXED BY idx_chunks_summary "
                "WHERE agent_id = ? AND superseded_by IS NULL GROUP BY bin",
                (decay_lambda, julian_now, agent_id)).fetchall()
            stored = conn.execute(
                "SELECT substr(created_at, 1, 10) AS day, count(*) FROM chunks INDEXED BY idx_chunks_summary "
                "WHERE agent_id = ? AND created_at >= ? GROUP BY day", (agent_id, first)).fetchall()
            accessed = conn.execute(
                "SELECT substr(last_accessed_at, 1, 10) AS day, count(*) FROM chunks INDEXED BY idx_chunks_summary "
                "WHERE agent_id = ? AND superseded_by IS NULL AND access_count > 0 AND last_accessed_at >= ? "
                "GROUP BY day", (agent_id, first)).fetchall()
            types = conn.execute(
                # held, not archived: an experience keeps its chunk's rowid while the chunk is held
                # (driving.py), so its own index answers (40 ms at 100k through the chunks, 2.5 here)
                "SELECT type, count(*) FROM experiences INDEXED BY idx_experiences_type_chunk WHERE agent_id = ? "
                "AND chunk IS NOT NULL GROUP BY type", (agent_id,)).fetchall()
        histogram = [0] * bins
        for index, count in strength:
            histogram[index] += count
        return ChunkSummary(tuple(histogram), dict(stored), dict(accessed), dict(types))

    def browse_chunks(self, agent_id: str, where: ChunkFilter, order: BrowseOrder, *, offset: int,
                      limit: int) -> tuple[list[Chunk], int]:
        clause, params = filter_sql(where)
        key, key_params = _order_sql(order)
        with self._reading(agent_id) as conn:
            source, source_params = _browsed_rows(conn, agent_id, where)
            total = conn.execute(f"SELECT count(*) FROM {source} AND {clause}", (*source_params, *params)).fetchone()[0]
            ids = [row[0] for row in conn.execute(
                f"SELECT c.id FROM {source} AND {clause} ORDER BY {key} LIMIT ? OFFSET ?",
                (*source_params, *params, *key_params, limit, offset))]
        return self.get_chunks(agent_id, ids), int(total)  # in the order of ids

    def add_daily(self, agent_id: str, day: date, counts: dict[str, int]) -> None:
        if not any(counts.values()):
            return
        with self.transaction():
            _add(self._conn, agent_id, day.isoformat(), counts)

    def read_daily(self, agent_id: str, since: date) -> dict[str, dict[str, int]]:
        with self._reading(agent_id) as conn:
            rows = conn.execute("SELECT day, name, value FROM agent_daily WHERE agent_id = ? AND day >= ? "
                                "ORDER BY day, name", (agent_id, since.isoformat())).fetchall()
        out: dict[str, dict[str, int]] = {}
        for day, name, value in rows:
            out.setdefault(day, {})[name] = int(value)
        return out

    def _erase_daily(self, agent_id: str) -> None:
        """Inside ``delete_agent``: the agent's counters per day."""
        self._conn.execute("DELETE FROM agent_daily WHERE agent_id = ?", (agent_id,))


def register_math(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``exp`` and ``ln`` that effective strength needs when the library was built
    without SQLite's math functions (``SQLITE_ENABLE_MATH_FUNCTIONS``): Python's, once per connection."""
    try:
        conn.execute("SELECT exp(0.0), ln(1.0)").fetchone()
    except sqlite3.OperationalError:
        conn.create_function("exp", 1, math.exp, deterministic=True)
        conn.create_function("ln", 1, math.log, deterministic=True)
