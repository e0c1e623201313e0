"""The handle a shared part of a relational store reads and writes through.

Each backend gives its parts one (SQLite: ``sqlite/database.py``; PostgreSQL:
``postgres/connection.py``): a connection for a read, the write transaction, the dialect the SQL is
written in, and the bookkeeping a delete needs. What a delete leaves behind differs: SQLite zeroes
freed pages (``secure_delete``) and scrubs its write-ahead log once the transaction commits;
PostgreSQL keeps the bytes until ``hippo scrub`` and says so (``pending_scrub``).
"""

from __future__ import annotations

from typing import Any, ContextManager, Protocol, Sequence

from hippo.stores.base import ChunkFilter
from hippo.stores.sql.dialect import Dialect

__all__ = ["SqlDatabase"]


class SqlDatabase(Protocol):
    """A relational database as the shared parts (``stores/sql``) use it."""

    dialect: Dialect

    def reading(self, agent_id: str | None = None, *, bookkeeping: bool = True) -> ContextManager[Any]:
        """A connection for a read of ``agent_id``'s rows (of every agent's: None), once the recalls'
        queued bookkeeping it must see is written (none with ``bookkeeping=False``: rows it never
        writes). Inside the thread's write transaction, that transaction."""
        ...

    def writing(self, agent_id: str | None = None) -> ContextManager[Any]:
        """The connection of a write: the thread's transaction (one is opened when none is), with
        ``agent_id``'s writes serialised across every process on the database."""
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
