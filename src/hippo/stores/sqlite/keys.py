"""The API keys of :class:`~hippo.stores.sqlite.store.SQLiteStore` (``KeyStore``) and the dashboard
sessions made with them.

A session is recorded by the SHA-256 of its secret id, so that logging out on one server ends it
on every server sharing the database; deleting a key deletes its sessions in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Callable, ContextManager

from hippo.clock import from_iso, to_iso
from hippo.types import ApiKey

__all__ = ["KeyMixin", "SESSIONS_MIGRATION"]

# Issue 32: logout ends the session on every server. Existing sessions had no record, so after
# this migration their cookies are refused and their holders log in once more.
SESSIONS_MIGRATION = """
CREATE TABLE dashboard_sessions (
    id          TEXT PRIMARY KEY,   -- SHA-256 of the session's secret id, hex
    key_id      TEXT NOT NULL,      -- api_keys.id; deleted with the key
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_dashboard_sessions_key ON dashboard_sessions(key_id);
"""

_KEY_COLUMNS = "id, secret_hash, agents, admin, label, created_at"


class KeyMixin:
    _conn: sqlite3.Connection
    _reading: Callable[..., ContextManager[sqlite3.Connection]]
    transaction: Callable[[], ContextManager[None]]

    def put_api_key(self, key: ApiKey) -> None:
        with self.transaction():
            self._conn.execute(
                "INSERT INTO api_keys(id, secret_hash, agents, admin, label, created_at) VALUES (?,?,?,?,?,?)",
                (key.id, key.secret_hash, json.dumps(list(key.agents)), int(key.admin), key.label,
                 to_iso(key.created_at)),
            )

    def get_api_key(self, key_id: str) -> ApiKey | None:
        with self._reading(bookkeeping=False) as conn:
            row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return _api_key(row) if row else None

    def list_api_keys(self) -> list[ApiKey]:
        with self._reading(bookkeeping=False) as conn:
            rows = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id").fetchall()
        return [_api_key(r) for r in rows]

    def has_api_keys(self) -> bool:
        with self._reading(bookkeeping=False) as conn:
            return conn.execute("SELECT EXISTS (SELECT 1 FROM api_keys)").fetchone()[0] == 1

    def delete_api_key(self, key_id: str) -> bool:
        with self.transaction():
            self._conn.execute("DELETE FROM dashboard_sessions WHERE key_id = ?", (key_id,))
            return self._conn.execute("DELETE FROM api_keys WHERE id = ?", (key_id,)).rowcount > 0

    # -- dashboard sessions -------------------------------------------------

    def put_session(self, session_hash: str, key_id: str, expires_at: datetime, now: datetime) -> None:
        with self.transaction():
            self._conn.execute("DELETE FROM dashboard_sessions WHERE expires_at <= ?", (to_iso(now),))
            self._conn.execute("INSERT INTO dashboard_sessions(id, key_id, created_at, expires_at) VALUES (?,?,?,?)",
                               (session_hash, key_id, to_iso(now), to_iso(expires_at)))

    def session_key(self, session_hash: str, now: datetime) -> ApiKey | None:
        columns = ", ".join(f"k.{c}" for c in _KEY_COLUMNS.split(", "))
        with self._reading(bookkeeping=False) as conn:
            row = conn.execute(f"SELECT {columns} FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id "
                               "WHERE s.id = ? AND s.expires_at > ?", (session_hash, to_iso(now))).fetchone()
        return _api_key(row) if row else None

    def delete_session(self, session_hash: str) -> bool:
        with self.transaction():
            return self._conn.execute("DELETE FROM dashboard_sessions WHERE id = ?", (session_hash,)).rowcount > 0


def _api_key(row: tuple) -> ApiKey:
    return ApiKey(id=row[0], secret_hash=row[1], agents=tuple(json.loads(row[2])), admin=bool(row[3]),
                  label=row[4], created_at=from_iso(row[5]))
