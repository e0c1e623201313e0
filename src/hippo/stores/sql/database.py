"""The handle a shared part of a relational store reads and writes through.

Each backend gives its parts one (SQLite: ``sqlite/database.py``; PostgreSQL:
``postgres/connection.py``): a connection for a read, the write transaction, the dialect the SQL is
written in, and the bookkeeping a delete needs. What a delete leaves behind differs: SQLite zeroes
freed pages (``secure_delete``) and scrubs its write-ahead log once the transaction commits;
PostgreSQL keeps the bytes until ``hippo scrub`` and says so (``pending_scrub``).
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Iterable, Protocol, Sequence

from hippo.core.ports import ChunkFilter
from hippo.core.ports import audit as audit_scope
from hippo.stores.audit import AuditLog
from hippo.stores.sql.dialect import Dialect

__all__ = ["Handle", "SqlDatabase", "blank", "fetch", "fetch_among", "write_many"]


class SqlDatabase(Protocol):
    """A relational database as the shared parts (``stores/sql``) use it."""

    dialect: Dialect
    before_read: Callable[[str | None], None]
    audit: AuditLog

    def connection(self) -> ContextManager[Any]:
        """The backend's own connection, outside any write (a check's statements)."""
        ...

    def reading(self, agent_id: str | None = None, *, bookkeeping: bool = True) -> ContextManager[Any]:
        """A connection for a read of ``agent_id``'s rows (of every agent's: None), once the recalls'
        queued bookkeeping it must see is written (none with ``bookkeeping=False``: rows it never
        writes). Inside the thread's write transaction, that transaction."""
        ...

    def close(self) -> None:
        """Close the database's connections."""
        ...

    def transaction(self) -> ContextManager[Any]:
        """The thread's write transaction (re-entrant): every call made inside it joins it."""
        ...

    def writing(self, agent_id: str | None = None) -> ContextManager[Any]:
        """The connection of a write: the thread's transaction (one is opened when none is), with
        ``agent_id``'s writes serialised across every process on the database."""
        ...

    def note(self, agent_id: str, touched: Iterable[tuple[str, str | None]] = (), **counts: int) -> None:
        """Inside a write of ``agent_id``: what it changed, for the audit record the transaction
        appends before it commits (ids with their content hash, or None; counts by what was done)."""
        ...

    def filter_sql(self, where: ChunkFilter) -> tuple[str, list[Any]]:
        """The test (never empty) that a chunk ``c`` passes ``where``, and its parameters: the
        backend's own SQL, in its own parameter style (it joins a statement after ``Dialect.sql``)."""
        ...

    def drop_chunks(self, conn: Any, agent_id: str, ids: Sequence[str] | None) -> list[str]:
        """Inside a write: hard-delete the agent's chunks among ``ids`` (all of them: None), with what
        their text and vectors leaving the files and the backend's indexes takes; their kinds."""
        ...

    def text_deleted(self, agent_id: str, count: int, *, table: str = "") -> None:
        """Inside a write that deleted or blanked the text of ``count`` rows (of ``table``, when its
        rows are in a keyword index of their own): what their text leaving the files takes."""
        ...


class Handle:
    """What both backends' handles do alike: a read first waits for the recalls' queued bookkeeping
    it must see (``before_read``: ``RetrievalQueue.before_read``, set by the store once its queue
    exists), then takes the backend's connection for it (:meth:`connection`); a filter is the
    backend's own translation (``filter_sql``); a hard delete of chunks is one statement, then what
    the rows leaving takes in the backend (``_dropped``)."""

    dialect: Dialect

    def __init__(self, filter_sql: Callable[[ChunkFilter], tuple[str, list[Any]]]) -> None:
        self.before_read: Callable[[str | None], None] = lambda agent_id: None
        self.filter_sql = filter_sql
        self.audit = AuditLog(self.dialect)

    # -- the audit trail: what each write transaction changed, appended before it commits --------

    def _pending(self) -> dict[str, audit_scope.Pending]:
        """The changes of the thread's open write transaction, by agent (the backend keeps them)."""
        raise NotImplementedError

    def changed(self, agent_id: str) -> audit_scope.Pending | None:
        """Inside a write: the agent's changes in this transaction (None: bookkeeping, not audited).
        Every ``writing(agent_id)`` calls it, so a write no method noted still leaves its record."""
        if not audit_scope.audited():
            return None
        pending = self._pending()
        found = pending.get(agent_id)
        if found is None:
            found = pending[agent_id] = audit_scope.Pending(audit_scope.current())
        return found

    def note(self, agent_id: str, touched: Iterable[tuple[str, str | None]] = (), **counts: int) -> None:
        """See :meth:`SqlDatabase.note`."""
        changes = self.changed(agent_id)
        if changes is not None:
            changes.touch(list(touched))
            for what, n in counts.items():
                changes.count(what, n)

    def _append_audit(self, conn: Any) -> None:
        """Just before the transaction commits: its records (none when it changed no agent)."""
        pending = self._pending()
        if pending:
            try:
                self.audit.append(conn, pending)
            finally:
                pending.clear()

    def reading(self, agent_id: str | None = None, *, bookkeeping: bool = True) -> ContextManager[Any]:
        """See :meth:`SqlDatabase.reading`: a read of rows that bookkeeping never writes (API keys,
        the model's record, the short-term buffer: ``bookkeeping=False``) waits for none (a server
        reads its keys at every request, and those reads waited for every agent's queue: issue 34)."""
        if bookkeeping:
            self.before_read(agent_id)
        return self.connection(agent_id)

    def connection(self, agent_id: str | None = None) -> ContextManager[Any]:
        raise NotImplementedError

    def drop_chunks(self, conn: Any, agent_id: str, ids: Sequence[str] | None) -> list[str]:
        """See :meth:`SqlDatabase.drop_chunks`."""
        d = self.dialect
        test, values = "agent_id = ?", list[Any]()  # every chunk of the agent: through its index
        if ids is not None:
            among, values = d.among("id", ids)
            test = f"{d.unindexed('agent_id')} = ? AND {among}"
        rows = d.run(conn, f"DELETE FROM {d.rows} WHERE {test} RETURNING {d.stored_order}, kind, id, content_hash",
                     (agent_id, *values)).fetchall()
        self.note(agent_id, [(r[2], r[3]) for r in rows], removed=len(rows))
        self._dropped(agent_id, [r[0] for r in rows])
        return [r[1] for r in rows]

    def _dropped(self, agent_id: str, stored: list[Any]) -> None:
        """Inside the write that hard-deleted these chunk rows (``stored``: their ``stored_order``)."""
        raise NotImplementedError


def fetch(db: SqlDatabase, agent_id: str | None, sql: str, params: Sequence[Any] = (), *,
          bookkeeping: bool = True) -> list[Any]:
    """The rows of one shared statement reading ``agent_id``'s rows (see :meth:`SqlDatabase.reading`)."""
    with db.reading(agent_id, bookkeeping=bookkeeping) as conn:
        return list(db.dialect.run(conn, sql, params).fetchall())


def fetch_among(db: SqlDatabase, agent_id: str, test: str, column: str, ids: Sequence[Any],
                params: Sequence[Any] = (), *, then: str = "") -> list[Any]:
    """The rows of one shared statement reading ``agent_id``'s rows where ``column`` is one of
    ``ids`` (none when there is none): ``test`` and the dialect's ``among`` test, then ``then``;
    its parameters ``params``, then the ids'."""
    if not ids:
        return []
    among, values = db.dialect.among(column, ids)
    return fetch(db, agent_id, f"{test} {among}{then}", (*params, *values))


def write_many(db: SqlDatabase, agent_id: str, sql: str, rows: Sequence[Sequence[Any]],
               touched: Iterable[tuple[str, str | None]] = (), **counts: int) -> None:
    """Run one shared statement once per row of parameters, in ``agent_id``'s write (or the
    thread's); no write when there is no row. ``touched`` and ``counts`` go to its audit record."""
    if rows:
        with db.writing(agent_id) as conn:
            db.dialect.many(conn, sql, rows)
            db.note(agent_id, touched, **counts)


def blank(db: SqlDatabase, agent_id: str, sql: str, params: Sequence[Any], counted: str = "texts_removed") -> int:
    """Run one shared statement that deletes or blanks the text of ``agent_id``'s rows, in its own
    write (or the thread's), the text leaving the files as a forgotten chunk's; how many rows
    (counted in the audit record as ``counted``)."""
    with db.writing(agent_id) as conn:
        count = int(db.dialect.run(conn, sql, params).rowcount)
        db.text_deleted(agent_id, count)
        db.note(agent_id, (), **{counted: count})
    return count
