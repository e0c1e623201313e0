"""Connections of the PostgreSQL store: a psycopg pool, one write transaction per thread, and
per-agent write locks that give PostgreSQL the guarantees SQLite's single writer gives. The store's
parts read and write through it (it is their ``SqlDatabase`` handle: ``stores/sql/database.py``).

A write transaction (``Store.transaction``) pins one pooled connection to the calling thread;
every store call of that thread joins it, nested calls included. The first time a transaction
touches an agent it takes a transaction-level advisory lock on that agent, before reading: the
core's "read again under the write lock, then write" (deduplication, supersession, blocks) then
holds across every server on the database, while writes of different agents run in parallel.
Reads outside a transaction take any pooled connection in autocommit mode (read committed: a
write committed by any server is seen at once).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from hippo.errors import StorageError
from hippo.stores.postgres.filters import filter_sql
from hippo.stores.sql.database import Handle
from hippo.stores.sql.dialect import POSTGRES

SPARE_WAIT = 0.002  # seconds a read waits for a second connection before it goes on with one
EF_SEARCH = 256  # rows an HNSW walk keeps before filters (hnsw.ef_search), on every pooled connection

__all__ = ["Connections", "storage_errors"]


@contextmanager
def storage_errors(what: str) -> Iterator[None]:
    """psycopg's failures as hippo's StorageError (the HTTP surface answers 503)."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise StorageError(f"{what}: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") \
            from exc


class Connections(Handle):
    """The pool of one store and the write transaction of each thread."""

    dialect = POSTGRES

    def __init__(self, url: str, *, max_size: int = 10) -> None:
        from pgvector.psycopg import register_vector
        from psycopg_pool import ConnectionPool

        def configure(conn: Any) -> None:
            register_vector(conn)
            conn.execute("SET timezone TO 'UTC'")
            conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
            # hippo's reads want their first rows (ORDER BY ... LIMIT): parallel workers each ran ahead
            # of the limit. A filtered listing of experiences at 100k: 127 ms in parallel, 1.3 ms not.
            conn.execute("SET max_parallel_workers_per_gather = 0")

        self._pool = ConnectionPool(url, min_size=1, max_size=max_size, kwargs={"autocommit": True},
                                    configure=configure, open=False, name="hippo")
        with storage_errors("cannot open the PostgreSQL pool"):
            self._pool.open(wait=True, timeout=30)
        self._local = threading.local()
        super().__init__(filter_sql)
        # Set by the store: what a delete changes in what it keeps in memory.
        self.on_deleted: Callable[[str, int], None] = lambda agent_id, count: None

    def close(self) -> None:
        self._pool.close()

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[Any]:
        """The thread's write transaction (re-entrant): committed when the outermost block ends.
        Not ``durable`` (recalls' bookkeeping, :mod:`hippo.stores.retrievals`): a transaction
        opened here commits without waiting for its WAL to be flushed to disk (``synchronous_commit
        = off`` for it alone, so a database crash may lose its last moments, never leave it
        inconsistent); joining one already open changes nothing of the outer one's."""
        if self.in_transaction:
            self._local.depth += 1
            try:
                yield self._local.conn
            finally:
                self._local.depth -= 1
            return
        with storage_errors("PostgreSQL write failed"), self._pool.connection() as conn:
            with conn.transaction():
                if not durable:
                    conn.execute("SET LOCAL synchronous_commit = off")
                self._local.conn, self._local.depth, self._local.agents = conn, 1, set()
                self._local.audit = {}
                try:
                    yield conn
                    self._append_audit(conn)  # in the transaction: a change never commits without its record
                finally:
                    self._local.conn, self._local.depth, self._local.agents = None, 0, set()
                    self._local.audit = {}

    @contextmanager
    def connection(self, agent_id: str | None = None) -> Iterator[Any]:
        """The thread's transaction when one is open (locking ``agent_id`` in it first), else a
        pooled autocommit connection."""
        if self.in_transaction:
            if agent_id is not None and agent_id not in self._local.agents:
                self._local.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (agent_id,))
                self._local.agents.add(agent_id)
            yield self._local.conn
            return
        with storage_errors("PostgreSQL read failed"), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def spare(self) -> Iterator[Any | None]:
        """A second pooled connection for a read that can run beside the thread's own (a search's
        two sides), when this thread's is the only one in use; None inside a write transaction (the
        other connection would not see its rows), when other requests are using the pool, or when
        none comes at once (waiting for one while holding one could starve the pool): the caller
        then runs its statements one after the other."""
        from psycopg_pool import PoolTimeout

        stats = self._pool.get_stats()
        if self.in_transaction or stats["pool_size"] - stats["pool_available"] > 1:
            # Another request is reading or writing: its work already fills the cores, and a second
            # statement per search only adds its own cost (three servers under load paid it on
            # every recall, one busy server on few: 0.88x its throughput at 8 clients).
            yield None
            return
        try:  # none free but room to grow: this short wait asks the pool to open one (for next time)
            conn = self._pool.getconn(timeout=SPARE_WAIT)
        except PoolTimeout:
            yield None
            return
        try:
            yield conn
        finally:
            self._pool.putconn(conn)

    @contextmanager
    def session(self) -> Iterator[Any]:
        """A pooled connection of this thread's own, outside any transaction (for session-level state
        such as an advisory lock, which must be released before it goes back)."""
        with storage_errors("PostgreSQL session failed"), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def writing(self, agent_id: str | None = None) -> Iterator[Any]:
        """A write: inside the thread's transaction (one is opened when none is), the agent locked;
        a write of an agent leaves its audit record when the transaction commits."""
        with self.transaction(), self.connection(agent_id) as conn:
            if agent_id is not None:
                self.changed(agent_id)
            yield conn

    def _pending(self) -> dict[str, Any]:
        return self._local.audit

    def text_deleted(self, agent_id: str, count: int, *, table: str = "") -> None:
        """PostgreSQL keeps a deleted row's bytes in its files until ``hippo scrub``: the store
        says so (``pending_scrub``) and forgets what it counted of the agent."""
        self.on_deleted(agent_id, count)

    def _dropped(self, agent_id: str, stored: list[Any]) -> None:
        """The chunk rows' counters, windows, links and surfacing records went with them (foreign keys)."""
        self.text_deleted(agent_id, len(stored))
