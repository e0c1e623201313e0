"""The capture half of :class:`~hippo.stores.postgres.store.PostgresStore` (seed 002; see
``CaptureStore``), as in SQLite: the inbox every server shares, each session's cursor (moved by
compare-and-set under the row's lock: when two servers process one session, one of them wins and
the other writes nothing), and what surfacing showed each session."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, ContextManager, Sequence

from hippo.stores.base import Observed
from hippo.stores.rows import OBSERVED_COLUMNS, observed_of

__all__ = ["CaptureMixin"]


class CaptureMixin:
    _db: Any
    _read: Callable[..., ContextManager[Any]]
    _deleted: Callable[[str, int], None]

    def observe_messages(self, agent_id: str, session_id: str, rows: Sequence[Observed]) -> list[tuple[int, str]]:
        now = datetime.now(timezone.utc)
        seqs = []
        with self._db.writing(agent_id) as conn:
            for row in rows:
                found = conn.execute(
                    "INSERT INTO observed_messages (agent_id, session_id, message_id, role, name, content, "
                    "observed_at, created_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING "
                    "RETURNING seq, message_id",
                    (agent_id, session_id, row.message_id, row.role, row.name, row.content, row.observed_at,
                     now)).fetchone()
                if found is not None:
                    seqs.append((int(found[0]), found[1]))
        return seqs

    def pending_sessions(self, agent_id: str | None) -> list[tuple[str, str]]:
        mine, params = ("AND m.agent_id = %s", (agent_id,)) if agent_id is not None else ("", ())
        with self._read() as conn:
            rows = conn.execute(
                "SELECT m.agent_id, m.session_id FROM observed_messages m LEFT JOIN capture_cursors c "
                "ON c.agent_id = m.agent_id AND c.session_id = m.session_id "
                f"WHERE m.seq > COALESCE(c.processed_seq, 0) {mine} GROUP BY m.agent_id, m.session_id "
                "ORDER BY min(m.seq)", params).fetchall()
        return [(r[0], r[1]) for r in rows]

    def capture_cursor(self, agent_id: str, session_id: str) -> int:
        with self._read() as conn:
            row = conn.execute("SELECT processed_seq FROM capture_cursors WHERE agent_id = %s AND session_id = %s",
                               (agent_id, session_id)).fetchone()
        return int(row[0]) if row else 0

    def observed(self, agent_id: str, session_id: str, *, after: int, limit: int) -> list[Observed]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = %s "
                                "AND session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                                (agent_id, session_id, after, limit)).fetchall()
        return [observed_of(r) for r in rows]

    def observed_tail(self, agent_id: str, session_id: str, *, upto: int, limit: int) -> list[Observed]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = %s "
                                "AND session_id = %s AND seq <= %s AND content <> '' ORDER BY seq DESC LIMIT %s",
                                (agent_id, session_id, upto, limit)).fetchall()
        return [observed_of(r) for r in reversed(rows)]

    def advance_cursor(self, agent_id: str, session_id: str, expected: int, new: int, keep_from: int) -> bool:
        now = datetime.now(timezone.utc)
        with self._db.writing(agent_id) as conn:
            if expected == 0:
                moved = conn.execute(
                    "INSERT INTO capture_cursors (agent_id, session_id, processed_seq, updated_at) "
                    "VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING", (agent_id, session_id, new, now)).rowcount
            else:
                moved = conn.execute(
                    "UPDATE capture_cursors SET processed_seq = %s, updated_at = %s WHERE agent_id = %s "
                    "AND session_id = %s AND processed_seq = %s", (new, now, agent_id, session_id, expected)).rowcount
            if moved != 1:
                return False
            cleared = conn.execute("UPDATE observed_messages SET content = '' WHERE agent_id = %s AND session_id = %s "
                                   "AND seq < %s AND content <> ''", (agent_id, session_id, keep_from)).rowcount
        self._deleted(agent_id, int(cleared))
        return True

    def observed_matching(self, agent_id: str, terms: Sequence[str], limit: int) -> list[Observed]:
        if not terms:
            return []
        tests = " AND ".join("strpos(lower(content), %s) > 0" for _ in terms)
        with self._read() as conn:
            rows = conn.execute(f"SELECT {OBSERVED_COLUMNS} FROM observed_messages WHERE agent_id = %s "
                                f"AND content <> '' AND {tests} ORDER BY seq LIMIT %s",
                                (agent_id, *[t.lower() for t in terms], limit)).fetchall()
        return [observed_of(r) for r in rows]

    def clear_observed(self, agent_id: str, seqs: Sequence[int]) -> int:
        if not seqs:
            return 0
        with self._db.writing(agent_id) as conn:
            count = conn.execute("UPDATE observed_messages SET content = '' WHERE agent_id = %s AND seq = ANY(%s)",
                                 (agent_id, list(seqs))).rowcount
        self._deleted(agent_id, int(count))
        return int(count)

    def surfaced_ids(self, agent_id: str, session_id: str) -> set[str]:
        with self._read() as conn:
            rows = conn.execute("SELECT chunk_id FROM surfaced WHERE agent_id = %s AND session_id = %s",
                                (agent_id, session_id)).fetchall()
        return {r[0] for r in rows}

    def mark_surfaced(self, agent_id: str, session_id: str, ids: Sequence[str], now: datetime) -> None:
        if not ids:
            return
        with self._db.writing(agent_id) as conn, conn.cursor() as cur:
            cur.executemany("INSERT INTO surfaced (agent_id, session_id, chunk_id, surfaced_at) "
                            "SELECT %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM chunk_rows WHERE id = %s) "
                            "ON CONFLICT DO NOTHING", [(agent_id, session_id, i, now, i) for i in ids])

    @staticmethod
    def _release_sources(conn: Any, table: str, agent_id: str, ids: Sequence[str]) -> None:
        """As in SQLite (``stores/sqlite/capture.py``): inside a write that deletes or rewrites these
        rows of ``table``, the processed messages they were captured from lose their text."""
        conn.execute(
            "UPDATE observed_messages m SET content = '' WHERE m.agent_id = %s AND m.content <> '' "
            "AND m.message_id IN (SELECT jsonb_array_elements_text(c.metadata -> '_source_ids') FROM " + table +
            " c WHERE c.agent_id = %s AND c.id = ANY(%s) AND jsonb_typeof(c.metadata -> '_source_ids') = 'array') "
            "AND m.seq <= (SELECT k.processed_seq FROM capture_cursors k WHERE k.agent_id = m.agent_id "
            "AND k.session_id = m.session_id)", (agent_id, agent_id, list(ids)))

    @staticmethod
    def _erase_capture(conn: Any, agent_id: str) -> int:
        """Inside ``delete_agent``: the agent's inbox, cursors and surfacing record."""
        gone = conn.execute("DELETE FROM observed_messages WHERE agent_id = %s", (agent_id,)).rowcount
        conn.execute("DELETE FROM capture_cursors WHERE agent_id = %s", (agent_id,))
        conn.execute("DELETE FROM surfaced WHERE agent_id = %s", (agent_id,))
        return int(gone)
