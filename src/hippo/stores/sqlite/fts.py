"""Dropping a deleted row's words from an FTS5 index (hard forgetting).

FTS5 only marks a deleted row's terms deleted; its words stay in the index's pages until a merge
rewrites them. So every write that deletes or rewrites text runs ``'optimize'``, which rewrites the
index as one segment without them (``secure_delete`` zeroes the pages it frees).

SQLite up to at least 3.40 adds two empty levels to the index's structure record at each
``'optimize'`` and never removes them: after about 1,000 (one per forget) the record passes what
FTS5 accepts and every later write to the table fails with "database disk image is malformed"
(reproduced without hippo on 3.40.1). A ``'rebuild'`` from the content table resets the record, so
once it passes ``STRUCTURE_LIMIT`` bytes (about 500 optimizes) the index is rebuilt instead: 0.6 s
at 100k rows, once in hundreds of forgets, against 0.1 s for an optimize.
"""

from __future__ import annotations

import logging
import sqlite3

__all__ = ["STRUCTURE_LIMIT", "drop_deleted_terms", "rebuild_grown"]

_log = logging.getLogger(__name__)

STRUCTURE_LIMIT = 2_000  # bytes of the FTS5 structure record (id 10 of <table>_data) before a rebuild
_TABLES = frozenset({"chunks_fts", "chunks_archive_fts"})  # external-content indexes: 'rebuild' reads their table


def drop_deleted_terms(conn: sqlite3.Connection, table: str) -> None:
    """Inside a write that deleted or rewrote rows of ``table``'s content table: rewrite the index
    without their words (``'optimize'``, or ``'rebuild'`` when the structure record has grown)."""
    command = "rebuild" if _grown(conn, table) else "optimize"
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('{command}')")


def rebuild_grown(conn: sqlite3.Connection) -> bool:
    """Rebuild an index whose structure record has grown past the limit (a file written by an
    earlier hippo, whose next write to the table could fail); one statement each. Best effort when
    a store opens: False when the file cannot be written now (read-only, or another process holds
    the write lock), and the store tries again inside its next write."""
    try:
        for table in sorted(_TABLES):
            if _grown(conn, table):
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    except sqlite3.OperationalError as exc:
        _log.info("the keyword index could not be rebuilt now (%s); the next write will", exc)
        return False
    return True


def _grown(conn: sqlite3.Connection, table: str) -> bool:
    if table not in _TABLES:
        raise ValueError(f"not one of hippo's FTS5 indexes: {table!r}")
    size = conn.execute(f"SELECT length(block) FROM {table}_data WHERE id = 10").fetchone()
    return size is not None and size[0] > STRUCTURE_LIMIT
