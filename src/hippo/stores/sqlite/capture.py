"""The capture half of :class:`~hippo.stores.sqlite.store.SQLiteStore` (seed 002; see
``CaptureStore``): the inbox of observed messages, each session's cursor, what surfacing showed.

A processed message keeps its row (its id, so a message sent again is skipped) but loses its text
once no window needs it as overlap; that text leaves the file as a forgotten memory's does
(``secure_delete`` zeroes the freed bytes, the WAL is scrubbed after the commit).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from typing import Any, Callable, ContextManager, Sequence

from hippo.clock import to_iso
from hippo.stores.base import Observed
from hippo.stores.rows import OBSERVED_COLUMNS, observed_of

__all__ = ["CaptureMixin"]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class CaptureMixin:
    _conn: sqlite3.Connection
    _after_commit: list[Callable[[], object]]
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]
    _scrub: Any

    def observe_messages(self, agent_id: str, session_id: str, rows: Sequence[Observed]) -> list[tuple[int, str]]:
        now = to_iso(datetime.now(timezone.utc))
        seqs = []
        with self.transaction():
            for row in rows:
                cur = self._conn.execute(
                    "INSERT INTO observed_messages (agent_id, session_id, message_id, role, name, content, "
                    "observed_at, created_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING "
                    "RETURNING seq, message_id",
                    (agent_id, session_id, row.message_id, row.role, row.name, row.content,
                     to_iso(row.observed_at) if row.observed_at else None, now)).fetchone()
                if cur is not None:
                    seqs.append((int(cur[0]), cur[1]))
        return seqs

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        mine, params = ("AND m.agent_id = ?", (agent_id,)) if agent_id is not None else ("", ())
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT m.agent_id, m.session_id FROM observed_messages m LEFT JOIN capture_cursors c "
                "ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                f"WHERE m.seq > COALESCE(c.processed_seq, 0) {mine} GROUP BY m.agent_id, m.session_id "
                "ORDER BY min(m.seq)", params).fetchall()
        return [(r[0], r[1]) for r in rows]

    def capture_cursor(self, agent_id: str, session_id: str) -> int:
        with self._reading(agent_id) as conn:
            row = conn.execute("SELECT processed_seq FROM capture_cursors WHERE agent_id = ? AND session_id = ?",
                               (agent_id, session_id)).fetchone()
        return int(row[0]) if row else 0

    def observed(self, agent_id: str, session_id: str, *, after: int, limit: int) -> list[Observed]:
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = ? "
                                "AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                                (agent_id, session_id, after, limit)).fetchall()
        return [observed_of(r) for r in rows]

    def observed_tail(self, agent_id: str, session_id: str, *, upto: int, limit: int) -> list[Observed]:
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = ? "
                                "AND session_id = ? AND seq <= ? AND content <> '' ORDER BY seq DESC LIMIT ?",
                                (agent_id, session_id, upto, limit)).fetchall()
        return [observed_of(r) for r in reversed(rows)]

    def advance_cursor(self, agent_id: str, session_id: str, expected: int, new: int, keep_from: int) -> bool:
        now = to_iso(datetime.now(timezone.utc))
        with self.transaction():
            if expected == 0:
                moved = self._conn.execute(
                    "INSERT INTO capture_cursors (agent_id, session_id, processed_seq, updated_at) VALUES (?,?,?,?) "
                    "ON CONFLICT DO NOTHING", (agent_id, session_id, new, now)).rowcount
            else:
                moved = self._conn.execute(
                    "UPDATE capture_cursors SET processed_seq = ?, updated_at = ? WHERE agent_id = ? "
                    "AND session_id = ? AND processed_seq = ?", (new, now, agent_id, session_id, expected)).rowcount
            if moved != 1:
                return False
            cleared = self._conn.execute(
                "UPDATE observed_messages SET content = '' WHERE agent_id = ? AND session_id = ? AND seq < ? "
                "AND content <> ''", (agent_id, session_id, keep_from)).rowcount
            if cleared:
                self._after_commit.append(self._scrub.after_delete)
        return True

    def observed_matching(self, agent_id: str, terms: Sequence[str], limit: int) -> list[Observed]:
        if not terms:
            return []
        tests = " AND ".join("instr(lower(content), ?) > 0" for _ in terms)
        with self._reading(agent_id) as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = ? "
                                f"AND content <> '' AND {tests} ORDER BY seq LIMIT ?",
                                (agent_id, *[t.lower() for t in terms], limit)).fetchall()
        return [observed_of(r) for r in rows]

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        with self.transaction():
            count = self._conn.execute(f"UPDATE observed_messages SET content = '' WHERE agent_id = ? "
                                       f"AND seq IN ({_marks(len(seqs))})", (agent_id, *seqs)).rowcount
            if count:
                self._after_commit.append(self._scrub.after_delete)
        return int(count)

    def _release_sources(self, table: str, agent_id: str, ids: Sequence[str]) -> None:
        """Inside a write that deletes or rewrites these rows of ``table`` (chunks or the archive):
        the processed messages they were captured from (their ``_source_ids``) lose their text, so
        it leaves the file with the memory's. A message still pending is never touched."""
        cleared = self._conn.execute(
            "UPDATE observed_messages AS m SET content = '' WHERE m.agent_id = ? AND m.content <> '' "
            "AND m.message_id IN (SELECT s.value FROM " + table + " c, json_each(c.metadata, '$._source_ids') s "
            f"WHERE c.agent_id = ? AND c.id IN ({_marks(len(ids))})) AND m.seq <= (SELECT k.processed_seq "
            "FROM capture_cursors k WHERE k.agent_id = m.agent_id AND k.session_id = m.session_id)",
            (agent_id, agent_id, *ids)).rowcount
        if cleared:
            self._after_commit.append(self._scrub.after_delete)

    def surfaced_ids(self, agent_id: str, session_id: str) -> set[str]:
        with self._reading(agent_id) as conn:
            rows = conn.execute("SELECT chunk_id FROM surfaced WHERE agent_id = ? AND session_id = ?",
                                (agent_id, session_id)).fetchall()
        return {r[0] for r in rows}

    def mark_surfaced(self, agent_id: str, session_id: str, ids: Sequence[str], now: datetime) -> None:
        if not ids:
            return
        with self.transaction():
            self._conn.executemany("INSERT INTO surfaced (agent_id, session_id, chunk_id, surfaced_at) "
                                   "VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                                   [(agent_id, session_id, i, to_iso(now)) for i in ids])

    def _erase_capture(self, agent_id: str) -> int:
        """Inside ``delete_agent``: the agent's inbox, cursors and surfacing record."""
        gone = self._conn.execute("DELETE FROM observed_messages WHERE agent_id = ?", (agent_id,)).rowcount
        self._conn.execute("DELETE FROM capture_cursors WHERE agent_id = ?", (agent_id,))
        self._conn.execute("DELETE FROM surfaced WHERE agent_id = ?", (agent_id,))
        return int(gone)
