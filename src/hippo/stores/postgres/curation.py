"""The curation half of :class:`~hippo.stores.postgres.store.PostgresStore` (seed 003): the archive (see
``ArchiveStore``) and links between chunks (``LinkStore``).

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector, in one transaction
under the agent's lock. The size cap is measured on live rows (``pg_column_size``, TOAST included)
of hippo's tables: PostgreSQL keeps the space of deleted rows in its files for reuse (plain
``VACUUM``), so the files' size would not fall when rows move; ``VACUUM FULL`` (``hippo scrub``)
gives it back to the system.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, ContextManager, Iterator, Sequence

import numpy as np

from hippo.stores.base import PruneCandidate
from hippo.stores.postgres.search import tsquery
from hippo.stores.postgres.strength import CHUNKS, COUNTERS
from hippo.stores.postgres.summary import count_retrieval_days
from hippo.stores.retrievals import STRONG_LINK, RetrievalBatch
from hippo.stores.vectors import encode_int8
from hippo.types import ArchivedMemory, Chunk

__all__ = ["CurationMixin"]

_MOVED = ("id, agent_id, content, content_hash, metadata, kind, running_intensity, encounter_count, access_count, "
          "last_accessed_at, superseded_by, created_at, observed_at, feedback, reinforced_at, source, session_id")
# The same columns read from the live tables (``strength.CHUNKS``), and the row's alone (its counters apart).
_LIVE = ("c.id, c.agent_id, c.content, c.content_hash, c.metadata, c.kind, s.running_intensity, s.encounter_count, "
         "s.access_count, s.last_accessed_at, c.superseded_by, c.created_at, c.observed_at, c.feedback, "
         "c.reinforced_at, c.source, c.session_id")
_ROW = ("id, agent_id, content, content_hash, metadata, kind, superseded_by, created_at, observed_at, feedback, "
        "reinforced_at, source, session_id")
# As ``search.CHUNK_COLUMNS`` reads them (an archived chunk has no vector).
_ARCHIVED = ("c.id, c.agent_id, c.content, c.content_hash, c.metadata, c.kind, c.running_intensity, "
             "c.encounter_count, c.access_count, c.last_accessed_at, c.superseded_by, c.created_at, c.observed_at, "
             "false, c.feedback, c.reinforced_at, c.source, c.session_id")


class CurationMixin:
    _db: Any
    _read: Callable[..., ContextManager[Any]]
    _deleted: Callable[[str, int], None]
    _release_sources: Callable[[Any, str, str, Sequence[str]], None]
    _chunk_of: Callable[[tuple], Chunk]
    get_vectors: Callable[[str, Sequence[str]], dict[str, np.ndarray]]

    def used_bytes(self) -> int:
        with self._read() as conn:
            return int(conn.execute(
                "SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM chunk_rows c) "
                "+ (SELECT coalesce(sum(pg_column_size(s.*)), 0) FROM chunk_strength s) "
                "+ (SELECT coalesce(sum(pg_column_size(a.*)), 0) FROM chunks_archive a) "
                "+ (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM memory_blocks b)").fetchone()[0])

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """A session-level advisory lock on one pooled connection, held for the whole operation (it
        spans many transactions) and released before the connection goes back to the pool."""
        with self._db.session() as conn:
            key = conn.execute("SELECT hashtextextended(%s, 2)", (f"hippo:{name}",)).fetchone()[0]
            if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                yield False
                return
            try:
                yield True
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def compact(self) -> None:
        with self._read() as conn:  # outside a transaction, as VACUUM must be
            conn.execute("VACUUM (ANALYZE) chunk_rows")
            conn.execute("VACUUM (ANALYZE) chunk_strength")
            conn.execute("VACUUM (ANALYZE) chunk_words")
            conn.execute("VACUUM chunks_archive")

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        mine, params = ("AND agent_id = %s", (agent_id,)) if agent_id is not None else ("", ())
        with self._read() as conn:
            rows = conn.execute(
                "SELECT agent_id, id, feedback, extract(epoch FROM COALESCE(reinforced_at, created_at))::float8, "
                f"pg_column_size(c.*) FROM chunk_rows c WHERE kind = 'memory' {mine} AND NOT metadata ? '_item_key'",
                params).fetchall()
        return [PruneCandidate(*row) for row in rows]

    def archive_chunks(self, agent_id: str, ids: Sequence[str], now: datetime) -> int:
        if not ids:
            return 0
        with self._db.writing(agent_id) as conn:
            conn.execute(f"INSERT INTO chunks_archive ({_MOVED}, archived_at) SELECT {_LIVE}, %s FROM {CHUNKS} "
                         "WHERE c.agent_id = %s AND c.id = ANY(%s)", (now, agent_id, list(ids)))
            self.set_archived_vectors(agent_id, {i: encode_int8(v) for i, v in self.get_vectors(agent_id, ids).items()})
            count = conn.execute("DELETE FROM chunk_rows WHERE agent_id = %s AND id = ANY(%s)",
                                 (agent_id, list(ids))).rowcount
        self._deleted(agent_id, count)
        return int(count)

    def archived_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        if not ids:
            return []
        with self._read(agent_id) as conn:
            rows = conn.execute(f"SELECT {_ARCHIVED} FROM chunks_archive c WHERE c.agent_id = %s AND c.id = ANY(%s) "
                                "ORDER BY c.id", (agent_id, list(ids))).fetchall()
        return [self._chunk_of(r) for r in rows]

    def list_archived(self, agent_id: str, *, limit: int, before: tuple[datetime, str] | None = None,
                      ids: Sequence[str] | None = None) -> list[ArchivedMemory]:
        if ids is not None and not ids:
            return []
        sql = f"SELECT {_ARCHIVED}, c.archived_at FROM chunks_archive c WHERE c.agent_id = %s"
        params: list[Any] = [agent_id]
        if before is not None:
            sql, params = sql + " AND (c.archived_at, c.id) < (%s, %s)", [*params, before[0], before[1]]
        if ids is not None:
            sql, params = sql + " AND c.id = ANY(%s)", [*params, list(ids)]
        with self._read(agent_id) as conn:
            rows = conn.execute(sql + " ORDER BY c.archived_at DESC, c.id DESC LIMIT %s", (*params, limit)).fetchall()
        return [ArchivedMemory(self._chunk_of(r[:-1]), r[-1]) for r in rows]

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        query = tsquery(terms, every_term)
        if query is None:
            return []
        with self._read(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {_ARCHIVED}, ts_rank(c.tsv, q, 1)::float8 AS rank FROM chunks_archive c, "
                "to_tsquery('hippo_english', hippo_fold(%s)) q WHERE c.agent_id = %s AND c.tsv @@ q "
                "ORDER BY rank DESC, c.id LIMIT %s", (query, agent_id, limit)).fetchall()
        return [(self._chunk_of(r[:-1]), float(r[-1])) for r in rows]

    def archived_vectors(self, agent_id: str) -> dict[str, bytes | None]:
        with self._read(agent_id) as conn:
            rows = conn.execute("SELECT id, embedding_int8 FROM chunks_archive WHERE agent_id = %s",
                                (agent_id,)).fetchall()
        return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}

    def set_archived_vectors(self, agent_id: str, codes: dict[str, bytes]) -> None:
        if not codes:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany("UPDATE chunks_archive SET embedding_int8 = %s WHERE agent_id = %s AND id = %s",
                            [(code, agent_id, i) for i, code in codes.items()])

    def clear_archived_vectors(self) -> None:
        with self._db.writing() as conn:
            conn.execute("UPDATE chunks_archive SET embedding_int8 = NULL WHERE embedding_int8 IS NOT NULL")

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._db.writing(agent_id) as conn:
            moved = conn.execute(f"INSERT INTO chunk_rows ({_ROW}) SELECT {_ROW} FROM chunks_archive "
                                 "WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids))).rowcount
            conn.execute(f"INSERT INTO chunk_strength (id, agent_id, {COUNTERS}) SELECT id, agent_id, {COUNTERS} "
                         "FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
            conn.execute("DELETE FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)", (agent_id, list(ids)))
        self._deleted(agent_id, 0)
        return int(moved)

    def delete_archived(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._db.writing(agent_id) as conn:
            self._release_sources(conn, "chunks_archive", agent_id, ids)
            count = conn.execute("DELETE FROM chunks_archive WHERE agent_id = %s AND id = ANY(%s)",
                                 (agent_id, list(ids))).rowcount
        self._deleted(agent_id, count)
        return int(count)

    # -- links (seed 003's relations) --------------------------------------------------------

    def strengthen_links(self, agent_id: str, pairs: Sequence[tuple[str, str]], kind: str, now: datetime) -> None:
        if not pairs:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) SELECT %s, %s, %s, %s, 1.0, %s "
                "WHERE (SELECT count(*) FROM chunk_rows WHERE agent_id = %s AND id IN (%s, %s)) = 2 "
                "ON CONFLICT (agent_id, kind, a, b) DO UPDATE SET strength = chunk_links.strength + 1.0, "
                "updated_at = excluded.updated_at",
                [(agent_id, kind, a, b, now, agent_id, a, b) for a, b in pairs])

    def write_retrievals(self, agent_id: str, batch: RetrievalBatch) -> None:
        ids, merged = list(batch.chunks), list(batch.chunks.values())
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
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
            count_retrieval_days(conn, agent_id, batch.day_counts(found))

    def prune_links(self, agent_id: str, *, before: datetime, keep: int | None) -> int:
        weak = f"FROM chunk_links WHERE agent_id = %s AND kind = 'co_recall' AND strength < {STRONG_LINK}"
        with self._db.writing(agent_id) as conn:
            gone = conn.execute(f"DELETE {weak} AND updated_at < %s", (agent_id, before)).rowcount
            if keep is not None:
                gone += conn.execute(
                    f"DELETE FROM chunk_links WHERE (agent_id, kind, a, b) IN (SELECT agent_id, kind, a, b {weak} "
                    f"ORDER BY updated_at DESC OFFSET %s)", (agent_id, keep)).rowcount
        return int(gone)

    def links(self, agent_id: str, ids: Sequence[str],
              min_strength: float = 0.0) -> list[tuple[str, str, str, float, bool]]:
        if not ids:
            return []
        with self._read(agent_id) as conn:
            rows = conn.execute(
                "SELECT l.a, l.b, l.kind, l.strength, true FROM chunk_links l WHERE l.agent_id = %s "
                "AND l.a = ANY(%s) AND l.strength >= %s UNION ALL "
                "SELECT l.b, l.a, l.kind, l.strength, false FROM chunk_links l WHERE l.agent_id = %s "
                "AND l.b = ANY(%s) AND l.strength >= %s",
                (agent_id, list(ids), min_strength, agent_id, list(ids), min_strength)).fetchall()
        return sorted(((r[0], r[1], r[2], float(r[3]), bool(r[4])) for r in rows), key=lambda r: (-r[3], r[1]))

    def count_archived(self, agent_id: str) -> int:
        with self._read(agent_id) as conn:
            return int(conn.execute("SELECT count(*) FROM chunks_archive WHERE agent_id = %s",
                                    (agent_id,)).fetchone()[0])
