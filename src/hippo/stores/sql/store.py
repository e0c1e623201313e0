"""A relational store: every part both backends share (``stores/sql``), over one handle.

A backend subclasses :class:`SqlStore`, gives it its handle (``db``: ``sqlite/database.py``,
``postgres/connection.py``), its retrieval queue and its reading of the application's messages
table, and adds what it does its own way: the rows of chunks and their vectors, search, the
summary's counting (``stores/sql/summary.py``), the curation whose SQL differs, scrubbing.

The writes of chunks and their vectors are template methods here: the transaction, the dimension
check and the release of a rewritten chunk's sources are shared, and a backend writes the rows its
own way inside the write (``_write_chunks``, ``_write_vectors``, ``_rewrite_chunk``, ``_superseded``,
``_vectors_cleared``: SQLite also stages its in-memory vector index there, before the commit).
``_chunks_inserted`` and ``_chunk_rewritten`` run once the write committed (PostgreSQL forgets
what it counted there).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, ContextManager, Iterator, Sequence

import numpy as np

from hippo.core.ports import ChunkFilter
from hippo.core.ports.audit import AuditQuery, ChainRecord, Scope
from hippo.stores.audit import chain
from hippo.stores.remnants import SqlRemnants
from hippo.stores.retrievals import RetrievalQueue
from hippo.stores.sql.blocks import SqlBlocks, SqlDaily
from hippo.stores.sql.capture import SqlCapture, SqlSessions, release_sources
from hippo.stores.sql.chunks import SqlChunks, check_dimension
from hippo.stores.sql.conversation import SqlConversation
from hippo.stores.sql.curation import SqlArchive, SqlLinks
from hippo.stores.sql.database import SqlDatabase
from hippo.stores.sql.experiences import SqlExperiences
from hippo.stores.sql.keys import SqlKeys
from hippo.stores.sql.merges import SqlMerges
from hippo.types import Chunk

__all__ = ["Rewrite", "SqlStore"]


@dataclass(frozen=True)
class Rewrite:
    """A chunk's new text (``update_content``): its hash, its vector (None: none yet), when."""

    chunk_id: str
    content: str
    content_hash: str
    vector: np.ndarray | None
    now: datetime


class SqlStore(SqlChunks, SqlCapture, SqlSessions, SqlExperiences, SqlArchive, SqlLinks, SqlMerges, SqlKeys,
               SqlBlocks, SqlDaily, SqlConversation, SqlRemnants):
    """The shared parts of a relational :class:`~hippo.core.ports.Store`, through ``db``."""

    db: SqlDatabase
    retrievals: RetrievalQueue
    # Inside a read (``neighbours``): the agent's memories among the ids, each with the memories of
    # its session up to ``reach`` places away that pass the filter's test (its SQL, its parameters).
    _session_neighbours: Callable[[Any, str, Sequence[str], int, str, list[Any]], dict[str, list[tuple[str, int]]]]

    def close(self) -> None:
        self.retrievals.close()  # what is queued is written first
        self.close_search()
        self.db.close()

    def close_search(self) -> None:
        """Let go of what the backend's search holds beside the database (before it closes)."""

    def transaction(self) -> ContextManager[Any]:
        return self.db.transaction()

    def neighbours(self, agent_id: str, ids: Sequence[str], reach: int,
                   where: ChunkFilter) -> dict[str, list[tuple[str, int]]]:
        if not ids:
            return {}
        condition, params = self.db.filter_sql(where)
        with self.db.reading(agent_id) as conn:
            return self._session_neighbours(conn, agent_id, ids, reach, condition, params)

    def kind_counts(self) -> dict[str, int]:
        with self.db.reading(None, bookkeeping=False) as conn:  # the (agent, kind, id) index, not the rows
            return dict(conn.execute(f"SELECT kind, count(*) FROM {self.db.dialect.rows} GROUP BY kind").fetchall())

    def _queue_retrievals(self, queue: RetrievalQueue) -> None:
        """Recalls' retrieval events go through ``queue``, and every read first writes those it must see."""
        self.retrievals = queue
        self.db.before_read = queue.before_read

    # -- the audit trail (stores/audit.py): read and trimmed here, appended by the handle ----------

    def audit_records(self, agent_id: str, query: AuditQuery) -> list[ChainRecord]:
        with self.db.reading(agent_id, bookkeeping=False) as conn:
            return self.db.audit.records(conn, agent_id, query)

    def audit_chain(self, agent_id: str) -> Iterator[ChainRecord]:
        return chain(lambda: self.db.reading(agent_id, bookkeeping=False), self.db.audit, agent_id)

    def audit_head(self, agent_id: str) -> tuple[int, str] | None:
        with self.db.reading(agent_id, bookkeeping=False) as conn:
            return self.db.audit.head(conn, agent_id)

    def audit_agents(self) -> list[str]:
        with self.db.reading(None, bookkeeping=False) as conn:
            return self.db.audit.agents(conn)

    def audit_secret(self) -> str:
        with self.db.reading(None, bookkeeping=False) as conn:
            return self.db.audit.secret(conn)

    def trim_audit(self, agent_id: str, before: datetime, scope: Scope) -> int:
        with self.db.writing() as conn:  # no agent: the checkpoint is this write's only record
            return self.db.audit.trim(conn, agent_id, before, scope)

    # -- chunks and their vectors: the shared shape of each write --------------

    def set_embedder_record(self, model_id: str, dimension: int | None) -> None:
        d = self.db.dialect
        with self.db.writing() as conn:
            self._recording_embedder(conn)
            d.run(conn, "INSERT INTO embedding_model (id, model_id, dimension, recorded_at) "
                  f"VALUES (1, ?, ?, {d.now}) ON CONFLICT (id) DO UPDATE SET model_id = excluded.model_id, "
                  "dimension = excluded.dimension, recorded_at = excluded.recorded_at", (model_id, dimension))
            self._embedder_recorded(conn, dimension)

    def insert_chunks(self, agent_id: str, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray | None]) -> None:
        with self.db.writing(agent_id) as conn:
            check_dimension(self.db, conn, vectors)
            self._write_chunks(conn, agent_id, chunks, vectors)
            self.db.note(agent_id, [(c.id, c.content_hash) for c in chunks], inserted=len(chunks))
        self._chunks_inserted(agent_id)

    def supersede(self, agent_id: str, old_ids: Sequence[str], new_id: str) -> list[str]:
        if not old_ids:
            return []
        d = self.db.dialect
        among, values = d.among("id", old_ids)
        with self.db.writing(agent_id) as conn:
            rows = d.run(conn, f"UPDATE {d.rows} SET superseded_by = ? WHERE {d.unindexed('agent_id')} = ? "
                         f"AND superseded_by IS NULL AND {among} RETURNING {d.stored_order}, id",
                         (new_id, agent_id, *values)).fetchall()
            self._superseded(agent_id, [r[0] for r in rows])
            self.db.note(agent_id, [(r[1], None) for r in rows], superseded=len(rows))
        return [r[1] for r in rows]

    def set_vectors(self, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        with self.db.writing(agent_id) as conn:
            check_dimension(self.db, conn, vectors.values())
            self._write_vectors(conn, agent_id, vectors)
            self.db.note(agent_id, vectors=len(vectors))

    def update_content(self, agent_id: str, chunk_id: str, content: str, content_hash: str,
                       vector: np.ndarray | None, now: datetime) -> bool:
        with self.db.writing(agent_id) as conn:
            if vector is not None:
                check_dimension(self.db, conn, [vector])
            release_sources(self.db, conn, self.db.dialect.rows, agent_id, [chunk_id])
            count = self._rewrite_chunk(conn, agent_id, Rewrite(chunk_id, content, content_hash, vector, now))
            self.db.note(agent_id, [(chunk_id, content_hash)] if count else [], rewritten=count)
        self._chunk_rewritten(agent_id, count)
        return count > 0

    def clear_vectors(self) -> None:
        with self.db.writing() as conn:
            self.db.dialect.run(conn, f"UPDATE {self.db.dialect.rows} SET embedding = NULL WHERE embedding IS NOT NULL")
            self._vectors_cleared()

    def _write_chunks(self, conn: Any, agent_id: str, chunks: Sequence[Chunk],
                      vectors: Sequence[np.ndarray | None]) -> None:
        """Inside the write, dimensions checked: insert the chunks, each with its vector (or None)."""
        raise NotImplementedError

    def _superseded(self, agent_id: str, stored: list[Any]) -> None:
        """Inside the write that superseded the agent's chunks (``stored``: their ``stored_order``)."""

    def _write_vectors(self, conn: Any, agent_id: str, vectors: dict[str, np.ndarray]) -> None:
        """Inside the write, dimensions checked: store each chunk's vector (the agent's chunks only)."""
        raise NotImplementedError

    def _rewrite_chunk(self, conn: Any, agent_id: str, rewrite: Rewrite) -> int:
        """Inside the write, dimensions checked and sources released: rewrite the chunk; 1, or 0
        when the agent has no such chunk."""
        raise NotImplementedError

    def _recording_embedder(self, conn: Any) -> None:
        """Inside the write, before the embedder's record changes (PostgreSQL: one process at a time)."""

    def _embedder_recorded(self, conn: Any, dimension: int | None) -> None:
        """Inside the write, once the embedder's record changed: what follows from its dimension."""

    def _vectors_cleared(self) -> None:
        """Inside the write that cleared every vector: what the backend keeps beside the rows."""

    def _chunks_inserted(self, agent_id: str) -> None:
        """Once the insert of the agent's chunks committed."""

    def _chunk_rewritten(self, agent_id: str, count: int) -> None:
        """Once the rewrite of the agent's chunk committed (``count``: 1, or 0 when there was none)."""
