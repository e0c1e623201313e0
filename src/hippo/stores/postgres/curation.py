"""Curation in the PostgreSQL store where its SQL is its own (the rest is ``stores/sql/curation.py``):
the size the cap is measured on, the lock of a long maintenance, compaction, pruning's candidates,
the archive's keyword search (``tsvector``), restoring archived chunks into the two live tables,
and a retrieval's counters written in one statement.

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector, in one transaction
under the agent's lock. The size cap is measured on live rows (``pg_column_size``, TOAST included)
of hippo's tables: PostgreSQL keeps the space of deleted rows in its files for reuse (plain
``VACUUM``), so the files' size would not fall when rows move; ``VACUUM FULL`` (``hippo scrub``)
gives it back to the system.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from hippo.core.ports import RetrievalBatch
from hippo.stores.postgres.connection import Connections
from hippo.stores.postgres.search import tsquery
from hippo.stores.postgres.strength import COUNTERS
from hippo.stores.sql.dialect import POSTGRES
from hippo.stores.sql.rows import chunk_columns

__all__ = ["Curation"]

# A chunk's row alone (its counters apart, in ``chunk_strength``).
_ROW = ("id, agent_id, content, content_hash, metadata, kind, superseded_by, created_at, observed_at, feedback, "
        "reinforced_at, source, session_id")


class Curation:
    """The PostgreSQL store's own curation statements and methods, through its ``db``."""

    db: Connections
    used_bytes_sql = ("SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM chunk_rows c) "
                      "+ (SELECT coalesce(sum(pg_column_size(s.*)), 0) FROM chunk_strength s) "
                      "+ (SELECT coalesce(sum(pg_column_size(a.*)), 0) FROM chunks_archive a) "
                      "+ (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM memory_blocks b)")
    compacting: tuple[str, ...] = ("VACUUM (ANALYZE) chunk_rows", "VACUUM (ANALYZE) chunk_strength",
                                   "VACUUM (ANALYZE) chunk_words", "VACUUM chunks_archive")
    prune_sql = ("SELECT agent_id, id, feedback, extract(epoch FROM COALESCE(reinforced_at, created_at))::float8, "
                 "pg_column_size(c.*) FROM chunk_rows c WHERE kind = 'memory' AND NOT metadata ? '_item_key'")
    archived_bytes_sql = "SELECT agent_id, sum(pg_column_size(a.*)) FROM chunks_archive a GROUP BY agent_id"
    archive_search_sql = (
        f"SELECT {chunk_columns(POSTGRES, 'c', vector='false')}, ts_rank(c.tsv, q, 1)::float8 AS rank "
        "FROM chunks_archive c, to_tsquery('hippo_english', hippo_fold(%s)) q WHERE c.agent_id = %s AND c.tsv @@ q "
        "ORDER BY rank DESC, c.id LIMIT %s")
    keyword_query = staticmethod(tsquery)

    def _lock(self, name: str) -> Iterator[Callable[[], object] | None]:
        """A session-level advisory lock on one pooled connection, held for the whole operation (it
        spans many transactions) and released before the connection goes back to the pool."""
        with self.db.session() as conn:
            key = conn.execute("SELECT hashtextextended(%s, 2)", (f"hippo:{name}",)).fetchone()[0]
            held = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]
            yield (lambda: conn.execute("SELECT pg_advisory_unlock(%s)", (key,))) if held else None

    def _restore_rows(self, conn: Any, agent_id: str, ids: Sequence[str]) -> int:
        moved = conn.execute(f"INSERT INTO chunk_rows ({_ROW}) SELECT {_ROW} FROM chunks_archive "
                             "WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids))).rowcount
        conn.execute(f"INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) SELECT id, agent_id, {COUNTERS} "
                     "FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
        conn.execute("DELETE FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
        return int(moved)

    def count_accesses(self, conn: Any, agent_id: str, batch: RetrievalBatch) -> set[str]:
        """See ``SqlLinks.count_accesses``: one statement updates the counters of the chunks it finds."""
        ids, merged = list(batch.chunks), list(batch.chunks.values())
        return {r[0] for r in conn.execute(
            "UPDATE chunk_strength s SET access_count = s.access_count + u.times, last_accessed_at = u.last, "
            "running_intensity = least(1.0, s.running_intensity + u.boost) "
            "FROM unnest(%s::text[], %s::int[], %s::timestamptz[], %s::float8[]) AS u (id, times, last, boost) "
            "WHERE s.agent_id = %s AND s.id = u.id RETURNING s.id",
            (ids, [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged], agent_id))}
