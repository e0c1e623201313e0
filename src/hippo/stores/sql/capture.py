"""Capture, as both relational stores keep it (see ``CaptureStore``): the inbox of observed messages
per session, each session's cursor, and what surfacing showed each session; and the sessions'
histories capture taps (``SessionStore``).

The cursor moves by compare-and-set inside the write that stores what was captured: an UPDATE of
the cursor's row from the value the caller read, which takes the row's lock, so when two processes
process one session only one of them moves it and the other writes nothing. A processed message
keeps its row (its id, so a message sent again is skipped) but loses its text once no window needs
it as overlap; that text leaves the files as a forgotten memory's does (``SqlDatabase.text_deleted``).

A session's history keeps each item an agent framework wrote as its JSON text, so it reads back
exactly as written (a framework compares what it wrote with what it reads). Each row carries the
id capture observed the item under, so a memory captured from it finds it again: when that memory
is deleted or its text replaced, the item goes too (``release_sources``), as it does when a forget
clears the observed message itself (``clear_observed``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from hippo.core.ports import Inbox, Observed, SessionItem
from hippo.stores.sql.database import SqlDatabase, blank, fetch
from hippo.stores.sql.rows import OBSERVED_COLUMNS, observed_of

__all__ = ["SqlCapture", "SqlSessions", "erase_capture", "release_sources"]


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
            self.db.note(agent_id, messages_observed=len(seqs))
        return seqs

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        mine, params = ("AND m.agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        rows = fetch(self.db, None, "SELECT m.agent_id, m.session_id FROM observed_messages m "
                     "LEFT JOIN capture_cursors c ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                     f"WHERE m.seq > COALESCE(c.processed_seq, 0) {mine} GROUP BY m.agent_id, m.session_id "
                     "ORDER BY min(m.seq)", params)
        return [(r[0], r[1]) for r in rows]

    def pending_messages(self, agent_id: str | None) -> int:
        mine, params = ("AND m.agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        rows = fetch(self.db, None, "SELECT count(*) FROM observed_messages m "
                     "LEFT JOIN capture_cursors c ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                     f"WHERE m.seq > COALESCE(c.processed_seq, 0) {mine}", params)
        return int(rows[0][0])

    def inbox(self) -> Inbox:
        [row] = fetch(self.db, None, "SELECT count(*), min(m.created_at) FROM observed_messages m "
                      "LEFT JOIN capture_cursors c ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                      "WHERE m.seq > COALESCE(c.processed_seq, 0)", bookkeeping=False)
        return Inbox(int(row[0]), self.db.dialect.read_time(row[1]))

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
            processed = d.run(conn, "SELECT count(*) FROM observed_messages WHERE agent_id = ? AND session_id = ? "
                              "AND seq > ? AND seq <= ?", (agent_id, session_id, expected, new)).fetchone()[0]
            self.db.note(agent_id, messages_processed=int(processed), messages_cleared=int(cleared))
        return True

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        d = self.db.dialect
        among, values = d.among("seq", seqs)
        with self.db.writing(agent_id) as conn:
            items = d.run(conn, "DELETE FROM session_items WHERE agent_id = ? AND message_id IN (SELECT message_id "
                          f"FROM observed_messages WHERE agent_id = ? AND {among})", (agent_id, agent_id, *values))
            count = int(d.run(conn, f"UPDATE observed_messages SET content = '' WHERE agent_id = ? AND {among}",
                              (agent_id, *values)).rowcount)
            self.db.text_deleted(agent_id, count + int(items.rowcount))
            self.db.note(agent_id, messages_cleared=count, session_items_removed=int(items.rowcount))
        return count

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
            self.db.note(agent_id, [(i, None) for i in ids], surfaced=len(ids))


class SqlSessions:
    """The ``SessionStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    def add_session_items(self, agent_id: str, session_id: str, items: Sequence[SessionItem]) -> None:
        if not items:
            return
        d = self.db.dialect
        now = d.time(datetime.now(timezone.utc))
        with self.db.writing(agent_id) as conn:
            d.many(conn, "INSERT INTO session_items (agent_id, session_id, message_id, item, created_at) "
                   "VALUES (?,?,?,?,?)", [(agent_id, session_id, i.message_id, i.item, now) for i in items])
            self.db.note(agent_id, session_items_added=len(items))

    def session_items(self, agent_id: str, session_id: str, limit: int | None) -> list[SessionItem]:
        last = "" if limit is None else " LIMIT ?"
        rows = fetch(self.db, agent_id, "SELECT message_id, item FROM session_items WHERE agent_id = ? "
                     f"AND session_id = ? ORDER BY seq DESC{last}",
                     (agent_id, session_id) if limit is None else (agent_id, session_id, limit), bookkeeping=False)
        return [SessionItem(r[0], r[1]) for r in reversed(rows)]

    def pop_session_item(self, agent_id: str, session_id: str) -> SessionItem | None:
        d = self.db.dialect
        with self.db.writing(agent_id) as conn:
            row = d.run(conn, "DELETE FROM session_items WHERE seq = (SELECT max(seq) FROM session_items "
                        "WHERE agent_id = ? AND session_id = ?) RETURNING message_id, item",
                        (agent_id, session_id)).fetchone()
            if row is None:
                return None
            self.db.text_deleted(agent_id, 1)
            self.db.note(agent_id, session_items_removed=1)
        return SessionItem(row[0], row[1])

    def clear_session_items(self, agent_id: str, session_id: str) -> int:
        return blank(self.db, agent_id, "DELETE FROM session_items WHERE agent_id = ? AND session_id = ?",
                     (agent_id, session_id), counted="session_items_removed")


def release_sources(db: SqlDatabase, conn: Any, table: str, agent_id: str, ids: Sequence[str]) -> None:
    """Inside a write that deletes or rewrites these rows of ``table`` (chunks or the archive): the
    processed messages they were captured from (their ``_source_ids``) lose their text and the
    session items they were captured from go, so it leaves the files with the memory's. A message
    still pending is never touched."""
    d = db.dialect
    among, values = d.among("c.id", ids)
    cleared = d.run(
        conn, "UPDATE observed_messages AS m SET content = '' WHERE m.agent_id = ? AND m.content <> '' "
        f"AND m.message_id IN (SELECT s.value FROM {table} c, {d.json_texts('c.metadata', '_source_ids')} "
        f"WHERE c.agent_id = ? AND {among}) AND m.seq <= (SELECT k.processed_seq FROM capture_cursors k "
        "WHERE k.agent_id = m.agent_id AND k.session_id = m.session_id)", (agent_id, agent_id, *values)).rowcount
    db.text_deleted(agent_id, int(cleared) + _release_items(db, conn, table, agent_id, ids))


def _release_items(db: SqlDatabase, conn: Any, table: str, agent_id: str, ids: Sequence[str]) -> int:
    """Inside a write that deletes or rewrites these rows of ``table`` (chunks or the archive): the
    session items they were captured from (their ``_source_ids``) go; how many."""
    d = db.dialect
    among, values = d.among("c.id", ids)
    return int(d.run(
        conn, "DELETE FROM session_items WHERE agent_id = ? AND message_id IN (SELECT s.value FROM "
        f"{table} c, {d.json_texts('c.metadata', '_source_ids')} WHERE c.agent_id = ? AND {among})",
        (agent_id, agent_id, *values)).rowcount)


def erase_capture(db: SqlDatabase, conn: Any, agent_id: str) -> int:
    """Inside ``delete_agent``: the agent's inbox, cursors, surfacing record and session histories;
    how many messages and items went."""
    gone = db.dialect.run(conn, "DELETE FROM observed_messages WHERE agent_id = ?", (agent_id,)).rowcount
    gone += db.dialect.run(conn, "DELETE FROM session_items WHERE agent_id = ?", (agent_id,)).rowcount
    db.dialect.run(conn, "DELETE FROM capture_cursors WHERE agent_id = ?", (agent_id,))
    db.dialect.run(conn, "DELETE FROM surfaced WHERE agent_id = ?", (agent_id,))
    return int(gone)
