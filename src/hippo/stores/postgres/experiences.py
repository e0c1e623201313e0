"""The experience half of :class:`~hippo.stores.postgres.store.PostgresStore` (seed 001; see
``ExperienceStore``): long-term records beside their chunks, the short-term buffer that every
server shares, and the consolidation counters.

Taking entries out of the buffer is ``DELETE ... RETURNING`` under the agent's lock, so when two
servers consolidate at once each entry goes to long-term memory once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, ContextManager, Sequence

import numpy as np

from hippo.stores.base import ChunkFilter, ExperienceRecord
from hippo.stores.postgres.filters import filter_sql
from hippo.stores.rows import (
    RECORD_COLUMNS,
    SHORT_TERM_COLUMNS,
    entry_of,
    entry_values,
    record_of,
    record_values,
)
from hippo.types import Experience

__all__ = ["ExperienceMixin"]

_REFS = {"user": "user_ref", "room": "room_ref", "task": "task_ref"}


class ExperienceMixin:
    _db: Any
    _read: Callable[..., ContextManager[Any]]
    _deleted: Callable[[str, int], None]

    # -- long-term records ------------------------------------------------------------------

    def put_experiences(self, agent_id: str, records: Sequence[ExperienceRecord]) -> None:
        if not records:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO experiences ({RECORD_COLUMNS}) SELECT %s,%s,%s,%s,%s::jsonb,%s,%s,%s,%s,%s "
                "WHERE EXISTS (SELECT 1 FROM chunk_rows WHERE id = %s AND agent_id = %s) ON CONFLICT (id) DO NOTHING",
                [(*record_values(agent_id, r, iso=False), r.id, agent_id) for r in records])

    def experience_records(self, agent_id: str, ids: Sequence[str]) -> dict[str, ExperienceRecord]:
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute(f"SELECT {RECORD_COLUMNS} FROM experiences WHERE agent_id = %s AND id = ANY(%s)",
                                (agent_id, list(ids))).fetchall()
        return {row[0]: record_of(row) for row in rows}

    def list_experiences(self, agent_id: str, where: ChunkFilter, limit: int) -> list[str]:
        wanted = where.experience
        clauses, params = ["e.agent_id = %s"], [agent_id]  # type: list[str], list[Any]
        if wanted is not None and wanted.types:
            clauses.append("e.type = ANY(%s)")
            params.append(list(wanted.types))
        if wanted is not None and wanted.min_importance is not None:
            clauses.append("e.importance >= %s")
            params.append(wanted.min_importance)
        chunk_clause, chunk_params = filter_sql(replace(where, experience=None))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT e.id FROM experiences e JOIN chunk_rows c ON c.id = e.id WHERE {' AND '.join(clauses)} "
                f"AND c.agent_id = %s AND {chunk_clause} ORDER BY e.observed_at DESC, e.id DESC LIMIT %s",
                (*params, agent_id, *chunk_params, limit)).fetchall()
        return [r[0] for r in rows]

    def related_experiences(self, agent_id: str, refs: dict[str, str], limit: int) -> list[str]:
        clauses = " AND ".join(f"e.{_REFS[name]} = %s" for name in refs)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT e.id FROM experiences e JOIN chunk_rows c ON c.id = e.id WHERE e.agent_id = %s AND {clauses} "
                "AND c.superseded_by IS NULL ORDER BY e.observed_at DESC, e.id DESC LIMIT %s",
                (agent_id, *refs.values(), limit)).fetchall()
        return [r[0] for r in rows]

    # -- the short-term buffer every server shares ---------------------------------------------

    def short_term_append(self, agent_id: str, entry: Experience, capacity: int) -> list[str]:
        with self._db.writing(agent_id) as conn:
            conn.execute(f"INSERT INTO short_term ({SHORT_TERM_COLUMNS}) "
                         "VALUES (%s,%s,%s,%s,%s,%s::jsonb,%s::jsonb,%s,%s,%s,%s)",
                         entry_values(agent_id, entry, iso=False))
            evicted = conn.execute(
                "DELETE FROM short_term WHERE agent_id = %s AND seq <= (SELECT seq FROM short_term "
                "WHERE agent_id = %s ORDER BY seq DESC LIMIT 1 OFFSET %s) RETURNING id",
                (agent_id, agent_id, capacity)).fetchall()
        self._deleted(agent_id, len(evicted))
        return [r[0] for r in evicted]

    def short_term_entries(self, agent_id: str) -> list[Experience]:
        with self._read(bookkeeping=False) as conn:
            rows = conn.execute(f"SELECT {SHORT_TERM_COLUMNS} FROM short_term WHERE agent_id = %s ORDER BY seq",
                                (agent_id,)).fetchall()
        return [entry_of(row) for row in rows]

    def short_term_agents(self) -> list[str]:
        with self._read(bookkeeping=False) as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT agent_id FROM short_term ORDER BY agent_id")]

    def short_term_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute("SELECT id, embedding FROM short_term WHERE agent_id = %s AND embedding IS NOT NULL "
                                "AND id = ANY(%s)", (agent_id, list(ids))).fetchall()
        return {row[0]: _array(row[1]) for row in rows}

    def set_short_term_vectors(self, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany("UPDATE short_term SET embedding = %s WHERE agent_id = %s AND id = %s",
                            [(v, agent_id, k) for k, v in vectors.items()])

    def short_term_remove(self, agent_id: str, ids: Sequence[str]) -> list[str]:
        if not ids:
            return []
        with self._db.writing(agent_id) as conn:
            rows = conn.execute("DELETE FROM short_term WHERE agent_id = %s AND id = ANY(%s) RETURNING id",
                                (agent_id, list(ids))).fetchall()
        self._deleted(agent_id, len(rows))
        return [r[0] for r in rows]

    # -- seed 001's memory_stats --------------------------------------------------------------

    def add_stats(self, agent_id: str, counts: dict[str, float]) -> None:
        if not counts:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO agent_stats (agent_id, name, value) VALUES (%s, %s, %s) ON CONFLICT (agent_id, name) "
                "DO UPDATE SET value = CASE WHEN agent_stats.name LIKE 'last\\_%%' THEN excluded.value "
                "ELSE agent_stats.value + excluded.value END",
                [(agent_id, name, value) for name, value in counts.items()])

    def read_stats(self, agent_id: str) -> dict[str, float]:
        with self._read() as conn:
            rows = conn.execute("SELECT name, value FROM agent_stats WHERE agent_id = %s", (agent_id,)).fetchall()
        return {name: float(value) for name, value in rows}

    @staticmethod
    def _erase_experiences(conn: Any, agent_id: str) -> int:
        """Inside ``delete_agent``: the buffer and counters of the agent (records go with the chunks)."""
        gone = conn.execute("DELETE FROM short_term WHERE agent_id = %s", (agent_id,)).rowcount
        conn.execute("DELETE FROM agent_stats WHERE agent_id = %s", (agent_id,))
        return int(gone)


def _array(value: Any) -> np.ndarray:
    """pgvector hands a ``vector`` column back as its ``Vector`` (or, in older releases, an array)."""
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)
