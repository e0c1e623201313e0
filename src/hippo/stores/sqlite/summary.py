"""The whole-agent aggregates of :class:`~hippo.stores.sqlite.store.SQLiteStore` (see
``SummaryStore``): the dashboard's stats counted by SQLite over every chunk, and the per-day
counters.

The summary reads ``idx_chunks_summary``, which holds every column it needs, instead of the rows
(each carries its text and vector): three aggregate scans of one index. Effective strength is
seed 000's formula in SQL; ``exp`` and ``ln`` are SQLite's math functions, or Python's ``math``
registered on the connection when the library was built without them.
"""

from __future__ import annotations

import math
import sqlite3
from datetime import date, datetime, timezone
from typing import Callable, ContextManager

from hippo.clock import to_iso, to_utc
from hippo.stores.base import ChunkSummary

__all__ = ["SummaryMixin", "count_retrievals"]

_JULIAN_EPOCH = 2440587.5  # julianday('1970-01-01')


def _strength_bin(bins: int) -> str:
    """The SQL of a live chunk's strength bin; parameters: the decay lambda, then now as a Julian day."""
    hours = "max(0.0, (? - julianday(last_accessed_at)) * 24.0)"
    strength = f"running_intensity * exp(-? / (1.0 + ln(1.0 + max(0, access_count)) * 0.3) * {hours})"
    return f"min({bins - 1}, max(0, CAST({strength} * {bins} AS INTEGER)))"


def count_retrievals(conn: sqlite3.Connection, agent_id: str, now: datetime, retrieved: int) -> None:
    """Inside ``record_retrievals``' transaction: the day's ``retrievals`` and ``recalls``."""
    if retrieved:
        _add(conn, agent_id, to_utc(now).date().isoformat(), {"retrievals": retrieved, "recalls": 1})


def _add(conn: sqlite3.Connection, agent_id: str, day: str, counts: dict[str, int]) -> None:
    conn.executemany(
        "INSERT INTO agent_daily (agent_id, day, name, value) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(agent_id, day, name) DO UPDATE SET value = value + excluded.value",
        [(agent_id, day, name, int(value)) for name, value in counts.items() if value])


class SummaryMixin:
    _conn: sqlite3.Connection
    _reading: Callable[[], ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]
    _math_checked: bool = False

    def chunk_summary(self, agent_id: str, now: datetime, *, since: date, decay_lambda: float,
                      bins: int) -> ChunkSummary:
        julian_now = now.timestamp() / 86400.0 + _JULIAN_EPOCH
        first = to_iso(datetime(since.year, since.month, since.day, tzinfo=timezone.utc))
        with self._reading() as conn:
            self._math_functions(conn)
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
                # held, not archived (memories are never superseded): the id index alone, not the rows
                "SELECT e.type, count(*) FROM experiences e WHERE e.agent_id = ? "
                "AND EXISTS (SELECT 1 FROM chunks c WHERE c.id = e.id) GROUP BY e.type", (agent_id,)).fetchall()
        histogram = [0] * bins
        for index, count in strength:
            histogram[index] += count
        return ChunkSummary(tuple(histogram), dict(stored), dict(accessed), dict(types))

    def add_daily(self, agent_id: str, day: date, counts: dict[str, int]) -> None:
        if not any(counts.values()):
            return
        with self.transaction():
            _add(self._conn, agent_id, day.isoformat(), counts)

    def read_daily(self, agent_id: str, since: date) -> dict[str, dict[str, int]]:
        with self._reading() as conn:
            rows = conn.execute("SELECT day, name, value FROM agent_daily WHERE agent_id = ? AND day >= ? "
                                "ORDER BY day, name", (agent_id, since.isoformat())).fetchall()
        out: dict[str, dict[str, int]] = {}
        for day, name, value in rows:
            out.setdefault(day, {})[name] = int(value)
        return out

    def _erase_daily(self, agent_id: str) -> None:
        """Inside ``delete_agent``: the agent's counters per day."""
        self._conn.execute("DELETE FROM agent_daily WHERE agent_id = ?", (agent_id,))

    def _math_functions(self, conn: sqlite3.Connection) -> None:
        if self._math_checked:
            return
        try:
            conn.execute("SELECT exp(0.0), ln(1.0)").fetchone()
        except sqlite3.OperationalError:  # a library built without SQLITE_ENABLE_MATH_FUNCTIONS
            conn.create_function("exp", 1, math.exp, deterministic=True)
            conn.create_function("ln", 1, math.log, deterministic=True)
        self._math_checked = True
