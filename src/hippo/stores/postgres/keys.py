"""The API keys of :class:`~hippo.stores.postgres.store.PostgresStore` (``KeyStore``) and the
dashboard sessions made with them, as in SQLite: a session is recorded by the SHA-256 of its secret
id, so that a logout on one server is seen by every server on the database at its next request."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Callable, ContextManager

from hippo.types import ApiKey

__all__ = ["KeyMixin", "SESSIONS_MIGRATION"]

# Issue 32: logout ends the session on every server. Sessions made before had no record, so
# their cookies are refused from now on and their holders log in once more.
SESSIONS_MIGRATION = """
CREATE TABLE dashboard_sessions (
    id          text PRIMARY KEY,   -- SHA-256 of the session's secret id, hex
    key_id      text NOT NULL,      -- api_keys.id; deleted with the key
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_key ON dashboard_sessions (key_id);
"""

_KEY_COLUMNS = "id, secret_hash, agents, admin, label, created_at"


class KeyMixin:
    _db: Any
    _read: Callable[..., ContextManager[Any]]

    def put_api_key(self, key: ApiKey) -> None:
        with self._db.writing() as conn:
            conn.execute("INSERT INTO api_keys (id, secret_hash, agents, admin, label, created_at) "
                         "VALUES (%s,%s,%s,%s,%s,%s)", (key.id, key.secret_hash, json.dumps(list(key.agents)),
                                                        key.admin, key.label, key.created_at))

    def get_api_key(self, key_id: str) -> ApiKey | None:
        with self._read(bookkeeping=False) as conn:
            row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,)).fetchone()
        return _api_key(row) if row else None

    def list_api_keys(self) -> list[ApiKey]:
        with self._read(bookkeeping=False) as conn:
            rows = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id").fetchall()
        return [_api_key(r) for r in rows]

    def has_api_keys(self) -> bool:
        with self._read(bookkeeping=False) as conn:
            return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM api_keys)").fetchone()[0])

    def delete_api_key(self, key_id: str) -> bool:
        with self._db.writing() as conn:
            conn.execute("DELETE FROM dashboard_sessions WHERE key_id = %s", (key_id,))
            return conn.execute("DELETE FROM api_keys WHERE id = %s", (key_id,)).rowcount > 0

    # -- dashboard sessions -------------------------------------------------

    def put_session(self, session_hash: str, key_id: str, expires_at: datetime, now: datetime) -> None:
        with self._db.writing() as conn:
            conn.execute("DELETE FROM dashboard_sessions WHERE expires_at <= %s", (now,))
            conn.execute("INSERT INTO dashboard_sessions (id, key_id, created_at, expires_at) VALUES (%s,%s,%s,%s)",
                         (session_hash, key_id, now, expires_at))

    def session_key(self, session_hash: str, now: datetime) -> ApiKey | None:
        columns = ", ".join(f"k.{c}" for c in _KEY_COLUMNS.split(", "))
        with self._read(bookkeeping=False) as conn:
            row = conn.execute(f"SELECT {columns} FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id "
                               "WHERE s.id = %s AND s.expires_at > %s", (session_hash, now)).fetchone()
        return _api_key(row) if row else None

    def delete_session(self, session_hash: str) -> bool:
        with self._db.writing() as conn:
            return conn.execute("DELETE FROM dashboard_sessions WHERE id = %s", (session_hash,)).rowcount > 0


def _api_key(row: tuple) -> ApiKey:
    agents = row[2] if isinstance(row[2], list) else json.loads(row[2])
    return ApiKey(id=row[0], secret_hash=row[1], agents=tuple(agents), admin=bool(row[3]), label=row[4],
                  created_at=row[5])
