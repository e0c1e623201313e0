"""The experience half of :class:`~hippo.stores.sqlite.store.SQLiteStore` (seed 001; see
``ExperienceStore``): long-term records beside their chunks, the short-term buffer when it is
kept in the file, and the consolidation counters.

A short-term entry that leaves the buffer (consolidated, evicted, pruned or forgotten) leaves the
file as a forgotten chunk does: ``secure_delete`` zeroes its pages, and the WAL is scrubbed after
the commit.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any, Callable, ContextManager, Sequence

import numpy as np

from hippo.stores.base import ChunkFilter, ExperienceFilter, ExperienceRecord
from hippo.stores.rows import (
    RECORD_COLUMNS,
    SHORT_TERM_COLUMNS,
    entry_of,
    entry_values,
    record_of,
    record_values,
)
from hippo.stores.sqlite.filters import experience_tests, filter_sql
from hippo.stores.vectors import decode_vector, encode_vector
from hippo.types import Experience

__all__ = ["ExperienceMixin"]

_REFS = {"user": "user_ref", "room": "room_ref", "task": "task_ref"}


def _marks(n: int) -> str:
    return ",".join("?" * n)


class ExperienceMixin:
    _conn: sqlite3.Connection
    _after_commit: list[Callable[[], object]]
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]
    _scrub: Any

    # -- long-term records ------------------------------------------------------------------

    def put_experiences(self, agent_id: str, records: Sequence[ExperienceRecord]) -> None:
        if not records:
            return
        with self.transaction():
            self._conn.executemany(  # beside its chunk, whose rowid it keeps (driving.py)
                f"INSERT INTO experiences ({RECORD_COLUMNS}, chunk) SELECT ?,?,?,?,?,?,?,?,?,?, c.rowid "
                "FROM chunks c WHERE c.id = ? AND c.agent_id = ? ON CONFLICT(id) DO NOTHING",
                [(*record_values(agent_id, r, iso=True), r.id, agent_id) for r in records])

    def experience_records(self, agent_id: str, ids: Sequence[str]) -> dict[str, ExperienceRecord]:
        if not ids:
            return {}
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {RECORD_COLUMNS} FROM experiences WHERE +agent_id = ? "
                                f"AND id IN ({_marks(len(ids))})", (agent_id, *ids)).fetchall()
        return {row[0]: record_of(row) for row in rows}

    def list_experiences(self, agent_id: str, where: ChunkFilter, limit: int) -> list[str]:
        tests, params = experience_tests(where.experience or ExperienceFilter(), "e")
        clauses = ["e.agent_id = ?", *tests]
        params = [agent_id, *params]
        chunk_clause, chunk_params = filter_sql(_without_experience(where))
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                # Newest first along the time index, joining each row to its chunk by the rowid it keeps
                # (NULL while archived): without statistics the planner would otherwise sort every chunk
                # of the agent, or walk a covering index of the agent's chunks for each row (220 ms at 100k).
                "SELECT e.id FROM experiences e INDEXED BY idx_experiences_when CROSS JOIN chunks c "
                f"ON c.rowid = e.chunk WHERE {' AND '.join(clauses)} AND c.agent_id = ? AND {chunk_clause} "
                "ORDER BY e.observed_at DESC, e.rowid DESC LIMIT ?",
                (*params, agent_id, *chunk_params, limit)).fetchall()
        return [r[0] for r in rows]

    def related_experiences(self, agent_id: str, refs: dict[str, str], limit: int) -> list[str]:
        clauses = " AND ".join(f"e.{_REFS[name]} = ?" for name in refs)
        with self._reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT e.id FROM experiences e JOIN chunks c ON c.rowid = e.chunk WHERE e.agent_id = ? AND {clauses} "
                "AND c.superseded_by IS NULL ORDER BY e.observed_at DESC, e.id DESC LIMIT ?",
                (agent_id, *refs.values(), limit)).fetchall()
        return [r[0] for r in rows]

    # -- the short-term buffer, when it lives in the file ----------------------------------------

    def short_term_append(self, agent_id: str, entry: Experience, capacity: int) -> list[str]:
        with self.transaction():
            self._conn.execute(f"INSERT INTO short_term ({SHORT_TERM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                               entry_values(agent_id, entry, iso=True))
            evicted = self._conn.execute(
                "DELETE FROM short_term WHERE agent_id = ? AND seq <= (SELECT seq FROM short_term "
                "WHERE agent_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?) RETURNING id",
                (agent_id, agent_id, capacity)).fetchall()
            if evicted:
                self._after_commit.append(self._scrub.after_delete)
        return [r[0] for r in evicted]

    def short_term_entries(self, agent_id: str) -> list[Experience]:
        with self._reading(bookkeeping=False) as conn:
            rows = conn.execute(f"SELECT {SHORT_TERM_COLUMNS} FROM short_term WHERE agent_id = ? ORDER BY seq",
                                (agent_id,)).fetchall()
        return [entry_of(row) for row in rows]

    def short_term_agents(self) -> list[str]:
        with self._reading(bookkeeping=False) as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT agent_id FROM short_term ORDER BY agent_id")]

    def short_term_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT id, embedding FROM short_term WHERE agent_id = ? AND embedding IS NOT NULL "
                                f"AND id IN ({_marks(len(ids))})", (agent_id, *ids)).fetchall()
        return {row[0]: decode_vector(row[1]) for row in rows}

    def set_short_term_vectors(self, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        with self.transaction():
            self._conn.executemany("UPDATE short_term SET embedding = ? WHERE agent_id = ? AND id = ?",
                                   [(encode_vector(v), agent_id, k) for k, v in vectors.items()])

    def short_term_remove(self, agent_id: str, ids: Sequence[str]) -> list[str]:
        if not ids:
            return []
        with self.transaction():
            rows = self._conn.execute(f"DELETE FROM short_term WHERE agent_id = ? AND id IN ({_marks(len(ids))}) "
                                      "RETURNING id", (agent_id, *ids)).fetchall()
            if rows:
                self._after_commit.append(self._scrub.after_delete)
        return [r[0] for r in rows]

    # -- seed 001's memory_stats --------------------------------------------------------------

    def add_stats(self, agent_id: str, counts: dict[str, float]) -> None:
        if not counts:
            return
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO agent_stats (agent_id, name, value) VALUES (?, ?, ?) ON CONFLICT(agent_id, name) "
                "DO UPDATE SET value = CASE WHEN name LIKE 'last\\_%' ESCAPE '\\' THEN excluded.value "
                "ELSE value + excluded.value END", [(agent_id, name, value) for name, value in counts.items()])

    def read_stats(self, agent_id: str) -> dict[str, float]:
        with self._reading(agent_id) as conn:
            rows = conn.execute("SELECT name, value FROM agent_stats WHERE agent_id = ?", (agent_id,)).fetchall()
        return {name: value for name, value in rows}

    def _erase_experiences(self, agent_id: str) -> int:
        """Inside ``delete_agent``: the buffer and counters of the agent (records go with the chunks)."""
        gone = self._conn.execute("DELETE FROM short_term WHERE agent_id = ?", (agent_id,)).rowcount
        self._conn.execute("DELETE FROM agent_stats WHERE agent_id = ?", (agent_id,))
        return int(gone)


def _without_experience(where: ChunkFilter) -> ChunkFilter:
    return replace(where, experience=None)
