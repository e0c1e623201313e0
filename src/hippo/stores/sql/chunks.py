"""The chunk rows, as both relational stores read and write them where their SQL is the same (see
``ChunkStore``): by id and by hash, their strength, metadata and feedback, pending vectors, hard
deletes (one agent's chunks, or all it holds) and the move of memories to the archive.

A hard delete goes through the backend (``SqlDatabase.drop_chunks``): SQLite takes the rows out of
its in-memory vector index and rewrites its keyword index without them; PostgreSQL's indexes follow
the table. Where the backends' SQL differs (inserting chunks and their vectors, search, the
whole-agent counts and listings), each store has its own.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterable, Sequence

import numpy as np

from hippo.core.ports import StrengthUpdate
from hippo.core.ports.audit import unaudited
from hippo.core.ports.vectors import encode_int8
from hippo.errors import EmbedderMismatch
from hippo.stores.sql.blocks import count_retrievals, erase_daily
from hippo.stores.sql.capture import erase_capture, release_sources
from hippo.stores.sql.curation import MOVED, delete_archived_rows
from hippo.stores.sql.database import SqlDatabase, fetch, fetch_among
from hippo.stores.sql.experiences import erase_experiences
from hippo.stores.sql.rows import chunk_columns, chunk_of
from hippo.types import Chunk

__all__ = ["SqlChunks", "check_dimension", "vectors_of"]


def check_dimension(db: SqlDatabase, conn: Any, vectors: Iterable[np.ndarray | None]) -> None:
    """Inside the write: refuse vectors whose size is not the recorded model's (e.g. from a Memory
    left open while ``hippo.reembed`` switched the database to another model)."""
    sizes = {np.shape(v)[-1] for v in vectors if v is not None}
    row = conn.execute("SELECT model_id, dimension FROM embedding_model WHERE id = 1").fetchone()
    if sizes and row is not None and row[1] is not None and sizes != {row[1]}:
        raise EmbedderMismatch(
            f"this database's vectors are made with {row[0]} (dimension {row[1]}), refusing vectors of "
            f"dimension {', '.join(map(str, sorted(sizes)))}; reopen it with embedder={row[0]!r} "
            "or switch models with hippo.reembed()")


def vectors_of(db: SqlDatabase, conn: Any, agent_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Each of the agent's chunks among ``ids`` that has a vector, with its own vector."""
    d = db.dialect
    among, values = d.among("id", ids)
    rows = d.run(conn, f"SELECT id, embedding FROM {d.rows} WHERE {d.unindexed('agent_id')} = ? "
                 f"AND embedding IS NOT NULL AND {among}", (agent_id, *values)).fetchall()
    return {row[0]: d.read_vector(row[1]) for row in rows}


class SqlChunks:
    """The ``ChunkStore`` methods both relational stores write the same way, through ``db``."""

    db: SqlDatabase

    def embedder_record(self) -> tuple[str, int | None] | None:
        rows = fetch(self.db, None, "SELECT model_id, dimension FROM embedding_model WHERE id = 1", bookkeeping=False)
        return (rows[0][0], rows[0][1]) if rows else None

    def memories_by_hash(self, agent_id: str, hashes: Sequence[str]) -> dict[str, Chunk]:
        if not hashes:
            return {}
        d = self.db.dialect
        among, values = d.among("c.content_hash", hashes)
        rows = fetch(self.db, agent_id,
                     # Named in SQLite: its planner otherwise picks (agent_id, kind) and walks every memory
                     # of the agent (590 ms for 1,000 hashes at 100k rows; 14 ms through this index).
                     f"SELECT {chunk_columns(d)} FROM {d.chunks}{d.indexed_by('idx_chunks_memory_dedup')} "
                     f"WHERE c.agent_id = ? AND c.kind = 'memory' AND {among}", (agent_id, *values))
        return {chunk.content_hash: chunk for chunk in (chunk_of(d, r) for r in rows)}  # type: ignore[misc]

    def get_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        d = self.db.dialect
        rows = fetch_among(self.db, agent_id, f"SELECT {chunk_columns(d)} FROM {d.chunks} "
                           f"WHERE {d.unindexed('c.agent_id')} = ? AND", "c.id", ids, (agent_id,))
        by_id = {row[0]: chunk_of(d, row) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    def superseded_by(self, agent_id: str, chunk_id: str) -> list[Chunk]:
        d = self.db.dialect
        rows = fetch(self.db, agent_id, f"SELECT {chunk_columns(d)} FROM {d.chunks} WHERE c.agent_id = ? "
                     "AND c.superseded_by = ? ORDER BY c.created_at", (agent_id, chunk_id))
        return [chunk_of(d, r) for r in rows]

    def lengths(self, agent_id: str, ids: Sequence[str]) -> dict[str, int]:
        d = self.db.dialect
        # Characters, in both (PostgreSQL's length of a text too).
        return dict(fetch_among(self.db, agent_id, f"SELECT id, length(content) FROM {d.rows} "
                                f"WHERE {d.unindexed('agent_id')} = ? AND", "id", ids, (agent_id,)))

    def get_vectors(self, agent_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        with self.db.reading(agent_id) as conn:
            return vectors_of(self.db, conn, agent_id, ids)

    def known_ids(self, agent_id: str, ids: Sequence[str]) -> dict[str, bool]:
        rows = fetch_among(self.db, agent_id, f"SELECT id, agent_id = ? FROM {self.db.dialect.rows} WHERE", "id", ids,
                           (agent_id,))
        return {row[0]: bool(row[1]) for row in rows}

    def agent_of(self, chunk_id: str) -> str | None:
        rows = fetch(self.db, None, f"SELECT agent_id FROM {self.db.dialect.rows} WHERE id = ?", (chunk_id,))
        return rows[0][0] if rows else None

    def holds_nothing(self) -> bool:
        """No chunk, block or API key of any agent."""
        return not fetch(self.db, None, f"SELECT EXISTS (SELECT 1 FROM {self.db.dialect.rows}) OR EXISTS (SELECT 1 "
                         "FROM memory_blocks) OR EXISTS (SELECT 1 FROM api_keys)")[0][0]

    def update_strength(self, agent_id: str, updates: Sequence[StrengthUpdate]) -> None:
        if not updates:
            return
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            d.many(conn, f"UPDATE {d.strength} SET running_intensity = ?, encounter_count = ?, access_count = ?, "
                   "last_accessed_at = ? WHERE agent_id = ? AND id = ?",
                   [(u.running_intensity, u.encounter_count, u.access_count, d.time(u.last_accessed_at), agent_id,
                     u.id) for u in updates])
            self.db.note(agent_id, [(u.id, None) for u in updates], strength_updated=len(updates))

    def record_retrievals(self, agent_id: str, ids: Sequence[str], now: datetime, *, boost: float) -> None:
        if not ids:
            return
        d = self.db.dialect
        among, values = d.among("id", ids)
        with unaudited(), self.db.writing(agent_id) as conn:  # retrieval bookkeeping, not a change
            retrieved = d.run(conn, f"UPDATE {d.strength} SET access_count = access_count + 1, last_accessed_at = ?, "
                              f"running_intensity = {d.least('1.0', 'running_intensity + ?')} "
                              f"WHERE {d.unindexed('agent_id')} = ? AND {among}",
                              (d.time(now), boost, agent_id, *values)).rowcount
            count_retrievals(self.db, conn, agent_id, now, retrieved)

    def update_metadata(self, agent_id: str, chunk_id: str, metadata: dict[str, Any], *,
                        adds_only: bool = False) -> bool:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            found = d.run(conn, f"UPDATE {d.rows} SET metadata = {d.json_mark} WHERE agent_id = ? AND id = ?",
                          (json.dumps(metadata, ensure_ascii=False), agent_id, chunk_id)).rowcount > 0
            if found and not adds_only:
                self.db.text_deleted(agent_id, 1)  # the old metadata (a user's text, maybe) leaves the files
            self.db.note(agent_id, [(chunk_id, None)] if found else [], metadata_updated=int(found))
        return bool(found)

    def add_feedback(self, agent_id: str, chunk_id: str, delta: int, reinforced_at: datetime | None) -> bool:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            found = d.run(conn, f"UPDATE {d.rows} SET feedback = feedback + ?, reinforced_at = "
                          "COALESCE(?, reinforced_at) WHERE agent_id = ? AND id = ?",
                          (delta, d.time(reinforced_at), agent_id, chunk_id)).rowcount > 0
            self.db.note(agent_id, [(chunk_id, None)] if found else [], feedback=delta if found else 0)
            return bool(found)

    def pending_vectors(self, agent_id: str | None, limit: int) -> list[tuple[str, str, str]]:
        d = self.db.dialect
        sql, params = f"SELECT agent_id, id, content FROM {d.rows} WHERE embedding IS NULL", []
        if agent_id is not None:
            sql, params = sql + " AND agent_id = ?", [agent_id]
        return [tuple(r) for r in fetch(self.db, None, sql + f" ORDER BY {d.stored_order} LIMIT ?", (*params, limit))]

    def count_pending(self, agent_id: str | None) -> int:
        d = self.db.dialect
        sql, params = f"SELECT count(*) FROM {d.rows} WHERE embedding IS NULL", []
        if agent_id is not None:
            sql, params = sql + " AND agent_id = ?", [agent_id]
        return int(fetch(self.db, None, sql, params)[0][0])

    # -- hard deletes and the archive's move --------------------------------------------------

    def delete_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.db.writing(agent_id) as conn:
            release_sources(self.db, conn, self.db.dialect.rows, agent_id, ids)
            return len(self.db.drop_chunks(conn, agent_id, ids))

    def delete_agent(self, agent_id: str) -> dict[str, int]:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            kinds = self.db.drop_chunks(conn, agent_id, None)
            blocks = int(d.run(conn, "DELETE FROM memory_blocks WHERE agent_id = ?", (agent_id,)).rowcount)
            archived = [r[0] for r in d.run(conn, "SELECT id FROM chunks_archive WHERE agent_id = ?", (agent_id,))]
            delete_archived_rows(self.db, conn, agent_id, archived)
            short_term = erase_experiences(self.db, conn, agent_id)
            inbox = erase_capture(self.db, conn, agent_id)
            erase_daily(self.db, conn, agent_id)
            self.db.text_deleted(agent_id, blocks + short_term + inbox)
        return {"memories": kinds.count("memory") + len(archived), "facts": kinds.count("fact"), "blocks": blocks,
                "short_term": short_term}

    def archive_chunks(self, agent_id: str, ids: Sequence[str], now: datetime) -> int:
        if not ids:
            return 0
        d = self.db.dialect
        among, values = d.among("c.id", ids)
        moved = ", ".join(f"{d.counters if c in _COUNTERS else 'c'}.{c}" for c in MOVED.split(", "))
        with self.db.writing(agent_id) as conn:
            d.run(conn, f"INSERT INTO chunks_archive ({MOVED}, archived_at) SELECT {moved}, ? FROM {d.chunks} "
                  f"WHERE {d.unindexed('c.agent_id')} = ? AND {among}", (d.time(now), agent_id, *values))
            codes = {i: encode_int8(v) for i, v in vectors_of(self.db, conn, agent_id, ids).items()}
            d.many(conn, "UPDATE chunks_archive SET embedding_int8 = ? WHERE agent_id = ? AND id = ?",
                   [(code, agent_id, i) for i, code in codes.items()])
            archived = len(self.db.drop_chunks(conn, agent_id, ids))
            self.db.note(agent_id, archived=archived)
            return archived


_COUNTERS = ("running_intensity", "encounter_count", "access_count", "last_accessed_at")
