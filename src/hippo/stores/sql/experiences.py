"""Experiences, as both relational stores keep them (see ``ExperienceStore``): long-term records
beside their chunks (gone with the chunk, kept while it is archived), the short-term buffer when it
lives in the database, and the consolidation counters.

Taking entries out of the buffer is ``DELETE ... RETURNING`` in the agent's write, so when two
processes consolidate at once each entry goes to long-term memory once; an entry that leaves the
buffer (consolidated, evicted, pruned or forgotten) leaves the files as a forgotten chunk does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from hippo.core.ports import ChunkFilter, ExperienceFilter, ExperienceRecord
from hippo.core.ports.audit import content_hash
from hippo.stores.sql.database import SqlDatabase, fetch, write_many
from hippo.stores.sql.filters import experience_tests
from hippo.stores.sql.rows import RECORD_COLUMNS, SHORT_TERM_COLUMNS, entry_of, entry_values, record_of, record_values
from hippo.types import Experience

__all__ = ["SqlExperiences", "erase_experiences"]

_REFS = {"user": "user_ref", "room": "room_ref", "task": "task_ref"}


class SqlExperiences:
    """The ``ExperienceStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    # -- long-term records ------------------------------------------------------------------

    def put_experiences(self, agent_id: str, records: Sequence[ExperienceRecord]) -> None:
        d = self.db.dialect
        column, source = d.record_chunk  # beside its chunk: a record of a chunk that is gone is not kept
        write_many(self.db, agent_id, f"INSERT INTO experiences ({RECORD_COLUMNS}{column}) "
                   f"SELECT ?,?,?,?,{d.json_mark},?,?,?,?,?{source} ON CONFLICT (id) DO NOTHING",
                   [(*record_values(agent_id, r, iso=d.iso_times), r.id, agent_id) for r in records],
                   [(r.id, None) for r in records], experiences_recorded=len(records))

    def experience_records(self, agent_id: str, ids: Sequence[str]) -> dict[str, ExperienceRecord]:
        if not ids:
            return {}
        d = self.db.dialect
        among, values = d.among("id", ids)
        rows = fetch(self.db, agent_id, f"SELECT {RECORD_COLUMNS} FROM experiences "
                     f"WHERE {d.unindexed('agent_id')} = ? AND {among}", (agent_id, *values))
        return {row[0]: record_of(row) for row in rows}

    def list_experiences(self, agent_id: str, where: ChunkFilter, limit: int) -> list[str]:
        d = self.db.dialect
        tests, params = experience_tests(d, where.experience or ExperienceFilter(), "e")
        chunk_clause, chunk_params = self.db.filter_sql(replace(where, experience=None))
        # Newest first along the time index, each row joined to its chunk: without statistics SQLite's
        # planner would otherwise sort every chunk of the agent, or walk a covering index of the agent's
        # chunks for each row (220 ms at 100k). The chunk's test is the backend's own SQL.
        head = d.sql(f"SELECT e.id FROM experiences e{d.indexed_by('idx_experiences_when')} {d.ordered_join} "
                     f"{d.held} WHERE {' AND '.join(['e.agent_id = ?', *tests])} AND c.agent_id = ? AND ")
        tail = d.sql(f" ORDER BY e.observed_at DESC, {d.record_order} DESC LIMIT ?")
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(head + chunk_clause + tail, (agent_id, *params, agent_id, *chunk_params, limit))
            return [r[0] for r in rows.fetchall()]

    def related_experiences(self, agent_id: str, refs: dict[str, str], limit: int) -> list[str]:
        d = self.db.dialect
        clauses = " AND ".join(f"e.{_REFS[name]} = ?" for name in refs)
        rows = fetch(self.db, agent_id, f"SELECT e.id FROM experiences e JOIN {d.held} WHERE e.agent_id = ? "
                     f"AND {clauses} AND c.superseded_by IS NULL ORDER BY e.observed_at DESC, e.id DESC LIMIT ?",
                     (agent_id, *refs.values(), limit))
        return [r[0] for r in rows]

    # -- the short-term buffer, when it lives in the database ------------------------------------

    def short_term_append(self, agent_id: str, entry: Experience, capacity: int) -> list[str]:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            d.run(conn, f"INSERT INTO short_term ({SHORT_TERM_COLUMNS}) "
                  f"VALUES (?,?,?,?,?,{d.json_mark},{d.json_mark},?,?,?,?)", entry_values(agent_id, entry,
                                                                                     iso=d.iso_times))
            evicted = d.run(conn, "DELETE FROM short_term WHERE agent_id = ? AND seq <= (SELECT seq FROM short_term "
                            "WHERE agent_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?) RETURNING id",
                            (agent_id, agent_id, capacity)).fetchall()
            self.db.text_deleted(agent_id, len(evicted))
            self.db.note(agent_id, [(entry.id, content_hash(entry.content)), *((r[0], None) for r in evicted)],
                         short_term_added=1, short_term_evicted=len(evicted))
        return [r[0] for r in evicted]

    def short_term_entries(self, agent_id: str) -> list[Experience]:
        rows = fetch(self.db, None, f"SELECT {SHORT_TERM_COLUMNS} FROM short_term WHERE agent_id = ? ORDER BY seq",
                     (agent_id,), bookkeeping=False)
        return [entry_of(row) for row in rows]

    def short_term_agents(self) -> list[str]:
        rows = fetch(self.db, None, "SELECT DISTINCT agent_id FROM short_term ORDER BY agent_id", bookkeeping=False)
        return [r[0] for r in rows]

    def short_term_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        d = self.db.dialect
        among, values = d.among("id", ids)
        rows = fetch(self.db, agent_id, "SELECT id, embedding FROM short_term WHERE agent_id = ? "
                     f"AND embedding IS NOT NULL AND {among}", (agent_id, *values))
        return {row[0]: d.read_vector(row[1]) for row in rows}

    def set_short_term_vectors(self, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            d.many(conn, "UPDATE short_term SET embedding = ? WHERE agent_id = ? AND id = ?",
                   [(d.vector(v), agent_id, k) for k, v in vectors.items()])
            self.db.note(agent_id, short_term_vectors=len(vectors))

    def short_term_remove(self, agent_id: str, ids: Sequence[str]) -> list[str]:
        if not ids:
            return []
        d = self.db.dialect
        among, values = d.among("id", ids)
        with self.db.writing(agent_id) as conn:
            rows = d.run(conn, f"DELETE FROM short_term WHERE agent_id = ? AND {among} RETURNING id",
                         (agent_id, *values)).fetchall()
            self.db.text_deleted(agent_id, len(rows))
            self.db.note(agent_id, [(r[0], None) for r in rows], short_term_removed=len(rows))
        return [r[0] for r in rows]

    # -- the consolidation counters -------------------------------------------------------------

    def add_stats(self, agent_id: str, counts: dict[str, float]) -> None:
        write_many(self.db, agent_id, "INSERT INTO agent_stats (agent_id, name, value) VALUES (?, ?, ?) "
                   "ON CONFLICT (agent_id, name) DO UPDATE SET value = CASE WHEN agent_stats.name "
                   "LIKE 'last\\_%' ESCAPE '\\' THEN excluded.value "
                   "ELSE agent_stats.value + excluded.value END",
                   [(agent_id, name, value) for name, value in counts.items()], (),
                   **{f"consolidation_{name}": int(value) for name, value in counts.items()
                      if not name.startswith("last_")})

    def read_stats(self, agent_id: str) -> dict[str, float]:
        rows = fetch(self.db, agent_id, "SELECT name, value FROM agent_stats WHERE agent_id = ?", (agent_id,))
        return {name: float(value) for name, value in rows}


def erase_experiences(db: SqlDatabase, conn: Any, agent_id: str) -> int:
    """Inside ``delete_agent``: the buffer and counters of the agent (records go with the chunks)."""
    gone = db.dialect.run(conn, "DELETE FROM short_term WHERE agent_id = ?", (agent_id,)).rowcount
    db.dialect.run(conn, "DELETE FROM agent_stats WHERE agent_id = ?", (agent_id,))
    return int(gone)
