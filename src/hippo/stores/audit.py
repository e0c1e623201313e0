"""The audit trail in a relational database, written once for both backends (through the Dialect).

Tables (``sqlite/schema.py`` and ``postgres/schema.py``, migration ``audit_trail``):

- ``audit_records``: one row per record, keyed (agent_id, seq); times as ISO-8601 UTC text of
  fixed width (the text that is hashed), the body as the canonical JSON that is hashed.
- ``audit_heads``: one row per agent, the seq and hash of its newest record. Appending reads it and
  writes it in the write transaction of the change; on PostgreSQL under a transaction-level
  advisory lock on the agent's chain, so several servers appending for one agent queue up and the
  chain never forks. It also lets ``verify`` see that the newest records were removed.
- ``audit_secret``: one random secret per database, made by the migration, kept outside the trail:
  it keys the digests (:func:`hippo.core.ports.audit.digest`) and signs checkpoints.

:class:`AuditLog` is the handle's (``stores/sql/database.py``): the handle collects what each write
transaction changed (:class:`hippo.core.ports.audit.Pending`) and calls :meth:`AuditLog.append`
just before it commits.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterator

from hippo.core.ports.audit import (
    GENESIS,
    AuditQuery,
    ChainRecord,
    Pending,
    Scope,
    canonical,
    digest,
    record_hash,
    sign_checkpoint,
)
from hippo.stores.sql.dialect import Dialect

__all__ = ["AuditLog", "KEYS_CHAIN", "TOUCHED_POSTGRES", "TOUCHED_SQLITE", "audit_time"]

KEYS_CHAIN = "*"  # the database's own chain (API keys): no agent id can start with "*"
_COLUMNS = "agent_id, seq, at, operation, operation_id, who, surface, kind, body, prev_hash, hash"
_PAGE = 1_000  # records read at a time by a check of a whole chain

# Which records touched which id (migration ``audit_touched``): what ``audit(chunk_id=...)`` and a
# memory's history of changes read, through its key, instead of every record's body. Written with
# each record, trimmed with it; the records are the truth (a check never reads this).
_TOUCHED = """
CREATE TABLE audit_touched (
    agent_id text NOT NULL,
    chunk_id text NOT NULL,
    seq      bigint NOT NULL,
    PRIMARY KEY (agent_id, chunk_id, seq)
);
"""
TOUCHED_SQLITE = _TOUCHED + """INSERT OR IGNORE INTO audit_touched (agent_id, chunk_id, seq)
    SELECT r.agent_id, json_extract(t.value, '$[0]'), r.seq FROM audit_records r, json_each(r.body, '$.touched') t;
"""
TOUCHED_POSTGRES = _TOUCHED + """INSERT INTO audit_touched (agent_id, chunk_id, seq)
    SELECT r.agent_id, t.value->>0, r.seq FROM audit_records r, jsonb_array_elements(r.body::jsonb->'touched') t
    ON CONFLICT DO NOTHING;
"""


def audit_time(when: datetime) -> str:
    """A record's time as it is stored and hashed: UTC, ISO-8601 to the microsecond (fixed width)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _record(row: Any) -> ChainRecord:
    return ChainRecord(agent_id=row[0], seq=int(row[1]), at=row[2], operation=row[3], operation_id=row[4],
                       who=row[5], surface=row[6], kind=row[7], body=row[8], prev_hash=row[9], hash=row[10])


class AuditLog:
    """Appends, reads and trims the audit trail on one database, in its dialect."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        self._secret: str | None = None

    def secret(self, conn: Any) -> str:
        if self._secret is None:
            self._secret = str(self.d.run(conn, "SELECT secret FROM audit_secret WHERE id = 1").fetchone()[0])
        return self._secret

    # -- appending --------------------------------------------------------------

    def append(self, conn: Any, pending: dict[str, Pending]) -> None:
        """Inside the write transaction, before it commits: one record per agent it changed."""
        for agent_id, changes in pending.items():
            secret = self.secret(conn)
            touched = [[chunk_id, None if h is None else digest(secret, h)] for chunk_id, h in changes.touched.items()]
            body = canonical({"touched": touched, "counts": changes.counts})
            record = self._append(conn, agent_id, changes.scope, "change", body)
            if touched:
                self.d.many(conn, "INSERT INTO audit_touched (agent_id, chunk_id, seq) VALUES (?,?,?) "
                            "ON CONFLICT DO NOTHING", [(agent_id, chunk_id, record.seq) for chunk_id, _ in touched])

    def _append(self, conn: Any, agent_id: str, scope: Scope, kind: str, body: str) -> ChainRecord:
        seq, prev = self._head(conn, agent_id)
        record = ChainRecord(agent_id=agent_id, seq=seq + 1, at=audit_time(scope.now()), operation=scope.operation,
                             operation_id=scope.operation_id, who=scope.actor.who, surface=scope.actor.surface,
                             kind=kind, body=body, prev_hash=prev)
        digest_ = record_hash(record)
        self.d.run(conn, f"INSERT INTO audit_records ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (*record.fields().values(), digest_))
        self.d.run(conn, "INSERT INTO audit_heads (agent_id, seq, hash) VALUES (?,?,?) ON CONFLICT (agent_id) "
                   "DO UPDATE SET seq = excluded.seq, hash = excluded.hash", (agent_id, record.seq, digest_))
        return record

    def _head(self, conn: Any, agent_id: str) -> tuple[int, str]:
        """The agent's chain head, locked for this transaction (SQLite: its one writer already is)."""
        if self.d.name == "postgresql":
            self.d.run(conn, "SELECT pg_advisory_xact_lock(hashtextextended(?, 2))", (agent_id,))
        row = self.d.run(conn, "SELECT seq, hash FROM audit_heads WHERE agent_id = ?", (agent_id,)).fetchone()
        return (0, GENESIS) if row is None else (int(row[0]), str(row[1]))

    # -- reading ----------------------------------------------------------------

    def records(self, conn: Any, agent_id: str, query: AuditQuery) -> list[ChainRecord]:
        tests, params = ["agent_id = ?"], list[Any]([agent_id])
        for test, value in (("seq < ?", query.before_seq), ("at >= ?", query.since), ("at < ?", query.until),
                            ("operation = ?", query.operation)):
            if value is not None:
                tests.append(test)
                params.append(audit_time(value) if isinstance(value, datetime) else value)
        if query.chunk_id is not None:
            tests.append("seq IN (SELECT seq FROM audit_touched WHERE agent_id = ? AND chunk_id = ?)")
            params.extend([agent_id, query.chunk_id])
        sql = f"SELECT {_COLUMNS} FROM audit_records WHERE {' AND '.join(tests)} ORDER BY seq DESC LIMIT ?"
        return [_record(r) for r in self.d.run(conn, sql, (*params, query.limit)).fetchall()]

    def page(self, conn: Any, agent_id: str, after: int) -> list[ChainRecord]:
        rows = self.d.run(conn, f"SELECT {_COLUMNS} FROM audit_records WHERE agent_id = ? AND seq > ? "
                          "ORDER BY seq LIMIT ?", (agent_id, after, _PAGE)).fetchall()
        return [_record(r) for r in rows]

    def head(self, conn: Any, agent_id: str) -> tuple[int, str] | None:
        row = self.d.run(conn, "SELECT seq, hash FROM audit_heads WHERE agent_id = ?", (agent_id,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def agents(self, conn: Any) -> list[str]:
        rows = self.d.run(conn, "SELECT agent_id FROM audit_heads UNION SELECT DISTINCT agent_id FROM audit_records "
                          "ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows]

    # -- trimming ---------------------------------------------------------------

    def trim(self, conn: Any, agent_id: str, before: datetime, scope: Scope) -> int:
        """Inside a write: remove the run of the agent's oldest records made before ``before``, and
        append a checkpoint holding the last removed record's seq and hash, signed."""
        head, _ = self._head(conn, agent_id)
        newer = self.d.run(conn, "SELECT min(seq) FROM audit_records WHERE agent_id = ? AND at >= ?",
                           (agent_id, audit_time(before))).fetchone()[0]
        through = head if newer is None else int(newer) - 1
        last = self.d.run(conn, "SELECT hash FROM audit_records WHERE agent_id = ? AND seq = ?",
                          (agent_id, through)).fetchone()
        if last is None:
            return 0
        removed = int(self.d.run(conn, "DELETE FROM audit_records WHERE agent_id = ? AND seq <= ?",
                                 (agent_id, through)).rowcount)
        self.d.run(conn, "DELETE FROM audit_touched WHERE agent_id = ? AND seq <= ?", (agent_id, through))
        signature = sign_checkpoint(self.secret(conn), agent_id, through, str(last[0]))
        body = canonical({"through": through, "last_hash": str(last[0]), "removed": removed, "signature": signature})
        self._append(conn, agent_id, scope, "checkpoint", body)
        return removed


def chain(read: Any, log: AuditLog, agent_id: str) -> Iterator[ChainRecord]:
    """Every record of the agent's chain, oldest first, a page at a time (``read``: a context
    manager factory giving a connection)."""
    after = 0
    while True:
        with read() as conn:
            page = log.page(conn, agent_id, after)
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].seq
