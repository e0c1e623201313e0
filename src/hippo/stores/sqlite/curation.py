"""Curation in the SQLite store where its SQL is its own (the rest is ``stores/sql/curation.py``):
the file's size and the lock of a long maintenance, compaction, pruning's candidates, the archive's
keyword search (FTS5), restoring archived chunks, and a retrieval's counters.

Archiving moves a row from ``chunks`` to ``chunks_archive`` without its vector; the FTS triggers
index it there and unindex it here. Deleting from either table goes through the same scrub as a
forget: FTS5 rewrites its index without the row, ``secure_delete`` zeroes freed pages, and the WAL
is scrubbed after the commit.
"""

from __future__ import annotations

import fcntl
from typing import Any, Callable, Iterator, Sequence

from hippo.core.ports import RetrievalBatch
from hippo.stores.sql.curation import MOVED, delete_archived_rows
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sql.rows import chunk_columns
from hippo.stores.sqlite.database import SQLiteDatabase
from hippo.stores.sqlite.search import EPOCH_JULIAN_DAY, match_expression

__all__ = ["Curation"]


class Curation:
    """The SQLite store's own curation statements and methods, through its ``db``."""

    db: SQLiteDatabase
    used_bytes_sql = ("SELECT (p.page_count - f.freelist_count) * s.page_size "
                      "FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s")
    compacting: tuple[str, ...] = ("VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)")
    prune_sql = ("SELECT agent_id, id, feedback, (julianday(COALESCE(reinforced_at, created_at)) - "
                 f"{EPOCH_JULIAN_DAY}) * 86400.0, length(CAST(content AS BLOB)) + coalesce(length(metadata), 0) "
                 "+ coalesce(length(embedding), 0) FROM chunks WHERE kind = 'memory' "
                 "AND json_extract(metadata, '$._item_key') IS NULL")
    archived_bytes_sql = ("SELECT agent_id, sum(length(CAST(content AS BLOB)) + coalesce(length(metadata), 0) "
                          "+ coalesce(length(embedding_int8), 0)) FROM chunks_archive GROUP BY agent_id")
    archive_search_sql = (
        f"SELECT {chunk_columns(SQLITE, 'c', vector='false')}, -bm25(chunks_archive_fts) FROM chunks_archive_fts "
        "JOIN chunks_archive c ON c.rowid = chunks_archive_fts.rowid WHERE chunks_archive_fts MATCH ? "
        "AND c.agent_id = ? ORDER BY bm25(chunks_archive_fts), c.id LIMIT ?")
    keyword_query = staticmethod(match_expression)

    def _lock(self, name: str) -> Iterator[Callable[[], object] | None]:
        """A lock file beside the database (``<db>.<name>.lock``), held with ``flock``; an in-memory
        database has one process."""
        if self.db.file in ("", ":memory:") or self.db.file.startswith("file:"):
            yield lambda: None
            return
        with open(f"{self.db.file}.{name}.lock", "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
            except BlockingIOError:
                held = False
            yield (lambda: fcntl.flock(handle, fcntl.LOCK_UN)) if held else None

    def _restore_rows(self, conn: Any, agent_id: str, ids: Sequence[str]) -> int:
        moved = conn.execute(f"INSERT INTO chunks ({MOVED}) SELECT {MOVED} FROM chunks_archive WHERE agent_id = ? "
                             f"AND id IN ({self.db.dialect.marks(len(ids))})", (agent_id, *ids)).rowcount
        delete_archived_rows(self.db, conn, agent_id, ids)  # out of the archive's keyword index too
        return int(moved)

    def count_accesses(self, conn: Any, agent_id: str, batch: RetrievalBatch) -> set[str]:
        """See ``SqlLinks.count_accesses``: the chunks found first, then their counters, row by row."""
        ids = list(batch.chunks)
        found = {r[0] for r in conn.execute(
            f"SELECT id FROM chunks WHERE +agent_id = ? AND id IN ({self.db.dialect.marks(len(ids))})",
            (agent_id, *ids))}
        conn.executemany(
            "UPDATE chunks SET access_count = access_count + ?, last_accessed_at = ?, "
            "running_intensity = min(1.0, running_intensity + ?) WHERE +agent_id = ? AND id = ?",
            [(times, self.db.dialect.time(last), boost, agent_id, chunk_id)
             for chunk_id, (times, last, boost) in batch.chunks.items() if chunk_id in found])
        return found
