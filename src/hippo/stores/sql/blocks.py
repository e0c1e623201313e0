"""Memory blocks and the agent's counters per day, as both relational stores keep them
(``BlockStore``; ``SummaryStore``'s daily counters).

hippo keeps no log of events: each event (a recall's retrievals, a consolidation, a pruning) adds
to its day's counter, by agent and UTC day, in the transaction that makes it.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from hippo.clock import to_utc
from hippo.core.ports.audit import content_hash
from hippo.stores.sql.database import SqlDatabase, fetch
from hippo.stores.sql.rows import time_of
from hippo.types import UNCHANGED, Block

__all__ = ["SqlBlocks", "SqlDaily", "count_retrieval_days", "count_retrievals", "erase_daily"]

_BLOCK_COLUMNS = "key, value, updated_at, char_limit"


class SqlBlocks:
    """The ``BlockStore`` methods of a relational store, through its ``db`` handle."""

    db: SqlDatabase

    def get_block(self, agent_id: str, key: str) -> Block | None:
        d = self.db.dialect
        rows = fetch(self.db, agent_id, f"SELECT {_BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? AND key = ?",
                     (agent_id, key))
        return Block(rows[0][0], rows[0][1], time_of(d, rows[0][2]), rows[0][3]) if rows else None

    def put_block(self, agent_id: str, key: str, value: str, now: datetime, *, char_limit: Any = UNCHANGED) -> Block:
        d = self.db.dialect
        columns, values = ["agent_id", "key", "value", "updated_at"], [agent_id, key, value, d.time(now)]
        if char_limit is not UNCHANGED:
            columns, values = [*columns, "char_limit"], [*values, char_limit]
        updated = ", ".join(f"{c} = excluded.{c}" for c in columns[2:])
        with self.db.writing(agent_id) as conn:
            held = self.get_block(agent_id, key)
            d.run(conn, f"INSERT INTO memory_blocks ({', '.join(columns)}) VALUES ({d.marks(len(values))}) "
                  f"ON CONFLICT (agent_id, key) DO UPDATE SET {updated}", values)
            if held is not None and not value.startswith(held.value):
                # A new text leaves no trace of the old (an append keeps all of it: nothing to scrub).
                self.db.text_deleted(agent_id, 1)
            self.db.note(agent_id, [(f"block:{key}", content_hash(value))], blocks_written=1)
            block = self.get_block(agent_id, key)
        assert block is not None
        return block

    def list_blocks(self, agent_id: str) -> list[Block]:
        d = self.db.dialect
        rows = fetch(self.db, agent_id, f"SELECT {_BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? "
                     f"ORDER BY key{d.bytewise}", (agent_id,))
        return [Block(r[0], r[1], time_of(d, r[2]), r[3]) for r in rows]


class SqlDaily:
    """The daily counters of ``SummaryStore``, through the ``db`` handle."""

    db: SqlDatabase

    def add_daily(self, agent_id: str, day: date, counts: dict[str, int]) -> None:
        if not any(counts.values()):
            return
        with self.db.writing(agent_id) as conn:
            _add(self.db, conn, agent_id, day, counts)

    def read_daily(self, agent_id: str, since: date) -> dict[str, dict[str, int]]:
        d = self.db.dialect
        rows = fetch(self.db, agent_id, "SELECT day, name, value FROM agent_daily WHERE agent_id = ? AND day >= ? "
                     "ORDER BY day, name", (agent_id, d.day(since)))
        out: dict[str, dict[str, int]] = {}
        for day, name, value in rows:
            out.setdefault(day if isinstance(day, str) else day.isoformat(), {})[name] = int(value)
        return out


def count_retrievals(db: SqlDatabase, conn: Any, agent_id: str, now: datetime, retrieved: int) -> None:
    """Inside ``record_retrievals``' transaction: the day's ``retrievals`` and ``recalls``."""
    if retrieved:
        count_retrieval_days(db, conn, agent_id, {to_utc(now).date(): (retrieved, 1)})


def count_retrieval_days(db: SqlDatabase, conn: Any, agent_id: str, days: dict[date, tuple[int, int]]) -> None:
    """Inside ``write_retrievals``' transaction: per day, (memories retrieved, recalls)."""
    for day, (retrieved, recalls) in days.items():
        _add(db, conn, agent_id, day, {"retrievals": retrieved, "recalls": recalls})


def _add(db: SqlDatabase, conn: Any, agent_id: str, day: date, counts: dict[str, int]) -> None:
    d = db.dialect
    d.many(conn, "INSERT INTO agent_daily (agent_id, day, name, value) VALUES (?, ?, ?, ?) ON CONFLICT "
           "(agent_id, day, name) DO UPDATE SET value = agent_daily.value + excluded.value",
           [(agent_id, d.day(day), name, int(value)) for name, value in counts.items() if value])


def erase_daily(db: SqlDatabase, conn: Any, agent_id: str) -> None:
    """Inside ``delete_agent``: the agent's counters per day."""
    db.dialect.run(conn, "DELETE FROM agent_daily WHERE agent_id = ?", (agent_id,))
