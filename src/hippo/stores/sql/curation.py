"""Curation, as both relational stores keep it: the archive (see ``ArchiveStore``), the links
between chunks (``LinkStore``) and recalls' retrieval events, the size cap's measure, compaction
and pruning's candidates.

Archiving moves a memory's row from the live table to ``chunks_archive`` without its vector (an
8-bit copy stays, for a forget); the backends move it back, each with its own tables
(``restore_chunks``). What is read, searched and deleted there, and the links, are written once
here; where the SQL is each database's own (the size of the rows, the keyword search, the
statements of a compaction, a retrieval's counters) the backend names it (:class:`SqlArchive`'s
attributes, :meth:`SqlLinks.count_accesses`). Deleting from the archive goes through the same
bookkeeping as a forget (``SqlDatabase.text_deleted``).
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Iterator, Sequence

from hippo.core.curation.rules import STRONG_LINK
from hippo.core.ports import PruneCandidate, RetrievalBatch
from hippo.stores.sql.blocks import count_retrieval_days
from hippo.stores.sql.capture import release_sources
from hippo.stores.sql.database import SqlDatabase, fetch, fetch_among, write_many
from hippo.stores.sql.rows import chunk_columns, chunk_of, time_of
from hippo.types import ArchivedMemory, Chunk

__all__ = ["MOVED", "SqlArchive", "SqlLinks", "archived_columns", "delete_archived_rows"]

# The columns a chunk keeps when it moves to the archive and back.
MOVED = ("id, agent_id, content, content_hash, metadata, kind, running_intensity, encounter_count, access_count, "
         "last_accessed_at, superseded_by, created_at, observed_at, feedback, reinforced_at, source, session_id")


def archived_columns(db: SqlDatabase) -> str:
    """An archived chunk's columns (``c``) as ``chunk_of`` reads them: it has no vector."""
    return chunk_columns(db.dialect, "c", vector="false")


def delete_archived_rows(db: SqlDatabase, conn: Any, agent_id: str, ids: Sequence[str]) -> int:
    """Inside a write: delete archived chunks, their text leaving the files as a forgotten chunk's."""
    if not ids:
        return 0
    among, values = db.dialect.among("id", ids)
    count = int(db.dialect.run(conn, f"DELETE FROM chunks_archive WHERE agent_id = ? AND {among}",
                               (agent_id, *values)).rowcount)
    db.text_deleted(agent_id, count, table="chunks_archive")
    return count


class SqlArchive:
    """What the ``ArchiveStore`` methods of a relational store share, through its ``db`` handle, with
    the size cap's measure, compaction and pruning's candidates; the backend names the statements
    that are its own."""

    db: SqlDatabase
    # One statement, no parameters: the bytes the size cap counts.
    used_bytes_sql: str
    # The statements of a compaction, run in order outside any transaction.
    compacting: tuple[str, ...]
    # Pruning's candidates (agent, id, feedback, seconds since the epoch of the last reinforcement or
    # creation, bytes): every live memory not kept under an item key, in the backend's parameter style.
    prune_sql: str
    # Each agent's bytes in the archive (agent, bytes), measured as ``prune_sql`` measures a live row.
    archived_bytes_sql: str
    # The archive's keyword search: parameters the keyword query, the agent, the limit; each row an
    # archived chunk's columns (``archived_columns``) and its rank, best first.
    archive_search_sql: str
    # The backend's keyword query for sanitised words (OR, or AND with ``every``); None: no word.
    keyword_query: Callable[..., str | None]
    # Inside a restore's write: move the agent's archived chunks among the ids back among the chunks
    # (out of the archive and its keyword index); how many moved.
    _restore_rows: Callable[[Any, str, Sequence[str]], int]
    # The lock of a long maintenance, tried without waiting: a generator that yields how to release
    # it, or None when another holds it, and cleans up when resumed.
    _lock: Callable[[str], Iterator[Callable[[], object] | None]]

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        with contextmanager(self._lock)(name) as release:
            if release is None:
                yield False
                return
            try:
                yield True
            finally:
                release()

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.db.writing(agent_id) as conn:
            moved = self._restore_rows(conn, agent_id, ids)
            self.db.note(agent_id, [(i, None) for i in ids] if moved else [], restored=moved)
        self._restored(agent_id)
        return moved

    def _restored(self, agent_id: str) -> None:
        """Once the restore committed: what the backend keeps of the agent's counts (its store's)."""

    def used_bytes(self) -> int:
        with self.db.reading() as conn:
            return int(conn.execute(self.used_bytes_sql).fetchone()[0])

    def compact(self) -> None:
        # SQLite: under the store's lock, no other thread uses the connection meanwhile; PostgreSQL:
        # outside a transaction, as VACUUM must be.
        with self.db.reading() as conn:
            for statement in self.compacting:
                conn.execute(statement)

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        mine, params = (self.db.dialect.sql(" AND agent_id = ?"), (agent_id,)) if agent_id is not None else ("", ())
        with self.db.reading() as conn:
            rows = conn.execute(self.prune_sql + mine, params).fetchall()
        return [PruneCandidate(*row) for row in rows]

    def archived_bytes(self) -> dict[str, int]:
        with self.db.reading() as conn:
            return {r[0]: int(r[1]) for r in conn.execute(self.archived_bytes_sql).fetchall()}

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        query = self.keyword_query(terms, every=every_term)
        if query is None:
            return []
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(self.archive_search_sql, (query, agent_id, limit)).fetchall()
        return [(chunk_of(self.db.dialect, r[:-1]), float(r[-1])) for r in rows]

    def archived_chunks(self, agent_id: str, ids: Sequence[str]) -> list[Chunk]:
        rows = fetch_among(self.db, agent_id, f"SELECT {archived_columns(self.db)} FROM chunks_archive c "
                           "WHERE c.agent_id = ? AND", "c.id", ids, (agent_id,), then=" ORDER BY c.id")
        return [chunk_of(self.db.dialect, r) for r in rows]

    def list_archived(self, agent_id: str, *, limit: int, before: tuple[datetime, str] | None = None,
                      ids: Sequence[str] | None = None) -> list[ArchivedMemory]:
        if ids is not None and not ids:
            return []
        d = self.db.dialect
        sql = f"SELECT {archived_columns(self.db)}, c.archived_at FROM chunks_archive c WHERE c.agent_id = ?"
        params: list[Any] = [agent_id]
        if before is not None:
            sql, params = sql + " AND (c.archived_at, c.id) < (?, ?)", [*params, d.time(before[0]), before[1]]
        if ids is not None:
            among, values = d.among("c.id", ids)
            sql, params = sql + f" AND {among}", [*params, *values]
        rows = fetch(self.db, agent_id, sql + " ORDER BY c.archived_at DESC, c.id DESC LIMIT ?", (*params, limit))
        return [ArchivedMemory(chunk_of(d, r[:-1]), time_of(d, r[-1])) for r in rows]

    def archived_vectors(self, agent_id: str) -> dict[str, bytes | None]:
        rows = fetch(self.db, agent_id, "SELECT id, embedding_int8 FROM chunks_archive WHERE agent_id = ?",
                     (agent_id,))
        return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}

    def set_archived_vectors(self, agent_id: str, codes: dict[str, bytes]) -> None:
        if not codes:
            return
        with self.db.writing(agent_id) as conn:
            self.db.dialect.many(conn, "UPDATE chunks_archive SET embedding_int8 = ? WHERE agent_id = ? AND id = ?",
                                 [(code, agent_id, i) for i, code in codes.items()])

    def clear_archived_vectors(self) -> None:
        with self.db.writing() as conn:
            conn.execute("UPDATE chunks_archive SET embedding_int8 = NULL WHERE embedding_int8 IS NOT NULL")

    def delete_archived(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.db.writing(agent_id) as conn:
            release_sources(self.db, conn, "chunks_archive", agent_id, ids)
            return delete_archived_rows(self.db, conn, agent_id, ids)

    def count_archived(self, agent_id: str) -> int:
        rows = fetch(self.db, agent_id, "SELECT count(*) FROM chunks_archive WHERE agent_id = ?", (agent_id,))
        return int(rows[0][0])


class SqlLinks:
    """The ``LinkStore`` methods of a relational store, and recalls' retrieval events, through its
    ``db`` handle."""

    db: SqlDatabase
    # Inside the write of a batch (connection, agent, batch): add its accesses to the counters of
    # the agent's chunks still there; their ids. The backend's own statements.
    count_accesses: Callable[[Any, str, RetrievalBatch], set[str]]

    def write_retrievals(self, agent_id: str, batch: RetrievalBatch) -> None:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            found = self.count_accesses(conn, agent_id, batch)
            # Both ends were found. SQLite's one writer: nothing deletes inside this write. PostgreSQL:
            # another server may forget an end meanwhile, so the statement checks it again.
            both = (f"(SELECT count(*) FROM {d.rows} WHERE agent_id = ? AND id IN (?, ?)) = 2"
                    if d.foreign_keys else "true")
            d.many(conn, "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
                   f"SELECT ?, 'co_recall', ?, ?, ?, ? WHERE {both} ON CONFLICT (agent_id, kind, a, b) DO UPDATE "
                   "SET strength = chunk_links.strength + excluded.strength, updated_at = excluded.updated_at",
                   [(agent_id, a, b, float(times), d.time(last), *((agent_id, a, b) if d.foreign_keys else ()))
                    for (a, b), (times, last) in batch.links.items() if a in found and b in found])
            count_retrieval_days(self.db, conn, agent_id, batch.day_counts(found))

    def strengthen_links(self, agent_id: str, pairs: Sequence[tuple[str, str]], kind: str, now: datetime) -> None:
        d = self.db.dialect
        write_many(self.db, agent_id, "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
                   "SELECT ?, ?, ?, ?, 1.0, ? "
                   f"WHERE (SELECT count(*) FROM {d.rows} WHERE {d.unindexed('agent_id')} = ? AND id IN (?, ?)) = 2 "
                   "ON CONFLICT (agent_id, kind, a, b) DO UPDATE SET strength = chunk_links.strength + 1.0, "
                   "updated_at = excluded.updated_at", [(agent_id, kind, a, b, d.time(now), agent_id, a, b)
                                                        for a, b in pairs], links_strengthened=len(pairs))

    def prune_links(self, agent_id: str, *, before: datetime, keep: int | None) -> int:
        d = self.db.dialect
        weak = f"WHERE agent_id = ? AND kind = 'co_recall' AND strength < {STRONG_LINK}"
        with self.db.writing(agent_id) as conn:  # both through the index of weak links
            gone = d.run(conn, f"DELETE FROM chunk_links {weak} AND updated_at < ?",
                         (agent_id, d.time(before))).rowcount
            if keep is not None:
                gone += d.run(conn, "DELETE FROM chunk_links WHERE (agent_id, kind, a, b) IN (SELECT agent_id, kind, "
                              f"a, b FROM chunk_links{d.indexed_by('idx_links_weak')} {weak} "
                              f"ORDER BY updated_at DESC {d.skip})", (agent_id, keep)).rowcount
            self.db.note(agent_id, links_pruned=int(gone))
        return int(gone)

    def links(self, agent_id: str, ids: Sequence[str],
              min_strength: float = 0.0) -> list[tuple[str, str, str, float, bool]]:
        if not ids:
            return []
        d = self.db.dialect
        from_a, values = d.among("l.a", ids)
        from_b, _ = d.among("l.b", ids)
        rows = fetch(self.db, agent_id, "SELECT l.a, l.b, l.kind, l.strength, true FROM chunk_links l "
                     f"WHERE l.agent_id = ? AND {from_a} AND l.strength >= ? UNION ALL "
                     "SELECT l.b, l.a, l.kind, l.strength, false FROM chunk_links l "
                     f"WHERE l.agent_id = ? AND {from_b} AND l.strength >= ?",
                     (agent_id, *values, min_strength, agent_id, *values, min_strength))
        return sorted(((r[0], r[1], r[2], float(r[3]), bool(r[4])) for r in rows), key=lambda r: (-r[3], r[1]))
