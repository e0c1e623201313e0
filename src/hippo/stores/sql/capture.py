"""Capture, as both relational stores keep it (see ``CaptureStore``): the inbox of observed messages
per session, each session's cursor, and what surfacing showed each session.

The cursor moves by compare-and-set inside the write that stores what was captured: an UPDATE of
the cursor's row from the value the caller read, which takes the row's lock, so when two processes
process one session only one of them moves it and the other writes nothing. A processed message
keeps its row (its id, so a message sent again is skipped) but loses its text once no window needs
it as overlap; that text leaves the files as a forgotten memory's does (``SqlDatabase.text_deleted``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from hippo.stores.base import Observed
from hippo.stores.sql.database import SqlDatabase, blank, fetch
from hippo.stores.sql.rows import OBSERVED_COLUMNS, observed_of

__all__ = ["SqlCapture", "erase_capture", "release_sources"]


class SqlCapture:
    """The ``CaptureStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    def observe_messages(self, agent_id: str, session_id: str, rows: Sequence[Observed]) -> list[tuple[int, str]]:
        d = self.db.dialect
        now = d.time(datetime.now(timezone.utc))
        seqs = []
        with self.db.writing(agent_id) as conn:
            for row in rows:
                found = d.run(conn, "INSERT INTO observed_messages (agent_id, session_id, message_id, role, name, "
                              "content, observed_at, created_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING "
                              "RETURNING seq, message_id", (agent_id, session_id, row.message_id, row.role, row.name,
                                                            row.content, d.time(row.observed_at), now)).fetchone()
                if found is not None:
                    seqs.append((int(found[0]), found[1]))
        return seqs

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        mine, params = ("AND m.agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        rows = fetch(self.db, None, "SELECT m.agent_id, m.session_id FROM observed_messages m "
                     "LEFT JOIN capture_cursors c ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                     f"WHERE m.seq > COALESCE(c.processed_seq, 0) {mine} GROUP BY m.agent_id, m.session_id "
                     "ORDER BY min(m.seq)", params)
        return [(r[0], r[1]) for r in rows]

    def capture_cursor(self, agent_id: str, session_id: str) -> int:
        rows = fetch(self.db, agent_id, "SELECT processed_seq FROM capture_cursors WHERE agent_id = ? "
                     "AND session_id = ?", (agent_id, session_id))
        return int(rows[0][0]) if rows else 0

    def observed(self, agent_id: str, session_id: str, *, after: int, limit: int) -> list[Observed]:
        return self._messages(agent_id, "session_id = ? AND seq > ? ORDER BY seq LIMIT ?", (session_id, after, limit))

    def observed_tail(self, agent_id: str, session_id: str, *, upto: int, limit: int) -> list[Observed]:
        found = self._messages(agent_id, "session_id = ? AND seq <= ? AND content <> '' ORDER BY seq DESC LIMIT ?",
                               (session_id, upto, limit))
        return found[::-1]

    def observed_matching(self, agent_id: str, terms: Sequence[str], limit: int) -> list[Observed]:
        if not terms:
            return []
        tests = " AND ".join(f"{self.db.dialect.position('lower(content)')} > 0" for _ in terms)
        return self._messages(agent_id, f"content <> '' AND {tests} ORDER BY seq LIMIT ?",
                              (*[t.lower() for t in terms], limit))

    def _messages(self, agent_id: str, rest: str, params: Sequence[Any]) -> list[Observed]:
        """The agent's messages that pass ``rest`` (the tests after the agent's, and the order)."""
        rows = fetch(self.db, agent_id, f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = ? "
                     f"AND {rest}", (agent_id, *params))
        return [observed_of(r) for r in rows]

    def advance_cursor(self, agent_id: str, session_id: str, expected: int, new: int, keep_from: int) -> bool:
        d = self.db.dialect
        now = d.time(datetime.now(timezone.utc))
        with self.db.writing(agent_id) as conn:
            if expected == 0:
                moved = d.run(conn, "INSERT INTO capture_cursors (agent_id, session_id, processed_seq, updated_at) "
                              "VALUES (?,?,?,?) ON CONFLICT DO NOTHING", (agent_id, session_id, new, now)).rowcount
            else:  # compare-and-set, under the row's lock
                moved = d.run(conn, "UPDATE capture_cursors SET processed_seq = ?, updated_at = ? WHERE agent_id = ? "
                              "AND session_id = ? AND processed_seq = ?",
                              (new, now, agent_id, session_id, expected)).rowcount
            if moved != 1:
                return False
            cleared = d.run(conn, "UPDATE observed_messages SET content = '' WHERE agent_id = ? AND session_id = ? "
                            "AND seq < ? AND content <> ''", (agent_id, session_id, keep_from)).rowcount
            self.db.text_deleted(agent_id, int(cleared))
        return True

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        among, values = self.db.dialect.among("seq", seqs)
        return blank(self.db, agent_id, f"UPDATE observed_messages SET content = '' WHERE agent_id = ? AND {among}",
                     (agent_id, *values))

    def surfaced_ids(self, agent_id: str, session_id: str) -> set[str]:
        rows = fetch(self.db, agent_id, "SELECT chunk_id FROM surfaced WHERE agent_id = ? AND session_id = ?",
                     (agent_id, session_id))
        return {r[0] for r in rows}

    def mark_surfaced(self, agent_id: str, session_id: str, ids: Sequence[str], now: datetime) -> None:
        if not ids:
            return
        d = self.db.dialect
        if d.foreign_keys:  # a chunk forgotten meanwhile is skipped, not refused by the key
            source = f"SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM {d.rows} WHERE id = ?)"
            rows: list[tuple[Any, ...]] = [(agent_id, session_id, i, d.time(now), i) for i in ids]
        else:
            source, rows = "VALUES (?,?,?,?)", [(agent_id, session_id, i, d.time(now)) for i in ids]
        with self.db.writing(agent_id) as conn:
            d.many(conn, f"INSERT INTO surfaced (agent_id, session_id, chunk_id, surfaced_at) {source} "
                   "ON CONFLICT DO NOTHING", rows)


def release_sources(db: SqlDatabase, conn: Any, table: str, agent_id: str, ids: Sequence[str]) -> None:
    """Inside a write that deletes or rewrites these rows of ``table`` (chunks or the archive): the
    processed messages they were captured from (their ``_source_ids``) lose their text, so it
    leaves the files with the memory's. A message still pending is never touched."""
    d = db.dialect
    among, values = d.among("c.id", ids)
    cleared = d.run(
        conn, "UPDATE observed_messages AS m SET content = '' WHERE m.agent_id = ? AND m.content <> '' "
        f"AND m.message_id IN (SELECT s.value FROM {table} c, {d.json_texts('c.metadata', '_source_ids')} "
        f"WHERE c.agent_id = ? AND {among}) AND m.seq <= (SELECT k.processed_seq FROM capture_cursors k "
        "WHERE k.agent_id = m.agent_id AND k.session_id = m.session_id)", (agent_id, agent_id, *values)).rowcount
    db.text_deleted(agent_id, int(cleared))


def erase_capture(db: SqlDatabase, conn: Any, agent_id: str) -> int:
    """Inside ``delete_agent``: the agent's inbox, cursors and surfacing record; how many messages went."""
    gone = db.dialect.run(conn, "DELETE FROM observed_messages WHERE agent_id = ?", (agent_id,)).rowcount
    db.dialect.run(conn, "DELETE FROM capture_cursors WHERE agent_id = ?", (agent_id,))
    db.dialect.run(conn, "DELETE FROM surfaced WHERE agent_id = ?", (agent_id,))
    return int(gone)
