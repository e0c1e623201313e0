"""Curation in the SQLite store where its SQL is its own (the rest is ``stores/sql/curation.py``):
the file's size and the lock of a long maintenance, pruning's candidates, the archive's keyword
search (FTS5), restoring archived chunks, and recalls' retrieval events written in one transaction.

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector; the FTS triggers
index it there and unindex it here. Deleting from either table goes through the same scrub as a
forget: FTS5 rewrites its index without the row, ``secure_delete`` zeroes freed pages, and the WAL
is scrubbed after the commit.
"""

from __future__ import annotations

import fcntl
from contextlib import contextmanager
from typing import Iterator, Sequence

from hippo.stores.base import PruneCandidate
from hippo.stores.retrievals import RetrievalBatch
from hippo.stores.sql.blocks import count_retrieval_days
from hippo.stores.sql.curation import MOVED, archived_columns, delete_archived_rows
from hippo.stores.sql.rows import chunk_of
from hippo.stores.sqlite.database import SQLiteDatabase
from hippo.stores.sqlite.search import EPOCH_JULIAN_DAY, match_expression
from hippo.types import Chunk

__all__ = ["Curation"]


class Curation:
    """The SQLite store's own curation methods, through its ``db``."""

    db: SQLiteDatabase

    def used_bytes(self) -> int:
        with self.db.reading() as conn:
            pages, free, size = (conn.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "freelist_count", "page_size"))
        return int((pages - free) * size)

    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """A lock file beside the database (``<db>.<name>.lock``), held with ``flock``; an in-memory
        database has one process."""
        if self.db.file in ("", ":memory:") or self.db.file.startswith("file:"):
            yield True
            return
        with open(f"{self.db.file}.{name}.lock", "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def compact(self) -> None:
        with self.db.reading() as conn:  # the store's lock: no other thread uses the connection meanwhile
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def prune_candidates(self, agent_id: str | None = None) -> list[PruneCandidate]:
        mine, params = ("AND agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT agent_id, id, feedback, (julianday(COALESCE(reinforced_at, created_at)) - "
                f"{EPOCH_JULIAN_DAY}) * 86400.0, length(CAST(content AS BLOB)) + coalesce(length(metadata), 0) "
                f"+ coalesce(length(embedding), 0) FROM chunks WHERE kind = 'memory' {mine} "
                "AND json_extract(metadata, '$._item_key') IS NULL", params).fetchall()
        return [PruneCandidate(*row) for row in rows]

    def search_archive(self, agent_id: str, terms: Sequence[str], limit: int, *,
                       every_term: bool = False) -> list[tuple[Chunk, float]]:
        match = match_expression(terms, every=every_term)
        if match is None:
            return []
        with self.db.reading(agent_id) as conn:
            rows = conn.execute(
                f"SELECT {archived_columns(self.db)}, -bm25(chunks_archive_fts) FROM chunks_archive_fts "
                "JOIN chunks_archive c ON c.rowid = chunks_archive_fts.rowid WHERE chunks_archive_fts MATCH ? "
                "AND c.agent_id = ? ORDER BY bm25(chunks_archive_fts), c.id LIMIT ?",
                (match, agent_id, limit)).fetchall()
        return [(chunk_of(self.db.dialect, r[:-1]), float(r[-1])) for r in rows]

    def restore_chunks(self, agent_id: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self.db.writing(agent_id) as conn:
            moved = conn.execute(f"INSERT INTO chunks ({MOVED}) SELECT {MOVED} FROM chunks_archive WHERE agent_id = ? "
                                 f"AND id IN ({self.db.dialect.marks(len(ids))})", (agent_id, *ids)).rowcount
            delete_archived_rows(self.db, conn, agent_id, ids)  # out of the archive's keyword index too
        return int(moved)

    def write_retrievals(self, agent_id: str, batch: RetrievalBatch) -> None:
        with self.db.writing(agent_id) as conn:
            ids = list(batch.chunks)
            found = {r[0] for r in conn.execute(
                f"SELECT id FROM chunks WHERE +agent_id = ? AND id IN ({self.db.dialect.marks(len(ids))})",
                (agent_id, *ids))}
            conn.executemany(
                "UPDATE chunks SET access_count = access_count + ?, last_accessed_at = ?, "
                "running_intensity = min(1.0, running_intensity + ?) WHERE +agent_id = ? AND id = ?",
                [(times, self.db.dialect.time(last), boost, agent_id, chunk_id)
                 for chunk_id, (times, last, boost) in batch.chunks.items() if chunk_id in found])
            conn.executemany(  # both ends were found: nothing deletes inside this write (one writer)
                "INSERT INTO chunk_links (agent_id, kind, a, b, strength, updated_at) "
                "VALUES (?, 'co_recall', ?, ?, ?, ?) ON CONFLICT (agent_id, kind, a, b) DO UPDATE "
                "SET strength = strength + excluded.strength, updated_at = excluded.updated_at",
                [(agent_id, a, b, float(times), self.db.dialect.time(last))
                 for (a, b), (times, last) in batch.links.items() if a in found and b in found])
            count_retrieval_days(self.db, conn, agent_id, batch.day_counts(found))
