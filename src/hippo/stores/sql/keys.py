"""API keys and dashboard sessions, as both relational stores keep them (``KeyStore``).

A session is recorded by the SHA-256 of its secret id, so that logging out on one server ends it
on every server sharing the database; deleting a key deletes its sessions in the same transaction.
Keys and sessions are never written by recalls' bookkeeping, so their reads wait for none of it:
a server reads its keys at every request.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from hippo.stores.audit import KEYS_CHAIN
from hippo.stores.sql.database import SqlDatabase, fetch
from hippo.stores.sql.dialect import Dialect
from hippo.stores.sql.rows import time_of
from hippo.types import ApiKey

__all__ = ["SqlKeys"]

_KEY_COLUMNS = "id, secret_hash, agents, admin, label, created_at"


class SqlKeys:
    """The ``KeyStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    def put_api_key(self, key: ApiKey) -> None:
        d = self.db.dialect
        with self.db.writing() as conn:
            d.run(conn, "INSERT INTO api_keys (id, secret_hash, agents, admin, label, created_at) VALUES (?,?,?,?,?,?)",
                  (key.id, key.secret_hash, json.dumps(list(key.agents)), key.admin, key.label,
                   d.time(key.created_at)))
            self.db.note(KEYS_CHAIN, [(key.id, None)], keys_created=1)

    def get_api_key(self, key_id: str) -> ApiKey | None:
        rows = fetch(self.db, None, f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,), bookkeeping=False)
        return _api_key(self.db.dialect, rows[0]) if rows else None

    def list_api_keys(self) -> list[ApiKey]:
        rows = fetch(self.db, None, f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id", bookkeeping=False)
        return [_api_key(self.db.dialect, r) for r in rows]

    def has_api_keys(self) -> bool:
        return bool(fetch(self.db, None, "SELECT EXISTS (SELECT 1 FROM api_keys)", bookkeeping=False)[0][0])

    def delete_api_key(self, key_id: str) -> bool:
        d = self.db.dialect
        with self.db.writing() as conn:
            d.run(conn, "DELETE FROM dashboard_sessions WHERE key_id = ?", (key_id,))
            deleted = d.run(conn, "DELETE FROM api_keys WHERE id = ?", (key_id,)).rowcount > 0
            if deleted:
                self.db.note(KEYS_CHAIN, [(key_id, None)], keys_deleted=1)
            return bool(deleted)

    # -- dashboard sessions -------------------------------------------------

    def put_session(self, session_hash: str, key_id: str, expires_at: datetime, now: datetime) -> None:
        d = self.db.dialect
        with self.db.writing() as conn:
            d.run(conn, "DELETE FROM dashboard_sessions WHERE expires_at <= ?", (d.time(now),))
            d.run(conn, "INSERT INTO dashboard_sessions (id, key_id, created_at, expires_at) VALUES (?,?,?,?)",
                  (session_hash, key_id, d.time(now), d.time(expires_at)))

    def session_key(self, session_hash: str, now: datetime) -> ApiKey | None:
        d = self.db.dialect
        columns = ", ".join(f"k.{c}" for c in _KEY_COLUMNS.split(", "))
        rows = fetch(self.db, None, f"SELECT {columns} FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id "
                     "WHERE s.id = ? AND s.expires_at > ?", (session_hash, d.time(now)), bookkeeping=False)
        return _api_key(d, rows[0]) if rows else None

    def delete_session(self, session_hash: str) -> bool:
        with self.db.writing() as conn:
            return bool(self.db.dialect.run(conn, "DELETE FROM dashboard_sessions WHERE id = ?",
                                            (session_hash,)).rowcount > 0)


def _api_key(d: Dialect, row: Any) -> ApiKey:
    return ApiKey(id=row[0], secret_hash=row[1], agents=tuple(d.read_json(row[2])), admin=bool(row[3]),
                  label=row[4], created_at=time_of(d, row[5]))
