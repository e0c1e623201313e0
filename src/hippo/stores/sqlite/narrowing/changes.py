"""``chunk_changes``: a log of the chunk rowids whose searchable parts were written, so that what a
store keeps in memory about many rows stays in step with the file by reading only what changed.

Triggers log a chunk's rowid when it is inserted or deleted, when its text or anything a filter
tests changes (kind, source, session, metadata and so its tags, time of observation, supersession,
agent), and when its experience record is written. A retrieval (strength, access count, last
access) logs nothing: it changes nothing kept. Only rowids are logged, never text, and only the last
``LOG_KEPT`` rows stay (each trigger trims the oldest): a reader further behind starts over.

Two readers: keyword scoring (``bm25.py``: the lengths of the rows logged) and filtered search
(``supersets.py``: a superset of the rows a filter's part passes stays a superset once the logged
rows are added to it). A reader must not keep what it read inside a write transaction: a rollback takes back
the transaction's log rows, and their numbers are given again.
"""

from __future__ import annotations

import sqlite3

import numpy as np

__all__ = ["LOG_KEPT", "MIGRATION", "changed_since", "latest"]

LOG_KEPT = 10_000  # rows of chunk_changes kept: a reader further behind starts over

_LOG = """
    INSERT INTO chunk_changes(chunk) VALUES ({rowid});
    DELETE FROM chunk_changes WHERE seq <= (SELECT max(seq) FROM chunk_changes) - {kept};"""

_FILTERED = "content, kind, source, session_id, metadata, observed_at, created_at, superseded_by, agent_id"

MIGRATION = f"""
CREATE TABLE chunk_changes (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even once the log was emptied
    chunk INTEGER NOT NULL                    -- a rowid of chunks: no text
);
CREATE TRIGGER chunk_changes_ai AFTER INSERT ON chunks BEGIN{_LOG.format(rowid='new.rowid', kept=LOG_KEPT)}
END;
CREATE TRIGGER chunk_changes_ad AFTER DELETE ON chunks BEGIN{_LOG.format(rowid='old.rowid', kept=LOG_KEPT)}
END;
CREATE TRIGGER chunk_changes_au AFTER UPDATE OF {_FILTERED} ON chunks
BEGIN{_LOG.format(rowid='new.rowid', kept=LOG_KEPT)}
END;
CREATE TRIGGER chunk_changes_experience_ai AFTER INSERT ON experiences WHEN new.chunk IS NOT NULL
BEGIN{_LOG.format(rowid='new.chunk', kept=LOG_KEPT)}
END;
CREATE TRIGGER chunk_changes_experience_au AFTER UPDATE ON experiences WHEN new.chunk IS NOT NULL
BEGIN{_LOG.format(rowid='new.chunk', kept=LOG_KEPT)}
END;
"""


def latest(conn: sqlite3.Connection) -> int:
    """The number of the last change logged (0 before any)."""
    (last,) = conn.execute("SELECT coalesce((SELECT max(seq) FROM chunk_changes), 0)").fetchone()
    return int(last)


def changed_since(conn: sqlite3.Connection, seen: int) -> tuple[int, np.ndarray | None]:
    """The last change logged and the rowids changed after ``seen`` (sorted, each once); None for
    the rowids when the log no longer reaches back to ``seen`` (or was reset below it)."""
    first, last, joined = conn.execute(  # one statement: one snapshot, whatever commits meanwhile
        "SELECT (SELECT min(seq) FROM chunk_changes), coalesce((SELECT max(seq) FROM chunk_changes), 0), "
        "(SELECT group_concat(DISTINCT chunk) FROM chunk_changes WHERE seq > ?)", (seen,)).fetchone()
    if last < seen or (last > seen and first > seen + 1):
        return last, None
    return last, np.unique(np.fromstring(joined or "", dtype=np.int64, sep=","))
