"""Curation in the PostgreSQL store where its SQL is its own (the rest is ``stores/sql/curation.py``):
the size the cap is measured on, the lock of a long maintenance, pruning's candidates, the archive's
keyword search (``tsvector``), restoring archived chunks into the two live tables, and recalls'
retrieval events written in one statement per table.

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector, in one transaction
under the agent's lock. The size cap is measured on live rows (``pg_column_size``, TOAST included)
of hippo's tables: PostgreSQL keeps the space of deleted rows in its files for reuse (plain
``VACUUM``), so the files' size would not fall when rows move; ``VACUUM FULL`` (``hippo scrub``)
gives it back to the system.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from hippo.stores.base import PruneCandidate
from hippo.stores.postgres.connection import Connections
from hippo.stores.postgres.search import tsquery
from hippo.stores.postgres.strength import COUNTERS
from hippo.stores.retrievals import RetrievalBatch
from hippo.stores.sql.blocks import count_retrieval_days
from hippo.stores.sql.curation import archived_columns
from hippo.stores.sql.rows import chunk_of
from hippo.types import Chunk

__all__ = ["Curation"]

# A chunk's row alone (its counters apart, in ``chunk_strength``).
_ROW = ("id, agent_id, content, content_hash, metadata, kind, superseded_by, created_at, observed_at, feedback, "
        "reinforced_at, source, session_id")


class Curation:
    """The PostgreSQL store's own curation methods, through its ``db``."""

    db: Connections

    def used_bytes(self) -> int:
        with self.db.reading() as conn:
            return int(conn.execute(
                "SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM chunk_rows c) "
                "+ (SELECT coalesce(sum(pg_column_size(s.*)), 0) FROM chunk_strength s) "
                "+ (SELECT coalesce(sum(pg_column_size(a.*)), 0) FROM chunks_archive a) "
                "+ (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM memory_blocks b)").fetchone()[0])

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """A session-level advisory lock on one pooled connection, held for the whole operation (it
        spans many transactions) and released before the connection goes back to the pool."""
        with self.db.session() as conn:
            key = conn.execute("SELECT hashtextextended(%s, 2)", (f"hippo:{name}",)).fetchone()[0]
            if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                yield False
                return
            try:
                yield True
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def compact(self) -> None:
        with self.db.reading() as conn:  # outside a transaction, as VACUUM must be
            conn.execute("VACUUM (ANALYZE) chunk_rows")
            conn.execute("VACUUM (ANALYZE) chunk_strength")
            conn.execute("VACUUM (ANALYZE) chunk_words")
            conn.execute("VACUUM chunks_archive")

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        mine, params = ("AND agent_id = %s", (agent_id,)) if agent_id is not None else ("", ())
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT agent_id, id, feedback, extract(epoch FROM COALESCE(reinforced_at, created_at))::float8, "
                f"pg_column_size(c.*) FROM chunk_rows c WHERE kind = 'memory' {mine} AND NOT metadata ? '_item_key'",
                params).fetchall()
        return [PruneCandidate(*row) for row in rows]

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        query = tsquery(terms, every_term)
        if query is None:
            return []
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {archived_columns(self.db)}, ts_rank(c.tsv, q, 1)::float8 AS rank FROM chunks_archive c, "
                "to_tsquery('hippo_english', hippo_fold(%s)) q WHERE c.agent_id = %s AND c.tsv @@ q "
                "ORDER BY rank DESC, c.id LIMIT %s", (query, agent_id, limit)).fetchall()
        return [(chunk_of(self.db.dialect, r[:-1]), float(r[-1])) for r in rows]

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.db.writing(agent_id) as conn:
            moved = conn.execute(f"INSERT INTO chunk_rows ({_ROW}) SELECT {_ROW} FROM chunks_archive "
                                 "WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids))).rowcount
            conn.execute(f"INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) SELECT id, agent_id, {COUNTERS} "
                         "FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
            conn.execute("DELETE FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
        self.db.text_deleted(agent_id, 0)  # its counts change: nothing was forgotten
        return int(moved)

    def write_retrievals(self, agent_id: str, batch: RetrievalBatch) -> None:
        ids, merged = list(batch.chunks), list(batch.chunks.values())
        with self.db.writing(agent_id) as conn, conn.cursor() as cur:
            found = {r[0] for r in conn.execute(
                "UPDATE chunk_strength s SET access_count = s.access_count + u.times, last_accessed_at = u.last, "
                "running_intensity = least(1.0, s.running_intensity + u.boost) "
                "FROM unnest(%s::text[], %s::int[], %s::timestamptz[], %s::float8[]) AS u (id, times, last, boost) "
                "WHERE s.agent_id = %s AND s.id = u.id RETURNING s.id",
                (ids, [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged], agent_id))}
            cur.executemany(  # another server may forget an end meanwhile: checked in the statement
                "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
                "SELECT %s, 'co_recall', %s, %s, %s, %s "
                "WHERE (SELECT count(*) FROM chunk_rows WHERE agent_id = %s AND id IN (%s, %s)) = 2 "
                "ON CONFLICT (agent_id, kind, a, b) DO UPDATE SET strength = chunk_links.strength + excluded.strength, "
                "updated_at = excluded.updated_at",
                [(agent_id, a, b, float(times), last, agent_id, a, b)
                 for (a, b), (times, last) in batch.links.items() if a in found and b in found])
            count_retrieval_days(self.db, conn, agent_id, batch.day_counts(found))
