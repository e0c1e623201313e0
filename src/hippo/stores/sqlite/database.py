"""The SQLite file as the store's parts use it: one connection, its write transaction, and what a
delete leaves to do (the handle of ``stores/sql/database.py``).

One connection per store, guarded by a lock so a store can be shared by threads; every write is
one ``BEGIN IMMEDIATE`` transaction (SQLite's single writer), re-entrant. The in-memory vector
indexes (``index/cache.py``) follow the transaction: what a write stages is applied at its commit,
dropped at its rollback. A hard delete's text leaves the file: ``secure_delete`` zeroes the pages
it frees, FTS5 rewrites its index without the deleted rows' words (``fts.py``), and once the
transaction commits the write-ahead log is checkpointed and truncated without waiting on readers
(``scrub.py``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from hippo.errors import StorageError
from hippo.stores.sql.database import Handle
from hippo.stores.sql.dialect import SQLITE
from hippo.stores.sqlite.filters import filter_sql
from hippo.stores.sqlite.fts import drop_deleted_terms, rebuild_grown
from hippo.stores.sqlite.index.cache import VectorCache
from hippo.stores.sqlite.schema import migrate
from hippo.stores.sqlite.scrub import Scrubber
from hippo.stores.sqlite.summary import register_math

__all__ = ["SQLiteDatabase"]

# Reads through a memory map where the platform has one that SQLite trusts (not Windows, where a
# mapped file cannot shrink): a search reads a few dozen rows at random, and each read that copies a
# page in costs ~20 µs on a slow machine against a mapped page's few (~1 ms of a recall at 100k).
# Writes still go through the file. The mapped pages count in the process's resident memory; they
# are the page cache's, shared and given back under pressure.
_MMAP_SIZE = 0 if os.name == "nt" else 1 << 31  # SQLite caps it at its own largest (2 GB)
_PRAGMAS = ("journal_mode=WAL", "busy_timeout=5000", "secure_delete=ON", "synchronous=NORMAL",
            f"mmap_size={_MMAP_SIZE}")


class SQLiteDatabase(Handle):
    """One SQLite file: its connection (``conn``, under ``lock``), its write transaction, the vector
    indexes kept in step with it (``vectors``) and the scrub of its write-ahead log (``scrub``)."""

    dialect = SQLITE

    def __init__(self, path: str, *, ann_threshold: int | None) -> None:
        self.path = path
        try:
            self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5.0)
            for pragma in _PRAGMAS:
                self.conn.execute(f"PRAGMA {pragma}")
            migrate(self.conn)
            register_math(self.conn)
            self._fts_rebuilt = rebuild_grown(self.conn)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        self.lock = threading.RLock()
        self._depth = 0
        self._audit: dict[str, Any] = {}  # the open transaction's changes, by agent (stores/audit.py)
        self._after_commit: list[Callable[[], object]] = []
        self.rollbacks = 0  # how many writes were rolled back: what a search kept inside one is stale
        # Absolute: the files beside the database and the identity check must not follow a chdir.
        plain = path not in ("", ":memory:") and not path.startswith("file:")
        self.file = os.path.abspath(path) if plain else path
        self.vectors = VectorCache(self.conn, self.file, ann_threshold=ann_threshold)
        self.scrub = Scrubber(self.file)
        self.scrub.at_open()
        self._identity = _identity(self.file)
        super().__init__(filter_sql)

    def close(self) -> None:
        self.scrub.close()
        with self.lock:
            self.vectors.close()  # saves ANN indexes that changed since they were loaded
            self.conn.close()

    @property
    def in_write(self) -> bool:
        return self._depth > 0

    @contextmanager
    def connection(self, agent_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """The one connection, under the store's lock (a read of any agent, or none)."""
        with self.lock:
            try:
                yield self.conn
            except sqlite3.Error as exc:
                raise StorageError(f"database error: {exc}") from exc

    @contextmanager
    def writing(self, agent_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """A write: inside the store's one transaction (every agent's: SQLite has one writer); a
        write of an agent leaves its audit record when the transaction commits."""
        with self.transaction():
            if agent_id is not None:
                self.changed(agent_id)
            yield self.conn

    def _pending(self) -> dict[str, Any]:
        return self._audit

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._begin()
            self._depth = 1
            try:
                yield
                self._append_audit(self.conn)
                self.vectors.before_commit()
                self.conn.execute("COMMIT")
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error):
                    raise StorageError(f"database error: {exc}") from exc
                raise
            finally:
                self._depth = 0
            self.vectors.commit()
            hooks, self._after_commit = self._after_commit, []
            for hook in hooks:
                hook()

    def _begin(self) -> None:
        self._check_file()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot start a write: {exc}") from exc
        if not self._fts_rebuilt:  # skipped at open (fts.py): before this write touches the index
            self._fts_rebuilt = rebuild_grown(self.conn)
        self.vectors.begin()

    def _check_file(self) -> None:
        """Refuse to write into a file that was deleted or replaced under us: the write would
        succeed into an unlinked inode and be lost when the connection closes."""
        if self._identity is None:
            return
        try:
            found = os.stat(self.file)
            same = (found.st_dev, found.st_ino) == self._identity
        except OSError:
            same = False
        if not same:
            raise StorageError(f"the database file {self.path} was deleted or replaced while hippo had it open; "
                               "nothing was written. Restore the file, or restart hippo to start a new one")

    def _rollback(self) -> None:
        self.vectors.rollback()
        self._after_commit.clear()
        self._audit.clear()
        self.rollbacks += 1
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite already rolled back (e.g. after SQLITE_FULL)

    def text_deleted(self, agent_id: str, count: int, *, table: str = "") -> None:
        """Inside the write: FTS5 rewrites the archive's index without the deleted rows' words (it
        only marks them deleted), and the write-ahead log is scrubbed once it commits (``scrub.py``:
        never waits on readers; once per transaction, which covers all its deletes)."""
        if not count:
            return
        if table == "chunks_archive":
            drop_deleted_terms(self.conn, "chunks_archive_fts")
        if self.scrub.after_delete not in self._after_commit:
            self._after_commit.append(self.scrub.after_delete)

    def _dropped(self, agent_id: str, stored: list[Any]) -> None:
        """Their vectors leave the index (and the saved ANN files), FTS5 rewrites its index without
        their words, and the WAL is scrubbed after the commit."""
        if stored:
            self.text_rewritten(agent_id, stored)

    def text_rewritten(self, agent_id: str, rowids: list[int]) -> None:
        """Inside a write that deleted or rewrote these chunk rows: as :meth:`_dropped` says."""
        self.vectors.stage_remove(agent_id, rowids, forget=True)
        drop_deleted_terms(self.conn, "chunks_fts")
        self.text_deleted(agent_id, len(rowids))


def _identity(path: str) -> tuple[int, int] | None:
    """The file's (device, inode), None for an in-memory database."""
    if path in ("", ":memory:") or path.startswith("file:"):
        return None
    found = os.stat(path)
    return found.st_dev, found.st_ino
